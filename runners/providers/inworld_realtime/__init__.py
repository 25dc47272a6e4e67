"""Inworld Realtime (`InworldRealtimeLLMService`): a speech-to-speech session in OpenAI Realtime's GA
event names around a cascade of Inworld's own (speech recognition, an LLM of the user's choice,
Inworld TTS), with semantic turn detection.

One folder: `entry.py` (its catalog entry), `runner.py` (its `ProviderRunner`), `service.py` (our
subclass of Pipecat's service), `fake.py` (its local fake, `--fake`). Nothing is imported here, so
reading the entry loads nothing else."""
