"""What every provider test needs around one run, written once: quiet Pipecat logs, and a run
of the real engine against a provider's fake recorded through a real bus into a real store."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from loguru import logger

from arena_tui.spine.bus import EventBus
from arena_tui.store import Store
from arena_tui.spine.settings import RunSettings
from runners.engine import run_benchmark


def quiet_loguru(level: str) -> Iterator[None]:
    """Body of a module fixture: only `level` and above on stderr while the module runs."""
    logger.remove()
    handler = logger.add(sys.stderr, level=level)
    yield
    with contextlib.suppress(ValueError):  # a CLI test reconfigures loguru itself and may have removed ours
        logger.remove(handler)
    logger.add(sys.stderr)


class RecordedRun:
    """One finished run: its id, every event the bus carried, and the turn results the store holds."""

    def __init__(self, run_id: str, events: list, results: list, store: Store) -> None:
        self.run_id, self.events, self.results, self.store = run_id, events, results, store

    def kinds(self, kind: str, turn: int | None = ...) -> list:  # type: ignore[assignment]
        return [e for e in self.events if e.kind == kind and (turn is ... or e.turn_index == turn)]

    def result(self, turn: int):
        return next(r for r in self.results if r.turn_index == turn)

    def by_turn(self) -> dict:
        return {r.turn_index: r for r in self.results}


async def record_run(
    bench: Any,
    config: RunSettings,
    runner: Any,
    db: Path | Store,
    *,
    before: Callable[[EventBus], None] | None = None,
    **kw: Any,
) -> RecordedRun:
    """Run `bench` with `runner` and record it. `db`: a path (the store is opened and closed
    here) or an open Store (left open, for a test that reads it afterwards). `before(bus)` runs
    once the recorder is subscribed; `kw` goes to run_benchmark."""
    store = await Store.open(db) if isinstance(db, Path) else db
    try:
        bus = EventBus()
        store.start_recording(bus)
        sub = bus.subscribe()
        if before is not None:
            before(bus)
        try:
            run_id = await run_benchmark(bench, config, bus, provider=runner, **kw)
        finally:
            await store.flush()
        return RecordedRun(run_id, sub.drain(), await store.turn_results(run_id), store)
    finally:
        if isinstance(db, Path):
            await store.close()
