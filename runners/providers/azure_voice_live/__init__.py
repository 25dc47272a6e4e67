"""Azure Voice Live (`AzureVoiceLiveLLMService`): Azure's own realtime speech product (Azure speech
recognition, a generative model, Azure text to speech behind one session), with its own session
fields and the OpenAI Realtime beta's event names.

One folder: `entry.py` (its catalog entry), `runner.py` (its `ProviderRunner`), `service.py` (our
subclass of Pipecat's service), `fake.py` (its local fake, `--fake`). Nothing is imported here, so
reading the entry loads nothing else."""
