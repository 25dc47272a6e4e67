"""The reference run folder as files: names, the folder's name, timestamps and JSON lines.

`runs/<benchmark>/<YYYYmmddTHHMMSS>_<model>_<uuid8>/` with `transcript.jsonl`, `runtime.json`,
`conversation.wav` and, per judge, `<judge>_judged.jsonl`, `<judge>_summary.json`,
`<judge>_analysis.md`. Reading a file that is not what it should be raises `InteropError`
naming the file, line and field.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from collections.abc import Iterable
from pathlib import Path
from typing import Any, overload

TRANSCRIPT = "transcript.jsonl"
RUNTIME = "runtime.json"
CONVERSATION = "conversation.wav"
JUDGED_SUFFIX = "_judged.jsonl"
SUMMARY_SUFFIX = "_summary.json"
ANALYSIS_SUFFIX = "_analysis.md"
BENCHMARK = "arena_tui_benchmark.json"  # ours: the benchmark snapshot the run was judged against
RUN_DIR = re.compile(r"^(\d{8}T\d{6})_(.+)_([0-9a-fA-F]{8})$")  # <YYYYmmddTHHMMSS>_<model>_<uuid8>


class InteropError(Exception):
    """A run directory that cannot be read or written; names the file, line and field."""


class AlreadyStored(InteropError):
    """The run a folder holds is in the database already (imported before, or the one it was exported
    from): said with how to delete it, `--db` given when the command knows it is not the default."""

    def __init__(self, run_id: str, db_flag: str = "") -> None:
        super().__init__(f"run {run_id} is already in the database: delete it first (`arena-tui{db_flag} runs --delete "
                         f"{run_id}`) or import it as another run (--run-id NEW_ID)")
        self.run_id = run_id


def safe_name(text: str) -> str:
    """A file-name safe form of `text` (runs of other characters become `-`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "unknown"


def judge_file_prefix(judge: str) -> str:
    """`openai:gpt-5-mini` -> `openai_gpt-5-mini` (file-name safe, stable)."""
    return safe_name(judge.replace(":", "_"))


def folder_run_id(name: str) -> str:
    """The run id of a reference folder that names none: 32 hex digits (our one id form), the
    same for the same folder name, so importing a folder twice is refused as a duplicate."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"arena-tui:reference-run:{name}").hex


def uuid8(run_id: str) -> str:
    """The folder name's 8 hex digits: the run id's first ones, else a stable hash of it."""
    hexes = re.sub(r"[^0-9a-f]", "", run_id.lower())
    return hexes[:8] if len(hexes) >= 8 else uuid.uuid5(uuid.NAMESPACE_URL, run_id).hex[:8]


def iso(ts: datetime) -> str:
    """UTC ISO with milliseconds and `Z`, as the reference's `ts`."""
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def parse_ts(value: str, where: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InteropError(f"{where}: field 'ts' is not an ISO timestamp: {value!r}") from None


def write_jsonl(path: Path, rows: Iterable[object]) -> None:
    tmp = path.with_name(path.name + ".part")
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    tmp.replace(path)


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-empty line."""
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InteropError(f"{path}: cannot read: {e.strerror or e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InteropError(f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise InteropError(f"{path}:{n}: expected a JSON object per line")
        rows.append((n, row))
    return rows


@overload
def field[T](row: dict[str, Any], name: str, kind: type[T], where: str) -> T: ...
@overload
def field[T, D](row: dict[str, Any], name: str, kind: type[T] | tuple[type[T], ...], where: str, default: D) -> T | D: ...
def field(row: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str, default: object = ...) -> object:
    """`row[name]` checked to be of `kind` (a bool is no number); `default` when absent or null."""
    if name not in row or row[name] is None:
        if default is ...:
            raise InteropError(f"{where}: missing field {name!r}")
        return default
    value = row[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        want = " or ".join("number" if k is float else k.__name__ for k in kinds if not (k is int and float in kinds))
        raise InteropError(f"{where}: field {name!r} should be {want}, got {value!r:.60}")
    return value
