"""`arena_tui.spine.speech` is the engine's own rule: an import reads a recording as a live run reads
the audio it plays. Until `runners.timeline` imports these from the spine, the two must agree on
every figure; this test fails the moment they part.
"""

from __future__ import annotations

import numpy as np

from arena_tui.spine import speech
from arena_tui.spine.events import Interval
from runners import timeline

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
    assert speech.energy_speech_intervals(x, RATE, 50.0) == timeline.raw_speech_intervals(x, RATE, 50.0, "energy")
    assert speech.energy_speech(x, RATE) == timeline.speech_intervals(x, RATE, method="energy")
    assert len(speech.energy_speech(x, RATE)) >= 3


def test_bot_detector_and_turn_measures_are_the_engines() -> None:
    x = signal()
    ours, theirs = speech.SpeechDetector(RATE), timeline.SpeechDetector(RATE)
    for i in range(0, len(x), 480):  # 20 ms chunks, as played
        assert ours.feed(x[i : i + 480], i * 1000 / RATE) == theirs.feed(x[i : i + 480], i * 1000 / RATE)
    assert ours.flush(6000.0) == theirs.flush(6000.0) and ours.intervals == theirs.intervals
    user = [Interval(start_ms=100, end_ms=900), Interval(start_ms=1200, end_ms=2000)]
    bot = [Interval(start_ms=1800, end_ms=3000)]
    args = (Interval(start_ms=0, end_ms=2100), user, 1700.0, bot, 650.0)
    assert speech.measure_turn(*args).model_dump() == timeline.measure_turn(*args).model_dump()
    assert (speech.tag_tone(RATE) == timeline.tag_tone(RATE)).all()
