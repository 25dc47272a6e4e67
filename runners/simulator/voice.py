"""The simulator's voice: what it says (a short, plain version of the golden answer) and how.

espeak-ng gives intelligible speech offline; without it a clearly synthetic signal (tone
bursts, one per word) stands in, so a run never silently pretends to be a real model.
Every clip is 24 kHz mono PCM16 with its own leading/trailing silence trimmed, so the
leading silence the server adds is exactly what its ground truth says.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from typing import TYPE_CHECKING, Literal

import numpy as np

from arena_tui.spine.once import once

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark

RATE = 24000
VoiceKind = Literal["espeak", "tone"]
GREETING_TEXT = "Hello! How can I help you today?"

_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_MARKS = re.compile(r"(\*\*|__|`+|^#+\s*|^\s*[-*+]\s+|^\s*\d+\.\s+)", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# a period after these does not end a sentence ("Dr. Liu", "Powell St.", "e.g. this")
_ABBREV = re.compile(r"(?:\b(?:Dr|Mr|Mrs|Ms|Prof|St|Ave|vs|etc|e\.g|i\.e|No|Jr|Sr|approx)|\b[A-Z])\.$")
_TRIM_LEVEL = 200  # |sample| below this counts as silence when trimming synth output


def spoken_text(golden: str, *, max_sentences: int = 2, max_chars: int = 240) -> str:
    """First sentences of a golden answer, markdown stripped: what a voice would say."""
    text = _MD_MARKS.sub("", _MD_LINK.sub(r"\1", golden))
    text = re.sub(r"\s*\n+\s*", " ", text).replace("*", "").strip()
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(text):
        if sentences and _ABBREV.search(sentences[-1]):
            sentences[-1] = f"{sentences[-1]} {piece}"
        elif piece.strip():
            sentences.append(piece)
    out = ""
    for s in sentences[:max_sentences]:
        if out and len(out) + 1 + len(s) > max_chars:
            break
        out = f"{out} {s}".strip()
    if not out:
        out = text
    if len(out) > max_chars:
        cut = out[:max_chars].rsplit(" ", 1)[0].rstrip(",;:")
        out = cut + "."
    return out


def reply_text(benchmark: Benchmark, turn_index: int) -> str:
    """What the simulator says for a turn (its golden answer, spoken; the greeting for turn -1)."""
    if turn_index < 0:
        return GREETING_TEXT
    return spoken_text(benchmark.turn(turn_index).golden_text)


def espeak_available() -> bool:
    return shutil.which("espeak-ng") is not None


def resolve_voice(voice: str) -> VoiceKind:
    """`auto` picks espeak when installed; asking for espeak without it is an error."""
    if voice == "auto":
        return "espeak" if espeak_available() else "tone"
    if voice == "espeak":
        if not espeak_available():
            raise RuntimeError("voice 'espeak' needs espeak-ng installed (apt-get install espeak-ng)")
        return "espeak"
    if voice == "tone":
        return "tone"
    raise ValueError(f"unknown voice {voice!r}; use auto, espeak or tone")


def _trim(pcm: np.ndarray) -> np.ndarray:
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) >= _TRIM_LEVEL)
    if loud.size == 0:
        return pcm[:0]
    return pcm[loud[0] : loud[-1] + 1]


#: replies kept per process: sessions in step (a campaign's cells) and a retried turn ask for the same
#: reply again soon after; a whole benchmark's replies (512 kept) grew a 75-turn run ~0.5 MB a turn
SPOKEN_KEPT = 32


@once(SPOKEN_KEPT)  # the same reply asked by sessions in step: one espeak-ng, not one each at that moment
def _espeak(text: str) -> bytes:
    import soundfile as sf  # deferred: soundfile and soxr load only when audio is decoded or resampled
    import soxr  # deferred: soundfile and soxr load only when audio is decoded or resampled

    proc = subprocess.run(
        ["espeak-ng", "--stdout", "-v", "en-us", "-s", "175", "--", text],
        capture_output=True,
        timeout=60,
        check=True,
    )
    # espeak-ng writes a streaming WAV header (sizes 0xFFFFFFFF); read it as raw after the header.
    data, rate = sf.read(io.BytesIO(proc.stdout), dtype="int16")
    if data.ndim > 1:
        data = data[:, 0]
    if rate != RATE:
        data = soxr.resample(data, rate, RATE, quality="HQ")
    return _trim(np.asarray(data, dtype=np.int16)).tobytes()


@once(SPOKEN_KEPT)
def _tones(text: str) -> bytes:
    """One burst per word (length follows the word), at a pitch that walks so it is clearly synthetic."""
    parts: list[np.ndarray] = []
    gap = np.zeros(int(RATE * 0.06), dtype=np.int16)
    for i, word in enumerate(text.split() or ["..."]):
        dur = min(0.08 + 0.035 * len(word), 0.45)
        t = np.arange(int(RATE * dur)) / RATE
        freq = 330.0 + 55.0 * (i % 5)
        env = np.minimum(1.0, np.minimum(t, dur - t) / 0.01)  # 10 ms ramps: no clicks
        burst = (0.25 * 32767 * env * np.sin(2 * np.pi * freq * t)).astype(np.int16)
        if parts:
            parts.append(gap)
        parts.append(burst)
    return _trim(np.concatenate(parts)).tobytes()


def synthesize(text: str, kind: VoiceKind) -> tuple[bytes, VoiceKind]:
    """24 kHz mono PCM16 of `text`, trimmed at both ends, and the voice that really made it.

    A failing espeak falls back to tones for that clip (a dead turn helps nobody); the
    returned kind says so, and the server's ground truth records it per turn.
    """
    if kind == "espeak":
        try:
            pcm = _espeak(text)
            if pcm:
                return pcm, "espeak"
        except (OSError, subprocess.SubprocessError, RuntimeError, ValueError):
            pass
    return _tones(text), "tone"
