"""A turn's duplex cues (`Turn.duplex`: user speech scripted into the bot's reply), checked as the
loader checks the rest of a turn: each problem one line naming the file, line, turn and field
(`duplex[1].at_ms`), all of them at once; and found in an audio overlay like a turn's WAV.

Kept out of `loader.py` (which calls it) so the rules for cues sit in one small place; the loader
hands in what they share with a turn's WAV (a path stays inside the folder, a WAV `run` can use).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

from arena_tui.spine.benchmark import Benchmark, Turn

#: the latest a cue may come after the reply's first audible speech (10 minutes: a typo, not a script)
MAX_CUE_AT_MS = 600_000.0

Problem = tuple[str, str]  # (field, message)


def cue_problems(folder: Path, turn: Turn, *, inside: Callable[[Path, str], bool]) -> list[Problem]:
    """What is wrong with the turn's cues as written (their audio is `cue_audio_problems`)."""
    out: list[Problem] = []
    last = -math.inf
    for i, cue in enumerate(turn.duplex):
        where = f"duplex[{i}]"
        if not math.isfinite(cue.at_ms) or not 0 <= cue.at_ms <= MAX_CUE_AT_MS:
            out.append((f"{where}.at_ms", f"must be 0 to {MAX_CUE_AT_MS:,.0f} ms after the reply's first speech, "
                                          f"got {cue.at_ms:g}"))
        elif cue.at_ms < last:
            out.append((f"{where}.at_ms", f"{cue.at_ms:g} comes before the cue above it ({last:g}): list cues "
                                          "in the order they are said"))
        else:
            last = cue.at_ms
        if not cue.text.strip():
            out.append((f"{where}.text", "empty (what the user says in the cue's WAV)"))
        if not cue.audio_file.strip():
            out.append((f"{where}.audio_file", "empty (the WAV the user says it in)"))
        elif not inside(folder, cue.audio_file):
            out.append((f"{where}.audio_file", f"{cue.audio_file!r} is outside the benchmark folder (use a path "
                                               f"relative to it, e.g. audio/turn_{turn.turn_index:03d}_cue{i}.wav)"))
        elif cue.audio_file == (turn.audio_file or f"audio/turn_{turn.turn_index:03d}.wav"):
            out.append((f"{where}.audio_file", "is the turn's own WAV (a cue is what the user says during the reply)"))
    return out


def cue_audio_problems(bench: Benchmark, turn: Turn, *, strict: bool, inside: Callable[[Path, str], bool],
                       wav_problem: Callable[[Path], str | None]) -> list[Problem]:
    """A cue's WAV missing (when the benchmark ships audio: `audio_checks.ships_audio`) or unusable (a path
    outside the folder is `cue_problems`' already)."""
    out: list[Problem] = []
    for i, cue in enumerate(turn.duplex):
        if bench.root is not None and not Path(cue.audio_file).is_absolute() and not inside(bench.root, cue.audio_file):
            continue
        path = bench.cue_path(cue)
        if path is None or not path.is_file():
            if strict:
                out.append((f"duplex[{i}].audio_file", f"WAV missing: {path or cue.audio_file}"))
            continue
        problem = wav_problem(path)
        if problem:
            out.append((f"duplex[{i}].audio_file", f"{path}: {problem}"))
    return out


def from_overlay(turn: Turn, root: Path, overlay: Path) -> Turn:
    """The turn with each cue whose WAV is not in the folder but is in `overlay` (the same layout:
    synthesised for a read-only folder, or a downloaded snapshot) pointing there."""
    cues = []
    for cue in turn.duplex:
        if not os.path.isabs(cue.audio_file) and not (root / cue.audio_file).is_file():
            alt = overlay / cue.audio_file
            if alt.is_file():
                cue = cue.model_copy(update={"audio_file": str(alt.resolve())})
        cues.append(cue)
    return turn.model_copy(update={"duplex": cues}) if cues != turn.duplex else turn
