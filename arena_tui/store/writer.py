"""The one writer task: batches queued events into short transactions, retries a busy file,
and isolates a bad event so it loses only itself.

The engine's pacing never waits on disk: `submit`/bus events only append to the inbox, and the
writer turns whatever is queued into one `BEGIN IMMEDIATE … COMMIT` (a batch). Other writes
(delete, stale marking, vacuum) are queued as operations so they serialise with the batches.

Two kinds of failure, told apart by what SQLite says: a bad event (cannot be serialised, breaks a
constraint) loses only itself and the writer goes on; a file that refuses writes (read-only,
damaged pages, disk full, held by another process past the retries) fails the writer once, with
one `StoreWriteError`, and nothing more is attempted: whoever records must stop and say so.
Committed events are published on `committed` after their transaction, so what a UI shows as
done is already durable. Audio compression and snapshot hashing (`projections.encode_blobs`) run
in a worker thread before each transaction, so neither the loop nor the write lock waits on them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

import aiosqlite

from arena_tui.spine.bus import EventBus, Subscription
from arena_tui.spine.events import AudioChunk, Event, Judgement, RunEnded, RunEvent, RunStarted, parse_event
from .connection import execute, fetchall, rollback
from .errors import StoreError, StoreWriteError
from .liveness import HEARTBEAT_S, STALE_AFTER_S, recorder_alive
from .projections import (
    SQL_EVENT,
    SQL_HEARTBEAT,
    SQL_RUN_STUB,
    Batch,
    Blobs,
    Projector,
    encode_blobs,
    needs_blobs,
    now_iso,
)
from .reader import ts
from .scrub import has_secret, scrub_config, scrub_text

log = logging.getLogger(__name__)

BATCH_MAX = 2000  # events per transaction
LINGER_S = 0.05  # a batch waits this long after the last commit to gather more events
LOCKED_RETRIES = 6  # a batch meeting a held lock is retried for ~busy_timeout x 7 + 12 s


@dataclass
class _Flush:
    fut: asyncio.Future[None]


R = TypeVar("R")


@dataclass
class _Op(Generic[R]):
    """A write that is not an event (delete, stale marking, vacuum), serialised with batches."""

    fn: Callable[[aiosqlite.Connection], Awaitable[R]]
    fut: asyncio.Future[R]


class _Stop:
    """The writer's last item: everything queued before it is written, then the task ends."""


_STOP = _Stop()
#: what the writer's inbox holds: events to record, and its own requests between them
_Item = RunEvent | _Flush | _Op[Any] | _Stop


def _file_bytes(path: Path) -> int:
    total = 0
    for p in (path, Path(f"{path}-wal")):
        if p.exists():
            total += p.stat().st_size
    return total


class Writer:
    """Owns the write connection and the writer task of one store."""

    def __init__(self, path: Path, conn: aiosqlite.Connection) -> None:
        self.path = path
        self._w = conn
        self._inbox: asyncio.Queue[_Item] = asyncio.Queue()
        self._urgent = asyncio.Event()
        self._subs: list[Subscription] = []
        self._pumps: list[asyncio.Task[None]] = []
        self._live: set[str] = set()  # runs this store saw start and not end
        self._pid = os.getpid()
        self._host = socket.gethostname()
        self._projector = Projector(self._pid, self._host)
        self._last_commit = 0.0
        self.closed = False
        self.errors: list[str] = []  # events the writer could not record (each also logged)
        self.events_written = 0
        self.batches_written = 0
        self.committed = EventBus()  # every event, republished once its transaction has committed
        self.failure: StoreWriteError | None = None
        self.failed: asyncio.Future[StoreWriteError] = asyncio.get_running_loop().create_future()
        self.dropped = 0  # events not attempted after the failure
        #: runs found interrupted (their recorder gone) whose end the file refused: read as ended all the same
        self.unrecorded_ends: dict[str, RunEnded] = {}
        self._task = asyncio.get_running_loop().create_task(self._write_loop(), name="store-writer")

    # --- what the store asks for ---------------------------------------------------------------

    def start_recording(self, bus: EventBus) -> asyncio.Task[None]:
        sub = bus.subscribe()
        self._subs.append(sub)
        task = asyncio.get_running_loop().create_task(self._pump(sub), name="store-recording")
        self._pumps.append(task)
        return task

    def submit(self, event: RunEvent) -> None:
        self._inbox.put_nowait(event)

    async def flush(self) -> None:
        for sub in self._subs:
            self._take_from(sub)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait(_Flush(fut))
        self._urgent.set()
        await self._await_writer(fut)
        if self.failure is not None:
            raise self.failure

    async def close(self) -> None:
        """Record what the bus subscriptions and the inbox still hold, then stop the task."""
        for sub in list(self._subs):
            sub.close()  # each recording task then flushes what it still holds and ends
        if self._pumps and not self._task.done():
            await asyncio.gather(*self._pumps, return_exceptions=True)
        try:
            if not self._task.done():
                self._inbox.put_nowait(_STOP)
                self._urgent.set()
                await self._task
        finally:
            self.closed = True
            self.committed.close()
            if not self.failed.done():
                self.failed.cancel()
            await self._w.close()

    async def delete_run(self, run_id: str) -> bool:
        async def op(conn: aiosqlite.Connection) -> bool:
            await execute(conn, "BEGIN IMMEDIATE")
            deleted = await execute(conn, "DELETE FROM runs WHERE run_id=?", (run_id,))
            await execute(  # a snapshot goes with the last run that used it
                conn,
                "DELETE FROM benchmarks WHERE sha256 NOT IN"
                " (SELECT benchmark_sha256 FROM runs WHERE benchmark_sha256 IS NOT NULL)",
            )
            await execute(conn, "COMMIT")
            self._projector.forget([run_id])
            self._live.discard(run_id)
            return deleted > 0

        return await self._run_op(op)

    async def write_rows(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        async def op(conn: aiosqlite.Connection) -> None:
            await execute(conn, "BEGIN IMMEDIATE")
            for row in rows:
                await execute(conn, sql, row)
            await execute(conn, "COMMIT")

        await self._run_op(op)

    async def mark_interrupted_stale(self, stale_after_s: float = STALE_AFTER_S) -> list[str]:
        async def op(conn: aiosqlite.Connection) -> list[str]:
            rows = await fetchall(
                conn,
                "SELECT run_id, pid, host, heartbeat_at, started_at FROM runs WHERE status='running'",
            )
            now = datetime.now(UTC)
            stale: list[tuple[str, str]] = []
            for run_id, pid, host, heartbeat_at, started_at in rows:
                if run_id in self._live:
                    continue
                last_seen = ts(heartbeat_at) or ts(started_at)
                if not recorder_alive(pid, host, last_seen, now=now, this_host=self._host, stale_after_s=stale_after_s):
                    stale.append((run_id, heartbeat_at or started_at))
            if not stale:
                return []
            ends = []
            for run_id, beat in stale:
                last = await fetchall(conn, "SELECT MAX(t_ms) FROM events WHERE run_id=?", (run_id,))
                ends.append(
                    RunEnded(
                        run_id=run_id,
                        t_ms=float(last[0][0] or 0.0),
                        status="interrupted",
                        reason="the recording process ended without finishing the run",
                        wall_time=ts(beat),  # its last sign of life
                    )
                )
            await self._commit(ends)
            if self.failure is not None:  # a full or read-only file: these runs still read as what they are
                self.unrecorded_ends.update((e.run_id, e) for e in ends)
            return [r for r, _ in stale]

        return await self._run_op(op)

    async def vacuum(self) -> tuple[int, int]:
        async def op(conn: aiosqlite.Connection) -> tuple[int, int]:
            before = _file_bytes(self.path)
            await execute(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
            await execute(conn, "VACUUM")
            await execute(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
            return before, _file_bytes(self.path)

        try:
            return await self._run_op(op)
        except sqlite3.OperationalError as e:
            raise StoreError(f"{self.path}: vacuum failed ({e}); is a run recording into it?") from None

    # --- the task ------------------------------------------------------------------------------

    def _take_from(self, sub: Subscription) -> None:
        for ev in sub.drain():
            self._inbox.put_nowait(ev)

    async def _pump(self, sub: Subscription) -> None:
        try:
            async for ev in sub:
                self._inbox.put_nowait(ev)
                self._take_from(sub)
        finally:
            if sub in self._subs:
                self._subs.remove(sub)
        if not self.closed:
            try:
                await self.flush()
            except StoreWriteError:
                pass  # already reported through `failed`; the recording task itself ends normally

    async def _await_writer(self, fut: asyncio.Future[R]) -> R:
        either: set[asyncio.Future[Any]] = {fut, self._task}
        done, _ = await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if fut in done:
            return fut.result()
        exc = self._task.exception() if not self._task.cancelled() else None
        raise StoreError(f"{self.path}: the store writer stopped: {exc}")

    async def _run_op(self, fn: Callable[[aiosqlite.Connection], Awaitable[R]]) -> R:
        fut: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait(_Op(fn, fut))
        self._urgent.set()
        return await self._await_writer(fut)

    async def _write_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                first = await asyncio.wait_for(self._inbox.get(), timeout=HEARTBEAT_S)
            except TimeoutError:
                await self._heartbeat()
                continue
            items = [first]
            self._take_queued(items)
            if all(isinstance(i, Event) for i in items):
                linger = self._last_commit + LINGER_S - loop.time()
                if linger > 0:
                    self._urgent.clear()
                    try:
                        await asyncio.wait_for(self._urgent.wait(), linger)
                    except TimeoutError:
                        pass
                    self._take_queued(items)
            self._urgent.clear()
            pending: list[RunEvent] = []
            for item in items:
                if not isinstance(item, (_Flush, _Op, _Stop)):
                    pending.append(item)
                    if len(pending) >= BATCH_MAX:
                        await self._commit(pending)
                        pending = []
                    continue
                if pending:
                    await self._commit(pending)
                    pending = []
                if isinstance(item, _Flush):
                    if not item.fut.done():
                        item.fut.set_result(None)
                elif isinstance(item, _Op):
                    try:
                        result = await item.fn(self._w)
                    except Exception as e:  # reported to the caller, the writer goes on
                        await rollback(self._w)
                        if _file_refuses(e):  # a full or read-only file: the one error its callers handle, said once
                            e = StoreWriteError(scrub_text(f"{self.path}: the database cannot be written ({e})"))
                        if not item.fut.done():
                            item.fut.set_exception(e)
                    else:
                        if not item.fut.done():
                            item.fut.set_result(result)
                elif isinstance(item, _Stop):
                    return
            if pending:
                await self._commit(pending)
            self._last_commit = loop.time()

    def _take_queued(self, items: list[_Item]) -> None:
        while True:
            try:
                items.append(self._inbox.get_nowait())
            except asyncio.QueueEmpty:
                return

    async def _heartbeat(self) -> None:
        if not self._live:
            return
        try:
            await execute(self._w, "BEGIN IMMEDIATE")
            await self._w.executemany(SQL_HEARTBEAT, [(now_iso(), r) for r in self._live])
            await execute(self._w, "COMMIT")
        except sqlite3.Error as e:
            await rollback(self._w)
            log.warning("%s: heartbeat not written: %s", self.path, e)

    async def _commit(self, events: Sequence[RunEvent]) -> None:
        """Write one batch; if it fails, write its events one by one so one bad event loses only itself.

        A busy database (another process holding the write lock past busy_timeout, e.g. a vacuum)
        is waited out rather than treated as bad events. A file that refuses writes fails the writer.
        """
        if self.failure is not None:
            self.dropped += len(events)
            return
        blobs = await self._encode(events)
        for attempt in range(LOCKED_RETRIES + 1):
            try:
                self._publish(await self._write_batch(events, blobs))
                return
            except sqlite3.OperationalError as e:
                await rollback(self._w)
                self._projector.forget(ev.run_id for ev in events)
                if "locked" in str(e) or "busy" in str(e):
                    if attempt < LOCKED_RETRIES:
                        log.warning("%s: database busy, retrying a batch of %d events", self.path, len(events))
                        await asyncio.sleep(min(0.25 * 2**attempt, 4.0))
                        continue
                    # Splitting would meet the same lock once per event: report the batch once.
                    self._fail(events, f"{e} (another process held the database)")
                    return
                self._fail(events, str(e))
                return
            except sqlite3.DatabaseError as e:
                await rollback(self._w)
                self._projector.forget(ev.run_id for ev in events)
                if _file_refuses(e):
                    self._fail(events, str(e))
                    return
                error: Exception = e
                break
            except Exception as e:  # noqa: BLE001 - the writer must outlive any one bad event
                await rollback(self._w)
                self._projector.forget(ev.run_id for ev in events)
                error = e
                break
        if len(events) == 1:
            self._record_error(events[0], error)
            return
        for ev in events:
            if self.failure is not None:
                self.dropped += 1
                continue
            try:
                written = await self._write_batch([ev], blobs)
            except Exception as e:  # noqa: BLE001
                await rollback(self._w)
                self._projector.forget([ev.run_id])
                if _file_refuses(e):
                    self._fail([ev], str(e))
                else:
                    self._record_error(ev, e)
            else:
                self._publish(written)

    def _publish(self, events: Sequence[RunEvent]) -> None:
        for ev in events:
            self.committed.publish(ev)

    def _fail(self, events: Sequence[RunEvent], why: str) -> None:
        """The file refuses writes: fail once, loudly, and attempt nothing more."""
        first = events[0]
        msg = scrub_text(
            f"{self.path}: the database cannot be written ({why}); run {first.run_id}: nothing recorded "
            f"from t={first.t_ms:.0f} ms on"
        )
        self.errors.append(msg)  # not logged: the failure is raised to whoever records, who says it once
        self.failure = StoreWriteError(msg)
        self.dropped += len(events)
        if not self.failed.done():
            self.failed.set_result(self.failure)

    def _record_error(self, ev: RunEvent, e: Exception) -> None:
        msg = f"{self.path}: run {ev.run_id}: {ev.kind} event at t={ev.t_ms:.0f} ms"
        if ev.turn_index is not None:
            msg += f" (turn {ev.turn_index})"
        msg = scrub_text(msg + f" not recorded: {e}")
        self.errors.append(msg)
        log.error("%s", msg)

    async def _encode(self, events: Sequence[RunEvent]) -> Blobs:
        """Compress the batch's audio and hash its snapshots in a worker thread, before the
        transaction: the loop keeps pacing audio, the write lock is not held meanwhile."""
        if not needs_blobs(events):
            return {}
        try:
            return await asyncio.to_thread(encode_blobs, events)
        except RuntimeError as e:  # no thread to run it in (interpreter shutting down): encode here
            log.warning("%s: encoding on the event loop: %s", self.path, e)
            return encode_blobs(events)

    async def _write_batch(self, events: Sequence[RunEvent], blobs: Blobs) -> list[RunEvent]:
        """Write the events in one transaction; returns them as stored (a judgement's revision renumbered
        past one another process recorded meanwhile, `Projector.numbered`)."""
        conn = self._w
        now = now_iso()
        await execute(conn, "BEGIN IMMEDIATE")
        batch = Batch()
        runs = list(dict.fromkeys(ev.run_id for ev in events))
        await self._projector.load(conn, events, runs, now, batch)
        event_rows = []
        live_started: set[str] = set()
        live_ended: set[str] = set()
        revisions: dict[tuple[str, int | None], int] = {}
        stored: list[RunEvent] = []
        for ev in events:
            seq = self._projector.next_seq(ev.run_id)
            blob = blobs.get(id(ev))
            if isinstance(ev, Judgement):
                ev = await self._projector.numbered(conn, ev, revisions)
            stored.append(ev)
            ev, payload = _serialise(ev)
            event_rows.append((ev.run_id, seq, ev.kind, ev.t_ms, ev.turn_index, payload))
            self._projector.derive(batch, ev, seq, now, live_started, live_ended, blob)
        for sql, rows in batch.grouped():
            if sql == SQL_RUN_STUB:
                await conn.executemany(sql, rows)
        await conn.executemany(SQL_EVENT, event_rows)
        for sql, rows in batch.grouped():
            if sql != SQL_RUN_STUB:
                await conn.executemany(sql, rows)
        await conn.executemany(SQL_HEARTBEAT, [(now, r) for r in runs])
        await execute(conn, "COMMIT")
        self._live |= live_started
        self._live -= live_ended
        self.events_written += len(events)
        self.batches_written += 1
        return stored


def _file_refuses(e: BaseException) -> bool:
    """Whether SQLite refused the write because of the file (not the event): read-only, I/O,
    full, damaged. Constraint and data errors (a bad event) are not."""
    if isinstance(e, sqlite3.OperationalError):
        return True
    return type(e) is sqlite3.DatabaseError  # "database disk image is malformed", "file is not a database"


def _serialise(ev: RunEvent) -> tuple[RunEvent, str]:
    """The event as it is stored: the payload JSON, secrets scrubbed (and the event to match).
    Audio samples and benchmark snapshots are not in it: they have their own tables."""
    exclude = None
    if isinstance(ev, RunStarted):
        ev = ev.model_copy(update={"config": scrub_config(ev.config)})
        exclude = {"benchmark_snapshot"}
    elif isinstance(ev, AudioChunk):
        return ev, ev.model_dump_json(exclude={"pcm"})
    payload = ev.model_dump_json(exclude=exclude)
    if has_secret(payload):
        payload = scrub_text(payload)
        ev = parse_event(payload)
    return ev, payload
