"""Human speakers: where a speaker's recording of a turn sits (`real_audio/<speaker>/turn_NNN.wav`,
either layout), which speakers a folder has, and our layout read for one of them (their
recordings, or a problem per turn: TTS never stands in)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.source import TTS

from .reading import Reader

REAL_AUDIO = "real_audio"  # human recordings: real_audio/<speaker>/turn_NNN.wav


def speaker_of(file_name: str) -> str:
    parts = file_name.split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == REAL_AUDIO else TTS


def speaker_wav(speaker: str, turn_index: int) -> str:
    """Where a human speaker's recording of a turn sits in a benchmark folder (either layout)."""
    return f"{REAL_AUDIO}/{speaker}/turn_{turn_index:03d}.wav"


def speakers_in(folders: Iterable[Path]) -> list[str]:
    """The human speakers with recordings in these folders: `real_audio/<speaker>/` holding WAVs,
    or named by a Hub `metadata.jsonl` row."""
    found: set[str] = set()
    for folder in folders:
        root = folder / REAL_AUDIO
        if root.is_dir():
            found.update(d.name for d in root.iterdir() if d.is_dir() and any(d.glob("*.wav")))
        meta = folder / "metadata.jsonl"
        if meta.is_file():
            try:
                lines = meta.read_text(encoding="utf-8").splitlines()
            except OSError:
                lines = []
            for line in lines:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if isinstance(row, dict):
                    spk = str(row.get("speaker") or speaker_of(str(row.get("file_name") or "")))
                    if spk != TTS:
                        found.add(spk)
    return sorted(found)


def speaker_turns(r: Reader, bench: Benchmark, speaker: str, fallbacks: Iterable[Path],
                   lines: dict[int, int], turns_path: Path | None) -> tuple[Benchmark, dict[int, str]]:
    """Our layout (turns.jsonl) read for a human speaker: each turn's WAV is the speaker's
    `real_audio/<speaker>/turn_NNN.wav`, in the folder or in a folder holding its audio (the
    downloaded Hub snapshot); a turn without one is a problem (TTS never stands in)."""
    turns, sources, missing = [], {}, []
    places = [bench.root, *fallbacks] if bench.root is not None else list(fallbacks)
    for t in bench.turns:
        rel = speaker_wav(speaker, t.turn_index)
        place = next((p for p in places if (p / rel).is_file()), None)
        if place is None:
            missing.append(t)
        else:
            t = t.model_copy(update={"audio_file": rel if place == bench.root else str((place / rel).resolve())})
            sources[t.turn_index] = f"human:{speaker}"
        turns.append(t)
    if missing and len(missing) == len(bench.turns):  # none at all: one line, not one per turn
        have = speakers_in(places)
        r.add(f"no recordings by speaker '{speaker}' ({REAL_AUDIO}/{speaker}/turn_NNN.wav; speakers here: "
              f"{', '.join([TTS, *have])})", bench.root)
    else:
        for t in missing:
            r.add(f"no recording by speaker '{speaker}' ({speaker_wav(speaker, t.turn_index)})", turns_path,
                  lines.get(t.turn_index), t.turn_index, "speaker")
    return bench.model_copy(update={"turns": turns}), sources
