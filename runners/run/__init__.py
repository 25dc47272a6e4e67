"""The turn loops: `base` (the run life both share), `audio` + `session` (paced WAV in, speech
out, through a Pipecat speech-to-speech session) and `text` (the turn's text through a chat
session). `runners.engine.run_benchmark` picks one by the provider's `mode`."""
