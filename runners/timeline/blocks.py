"""Played PCM as int16 and cut into fixed blocks placed on the timeline: what the level meters
and the bot's speech detector both read."""

from __future__ import annotations

import numpy as np

from arena_tui.spine.audio import SILENCE_DBFS

PcmLike = bytes | bytearray | memoryview | np.ndarray


def as_int16(pcm: PcmLike) -> np.ndarray:
    """Mono PCM16 as a 1-D int16 array (no copy when possible)."""
    if isinstance(pcm, (bytes, bytearray, memoryview)):
        if len(pcm) % 2:
            raise ValueError(f"PCM16 needs an even number of bytes, got {len(pcm)}")
        return np.frombuffer(pcm, dtype="<i2")
    arr = np.asarray(pcm)
    if arr.dtype != np.int16:
        raise ValueError(f"PCM must be int16, got {arr.dtype}")
    return arr.reshape(-1)


def block_rms_dbfs(samples: np.ndarray, block: int) -> np.ndarray:
    """RMS dBFS of each complete `block`-sample block (vectorised `arena_tui.spine.audio.rms_dbfs`)."""
    n = len(samples) // block
    if n == 0:
        return np.empty(0)
    x = samples[: n * block].astype(np.float64).reshape(n, block) / 32768.0
    ms = np.mean(x * x, axis=1)
    with np.errstate(divide="ignore"):
        db = 10.0 * np.log10(ms)
    return np.maximum(np.nan_to_num(db, neginf=SILENCE_DBFS), SILENCE_DBFS)



class Blocker:
    """Cuts a stream of chunks into fixed blocks with timeline times, carrying remainders.

    A chunk that starts later than the previous one ended leaves a gap: the incomplete
    remainder is completed with silence, and the gap is reported so callers can treat it
    as silence. A chunk that starts slightly early (jitter) is treated as contiguous.
    """

    def __init__(self, sample_rate: int, block_ms: float) -> None:
        self.rate = sample_rate
        self.block = max(1, round(sample_rate * block_ms / 1000.0))
        self.block_ms = self.block * 1000.0 / sample_rate
        self._pending = np.empty(0, dtype=np.int16)
        self._start_ms: float | None = None  # time of the first pending sample
        self._start_sample = 0  # samples since _start_ms was set, for exact block times

    @property
    def next_ms(self) -> float | None:
        """Where the next sample is expected on the timeline."""
        if self._start_ms is None:
            return None
        return self._start_ms + (self._start_sample + len(self._pending)) * 1000.0 / self.rate

    def feed(self, pcm: PcmLike, t_ms: float) -> list[tuple[float, np.ndarray | None]]:
        """[(block start ms, block samples)], in order; (t, None) means "silence until t"."""
        samples = as_int16(pcm)
        out: list[tuple[float, np.ndarray | None]] = []
        expected = self.next_ms
        if expected is None or t_ms > expected + 1000.0 / self.rate:
            if expected is not None:
                if len(self._pending):
                    pad = np.zeros(self.block - len(self._pending), dtype=np.int16)
                    out.append((self._block_time(0), np.concatenate([self._pending, pad])))
                out.append((t_ms, None))
            self._start_ms, self._start_sample = t_ms, 0
            self._pending = np.empty(0, dtype=np.int16)
        data = np.concatenate([self._pending, samples]) if len(self._pending) else samples
        n = len(data) // self.block
        for i in range(n):
            out.append((self._block_time(i), data[i * self.block : (i + 1) * self.block]))
        self._start_sample += n * self.block
        self._pending = data[n * self.block :].copy()
        return out

    def _block_time(self, i: int) -> float:
        assert self._start_ms is not None
        return self._start_ms + (self._start_sample + i * self.block) * 1000.0 / self.rate

    def reset(self) -> None:
        self._pending = np.empty(0, dtype=np.int16)
        self._start_ms = None
        self._start_sample = 0
