"""Reading a hand-written benchmark file: `Reader` collects every problem while it reads one
folder (a companion folder may hold what a Hub snapshot lacks), in bounded time and memory (a
file or a JSON Lines record over its limit is reported, never held whole), and NaN/Infinity are
refused where each sits (`strict_json`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from pydantic import ValidationError

from . import strict_json
from .problems import Problem, detail, error_text, loc, size_text

# Limits that keep a bad file from costing unbounded time or memory (a user's benchmark is input).
MAX_LINE_BYTES = 1 << 20  # one turns.jsonl record; the shared ones are under 3 kB
MAX_TEXT_BYTES = 16 << 20  # tools.json, system prompt, knowledge base, a JSON array of turns
SUBDIRS = ("", "benchmark", "data")  # where a Hub snapshot may keep the text files


class Reader:
    """Collects problems while reading one benchmark folder."""

    def __init__(self, folder: Path, name: str, companions: Iterable[Path]) -> None:
        self.folder = folder
        self.name = name
        self.companions = [c for c in companions if c.is_dir()]
        self.problems: list[Problem] = []
        self.meta_declared = False  # benchmark.json read: categories/dimensions are checked against it

    def add(self, message: str, path: Path | None = None, line: int | None = None,
            turn: int | None = None, field: str | None = None) -> None:
        self.problems.append(Problem(benchmark=self.name, path=path, line=line, turn=turn,
                                     field=field, message=message))

    def find(self, filename: str) -> Path | None:
        for base in [self.folder, *self.companions]:
            for sub in SUBDIRS:
                p = base / sub / filename if sub else base / filename
                if p.is_file():
                    return p
        return None

    def read_text(self, path: Path) -> str | None:
        try:
            size = path.stat().st_size
            if size > MAX_TEXT_BYTES:
                self.add(f"{size_text(size)} is more than the {size_text(MAX_TEXT_BYTES)} a benchmark file may hold", path)
                return None
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            self.add(f"not UTF-8 text ({e.reason} at byte {e.start})", path)
        except OSError as e:
            self.add(f"cannot read: {e.strerror or e}", path)
        return None

    def read_json(self, path: Path, items: str = "") -> Any:
        """The file's JSON, or None (each problem reported); `items` names a top-level array's
        elements in a problem's field (`tools[2] (book_repair).parameters…`)."""
        text = self.read_text(path)
        if text is None:
            return None
        try:
            data = strict_json.loads(text)
        except json.JSONDecodeError as e:
            self.add(f"bad JSON: {e.msg} (column {e.colno})", path, line=e.lineno)
            return None
        return None if self.not_json(data, path, field=items if isinstance(data, list) else "") else data

    def not_json(self, data: object, path: Path, line: int | None = None, turn: int | None = None,
                 field: str = "") -> bool:
        """Report every NaN / Infinity in `data` (`strict_json`), each by its field under `field`;
        whether there was one."""
        bad = list(strict_json.not_json(data, field))
        for where, text in bad:
            self.add(strict_json.message(text), path, line, turn, where or None)
        return bool(bad)

    def validation(self, err: ValidationError, path: Path, line: int | None = None,
                   turn: int | None = None, prefix: str = "") -> None:
        seen: set[str] = set()
        for e in err.errors():
            field = loc(e["loc"], prefix)
            top = field.split(".")[0].split("[")[0]
            if top == "required_function_call" or top.endswith("].required_function_call"):
                if top in seen:
                    continue  # one message for the whole union, not one per member
                seen.add(top)
                if e["type"] != "missing":
                    self.add("must be null, an object {name, args[, flexible_args]} or a list of them"
                             f" ({detail(e)})", path, line, turn, top)
                    continue
            self.add(error_text(e), path, line, turn, field)


def lines(r: Reader, path: Path) -> Iterable[tuple[int, str]]:
    """(line number, text) of a JSON Lines file; a line over MAX_LINE_BYTES is reported and
    skipped without ever being held in memory whole."""
    try:
        with open(path, "rb") as f:
            no = 0
            while raw := f.readline(MAX_LINE_BYTES + 1):
                no += 1
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    size = len(raw)
                    while (more := f.readline(1 << 20)) and not more.endswith(b"\n"):
                        size += len(more)
                    size += len(more)
                    r.add(f"line is {size_text(size)}, more than the {size_text(MAX_LINE_BYTES)} one turn may take",
                          path, no)
                    continue
                try:
                    yield no, raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    r.add(f"not UTF-8 text ({e.reason} at column {e.start + 1})", path, no)
    except OSError as e:
        r.add(f"cannot read: {e.strerror or e}", path)


def read_rows(r: Reader, path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line, row) per turn record; a JSON array file (old Hub layout) counts items as lines."""
    rows: list[tuple[int, dict[str, Any]]] = []
    if path.suffix == ".json":
        text = r.read_text(path)
        if text is None:
            return []
        try:
            data = strict_json.loads(text)
        except json.JSONDecodeError as e:
            r.add(f"bad JSON: {e.msg} (column {e.colno})", path, e.lineno)
            return []
        if not isinstance(data, list):
            r.add(f"expected a JSON array of turns, got {type(data).__name__}", path)
            return []
        items = list(enumerate(data, 1))
    else:
        items = []
        for no, raw in lines(r, path):
            if not raw.strip():
                continue
            try:
                items.append((no, strict_json.loads(raw)))
            except json.JSONDecodeError as e:
                r.add(f"bad JSON line: {e.msg} (column {e.colno})", path, no)
    for no, obj in items:
        if not isinstance(obj, dict):
            r.add(f"expected a JSON object per turn, got {type(obj).__name__}", path, no)
            continue
        ti = obj.get("turn_index", obj.get("turn_id"))
        if r.not_json(obj, path, no, ti if isinstance(ti, int) and not isinstance(ti, bool) else None):
            continue  # reported by field; the turn is not read (as a line that is not JSON)
        rows.append((no, obj))
    return rows


def inside(folder: Path, rel: str) -> bool:
    """A path the data names stays in its folder: judged lexically (Hub snapshots are symlinks
    into the cache's blob store, so resolving would call every one of them outside)."""
    p = Path(rel)
    if p.is_absolute():
        p = Path(os.path.normpath(p))
        return p.is_relative_to(Path(os.path.normpath(folder.absolute())))
    parts = Path(os.path.normpath(p)).parts
    return bool(parts) and parts[0] != ".."
