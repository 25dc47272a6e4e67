"""The fakes' end-of-speech detector (an energy VAD over the PCM16 they receive)."""

from __future__ import annotations

from typing import Literal

import numpy as np


class Endpointer:
    """Energy VAD over received PCM16: says when a user utterance has ended.

    Real providers run their own VAD on the stream; this gives the fakes the same shape of
    behaviour (reply only after speech then silence) without a model.
    """

    def __init__(self, sample_rate: int, silence_ms: int = 500, threshold_dbfs: float = -45.0):
        self.sample_rate = sample_rate
        self.silence_ms = silence_ms
        self.threshold = 32768.0 * 10 ** (threshold_dbfs / 20)
        self.in_speech = False
        self._silent_ms = 0.0

    def feed(self, pcm: bytes) -> Literal["started", "stopped"] | None:
        if not pcm:
            return None
        x = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float32)
        rms = float(np.sqrt(np.mean(x * x))) if x.size else 0.0
        ms = x.size / self.sample_rate * 1000.0
        if rms >= self.threshold:
            self._silent_ms = 0.0
            if not self.in_speech:
                self.in_speech = True
                return "started"
            return None
        if self.in_speech:
            self._silent_ms += ms
            if self._silent_ms >= self.silence_ms:
                self.in_speech = False
                self._silent_ms = 0.0
                return "stopped"
        return None
