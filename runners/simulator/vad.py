"""Server-side voice activity detection in audio time (samples received), never wall clock.

Counting samples makes every boundary independent of how fast the client streams, so a
run at --speed 20 sees the same speech_started/stopped positions as one at real time.
Energy only: the input is the benchmark's clean TTS audio plus digital silence.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATE = 24000
FRAME = RATE // 100  # 10 ms
START_CONFIRM_MS = 100.0  # this much speech before speech_started fires
START_GIVEUP_MS = 100.0  # this much quiet abandons a not-yet-confirmed start


def threshold_dbfs(threshold: float) -> float:
    """Map OpenAI's 0..1 VAD threshold onto an RMS level: 0.5 -> -50 dBFS, 0.7 -> -42 dBFS."""
    t = min(max(threshold, 0.0), 1.0)
    return -70.0 + 40.0 * t


@dataclass(frozen=True)
class VadEdge:
    """A detected boundary. `at_ms` is where speech began/ended; `detected_ms` when we knew."""

    kind: str  # "start" | "stop"
    at_ms: float
    detected_ms: float


class AudioTimeVad:
    """Streaming energy VAD over 10 ms frames of 24 kHz PCM16."""

    def __init__(self, threshold: float = 0.5, silence_ms: float = 800.0) -> None:
        self.configure(threshold, silence_ms)
        self._pending = np.zeros(0, dtype=np.int16)
        self._frames = 0  # frames consumed
        self.speaking = False
        self._cand_start: int | None = None  # frame index of a candidate start
        self._cand_active = 0
        self._quiet_run = 0
        self._last_active_end = 0  # frame index just after the last active frame

    def configure(self, threshold: float, silence_ms: float) -> None:
        self.threshold = threshold
        self.silence_ms = float(silence_ms)
        self.level = 10 ** (threshold_dbfs(threshold) / 20) * 32768.0  # RMS, in sample units

    def feed(self, samples: np.ndarray) -> list[VadEdge]:
        """Consume samples; return the edges that became certain with them."""
        if self._pending.size:
            samples = np.concatenate([self._pending, samples])
        n = samples.size // FRAME
        self._pending = samples[n * FRAME :].copy()
        if n == 0:
            return []
        frames = samples[: n * FRAME].reshape(n, FRAME).astype(np.float64)
        rms = np.sqrt(np.mean(frames * frames, axis=1))
        edges: list[VadEdge] = []
        confirm = int(START_CONFIRM_MS / 10)
        giveup = int(START_GIVEUP_MS / 10)
        silence = max(1, int(round(self.silence_ms / 10)))
        for active in rms >= self.level:
            i = self._frames
            self._frames += 1
            if not self.speaking:
                if active:
                    if self._cand_start is None:
                        self._cand_start, self._cand_active = i, 0
                    self._cand_active += 1
                    self._quiet_run = 0
                    if self._cand_active >= confirm:
                        self.speaking = True
                        self._last_active_end = i + 1
                        edges.append(VadEdge("start", self._cand_start * 10.0, (i + 1) * 10.0))
                        self._cand_start = None
                elif self._cand_start is not None:
                    self._quiet_run += 1
                    if self._quiet_run >= giveup:
                        self._cand_start, self._quiet_run = None, 0
            else:
                if active:
                    self._last_active_end = i + 1
                elif i + 1 - self._last_active_end >= silence:
                    self.speaking = False
                    self._quiet_run = 0
                    edges.append(VadEdge("stop", self._last_active_end * 10.0, (i + 1) * 10.0))
        return edges
