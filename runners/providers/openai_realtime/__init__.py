"""OpenAI Realtime (`OpenAIRealtimeLLMService`) and the no-key simulator that speaks its protocol
(`sim`): both are `runner.py`'s; their fake is the simulator (`runners/simulator/`).

One folder: `entry.py` (its catalog entry), `runner.py` (its `ProviderRunner`s); its local fake is
the simulator, shared with `sim`. Nothing is imported here, so reading the entry loads nothing else."""
