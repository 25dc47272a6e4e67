"""Which turn is the user speaking? Recognise a benchmark WAV from the audio received.

Every speech onset in a WAV (first sample at or above ONSET_LEVEL after >= 100 ms below
it, counting the time before the file as silence) is hashed over the next HASH_SAMPLES
samples. The received stream is scanned the same way, so a match is exact and does not
depend on how the client cut the audio into chunks. Onsets inside a WAV (after a pause)
are indexed too, with their offset, so a turn split by VAD is still recognised.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena_tui.spine.audio import load_pcm16

RATE = 24000
ONSET_LEVEL = 500  # |sample|; TTS room tone stays well below, speech goes well above
QUIET_SAMPLES = RATE // 10  # 100 ms below the level before an onset
HASH_SAMPLES = RATE // 20  # 50 ms hashed after the onset
FRAME = RATE // 100  # 10 ms, as the VAD frames


@dataclass(frozen=True)
class Match:
    turn_index: int
    offset_ms: float  # where in the turn's WAV the onset is
    first: bool  # the WAV's first onset: the start of the turn
    onset_ms: float  # where in the received stream (audio time)


def _digest(pcm: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(pcm, dtype="<i2").tobytes(), digest_size=8).digest()


def onsets(pcm: np.ndarray) -> list[int]:
    """Sample indices of onsets in a whole clip (silence assumed before it)."""
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) >= ONSET_LEVEL)
    if loud.size == 0:
        return []
    gaps = np.diff(loud, prepend=-QUIET_SAMPLES - 1)
    return [int(i) for i in loud[gaps > QUIET_SAMPLES]]


def read_pcm24k(path: Path) -> np.ndarray:
    """Mono int16 at 24 kHz, decoded exactly as the engine decodes what it streams.

    Same decoder (`arena_tui.spine.audio.load_pcm16`: downmix, resampler) means the same samples,
    so fingerprints match even for WAVs that are not 24 kHz mono.
    """
    return np.asarray(load_pcm16(path, RATE), dtype=np.int16)


class FingerprintIndex:
    """Hash of the 50 ms after each onset -> (turn, offset)."""

    def __init__(self) -> None:
        self._by_hash: dict[bytes, list[tuple[int, float, bool]]] = {}
        self.turns: set[int] = set()
        self.errors: dict[int, str] = {}
        self._last_loud_ms: dict[int, float] = {}
        self._frame_rms: dict[int, np.ndarray] = {}  # RMS of each 10 ms frame from the WAV's start

    def add(self, turn_index: int, pcm: np.ndarray) -> None:
        loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) >= ONSET_LEVEL)
        if loud.size:
            self._last_loud_ms[turn_index] = (int(loud[-1]) + 1) * 1000.0 / RATE
        n = pcm.size // FRAME
        frames = pcm[: n * FRAME].reshape(n, FRAME).astype(np.float64)
        self._frame_rms[turn_index] = np.sqrt(np.mean(frames * frames, axis=1))
        for k, i in enumerate(onsets(pcm)):
            chunk = pcm[i : i + HASH_SAMPLES]
            if chunk.size < HASH_SAMPLES:
                continue
            self._by_hash.setdefault(_digest(chunk), []).append((turn_index, i * 1000.0 / RATE, k == 0))
        self.turns.add(turn_index)

    def add_file(self, turn_index: int, path: Path) -> None:
        try:
            self.add(turn_index, read_pcm24k(path))
        except Exception as e:  # unreadable audio: that turn falls back to order; say why
            self.errors[turn_index] = f"{path}: {e}"

    def speech_end_ms(self, turn_index: int, level: float) -> float | None:
        """Where the VAD (RMS >= level per 10 ms frame) will hear this WAV's speech end, from its start."""
        rms = self._frame_rms.get(turn_index)
        if rms is not None:
            active = np.flatnonzero(rms >= level)
            if active.size:
                return (int(active[-1]) + 1) * 10.0
        return self._last_loud_ms.get(turn_index)

    def lookup(self, pcm: np.ndarray) -> list[tuple[int, float, bool]]:
        return self._by_hash.get(_digest(pcm), [])

    def __len__(self) -> int:
        return len(self.turns)


class StreamScanner:
    """Finds onsets in the received stream across chunk boundaries and looks them up."""

    def __init__(self, index: FingerprintIndex) -> None:
        self.index = index
        self._quiet = QUIET_SAMPLES + 1  # samples since the last loud one (stream starts quiet)
        self._collect: list[tuple[int, list[np.ndarray], int]] = []  # (onset sample, parts, have)
        self._pos = 0

    def feed(self, pcm: np.ndarray) -> list[Match]:
        base = self._pos
        self._pos += pcm.size
        found: list[Match] = []
        # finish collections in progress
        still: list[tuple[int, list[np.ndarray], int]] = []
        for onset, parts, have in self._collect:
            start = max(0, onset - base)
            take = pcm[start : start + HASH_SAMPLES - have]
            parts.append(take)
            have += take.size
            if have >= HASH_SAMPLES:
                found.extend(self._match(onset, np.concatenate(parts)))
            else:
                still.append((onset, parts, have))
        self._collect = still
        loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) >= ONSET_LEVEL)
        if loud.size == 0:
            self._quiet += pcm.size
            return found
        prev = np.concatenate([[-self._quiet - 1], loud[:-1]])
        for i in loud[(loud - prev) > QUIET_SAMPLES]:
            i = int(i)
            chunk = pcm[i : i + HASH_SAMPLES]
            if chunk.size >= HASH_SAMPLES:
                found.extend(self._match(base + i, chunk))
            else:
                self._collect.append((base + i, [chunk], chunk.size))
        self._quiet = pcm.size - 1 - int(loud[-1])
        return found

    def _match(self, onset: int, pcm: np.ndarray) -> list[Match]:
        return [
            Match(turn, offset, first, onset * 1000.0 / RATE)
            for turn, offset, first in self.index.lookup(pcm)
        ]
