"""Queries: runs, turn results, events, replay, audio and judgements, on a `query_only` connection.

Reads use their own connection, so a UI polling the store never queues behind the writer and
never holds the write lock; WAL lets them see the last commit while a batch is written.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import aiosqlite
from pydantic import BaseModel, ConfigDict

from arena_tui.spine.events import Judgement, RunEvent, TurnEnded, TurnResult, parse_event
from ..verdicts import standing_judgements
from .connection import fetchall
from .errors import StoreError

Track = Literal["user", "bot", "conversation"]


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


def ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


_SQL_RUNS = """SELECT r.run_id, r.benchmark, r.model, r.provider, r.simulator, r.status, r.started_at,
    r.ended_at, r.turns_total,
    (SELECT COUNT(DISTINCT t.turn_index) FROM turns t WHERE t.run_id=r.run_id AND t.turn_index>=0),
    r.config, r.versions, r.turn_indices, r.reason, r.pid, r.host, r.heartbeat_at
    FROM runs r"""


class Reader:
    """Every query of the run database; `Store` adds writing on top of it."""

    def __init__(self, path: Path, reader: aiosqlite.Connection) -> None:
        self.path = path
        self._r = reader
        self._closed = False

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
        """The judgement each turn shows, by the one rule of `arena_tui.verdicts`."""
        return standing_judgements(await self.judgements(run_id))

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

    async def read_rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        """A read-only query on the reader connection (tables outside the run projections)."""
        return await self._read(sql, params)

    async def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        self._check_open()
        try:
            return await fetchall(self._r, sql, params)
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: read failed: {e}") from None


def _run_row(r: tuple[Any, ...]) -> RunRow:
    return RunRow(
        run_id=r[0], benchmark=r[1], model=r[2], provider=r[3], simulator=bool(r[4]), status=r[5],
        started_at=ts(r[6]), ended_at=ts(r[7]), turns_total=r[8], turns_done=r[9],
        config=json.loads(r[10]), versions=json.loads(r[11]), turn_indices=json.loads(r[12]),
        reason=r[13], pid=r[14], host=r[15], heartbeat_at=ts(r[16]),
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
