"""SQLite store of runs: records the event stream, and reads it back for the UI, replay and exports.

Split by role (each module says why it is shaped as it is):
- `open`        file setup: create, migrate (`schema`), switch to WAL, refuse files that are not ours;
- `writer`      the one writer task: batches, retries, a bad event losing only itself;
- `projections` the derived tables (`runs`, `turns`, `judgements`, `audio`, `benchmarks`) written with
                their events;
- `codec`       audio kept as lossless FLAC where smaller, read back as the exact PCM16 recorded;
- `snapshots`   the benchmark each run ran, kept once per content hash;
- `reader`      queries on a second, `query_only` connection;
- `scrub`       secrets (keys by name and by shape, credentials in URLs) never reach the file;
- `liveness`    whether the process recording a run (or running a campaign) is still there.
`Store` joins them: it is a `Reader` that also owns a `Writer`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import Event, RunEvent
from .connection import BUSY_TIMEOUT_MS
from .errors import StoreError, StoreOpenError, StoreWriteError
from .open import open_connections, require_database
from .reader import AudioClip, Reader, RunRow, StoreInfo, Track
from .scrub import REDACTED, scrub_config, scrub_text
from .liveness import STALE_AFTER_S
from .writer import Writer

T = TypeVar("T")

__all__ = [
    "REDACTED",
    "AudioClip",
    "RunRow",
    "Store",
    "StoreError",
    "StoreInfo",
    "StoreOpenError",
    "StoreWriteError",
    "Track",
    "scrub_config",
    "require_database",
    "scrub_text",
]


class Store(Reader):
    """The run database. Open with `await Store.open(path)`; use as an async context manager."""

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        super().__init__(path, reader)
        self._writer = Writer(path, writer)
        self._ended = self._writer.unrecorded_ends

    # --- lifecycle -----------------------------------------------------------------------------

    @classmethod
    async def open(cls, path: str | os.PathLike[str], *, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
                   create: bool = True) -> Store:
        """Open (creating and migrating as needed) the database file at `path`. `create=False`: a
        command that records nothing new refuses a path with no database, naming it, and creates
        neither the file nor its folder (a mistyped --db is not an empty database)."""
        p = Path(path)
        writer, reader = await open_connections(p, busy_timeout_ms, create=create)
        return cls(p, writer, reader)

    async def close(self) -> None:
        """Record everything still queued, then close both connections."""
        if self._closed:
            return
        try:
            await self._writer.close()
        finally:
            self._closed = True
            await self._r.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- writing -------------------------------------------------------------------------------

    @property
    def errors(self) -> list[str]:
        """Events the writer could not record (each also logged)."""
        return self._writer.errors

    @property
    def events_written(self) -> int:
        return self._writer.events_written

    @property
    def batches_written(self) -> int:
        return self._writer.batches_written

    @property
    def committed(self) -> EventBus:
        """Every recorded event, published again once its transaction has committed: subscribe
        here (not to the run's bus) to show something as done only when it is durable."""
        return self._writer.committed

    @property
    def write_failure(self) -> StoreWriteError | None:
        """Set once the file refused a write; nothing is recorded after it."""
        return self._writer.failure

    async def run_while_writable(self, aw: Awaitable[T]) -> T:
        """Await `aw` (a run, a re-judge); if the file refuses a write first, cancel it and raise
        the `StoreWriteError`, so nothing goes on as if it were being recorded."""
        task = asyncio.ensure_future(aw)
        failed = self._writer.failed
        either: set[asyncio.Future[Any]] = {task, failed}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if failed.cancelled():  # the store was closed under the task
            raise StoreError(f"{self.path}: the store was closed")
        raise failed.result()

    def start_recording(self, bus: EventBus) -> asyncio.Task[None]:
        """Record everything published on `bus` from now on.

        The returned task ends once the bus is closed and all of its events are committed.
        """
        self._check_open()
        return self._writer.start_recording(bus)

    def submit(self, event: RunEvent) -> None:
        """Queue one event for the writer (same queue, same order as recorded bus events)."""
        self._check_open()
        if not isinstance(event, Event):
            raise TypeError(f"Store.submit expects a RunEvent, got {type(event).__name__}")
        if self._writer.failure is not None:
            raise self._writer.failure
        self._writer.submit(event)

    async def flush(self) -> None:
        """Wait until everything published or submitted so far is committed."""
        self._check_open()
        await self._writer.flush()

    async def delete_run(self, run_id: str) -> bool:
        """Delete a run and everything recorded for it; False if there was no such run."""
        self._check_open()
        return await self._writer.delete_run(run_id)

    async def write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Run one parameterised statement per row in one transaction on the writer's connection
        (tables besides the event projections, e.g. campaign cells), in order with recorded events."""
        self._check_open()
        await self._writer.write_rows(sql, rows)

    async def mark_interrupted_stale(self, stale_after_s: float = STALE_AFTER_S) -> list[str]:
        """Runs left 'running' by a recorder that is gone become 'interrupted'; returns their ids.

        Same host: the recorder's pid must be alive. Other hosts: its heartbeat must be fresh.
        A `run_ended(status="interrupted")` event is appended so a replay ends like a live run.
        """
        self._check_open()
        return await self._writer.mark_interrupted_stale(stale_after_s)

    async def vacuum(self) -> tuple[int, int]:
        """Rebuild the file to reclaim deleted space; returns (bytes before, bytes after)."""
        self._check_open()
        return await self._writer.vacuum()
