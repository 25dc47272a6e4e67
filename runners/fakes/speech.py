"""A fake's voice: PCM16 speech for a reply's text (espeak-ng when asked for and installed, else
a tone as long as the text), cut into the chunks it streams."""

from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np


def synthesize(text: str, sample_rate: int, voice: str = "tone") -> bytes:
    """PCM16 mono speech for `text`: espeak-ng when asked for and installed, else a tone.

    The tone lasts 60 ms per character (min 300 ms) so longer replies take longer to play,
    which keeps pacing and overlap behaviour realistic without a TTS engine.
    """
    if voice in ("auto", "espeak") and shutil.which("espeak-ng"):
        pcm = _espeak(text, sample_rate)
        if pcm:
            return pcm
    if voice == "espeak":
        raise RuntimeError("espeak-ng is not installed")
    seconds = max(0.3, 0.06 * len(text))
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    env = np.minimum(1.0, np.minimum(t, seconds - t) / 0.02)  # 20 ms fades, no clicks
    wave = 0.3 * np.sin(2 * math.pi * 220.0 * t) * env
    return (wave * 32767).astype("<i2").tobytes()


def _espeak(text: str, sample_rate: int) -> bytes:
    import io  # deferred: soundfile and soxr load only when audio is decoded or resampled

    import soundfile as sf  # deferred: soundfile and soxr load only when audio is decoded or resampled
    import soxr  # deferred: soundfile and soxr load only when audio is decoded or resampled

    out = subprocess.run(
        ["espeak-ng", "--stdout", "-s", "175", text], capture_output=True, timeout=30, check=False
    )
    if out.returncode or not out.stdout:
        return b""
    data, rate = sf.read(io.BytesIO(out.stdout), dtype="int16")
    if data.ndim > 1:
        data = data[:, 0]
    if rate != sample_rate:
        data = soxr.resample(data, rate, sample_rate)
    return np.asarray(data, dtype="<i2").tobytes()


def chunks(pcm: bytes, sample_rate: int, chunk_ms: int) -> list[bytes]:
    step = max(2, int(sample_rate * chunk_ms / 1000) * 2)
    return [pcm[i : i + step] for i in range(0, len(pcm), step)]
