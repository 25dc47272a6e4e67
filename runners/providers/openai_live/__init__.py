"""OpenAI's full-duplex `gpt-live-1` (`OpenAILiveLLMService`), with its backend: OpenAI-hosted
(Responses delegation) or one of our text models (client delegation).

One folder: `entry.py` (its catalog entry), `runner.py` (its `ProviderRunner` and the Pipecat
service subclass), `fake.py` (its local Live API fake, `--fake`) with `fake_session.py` (the
fake's model: what it hears, says and delegates), `fake_wire.py` (what the API refuses of a client),
`live_stream.py` (its continuous output) and `responses_fake.py` (the Responses API its delegations
run on).
Nothing is imported here, so reading the entry loads nothing else."""
