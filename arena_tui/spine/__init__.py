"""The spine: the typed data every part shares (events, bus, audio, paths, errors, the
benchmark model and the call-matching rule). It imports nothing else of ours."""
