"""User speech in a WAV, found before it is played (offline VAD).

Silero (Pipecat's bundled ONNX model) at 16 kHz, 32 ms windows: speech starts at a window with
p >= 0.5 and ends at the first window with p < 0.35 (hysteresis); bursts shorter than 90 ms are
dropped; each interval is padded by 30 ms. The energy fallback uses 10 ms blocks: start at >= T,
stop below T - 6 dB, where T = max(-40 dBFS, noise floor + 12 dB) and the noise floor is the
10th percentile of the block levels. Then gaps shorter than `min_silence_ms` (default 300) are
merged, so a pause inside a sentence does not split it; `raw_speech_intervals` gives the
unmerged ones.
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Literal

import numpy as np

from arena_tui.spine.audio import resample
from arena_tui.spine.events import Interval
from arena_tui.spine.once import once

from arena_tui.spine.speech import (  # the energy rule and the interval maths an import reads recordings by
    MIN_SILENCE_MS,
    SPEECH_PAD_MS,
    PcmLike,
    as_int16,
    energy_speech_intervals,
    hysteresis,
    merge_intervals,
    runs_of,
    to_intervals,
)

SILERO_RATE = 16000
SILERO_WINDOW = 512  # samples at 16 kHz = 32 ms
SILERO_ON = 0.5
SILERO_OFF = 0.35
SILERO_MIN_SPEECH_MS = 90.0
# Reset the model's recurrent state during long non-speech, where it drifts and would
# under-report the speech that follows.
SILERO_RESET_AFTER_MS = 2000.0
SILERO_RESET_QUIET_WINDOWS = 5
SILERO_RESET_MAX_P = 0.1

@functools.cache
def _silero_model():  # loaded once per process (~0.3 s); calls are serialised by _SILERO_LOCK
    from importlib import resources  # deferred: only the Silero VAD reads its packaged model

    from pipecat.audio.vad.silero import SileroOnnxModel  # deferred: Silero VAD (onnxruntime) loads only when it is chosen

    return SileroOnnxModel(str(resources.files("pipecat.audio.vad.data").joinpath("silero_vad.onnx")))


_SILERO_LOCK = threading.Lock()


def silero_probabilities(pcm: PcmLike, sample_rate: int) -> tuple[np.ndarray, float]:
    """Speech probability per 32 ms window (16 kHz), and the window length in ms."""
    x = as_int16(pcm)
    if sample_rate != SILERO_RATE:
        x = resample(x, sample_rate, SILERO_RATE)
    f = x.astype(np.float32) / 32768.0
    n = len(f) // SILERO_WINDOW
    probs = np.zeros(n)
    window_ms = SILERO_WINDOW * 1000.0 / SILERO_RATE
    reset_every = math.ceil(SILERO_RESET_AFTER_MS / window_ms)
    with _SILERO_LOCK:
        model = _silero_model()
        model.reset_states()
        since_reset, quiet = 0, 0
        for i in range(n):
            p = float(np.asarray(model(f[i * SILERO_WINDOW : (i + 1) * SILERO_WINDOW], SILERO_RATE)).reshape(-1)[0])
            probs[i] = p
            since_reset += 1
            quiet = quiet + 1 if p < SILERO_RESET_MAX_P else 0
            if since_reset >= reset_every and quiet >= SILERO_RESET_QUIET_WINDOWS:
                model.reset_states()
                since_reset = 0
    return probs, window_ms


def raw_speech_intervals(
    pcm: PcmLike,
    sample_rate: int,
    offset_ms: float = 0.0,
    method: Literal["silero", "energy"] = "silero",
) -> list[Interval]:
    """Speech in a WAV before merging pauses; times are `offset_ms` + position in the WAV."""
    if method == "silero":
        x = as_int16(pcm)
        total_ms = len(x) * 1000.0 / sample_rate
        probs, step = silero_probabilities(x, sample_rate)
        runs = runs_of(hysteresis(probs, SILERO_ON, SILERO_OFF))
        return to_intervals(runs, step, total_ms, SILERO_MIN_SPEECH_MS, SPEECH_PAD_MS, offset_ms)
    if method == "energy":
        return energy_speech_intervals(pcm, sample_rate, offset_ms)
    raise ValueError(f"unknown speech detection method {method!r} (use 'silero' or 'energy')")


def speech_intervals(
    pcm: PcmLike,
    sample_rate: int,
    offset_ms: float = 0.0,
    method: Literal["silero", "energy"] = "silero",
    min_silence_ms: float = MIN_SILENCE_MS,
) -> list[Interval]:
    """Speech in a WAV with pauses shorter than `min_silence_ms` bridged (computed before playing)."""
    return merge_intervals(raw_speech_intervals(pcm, sample_rate, offset_ms, method), min_silence_ms)


@once(maxsize=512)
def clip_speech(pcm: bytes, sample_rate: int, method: Literal["silero", "energy"]) -> tuple[Interval, ...]:
    """`speech_intervals` of a whole clip, found once per process: concurrent runs of one benchmark
    share the clips' decode (`audio.load_pcm16_bytes`), so the same bytes object (whose hash
    Python keeps) finds the same answer."""
    return tuple(speech_intervals(pcm, sample_rate, offset_ms=0, method=method))
