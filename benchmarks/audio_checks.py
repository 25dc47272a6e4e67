"""A benchmark's audio checked: whether it ships recordings of its own (`ships_audio`: then a
missing WAV is BROKEN, else it is audio to synthesise), and whether each WAV is one a run can
use (readable, not longer than one turn may take, not silent), decided once per file version."""

from __future__ import annotations

import functools
import os
from pathlib import Path

from arena_tui.spine import audio
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.times import duration_text

from . import duplex_cues, file_state
from .reading import Reader, inside
from .speakers import REAL_AUDIO

DEFAULT_MAX_TURN_AUDIO_S = 300.0  # one user turn's WAV; env ARENA_TUI_MAX_TURN_AUDIO_S overrides
SILENT_DBFS = -60.0  # a WAV whose loudest 50 ms block stays below this holds no speech


def max_turn_audio_s() -> float:
    """The longest WAV one turn may have: env ARENA_TUI_MAX_TURN_AUDIO_S, else 5 minutes."""
    raw = os.environ.get("ARENA_TUI_MAX_TURN_AUDIO_S")
    if not raw:
        return DEFAULT_MAX_TURN_AUDIO_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise ValueError(f"ARENA_TUI_MAX_TURN_AUDIO_S must be a positive number of seconds, got {raw!r}")
    return value


def too_long(duration_s: float, limit_s: float) -> str | None:
    """Why a WAV this long is no turn's (`1:12:00 long, more than the 05:00 one turn may take`), or None:
    the one rule a benchmark's WAVs and an import's are held to (`max_turn_audio_s`)."""
    if duration_s <= limit_s:
        return None
    return (f"{duration_text(duration_s * 1000)} long, more than the {duration_text(limit_s * 1000)} one turn may take "
            "(ARENA_TUI_MAX_TURN_AUDIO_S)")


def ships_audio(bench: Benchmark, synthesized: set[int]) -> bool:
    """Whether the benchmark comes with recordings of its own: a turn's recorded (not synthesised)
    WAV is there, a turn names a WAV other than the conventional `audio/turn_NNN.wav` (a Hub row:
    `real_audio/<speaker>/turn_NNN.wav`), or its `audio/` folder holds a WAV no turn plays. Then
    every turn's WAV must be there (a missing one is a broken copy or a wrong path: BROKEN). Only a
    benchmark that ships no audio at all (five of the six shared copies: no `audio/` folder,
    conventional names) is audio to synthesise (docs/benchmarks.md)."""
    present = {t.turn_index for t in bench.turns if bench.has_audio(t)}
    if present - synthesized:
        return True
    if any(t.audio_file is not None and not conventional(t.audio_file, t.turn_index) for t in bench.turns
           if t.turn_index not in present):
        return True
    folder = bench.root / "audio" if bench.root is not None else None
    if folder is None or not folder.is_dir():
        return False
    played = {p.resolve() for t in bench.turns if (p := bench.audio_path(t)) is not None and t.turn_index in present}
    played |= {p.resolve() for t in bench.turns for c in t.duplex if (p := bench.cue_path(c)) is not None}
    return any(f.suffix.lower() == ".wav" and f.resolve() not in played for f in folder.iterdir())


def conventional(audio_file: str, turn: int) -> bool:
    *folders, name = audio_file.split("/")
    return name == f"turn_{turn:03d}.wav" and (folders == ["audio"] or len(folders) == 2 and folders[0] == REAL_AUDIO)


def check_audio(r: Reader, bench: Benchmark, lines: dict[int, int], turns_path: Path | None,
                 require_audio: bool, synthesized: set[int], limit_s: float) -> None:
    """A WAV missing from a benchmark that ships audio (`ships_audio`) is a problem; one that ships
    none, or only synthesised audio so far, just means "synthesise the rest" (unless
    `require_audio`). A present WAV must be one `run` can use: readable, not longer than
    `limit_s`, not silent."""
    paths = {t.turn_index: bench.audio_path(t) for t in bench.turns}
    present = {t.turn_index for t in bench.turns if bench.has_audio(t)}
    strict = require_audio or ships_audio(bench, synthesized)
    outside = {t.turn_index for t in bench.turns if t.audio_file is not None and not inside(r.folder, t.audio_file)}
    for i, p in paths.items():
        if i not in present:
            why = file_state.absent_reason(p) if p is not None else f"{file_state.MISSING}: {p}"
            if (strict or file_state.broken(why)) and i not in outside:  # (a path outside the folder is its own problem already)
                r.add(why, turns_path, lines.get(i), i, "audio_file")
            continue
        assert p is not None
        problem = wav_problem(p, limit_s)
        if problem:
            r.add(f"{p}: {problem}", turns_path, lines.get(i), i, "audio_file")
    for t in bench.turns:  # its duplex cues' WAVs, by the same rules
        for field, message in duplex_cues.cue_audio_problems(bench, t, strict=strict, inside=inside,
                                                             wav_problem=lambda p: wav_problem(p, limit_s)):
            r.add(message, turns_path, lines.get(t.turn_index), t.turn_index, field)


def wav_problem(path: Path, limit_s: float) -> str | None:
    """Why a turn's WAV cannot be run (the same rules `run` applies), or None; cached per file version."""
    try:
        st = path.stat()
    except OSError as e:
        return f"cannot read: {e.strerror or e}"
    return _wav_verdict(str(path), st.st_mtime_ns, st.st_size, limit_s)


@functools.lru_cache(maxsize=1024)
def _wav_verdict(path: str, mtime_ns: int, size: int, limit_s: float) -> str | None:
    try:
        fmt = audio.wav_info(path)  # the header only: length is known before any sample is read
        if (long := too_long(fmt.duration_s, limit_s)) is not None:
            return long
        loudest = audio.wav_loudest_dbfs(path)
    except audio.AudioError as e:
        return f"unusable WAV: {e.reason}"
    if loudest < SILENT_DBFS:
        return (f"silent (loudest {loudest:.0f} dBFS, below {SILENT_DBFS:.0f}): the model would be scored on a "
                "turn nobody spoke")
    return None
