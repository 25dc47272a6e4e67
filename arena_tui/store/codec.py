"""Audio as it is kept in the `audio` table: lossless FLAC, or the raw PCM16 it came as.

FLAC halves speech and shrinks silence to almost nothing, and it is lossless: decoding gives
back the exact bytes that were recorded, so playback and exports do not change. Raw PCM is kept
where FLAC cannot hold the bytes exactly or would not be smaller: a clip that is not a whole
number of frames (an odd byte), a format libsndfile's FLAC refuses, a clip so short that FLAC's
header outweighs it, or an encoder error (audio is never lost to its compression). Rows written
before schema 3 are all raw PCM (`codec` defaults to it).

Encoding costs about 1 ms per second of stereo audio, decoding about as much: the writer and
the reader run them in a worker thread, off the event loop the engine paces audio on.
"""

from __future__ import annotations

import io
import logging
from typing import Literal

import numpy as np
import soundfile as sf

log = logging.getLogger(__name__)

Codec = Literal["pcm16", "flac"]
PCM16: Codec = "pcm16"
FLAC: Codec = "flac"

_FLAC_MAX_CHANNELS = 8
_FLAC_MAX_RATE = 655_350


def encode(pcm: bytes, sample_rate: int, channels: int) -> tuple[Codec, bytes]:
    """The smaller exact form of PCM16 little-endian `pcm`: (codec, stored bytes)."""
    frame = 2 * channels
    if (
        not pcm
        or channels < 1
        or channels > _FLAC_MAX_CHANNELS
        or not 1 <= sample_rate <= _FLAC_MAX_RATE
        or len(pcm) % frame
    ):
        return PCM16, pcm
    samples = np.frombuffer(pcm, dtype="<i2").reshape(-1, channels)
    buf = io.BytesIO()
    try:
        sf.write(buf, samples, sample_rate, format="FLAC", subtype="PCM_16")
    except (sf.LibsndfileError, RuntimeError, ValueError, TypeError) as e:
        log.warning("audio kept as raw PCM: FLAC encoding failed (%s Hz x%s): %s", sample_rate, channels, e)
        return PCM16, pcm
    data = buf.getvalue()
    return (FLAC, data) if len(data) < len(pcm) else (PCM16, pcm)


def decode(codec: str, data: bytes, channels: int) -> bytes:
    """The PCM16 little-endian bytes a row holds; ValueError if it cannot be decoded."""
    if codec == PCM16:
        return bytes(data)
    if codec != FLAC:
        raise ValueError(f"unknown audio codec {codec!r}")
    try:
        samples, _ = sf.read(io.BytesIO(data), dtype="int16", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, ValueError, TypeError) as e:
        raise ValueError(f"FLAC data cannot be decoded: {e}") from None
    if samples.shape[1] != channels:
        raise ValueError(f"FLAC data holds {samples.shape[1]} channel(s), the row says {channels}")
    return samples.astype("<i2", copy=False).tobytes()
