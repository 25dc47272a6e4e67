"""`arena_tui.spine.speech` is the engine's own rule: an import reads a recording as a live run reads
the audio it plays (the engine's user VAD in its energy mode is the spine's)."""

from __future__ import annotations

import numpy as np

from arena_tui.spine import speech
from runners.timeline import user_speech

RATE = 24000


def signal() -> np.ndarray:
    """Speech-level bursts at odd onsets, a click, a pause under and one over 300 ms, a noise floor."""
    rng = np.random.default_rng(7)
    x = (rng.normal(0, 30, RATE * 6)).astype(np.int16)
    for a, b, level in ((0.213, 0.9, 0.1), (1.05, 1.6, 0.05), (2.3, 2.31, 0.5), (3.0, 4.2, 0.2), (4.7, 5.3, 0.03)):
        n = np.arange(int(a * RATE), int(b * RATE))
        x[n] += (level * 32767 * np.sin(2 * np.pi * 180 * n / RATE)).astype(np.int16)
    return x


def test_energy_speech_is_the_engines_user_rule() -> None:
    x = signal()
    assert speech.energy_speech_intervals(x, RATE, 50.0) == user_speech.raw_speech_intervals(x, RATE, 50.0, "energy")
    assert speech.energy_speech(x, RATE) == user_speech.speech_intervals(x, RATE, method="energy")
    assert len(speech.energy_speech(x, RATE)) >= 3
