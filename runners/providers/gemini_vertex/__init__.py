"""Gemini Live on Vertex AI (`GeminiLiveVertexLLMService`): the Gemini Live protocol at a regional
Vertex AI endpoint, authenticated with a service account's OAuth token, the model named by its
project, location and publisher.

One folder: `entry.py` (its catalog entry), `runner.py` (its `ProviderRunner`, Gemini Live's runner
with Vertex's access), `service.py` (our subclass), `fake.py` (its local fake, with the OAuth token
endpoint, `--fake`). Nothing is imported here, so reading the entry loads nothing else."""
