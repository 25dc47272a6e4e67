"""Gemini Live on the Gemini Developer API (`GeminiLiveLLMService`, our subclass in `service.py`).

One folder: `entry.py` (its catalog entry), `runner.py` (its `ProviderRunner`), `fake.py` (its
local fake, `--fake`). Nothing is imported here, so reading the entry loads nothing else."""
