"""What we measure on our own monotonic timeline: levels, speech, latencies, overlap, the recording.

Every time here is ms on the run timeline (float) and every measurement comes from audio we
placed on it ourselves (the user WAV where it was played, bot frames where they were played),
never from a provider's own TTFB. PCM is 16-bit little-endian mono (bytes or int16 arrays)
at the caller's sample rate. One module per job:

- `blocks`: PCM as int16, played chunks cut into timed blocks, block levels.
- `levels`: the level meters (RMS/peak per 50 ms block).
- `bot_speech`: the streaming energy VAD for bot audio as it plays (`SpeechDetector`).
- `user_speech`: speech in a user WAV before it plays (Silero or energy; `speech_intervals`).
- `intervals`: interval maths (merging, intersections) and the shortest overlap that counts.
- `overlaps`: overlaps and barge-ins reported while the turn runs (`LiveOverlaps`).
- `measures`: a turn's latencies and overlap (`measure_turn`, `TurnMeasures`).
- `recorder`: the stereo conversation track (`ConversationRecorder`).
"""
