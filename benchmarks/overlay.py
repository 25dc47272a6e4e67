"""Audio from elsewhere for turns without a WAV in the folder: another folder of the same layout
(the benchmark's Hugging Face snapshot) or the overlay synthesised for read-only folders
(`audio_overlay_dir`), and where each turn's audio came from (`audio/sources.json`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from platformdirs import user_data_dir

from arena_tui.spine.benchmark import Benchmark, Turn

from . import duplex_cues
from .reading import Reader

SOURCES_FILE = "audio/sources.json"


def audio_overlay_root() -> Path:
    """Audio made for read-only benchmark folders: env ARENA_TUI_AUDIO_DIR, else the user data dir."""
    raw = os.environ.get("ARENA_TUI_AUDIO_DIR")
    return Path(raw).expanduser() if raw else Path(user_data_dir("arena-tui")) / "audio"


def audio_overlay_dir(name: str) -> Path:
    return audio_overlay_root() / name


def apply_overlay(bench: Benchmark, overlay: Path, default: str = "synth:unknown") -> tuple[Benchmark, dict[int, str]]:
    """Turns without audio in the folder take it from another folder of the same layout: the
    Hugging Face snapshot of the benchmark, or the overlay synthesised for read-only folders."""
    if bench.root is None or not overlay.is_dir() or overlay.resolve() == bench.root.resolve():
        return bench, {}
    try:
        raw = json.loads((overlay / SOURCES_FILE).read_text())
        declared = raw if isinstance(raw, dict) else {}
    except (OSError, json.JSONDecodeError):
        declared = {}
    turns, sources = [], {}
    for t in bench.turns:
        rel = t.audio_file if t.audio_file and not os.path.isabs(t.audio_file) else f"audio/turn_{t.turn_index:03d}.wav"
        alt = overlay / rel
        if not bench.has_audio(t) and alt.is_file():
            t = t.model_copy(update={"audio_file": str(alt.resolve())})
            sources[t.turn_index] = str(declared.get(str(t.turn_index), default))
        t = duplex_cues.from_overlay(t, bench.root, overlay)
        turns.append(t)
    return bench.model_copy(update={"turns": turns}), sources


def declared_sources(r: Reader, turns: list[Turn]) -> dict[int, str]:
    path = r.folder / SOURCES_FILE
    if not path.is_file():
        return {}
    data = r.read_json(path)
    if not isinstance(data, dict):
        if data is not None:
            r.add(f"expected an object turn -> source, got {type(data).__name__}", path)
        return {}
    out: dict[int, str] = {}
    for k, v in data.items():
        try:
            out[int(k)] = str(v)
        except ValueError:
            r.add(f"key '{k}' is not a turn number", path)
    return out
