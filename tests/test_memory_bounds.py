"""What a long run keeps in memory is bounded by what it needs, not by its length.

A 75-turn simulator run's RSS rose ~1.5 MB a turn (313 MB at its end): the simulator kept a
record per 20 ms audio append, and every reply it ever spoke. `scripts/bench_rss_turns.py`
measures the run; these pin the two bounds."""

from __future__ import annotations

from runners.simulator.voice import SPOKEN_KEPT, _tones, synthesize


def test_the_simulator_keeps_only_its_newest_spoken_replies() -> None:
    _tones.cache_clear()
    for i in range(3 * SPOKEN_KEPT):
        pcm, kind = synthesize(f"reply number {i} of a long run", "tone")
        assert pcm and kind == "tone"
    assert len(_tones) == SPOKEN_KEPT
    again, _ = synthesize(f"reply number {3 * SPOKEN_KEPT - 1} of a long run", "tone")  # the newest: kept
    assert again == pcm and len(_tones) == SPOKEN_KEPT
