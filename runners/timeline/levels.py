"""Level meters: RMS and peak per 50 ms block of played audio; silence clamps to -120 dBFS
(`arena_tui.spine.audio`)."""

from __future__ import annotations

from arena_tui.spine.audio import peak_dbfs, rms_dbfs
from arena_tui.spine.events import Speaker

from arena_tui.spine.speech import Blocker, PcmLike


class LevelMeter:
    """RMS/peak per block of played audio, for the meters (one per side)."""

    def __init__(self, source: Speaker, block_ms: float = 50.0, sample_rate: int = 24000) -> None:
        self.source = source
        self._blocks = Blocker(sample_rate, block_ms)
        self.block_ms = self._blocks.block_ms

    def feed(self, pcm: PcmLike, t_ms: float) -> list[tuple[float, float, float]]:
        """(block start ms, rms dBFS, peak dBFS) for every block completed by this chunk.

        A chunk that starts after a gap completes the previous partial block with silence.
        """
        blocks = self._blocks.feed(pcm, t_ms)
        return [(t, rms_dbfs(b), peak_dbfs(b)) for t, b in blocks if b is not None]

    def reset(self) -> None:
        self._blocks.reset()
