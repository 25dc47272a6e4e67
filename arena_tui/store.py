"""SQLite store of runs: records the event stream, and reads it back for the UI, replay and exports.

Why it is shaped like this:
- One writer task per store owns the write connection and turns whatever is queued into one
  short transaction (a batch), so the engine's pacing never waits on disk and a reader never
  meets "database is locked": WAL lets readers see the last commit while a batch is written.
- Reads use a second connection (`query_only`), so a UI polling the store never queues behind
  the writer and never holds the write lock.
- `events` is the complete log; `runs`, `turns`, `judgements` and `audio` are projections written
  in the same transaction as the events they come from (schema: `arena_tui.store_schema`).
- Secrets never reach the file: config keys named like secrets and values shaped like API keys
  are replaced before anything is serialised.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import platform
import re
import socket
import sqlite3
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

import aiosqlite
from pydantic import BaseModel, ConfigDict

from .bus import EventBus, Subscription
from .events import (
    AudioChunk,
    Event,
    Judgement,
    RunEnded,
    RunEvent,
    RunStarted,
    TurnEnded,
    TurnResult,
    TurnStarted,
    parse_event,
)
from .store_schema import SCHEMA_VERSION, SchemaError, migrate, schema_version

log = logging.getLogger(__name__)

Track = Literal["user", "bot", "conversation"]

BATCH_MAX = 2000  # events per transaction
LINGER_S = 0.05  # a batch waits this long after the last commit to gather more events
HEARTBEAT_S = 10.0  # idle heartbeat of live runs
STALE_AFTER_S = 120.0  # a run on another host with no heartbeat this long is dead
BUSY_TIMEOUT_MS = 10_000
LOCKED_RETRIES = 6  # a batch meeting a held lock is retried for ~busy_timeout x 7 + 12 s
REDACTED = "[REDACTED]"


class StoreError(Exception):
    """The store cannot do what was asked; the message names the file, run and event."""


# --- secrets -----------------------------------------------------------------------------------

_SECRET_NAME = re.compile(r"key|token|secret|password|passwd|credential", re.IGNORECASE)
_SECRET_VALUE = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}"  # OpenAI / xAI style
    r"|xai-[A-Za-z0-9_\-]{16,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google API keys
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*)"
)


def scrub_text(text: str) -> str:
    """Replace anything shaped like an API key inside free text."""
    return _SECRET_VALUE.sub(REDACTED, text)


def scrub_config(value: Any, _name: str = "") -> Any:
    """Copy of a config with secret-named text values and key-shaped strings redacted.

    Numbers and booleans under secret-like names stay (`max_tokens` is a setting, not a secret).
    """
    if isinstance(value, dict):
        return {k: scrub_config(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_config(v, _name) for v in value]
    if isinstance(value, str):
        if _name and _SECRET_NAME.search(_name) and value:
            return REDACTED
        return scrub_text(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    # Anything else (paths, enums, objects) is stored as its text.
    return scrub_config(str(value), _name)


# --- read models -------------------------------------------------------------------------------


class RunRow(BaseModel):
    """One run as the runs list shows it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    benchmark: str
    model: str
    provider: str
    simulator: bool
    status: str  # running | completed | interrupted | failed
    started_at: datetime
    ended_at: datetime | None = None
    turns_total: int
    turns_done: int
    config: dict[str, Any]
    versions: dict[str, str]
    turn_indices: list[int] = []
    reason: str = ""
    pid: int | None = None
    host: str | None = None
    heartbeat_at: datetime | None = None

    def duration_s(self, now: datetime | None = None) -> float:
        """Wall-clock length so far (a running run counts up to `now`)."""
        end = self.ended_at or now or datetime.now(UTC)
        return max(0.0, (end - self.started_at).total_seconds())


class AudioClip(BaseModel):
    """PCM16 little-endian samples, interleaved when stereo (left user, right bot)."""

    model_config = ConfigDict(frozen=True)

    pcm: bytes
    sample_rate: int
    channels: int
    start_ms: float = 0.0

    @property
    def frames(self) -> int:
        return len(self.pcm) // (2 * self.channels)

    @property
    def duration_ms(self) -> float:
        return self.frames * 1000.0 / self.sample_rate


class StoreInfo(BaseModel):
    path: str
    schema_version: int
    file_bytes: int
    wal_bytes: int
    page_size: int
    freelist_pages: int
    counts: dict[str, int]
    audio_bytes: int


# --- writer plumbing ---------------------------------------------------------------------------


@dataclass
class _Flush:
    fut: asyncio.Future[None]


@dataclass
class _Op:
    """A write that is not an event (delete, stale marking, vacuum), serialised with batches."""

    fn: Any  # async (conn) -> result
    fut: asyncio.Future[Any]


_STOP = object()


@dataclass
class _Batch:
    """The SQL of one batch, in event order; consecutive identical statements run as executemany."""

    ops: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def add(self, sql: str, params: tuple[Any, ...]) -> None:
        self.ops.append((sql, params))

    def grouped(self) -> Iterable[tuple[str, list[tuple[Any, ...]]]]:
        sql: str | None = None
        rows: list[tuple[Any, ...]] = []
        for s, p in self.ops:
            if s != sql and rows:
                yield sql, rows  # type: ignore[misc]
                rows = []
            sql = s
            rows.append(p)
        if rows:
            yield sql, rows  # type: ignore[misc]


_SQL_RUN_STUB = "INSERT OR IGNORE INTO runs(run_id, started_at, pid, host, heartbeat_at) VALUES (?,?,?,?,?)"
_SQL_RUN_STARTED = """INSERT INTO runs(run_id, benchmark, model, provider, simulator, turn_indices,
    turns_total, config, versions, status, reason, started_at, ended_at, pid, host, heartbeat_at)
    VALUES (?,?,?,?,?,?,?,?,?,'running','',?,NULL,?,?,?)
    ON CONFLICT(run_id) DO UPDATE SET benchmark=excluded.benchmark, model=excluded.model,
    provider=excluded.provider, simulator=excluded.simulator, turn_indices=excluded.turn_indices,
    turns_total=excluded.turns_total, config=excluded.config, versions=excluded.versions,
    status='running', reason='', started_at=excluded.started_at, ended_at=NULL,
    pid=excluded.pid, host=excluded.host, heartbeat_at=excluded.heartbeat_at"""
# ended_at = started_at + the run_ended's place on the run timeline, so an imported or replayed
# run keeps its true length (for a live run this is the wall clock of the end anyway).
_SQL_RUN_ENDED = """UPDATE runs SET status=?, reason=?,
    ended_at=strftime('%Y-%m-%dT%H:%M:%f+00:00', started_at, ?) WHERE run_id=?"""
_SQL_HEARTBEAT = "UPDATE runs SET heartbeat_at=? WHERE run_id=? AND status='running'"
_SQL_EVENT = "INSERT INTO events(run_id, seq, kind, t_ms, turn_index, payload) VALUES (?,?,?,?,?,?)"
_SQL_TURN = """INSERT INTO turns(run_id, turn_index, attempt, seq, status, session, user_text,
    user_transcript, assistant_text, tool_calls, tool_results, voice_to_voice_ms, pipeline_ttfb_ms,
    provider_ttfb_ms, leading_silence_ms, overlap_ms, interrupted, retries, reconnects, sentinel, error)
    VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"""
_SQL_JUDGEMENT = """INSERT INTO judgements(run_id, seq, turn_index, judge, revision, phase, rule,
    root_cause, fabricated_action, error, heuristic, input_tokens, cached_tokens, output_tokens)
    VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"""
_SQL_SCORE = "INSERT INTO judgement_scores(run_id, seq, dimension, verdict) VALUES (?,?,?,?)"
_SQL_AUDIO = """INSERT INTO audio(run_id, seq, turn_index, take, track, start_ms, sample_rate,
    channels, pcm) VALUES (?,?,?,?,?,?,?,?,?)"""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _recorder_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("arena-tui", "pipecat-ai", "textual", "openai", "boto3", "google-genai"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # an unreaped zombie still answers kill(0)
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def _ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


class Store:
    """The run database. Open with `await Store.open(path)`; use as an async context manager."""

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection) -> None:
        self.path = path
        self._w = writer
        self._r = reader
        self._inbox: asyncio.Queue[object] = asyncio.Queue()
        self._urgent = asyncio.Event()
        self._subs: list[Subscription] = []
        self._pumps: list[asyncio.Task[None]] = []
        self._seq: dict[str, int] = {}
        self._takes: dict[tuple[str, int | None], int] = {}  # turn_started seen per turn
        self._attempts: dict[tuple[str, int], int] = {}  # turn_ended seen per turn
        self._live: set[str] = set()  # runs this store saw start and not end
        self._versions: dict[str, str] | None = None
        self._pid = os.getpid()
        self._host = socket.gethostname()
        self._closed = False
        self._last_commit = 0.0
        self.errors: list[str] = []  # events the writer could not record (each also logged)
        self.events_written = 0
        self.batches_written = 0
        self._writer = asyncio.get_running_loop().create_task(self._write_loop(), name="store-writer")

    # --- lifecycle -----------------------------------------------------------------------------

    @classmethod
    async def open(cls, path: str | os.PathLike[str], *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Store:
        """Open (creating and migrating as needed) the database file at `path`."""
        p = Path(path)
        if p.exists() and p.is_dir():
            raise StoreError(f"{p}: is a directory, not a database file")
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(_prepare, p)
            writer = await _connect(p, query_only=False, busy_timeout_ms=busy_timeout_ms)
            reader = await _connect(p, query_only=True, busy_timeout_ms=busy_timeout_ms)
        except SchemaError as e:
            raise StoreError(str(e)) from None
        except (sqlite3.Error, OSError) as e:
            raise StoreError(f"{p}: cannot open the database: {e}") from None
        return cls(p, writer, reader)

    async def close(self) -> None:
        """Record everything still queued, then close both connections."""
        if self._closed:
            return
        for sub in list(self._subs):
            sub.close()  # each recording task then flushes what it still holds and ends
        if self._pumps and not self._writer.done():
            await asyncio.gather(*self._pumps, return_exceptions=True)
        try:
            if not self._writer.done():
                self._inbox.put_nowait(_STOP)
                self._urgent.set()
                await self._writer
        finally:
            self._closed = True
            await self._w.close()
            await self._r.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- writing -------------------------------------------------------------------------------

    def start_recording(self, bus: EventBus) -> asyncio.Task[None]:
        """Record everything published on `bus` from now on.

        The returned task ends once the bus is closed and all of its events are committed.
        """
        self._check_open()
        sub = bus.subscribe()
        self._subs.append(sub)
        task = asyncio.get_running_loop().create_task(self._pump(sub), name="store-recording")
        self._pumps.append(task)
        return task

    def submit(self, event: Event) -> None:
        """Queue one event for the writer (same queue, same order as recorded bus events)."""
        self._check_open()
        if not isinstance(event, Event):
            raise TypeError(f"Store.submit expects a RunEvent, got {type(event).__name__}")
        self._inbox.put_nowait(event)

    async def flush(self) -> None:
        """Wait until everything published or submitted so far is committed."""
        self._check_open()
        for sub in self._subs:
            self._take_from(sub)
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait(_Flush(fut))
        self._urgent.set()
        await self._await_writer(fut)

    async def delete_run(self, run_id: str) -> bool:
        """Delete a run and everything recorded for it; False if there was no such run."""

        async def op(conn: aiosqlite.Connection) -> bool:
            await _exec(conn, "BEGIN IMMEDIATE")
            deleted = await _exec(conn, "DELETE FROM runs WHERE run_id=?", (run_id,))
            await _exec(conn, "COMMIT")
            self._forget(run_id)
            return deleted > 0

        return await self._run_op(op)

    async def mark_interrupted_stale(self, stale_after_s: float = STALE_AFTER_S) -> list[str]:
        """Runs left 'running' by a recorder that is gone become 'interrupted'; returns their ids.

        Same host: the recorder's pid must be alive. Other hosts: its heartbeat must be fresh.
        A `run_ended(status="interrupted")` event is appended so a replay ends like a live run.
        """

        async def op(conn: aiosqlite.Connection) -> list[str]:
            rows = await _fetchall(
                conn,
                "SELECT run_id, pid, host, heartbeat_at, started_at FROM runs WHERE status='running'",
            )
            now = datetime.now(UTC)
            stale: list[tuple[str, str]] = []
            for run_id, pid, host, heartbeat_at, started_at in rows:
                if run_id in self._live:
                    continue
                if host == self._host and pid:
                    dead = not _pid_alive(int(pid))
                else:
                    beat = _ts(heartbeat_at) or _ts(started_at) or now
                    dead = (now - beat).total_seconds() > stale_after_s
                if dead:
                    stale.append((run_id, heartbeat_at or started_at))
            if not stale:
                return []
            ends = []
            for run_id, _ in stale:
                last = await _fetchall(conn, "SELECT MAX(t_ms) FROM events WHERE run_id=?", (run_id,))
                ends.append(
                    RunEnded(
                        run_id=run_id,
                        t_ms=float(last[0][0] or 0.0),
                        status="interrupted",
                        reason="the recording process ended without finishing the run",
                    )
                )
            await self._commit(ends)
            await _exec(conn, "BEGIN IMMEDIATE")
            await conn.executemany("UPDATE runs SET ended_at=? WHERE run_id=?", [(t, r) for r, t in stale])
            await _exec(conn, "COMMIT")
            return [r for r, _ in stale]

        return await self._run_op(op)

    async def vacuum(self) -> tuple[int, int]:
        """Rebuild the file to reclaim deleted space; returns (bytes before, bytes after)."""

        async def op(conn: aiosqlite.Connection) -> tuple[int, int]:
            before = _file_bytes(self.path)
            await _exec(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
            await _exec(conn, "VACUUM")
            await _exec(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
            return before, _file_bytes(self.path)

        try:
            return await self._run_op(op)
        except sqlite3.OperationalError as e:
            raise StoreError(f"{self.path}: vacuum failed ({e}); is a run recording into it?") from None

    # --- reading -------------------------------------------------------------------------------

    async def list_runs(self) -> list[RunRow]:
        """All runs, newest first."""
        rows = await self._read(_SQL_RUNS + " ORDER BY r.started_at DESC, r.run_id")
        return [_run_row(r) for r in rows]

    async def get_run(self, run_id: str) -> RunRow | None:
        rows = await self._read(_SQL_RUNS + " WHERE r.run_id=?", (run_id,))
        return _run_row(rows[0]) if rows else None

    async def turn_results(self, run_id: str) -> list[TurnResult]:
        """Latest result of each turn (greeting −1 first), by turn_index."""
        rows = await self._read(
            """SELECT e.seq, e.payload FROM turns t JOIN events e ON e.run_id=t.run_id AND e.seq=t.seq
               WHERE t.run_id=? AND t.attempt=(SELECT MAX(attempt) FROM turns t2
                   WHERE t2.run_id=t.run_id AND t2.turn_index=t.turn_index)
               ORDER BY t.turn_index""",
            (run_id,),
        )
        out = []
        for seq, payload in rows:
            ev = self._parse(run_id, seq, "turn_ended", payload)
            assert isinstance(ev, TurnEnded)
            out.append(ev.result)
        return out

    async def events(
        self,
        run_id: str,
        kinds: Iterable[str] | None = None,
        after_seq: int = 0,
        turn_index: int | None = None,
        *,
        limit: int | None = None,
        with_audio: bool = False,
    ) -> list[tuple[int, RunEvent]]:
        """Recorded events with their seq, in order. Audio events (with their PCM) only when
        `with_audio` or when "audio" is among `kinds`, since a UI poll should not pull megabytes."""
        kinds = list(kinds) if kinds is not None else None
        audio = with_audio or (kinds is not None and "audio" in kinds)
        sql = "SELECT e.seq, e.kind, e.payload{} FROM events e{} WHERE e.run_id=? AND e.seq>?".format(
            ", a.pcm" if audio else ", NULL",
            " LEFT JOIN audio a ON a.run_id=e.run_id AND a.seq=e.seq" if audio else "",
        )
        params: list[Any] = [run_id, after_seq]
        if kinds is not None:
            sql += f" AND e.kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        elif not audio:
            sql += " AND e.kind != 'audio'"
        if turn_index is not None:
            sql += " AND e.turn_index=?"
            params.append(turn_index)
        sql += " ORDER BY e.seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = await self._read(sql, tuple(params))
        return [(seq, self._parse(run_id, seq, kind, payload, pcm)) for seq, kind, payload, pcm in rows]

    async def replay(self, run_id: str, *, with_audio: bool = False, page: int = 500) -> AsyncIterator[RunEvent]:
        """Every recorded event of a run in seq order: the same stream a live run published."""
        after = 0
        while True:
            chunk = await self.events(run_id, after_seq=after, limit=page, with_audio=with_audio)
            for seq, ev in chunk:
                yield ev
                after = seq
            if len(chunk) < page:
                return

    async def audio(self, run_id: str, turn_index: int | None, track: Track) -> AudioClip | None:
        """One turn's user or bot audio (its last take), or its conversation slices."""
        if track not in ("user", "bot", "conversation"):
            raise StoreError(f"run {run_id}: unknown audio track {track!r} (user, bot or conversation)")
        rows = await self._read(
            """SELECT sample_rate, channels, start_ms, pcm FROM audio
               WHERE run_id=? AND track=? AND turn_index IS ? AND take=(SELECT MAX(take) FROM audio
                   WHERE run_id=? AND track=? AND turn_index IS ?)
               ORDER BY seq""",
            (run_id, track, turn_index, run_id, track, turn_index),
        )
        return _join_audio(rows, f"run {run_id} turn {turn_index} track {track}")

    async def conversation_audio(self, run_id: str) -> AudioClip | None:
        """The whole stereo conversation track (left user, right bot), gaps filled with silence."""
        rows = await self._read(
            "SELECT sample_rate, channels, start_ms, pcm FROM audio WHERE run_id=? AND track='conversation'"
            " ORDER BY seq",
            (run_id,),
        )
        return _join_audio(rows, f"run {run_id} conversation track")

    async def judgements(self, run_id: str, turn_index: int | None = None) -> list[Judgement]:
        """Every judgement revision, by turn then revision then arrival."""
        sql = """SELECT j.seq, e.payload FROM judgements j JOIN events e ON e.run_id=j.run_id AND e.seq=j.seq
                 WHERE j.run_id=?"""
        params: tuple[Any, ...] = (run_id,)
        if turn_index is not None:
            sql += " AND j.turn_index=?"
            params += (turn_index,)
        rows = await self._read(sql + " ORDER BY j.turn_index, j.revision, j.seq", params)
        out = []
        for seq, payload in rows:
            ev = self._parse(run_id, seq, "judgement", payload)
            assert isinstance(ev, Judgement)
            out.append(ev)
        return out

    async def latest_judgements(self, run_id: str) -> dict[int, Judgement]:
        """The judgement that currently stands for each turn (highest revision, then latest)."""
        latest: dict[int, Judgement] = {}
        for j in await self.judgements(run_id):
            if j.turn_index is not None:
                latest[j.turn_index] = j
        return latest

    async def info(self) -> StoreInfo:
        counts = {}
        for table in ("runs", "events", "turns", "judgements", "audio"):
            counts[table] = (await self._read(f"SELECT COUNT(*) FROM {table}"))[0][0]
        audio_bytes = (await self._read("SELECT COALESCE(SUM(LENGTH(pcm)), 0) FROM audio"))[0][0]
        page_size = (await self._read("PRAGMA page_size"))[0][0]
        freelist = (await self._read("PRAGMA freelist_count"))[0][0]
        version_ = (await self._read("PRAGMA user_version"))[0][0]
        wal = Path(f"{self.path}-wal")
        return StoreInfo(
            path=str(self.path),
            schema_version=version_,
            file_bytes=self.path.stat().st_size,
            wal_bytes=wal.stat().st_size if wal.exists() else 0,
            page_size=page_size,
            freelist_pages=freelist,
            counts=counts,
            audio_bytes=audio_bytes,
        )

    # --- internals -----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self.path}: the store is closed")

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
        if not self._closed:
            await self.flush()

    async def _await_writer(self, fut: asyncio.Future[Any]) -> Any:
        done, _ = await asyncio.wait({fut, self._writer}, return_when=asyncio.FIRST_COMPLETED)
        if fut in done:
            return fut.result()
        exc = self._writer.exception() if not self._writer.cancelled() else None
        raise StoreError(f"{self.path}: the store writer stopped: {exc}")

    async def _run_op(self, fn: Any) -> Any:
        self._check_open()
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inbox.put_nowait(_Op(fn, fut))
        self._urgent.set()
        return await self._await_writer(fut)

    def _forget(self, run_id: str) -> None:
        self._seq.pop(run_id, None)
        self._live.discard(run_id)
        self._takes = {k: v for k, v in self._takes.items() if k[0] != run_id}
        self._attempts = {k: v for k, v in self._attempts.items() if k[0] != run_id}

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
            pending: list[Event] = []
            for item in items:
                if isinstance(item, Event):
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
                        await _rollback(self._w)
                        if not item.fut.done():
                            item.fut.set_exception(e)
                    else:
                        if not item.fut.done():
                            item.fut.set_result(result)
                elif item is _STOP:
                    return
            if pending:
                await self._commit(pending)
            self._last_commit = loop.time()

    def _take_queued(self, items: list[object]) -> None:
        while True:
            try:
                items.append(self._inbox.get_nowait())
            except asyncio.QueueEmpty:
                return

    async def _heartbeat(self) -> None:
        if not self._live:
            return
        try:
            await _exec(self._w, "BEGIN IMMEDIATE")
            await self._w.executemany(_SQL_HEARTBEAT, [(_now(), r) for r in self._live])
            await _exec(self._w, "COMMIT")
        except sqlite3.Error as e:
            await _rollback(self._w)
            log.warning("%s: heartbeat not written: %s", self.path, e)

    async def _commit(self, events: list[Event]) -> None:
        """Write one batch; if it fails, write its events one by one so one bad event loses only itself.

        A busy database (another process holding the write lock past busy_timeout, e.g. a vacuum)
        is waited out rather than treated as bad events.
        """
        for attempt in range(LOCKED_RETRIES + 1):
            try:
                await self._write_batch(events)
                return
            except sqlite3.OperationalError as e:
                await _rollback(self._w)
                self._reset_caches(events)
                if "locked" in str(e) or "busy" in str(e):
                    if attempt < LOCKED_RETRIES:
                        log.warning("%s: database busy, retrying a batch of %d events", self.path, len(events))
                        await asyncio.sleep(min(0.25 * 2**attempt, 4.0))
                        continue
                    # Splitting would meet the same lock once per event: report the batch once.
                    first = events[0]
                    msg = (f"{self.path}: run {first.run_id}: {len(events)} events from t={first.t_ms:.0f} ms "
                           f"not recorded: {e} (another process held the database)")  # fmt: skip
                    self.errors.append(msg)
                    log.error("%s", msg)
                    return
                error: Exception = e
                break
            except Exception as e:  # noqa: BLE001 - the writer must outlive any one bad event
                await _rollback(self._w)
                self._reset_caches(events)
                error = e
                break
        if len(events) == 1:
            self._record_error(events[0], error)
            return
        for ev in events:
            try:
                await self._write_batch([ev])
            except Exception as e:  # noqa: BLE001
                await _rollback(self._w)
                self._reset_caches([ev])
                self._record_error(ev, e)

    def _record_error(self, ev: Event, e: Exception) -> None:
        msg = f"{self.path}: run {ev.run_id}: {getattr(ev, 'kind', '?')} event at t={ev.t_ms:.0f} ms"
        if ev.turn_index is not None:
            msg += f" (turn {ev.turn_index})"
        msg = scrub_text(msg + f" not recorded: {e}")
        self.errors.append(msg)
        log.error("%s", msg)

    def _reset_caches(self, events: list[Event]) -> None:
        for run_id in {ev.run_id for ev in events}:
            self._seq.pop(run_id, None)
            self._takes = {k: v for k, v in self._takes.items() if k[0] != run_id}
            self._attempts = {k: v for k, v in self._attempts.items() if k[0] != run_id}

    async def _write_batch(self, events: list[Event]) -> None:
        conn = self._w
        now = _now()
        await _exec(conn, "BEGIN IMMEDIATE")
        batch = _Batch()
        runs = list(dict.fromkeys(ev.run_id for ev in events))
        for run_id in runs:
            batch.add(_SQL_RUN_STUB, (run_id, now, self._pid, self._host, now))
            if run_id not in self._seq:
                rows = await _fetchall(conn, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id=?", (run_id,))
                self._seq[run_id] = int(rows[0][0])
        for ev in events:
            if isinstance(ev, (TurnStarted, AudioChunk)) and (ev.run_id, ev.turn_index) not in self._takes:
                rows = await _fetchall(
                    conn,
                    "SELECT COUNT(*) FROM events WHERE run_id=? AND turn_index IS ? AND kind='turn_started'",
                    (ev.run_id, ev.turn_index),
                )
                self._takes[(ev.run_id, ev.turn_index)] = int(rows[0][0])
            if isinstance(ev, TurnEnded) and (ev.run_id, ev.result.turn_index) not in self._attempts:
                rows = await _fetchall(
                    conn,
                    "SELECT COUNT(*) FROM turns WHERE run_id=? AND turn_index=?",
                    (ev.run_id, ev.result.turn_index),
                )
                self._attempts[(ev.run_id, ev.result.turn_index)] = int(rows[0][0])
        event_rows = []
        live_started: set[str] = set()
        live_ended: set[str] = set()
        for ev in events:
            seq = self._seq[ev.run_id] + 1
            self._seq[ev.run_id] = seq
            ev, payload = self._serialise(ev)
            event_rows.append((ev.run_id, seq, ev.kind, ev.t_ms, ev.turn_index, payload))  # type: ignore[attr-defined]
            self._derive(batch, ev, seq, now, live_started, live_ended)
        for sql, rows in batch.grouped():
            if sql == _SQL_RUN_STUB:
                await conn.executemany(sql, rows)
        await conn.executemany(_SQL_EVENT, event_rows)
        for sql, rows in batch.grouped():
            if sql != _SQL_RUN_STUB:
                await conn.executemany(sql, rows)
        await conn.executemany(_SQL_HEARTBEAT, [(now, r) for r in runs])
        await _exec(conn, "COMMIT")
        self._live |= live_started
        self._live -= live_ended
        self.events_written += len(events)
        self.batches_written += 1

    def _serialise(self, ev: Event) -> tuple[Event, str]:
        if isinstance(ev, RunStarted):
            ev = ev.model_copy(update={"config": scrub_config(ev.config)})
        if isinstance(ev, AudioChunk):
            return ev, ev.model_dump_json(exclude={"pcm"})
        payload = ev.model_dump_json()
        if _SECRET_VALUE.search(payload):
            payload = scrub_text(payload)
            ev = parse_event(payload)
        return ev, payload

    def _derive(self, batch: _Batch, ev: Event, seq: int, now: str, started: set[str], ended: set[str]) -> None:
        if isinstance(ev, RunStarted):
            if self._versions is None:
                self._versions = _recorder_versions()
            batch.add(
                _SQL_RUN_STARTED,
                (
                    ev.run_id, ev.benchmark, ev.model, ev.provider, int(ev.simulator),
                    json.dumps(ev.turn_indices), len(ev.turn_indices), json.dumps(ev.config, default=str),
                    json.dumps(self._versions), now, self._pid, self._host, now,
                ),
            )  # fmt: skip
            started.add(ev.run_id)
            ended.discard(ev.run_id)
        elif isinstance(ev, RunEnded):
            batch.add(_SQL_RUN_ENDED, (ev.status, ev.reason, f"{max(ev.t_ms, 0.0) / 1000:+.3f} seconds", ev.run_id))
            ended.add(ev.run_id)
            started.discard(ev.run_id)
        elif isinstance(ev, TurnStarted):
            self._takes[(ev.run_id, ev.turn_index)] += 1
        elif isinstance(ev, TurnEnded):
            r = ev.result
            key = (ev.run_id, r.turn_index)
            attempt = self._attempts[key]
            self._attempts[key] = attempt + 1
            calls = [c.model_dump(mode="json", exclude={"response"}) for c in r.tool_calls]
            results = [{"call_id": c.call_id, "name": c.name, "response": c.response} for c in r.tool_calls]
            lat = r.latencies
            batch.add(
                _SQL_TURN,
                (
                    ev.run_id, r.turn_index, attempt, seq, r.status, r.session, r.user_text,
                    r.user_transcript, r.assistant_text, json.dumps(calls), json.dumps(results, default=str),
                    lat.voice_to_voice_ms, lat.pipeline_ttfb_ms, lat.provider_ttfb_ms,
                    lat.leading_silence_ms, r.overlap_ms, int(r.interrupted), r.retries, r.reconnects,
                    r.sentinel, r.error,
                ),
            )  # fmt: skip
        elif isinstance(ev, Judgement):
            u = ev.usage
            fab = None if ev.fabricated_action is None else int(ev.fabricated_action)
            batch.add(
                _SQL_JUDGEMENT,
                (
                    ev.run_id, seq, ev.turn_index, ev.judge, ev.revision, ev.phase, ev.rule,
                    ev.root_cause, fab, ev.error, int(ev.heuristic), u.input_tokens,
                    u.cached_input_tokens, u.output_tokens,
                ),
            )  # fmt: skip
            for dim, score in ev.scores.items():
                batch.add(_SQL_SCORE, (ev.run_id, seq, dim, score.verdict))
        elif isinstance(ev, AudioChunk):
            take = max(self._takes.get((ev.run_id, ev.turn_index), 0) - 1, 0)
            batch.add(
                _SQL_AUDIO,
                (ev.run_id, seq, ev.turn_index, take, ev.track, ev.start_ms, ev.sample_rate, ev.channels, ev.pcm),
            )

    def _parse(self, run_id: str, seq: int, kind: str, payload: str, pcm: bytes | None = None) -> RunEvent:
        try:
            if kind == "audio":
                data = json.loads(payload)
                data["pcm"] = pcm or b""
                return parse_event(data)
            return parse_event(payload)
        except ValueError as e:
            first = str(e).splitlines()[0]
            raise StoreError(f"{self.path}: run {run_id} event {seq} ({kind}) cannot be read: {first}") from None

    async def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        self._check_open()
        try:
            return await _fetchall(self._r, sql, params)
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: read failed: {e}") from None


_SQL_RUNS = """SELECT r.run_id, r.benchmark, r.model, r.provider, r.simulator, r.status, r.started_at,
    r.ended_at, r.turns_total,
    (SELECT COUNT(DISTINCT t.turn_index) FROM turns t WHERE t.run_id=r.run_id AND t.turn_index>=0),
    r.config, r.versions, r.turn_indices, r.reason, r.pid, r.host, r.heartbeat_at
    FROM runs r"""


def _run_row(r: tuple[Any, ...]) -> RunRow:
    return RunRow(
        run_id=r[0], benchmark=r[1], model=r[2], provider=r[3], simulator=bool(r[4]), status=r[5],
        started_at=_ts(r[6]), ended_at=_ts(r[7]), turns_total=r[8], turns_done=r[9],
        config=json.loads(r[10]), versions=json.loads(r[11]), turn_indices=json.loads(r[12]),
        reason=r[13], pid=r[14], host=r[15], heartbeat_at=_ts(r[16]),
    )  # fmt: skip


def _join_audio(rows: list[tuple[int, int, float, bytes]], what: str) -> AudioClip | None:
    """Concatenate chunks in order; a gap on the timeline becomes silence so time stays true."""
    if not rows:
        return None
    rate, channels, start_ms = rows[0][0], rows[0][1], rows[0][2]
    frame = 2 * channels
    parts: list[bytes] = []
    frames = 0
    for r_rate, r_channels, r_start, pcm in rows:
        if (r_rate, r_channels) != (rate, channels):
            raise StoreError(
                f"{what}: chunks disagree on format ({rate} Hz x{channels} vs {r_rate} Hz x{r_channels})"
            )
        gap = round((r_start - start_ms) * rate / 1000.0) - frames
        if gap > 0 and frames > 0:
            parts.append(b"\x00" * (gap * frame))
            frames += gap
        parts.append(pcm)
        frames += len(pcm) // frame
    return AudioClip(pcm=b"".join(parts), sample_rate=rate, channels=channels, start_ms=start_ms)


def _prepare(path: Path) -> None:
    """Create/migrate the file and switch it to WAL, once, before the async connections open."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not an arena-tui database ({e})") from None
        if mode.lower() != "wal":
            log.warning("%s: journal mode is %s, not WAL", path, mode)
        if schema_version(conn) != SCHEMA_VERSION:
            migrate(conn, str(path))  # also refuses a schema newer than this code
    finally:
        conn.close()


async def _connect(path: Path, *, query_only: bool, busy_timeout_ms: int) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    await _exec(conn, f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    await _exec(conn, "PRAGMA foreign_keys=ON")
    await _exec(conn, "PRAGMA synchronous=NORMAL")  # WAL: durable against a killed process
    if query_only:
        await _exec(conn, "PRAGMA query_only=ON")
    return conn


async def _exec(conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...] = ()) -> int:
    """Run one statement and finalise it at once (an unfinished statement pins a WAL snapshot)."""
    async with conn.execute(sql, params) as cur:
        await cur.fetchall()
        return cur.rowcount


async def _fetchall(conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    async with conn.execute(sql, params) as cur:
        return list(await cur.fetchall())


async def _rollback(conn: aiosqlite.Connection) -> None:
    try:
        if conn.in_transaction:
            await _exec(conn, "ROLLBACK")
    except sqlite3.Error:
        pass


def _file_bytes(path: Path) -> int:
    total = 0
    for p in (path, Path(f"{path}-wal")):
        if p.exists():
            total += p.stat().st_size
    return total
