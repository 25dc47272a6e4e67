"""What we measure on our own monotonic timeline: levels, speech, latencies, overlap, the recording.

Every time here is ms on the run timeline (float) and every measurement comes from audio we
placed on it ourselves (the user WAV where it was played, bot frames where they were played),
never from a provider's own TTFB. PCM is 16-bit little-endian mono (bytes or int16 arrays)
at the caller's sample rate. One module per job:

- `levels`: the level meters (RMS/peak per 50 ms block).
- `user_speech`: speech in a user WAV before it plays (Silero or energy; `speech_intervals`).
- `overlaps`: overlaps and barge-ins reported while the turn runs (`LiveOverlaps`).
- `recorder`: the stereo conversation track (`ConversationRecorder`).

The pure maths an import of a recording shares with them (PCM blocks, the bot's streaming VAD
`SpeechDetector`, the energy rule, interval maths, `measure_turn`, the tag) is
`arena_tui.spine.speech`: one copy, so an imported run is measured by the live run's rules.
"""
