"""Find the benchmark a stored run was made with: the snapshot recorded with it, else its data.

Runs recorded since schema 3 carry their benchmark (turns, tools, prompt, knowledge base), so
judging, re-judging and exporting them needs no data folder, also where the database was copied
to. Older runs only name theirs: it is loaded by name from the data folders.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from arena_tui.spine.benchmark import Benchmark

from arena_tui.spine.paths import data_dir
from ..store import StoreError

if TYPE_CHECKING:
    from ..store.reader import Reader


async def benchmark_of_run(store: Reader, run_id: str, data: str | os.PathLike[str] | None = None) -> Benchmark:
    """The run's stored snapshot, else `find_benchmark` by its name; LookupError if neither.

    A stored snapshot that cannot be read (a damaged file) falls back to the name too, and is
    named in the error if that fails as well."""
    damaged = ""
    try:
        stored = await store.stored_benchmark(run_id)
    except StoreError as e:
        stored, damaged = None, f"{e}; "
    if stored is not None:
        return stored
    run = await store.get_run(run_id)
    if run is None:
        raise LookupError(f"no run {run_id!r} in the database")
    try:
        return await asyncio.to_thread(find_benchmark, run.benchmark, data)
    except LookupError as e:
        raise LookupError(f"{damaged}{e}") from e


def find_benchmark(name: str, data: str | os.PathLike[str] | None = None) -> Benchmark:
    """By name through the benchmark registry (--data / ARENA_TUI_DATA, built-in, HF cache)."""
    from benchmarks.loader import BenchmarkError  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read
    from benchmarks.registry import load_benchmark  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read

    try:
        return load_benchmark(name, data_dir(data))
    except BenchmarkError as e:
        raise LookupError(f"benchmark {name!r} of this run cannot be loaded: {e}") from e
