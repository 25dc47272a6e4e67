"""A benchmark's problems: each one located (file, line, turn, field) and all of them raised
together (`BenchmarkError`), and pydantic's validation errors said as a user reads them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails


class Problem(BaseModel):
    """One thing wrong with a benchmark's data, located as precisely as we can."""

    benchmark: str
    path: Path | None = None
    line: int | None = None
    turn: int | None = None
    field: str | None = None
    message: str

    def __str__(self) -> str:
        parts = [self.benchmark]
        if self.path is not None:
            parts.append(f"{self.path}:{self.line}" if self.line is not None else str(self.path))
        if self.turn is not None:
            parts.append(f"turn {self.turn}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts) + f": {self.message}"


class BenchmarkError(Exception):
    """Every problem found in one benchmark (never just the first)."""

    def __init__(self, benchmark: str, problems: list[Problem]) -> None:
        self.benchmark = benchmark
        self.problems = problems
        n = len(problems)
        if n == 1:  # one line: the problem names the benchmark itself
            super().__init__(str(problems[0]))
            return
        lines = [f"benchmark {benchmark}: {n} problems"] + [f"  {p}" for p in problems]
        super().__init__("\n".join(lines))


def loc(loc: tuple[Any, ...], prefix: str = "") -> str:
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and ("[" in part or part in ("ExpectedCall",)):
            continue  # union member tags are noise to a user
        else:
            out += f".{part}" if out else str(part)
    return out


def size_text(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n} bytes"


def error_text(e: ErrorDetails) -> str:
    if e["type"] == "missing":
        return "missing (required)"
    if e["type"] == "extra_forbidden":
        return "unknown field (typo?)"
    if e["type"] == "value_error" and "error" in e.get("ctx", {}):
        return f"{e['ctx']['error']}{got(e)}"
    return f"{e['msg'][0].lower()}{e['msg'][1:]}{got(e)}"


def detail(e: ErrorDetails) -> str:
    return f"{loc(e['loc'])}: {error_text(e)}"


def got(e: ErrorDetails) -> str:
    if "input" not in e or isinstance(e["input"], dict):
        return ""
    v = e["input"]
    shown = json.dumps(v) if not isinstance(v, (list, tuple)) else f"a list of {len(v)}"
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f", got {type(v).__name__} {shown}"
