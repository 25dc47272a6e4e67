"""Find the benchmark a stored run was made with (the store keeps its name, not its data)."""

from __future__ import annotations

import os

from arena_tui.spine.benchmark import Benchmark

from arena_tui.spine.paths import data_dir


def find_benchmark(name: str, data: str | os.PathLike[str] | None = None) -> Benchmark:
    """By name through the benchmark registry (--data / ARENA_TUI_DATA, built-in, HF cache)."""
    from benchmarks.loader import BenchmarkError  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read
    from benchmarks.registry import load_benchmark  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read

    try:
        return load_benchmark(name, data_dir(data))
    except BenchmarkError as e:
        raise LookupError(f"benchmark {name!r} of this run cannot be loaded: {e}") from e
