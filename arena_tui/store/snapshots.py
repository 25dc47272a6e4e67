"""Benchmark snapshots kept with their runs, one copy per content.

`run_started` carries `Benchmark.snapshot()`; the writer keeps it in `benchmarks` under the
SHA-256 of its canonical JSON (sorted keys), so every run of an unchanged benchmark points at
the same row, and a changed benchmark (an edited turn, a new tool) gets its own. The JSON is
scrubbed like every other stored text, and the hash is taken of what is stored.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from arena_tui.spine.benchmark import Benchmark

from .scrub import has_secret, scrub_text

SQL_SNAPSHOT = "INSERT OR IGNORE INTO benchmarks(sha256, name, snapshot, stored_at) VALUES (?,?,?,?)"


def snapshot_row(snapshot: dict[str, Any]) -> tuple[str, str]:
    """(sha256, JSON text) of a snapshot as it is stored."""
    text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    if has_secret(text):
        text = scrub_text(text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), text


def benchmark_of(text: str) -> Benchmark:
    """The stored snapshot as a `Benchmark`; ValueError if it is not one."""
    return Benchmark.from_snapshot(json.loads(text))
