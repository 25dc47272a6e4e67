"""The Hugging Face datasets' layout: `metadata.jsonl` rows (`file_name, turn_id, speaker,
input_text, golden_text, required_function_call, function_call_response, categories,
subcategory, scoring_dimensions`, with JSON-in-string and comma-joined values; older revisions
keep them as a JSON array in `benchmark/turns.json`), one row per (turn, recording), read as our
turns: one row per turn, its audio picked by speaker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena_tui.spine.source import TTS

from . import strict_json
from .reading import Reader
from .speakers import speaker_of


def split_list(value: object) -> Any:
    """Hub rows join lists with ', '; ours are JSON lists."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [] if value is None else value


def json_value(r: Reader, value: object, path: Path, line: int, turn: object, field: str) -> Any:
    """Hub rows carry calls/responses as JSON strings."""
    if not isinstance(value, str):
        return value
    s = value.strip()
    if s in ("", "null", "None"):
        return None
    try:
        value = strict_json.loads(s)
    except json.JSONDecodeError as e:
        r.add(f"not valid JSON in string: {e.msg}", path, line, turn if isinstance(turn, int) else None, field)
        return None
    return None if r.not_json(value, path, line, turn if isinstance(turn, int) else None, field) else value


def hub_row(r: Reader, row: dict[str, Any], path: Path, line: int) -> dict[str, Any]:
    """A Hub metadata row in our turns.jsonl shape (unknown Hub columns are dropped)."""
    turn = row.get("turn_id", row.get("turn_index"))
    out: dict[str, Any] = {"turn_index": turn}
    for ours, theirs in (("input", "input_text"), ("golden_text", "golden_text")):
        if theirs in row or ours in row:
            out[ours] = row.get(theirs, row.get(ours))
    for f in ("required_function_call", "function_call_response"):
        if f in row:
            out[f] = json_value(r, row[f], path, line, turn, f)
    out["categories"] = split_list(row.get("categories"))
    dims = split_list(row.get("scoring_dimensions", row.get("dimensions")))
    if dims:
        out["dimensions"] = dims
    if row.get("flexible_args") is not None:
        out["flexible_args"] = split_list(row["flexible_args"])
    for f in ("tool_use_guidance", "subcategory"):
        if row.get(f) is not None:
            out[f] = row[f]
    if row.get("audio_file"):
        out["audio_file"] = row["audio_file"]
    return out


def merge_speakers(r: Reader, rows: list[tuple[int, dict[str, Any]]], path: Path,
                    speaker: str | None) -> tuple[list[tuple[int, dict[str, Any]]], dict[int, str]]:
    """Hub metadata has one row per (turn, recording); keep one row per turn and pick its audio."""
    by_turn: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    order: list[Any] = []
    for no, row in rows:
        key = row.get("turn_id", row.get("turn_index"))
        if key not in by_turn:
            order.append(key)
        by_turn.setdefault(key, []).append((no, row))
    out: list[tuple[int, dict[str, Any]]] = []
    sources: dict[int, str] = {}
    for key in order:
        group = by_turn[key]
        no, first = group[0]
        files = {str(row.get("speaker") or speaker_of(row.get("file_name", ""))): row.get("file_name")
                 for _, row in group if row.get("file_name")}
        row = dict(first)
        chosen: str | None = None
        if speaker is not None and speaker != TTS:
            chosen = files.get(speaker)
            if chosen is None:
                r.add(f"no recording by speaker '{speaker}' (have: {', '.join(sorted(files)) or 'none'})",
                      path, no, key if isinstance(key, int) else None, "speaker")
        elif row.get("audio_file"):
            chosen = row["audio_file"]
        elif TTS in files:
            chosen = files[TTS]
        elif isinstance(key, int) and (r.folder / f"audio/turn_{key:03d}.wav").is_file():
            chosen = f"audio/turn_{key:03d}.wav"
        elif files and speaker is None:  # asked for TTS (`tts`), a human recording never stands in
            chosen = files[sorted(files)[0]]
        if chosen:
            row["audio_file"] = chosen
            if isinstance(key, int):
                spk = speaker_of(chosen)
                sources[key] = "recorded" if spk == "tts" else f"human:{spk}"
        out.append((no, row))
    return out, sources
