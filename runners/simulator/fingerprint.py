"""Which turn is the user speaking? Recognise a benchmark WAV from the audio received.

Every speech onset in a WAV (first sample at or above ONSET_LEVEL after >= 100 ms below
it, counting the time before the file as silence) is hashed over the next HASH_SAMPLES
samples. The received stream is scanned the same way, so a match is exact and does not
depend on how the client cut the audio into chunks. Onsets inside a WAV (after a pause)
are indexed too, with their offset, so a turn split by VAD is still recognised.

Two WAVs can open alike: synthesised "Hi! Are you open…" and "How much is…" (demo_bench
turns 0 and 1) share their first 64 ms. An onset whose 50 ms hash names more than one turn
is told apart by a hash over LONG_SAMPLES (the stream after a clip is digital silence, so a
WAV's tail is padded with zeros), and matched only once that much has arrived: never by
which turn the simulator last answered, which a resumed run's fresh simulator does not know.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from arena_tui.spine.audio import TARGET_RATE, load_pcm16

RATE = TARGET_RATE  # what `load_pcm16` decodes to, as the engine streams it
ONSET_LEVEL = 500  # |sample|; TTS room tone stays well below, speech goes well above
QUIET_SAMPLES = RATE // 10  # 100 ms below the level before an onset
HASH_SAMPLES = RATE // 20  # 50 ms hashed after the onset
LONG_SAMPLES = RATE // 4  # 250 ms hashed when the 50 ms name several turns
FRAME = RATE // 100  # 10 ms, as the VAD frames
MATCH_SLACK_MS = 300.0  # a fingerprint onset may precede the VAD's speech start by this much


@dataclass(frozen=True)
class Match:
    turn_index: int
    offset_ms: float  # where in the turn's WAV the onset is
    first: bool  # the WAV's first onset: the start of the turn
    onset_ms: float  # where in the received stream (audio time)


def _digest(pcm: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(pcm, dtype="<i2").tobytes(), digest_size=8).digest()


def _long(pcm: np.ndarray) -> np.ndarray:
    """The LONG_SAMPLES after an onset, zero-padded past the clip's end (silence follows a clip)."""
    return pcm if pcm.size >= LONG_SAMPLES else np.concatenate([pcm, np.zeros(LONG_SAMPLES - pcm.size, dtype=pcm.dtype)])


def onsets(pcm: np.ndarray) -> list[int]:
    """Sample indices of onsets in a whole clip (silence assumed before it)."""
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) >= ONSET_LEVEL)
    if loud.size == 0:
        return []
    gaps = np.diff(loud, prepend=-QUIET_SAMPLES - 1)
    return [int(i) for i in loud[gaps > QUIET_SAMPLES]]


class FingerprintIndex:
    """Hash of the 50 ms after each onset -> (turn, offset)."""

    def __init__(self) -> None:
        self._by_hash: dict[bytes, list[tuple[int, float, bool]]] = {}
        self._by_long: dict[bytes, list[tuple[int, float, bool]]] = {}
        self.turns: set[int] = set()
        self.errors: dict[int, str] = {}
        self._last_loud_ms: dict[int, float] = {}
        self._frame_rms: dict[int, np.ndarray] = {}  # RMS of each 10 ms frame from the WAV's start
        self._shared: set[bytes] = set()  # 50 ms hashes that also open a WAV of another index (`link`)

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
            entry = (turn_index, i * 1000.0 / RATE, k == 0)
            self._by_hash.setdefault(_digest(chunk), []).append(entry)
            self._by_long.setdefault(_digest(_long(pcm[i : i + LONG_SAMPLES])), []).append(entry)
        self.turns.add(turn_index)

    def add_file(self, turn_index: int, path: Path, transform: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        """`transform`: what the clip goes through before it is sent (the run's acoustic condition)."""
        try:
            pcm = load_pcm16(path)  # the samples the engine streams (one decoder)
            self.add(turn_index, transform(pcm) if transform is not None else pcm)
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

    def shared(self, pcm: np.ndarray) -> bool:
        """These 50 ms also open a WAV of a linked index: only the 250 ms hash tells them apart."""
        return _digest(pcm) in self._shared

    def link(self, other: FingerprintIndex) -> None:
        """Two indexes scanning one stream (the turns' WAVs, the duplex cues'): an onset whose 50 ms
        open a WAV in both is matched in neither until its 250 ms say which WAV it is."""
        both = self._by_hash.keys() & other._by_hash.keys()
        self._shared |= both
        other._shared |= both

    def lookup_long(self, pcm: np.ndarray) -> list[tuple[int, float, bool]]:
        return self._by_long.get(_digest(_long(pcm)), [])

    def __len__(self) -> int:
        return len(self.turns)


@dataclass
class _Onset:
    """An onset in the stream whose audio is still being collected."""

    at: int  # sample index in the stream
    parts: list[np.ndarray]
    have: int
    short: list[tuple[int, float, bool]] | None = None  # the 50 ms lookup, once made and ambiguous
    linked: bool = False  # its 50 ms also open a WAV of a linked index (`FingerprintIndex.link`)


class StreamScanner:
    """Finds onsets in the received stream across chunk boundaries and looks them up."""

    def __init__(self, index: FingerprintIndex) -> None:
        self.index = index
        self._quiet = QUIET_SAMPLES + 1  # samples since the last loud one (stream starts quiet)
        self._collect: list[_Onset] = []
        self._pos = 0

    def feed(self, pcm: np.ndarray) -> list[Match]:
        base = self._pos
        self._pos += pcm.size
        found: list[Match] = []
        still: list[_Onset] = []
        for o in self._collect:  # collections in progress
            start = max(0, o.at - base)
            take = pcm[start : start + LONG_SAMPLES - o.have]
            o.parts.append(take)
            o.have += take.size
            if not self._settle(o, found):
                still.append(o)
        loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) >= ONSET_LEVEL)
        if loud.size == 0:
            self._quiet += pcm.size
            self._collect = still
            return found
        prev = np.concatenate([[-self._quiet - 1], loud[:-1]])
        for i in loud[(loud - prev) > QUIET_SAMPLES]:
            chunk = pcm[int(i) : int(i) + LONG_SAMPLES]
            o = _Onset(base + int(i), [chunk], chunk.size)
            if not self._settle(o, found):
                still.append(o)
        self._collect = still
        self._quiet = pcm.size - 1 - int(loud[-1])
        return found

    def _settle(self, o: _Onset, found: list[Match]) -> bool:
        """Match `o` as soon as it can be told: 50 ms naming one turn (or none) of this index
        alone, else 250 ms (then nothing, when the 50 ms also open another index's WAV)."""
        if o.short is None:
            if o.have < HASH_SAMPLES:
                return False
            head = np.concatenate(o.parts)[:HASH_SAMPLES]
            short = self.index.lookup(head)
            o.linked = self.index.shared(head)
            if len({turn for turn, _, _ in short}) <= 1 and not o.linked:
                found.extend(self._matches(o.at, short))
                return True
            o.short = short
        if o.have < LONG_SAMPLES:
            return False
        found.extend(self._matches(o.at, self.index.lookup_long(np.concatenate(o.parts)) or ([] if o.linked else o.short)))
        return True

    def collecting(self, since: int) -> bool:
        """An onset at or after sample `since` is still being collected (not matched or refused yet)."""
        return any(o.at >= since for o in self._collect)

    def _matches(self, onset: int, entries: list[tuple[int, float, bool]]) -> list[Match]:
        return [Match(turn, offset, first, onset * 1000.0 / RATE) for turn, offset, first in entries]
