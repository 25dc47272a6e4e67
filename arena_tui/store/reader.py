"""Queries: runs, turn results, events, replay, audio, judgements and benchmark snapshots, on a
`query_only` connection.

Reads use their own connection, so a UI polling the store never queues behind the writer and
never holds the write lock; WAL lets them see the last commit while a batch is written. Audio
comes back as the exact PCM16 that was recorded, decoded (`codec`) in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import aiosqlite
from pydantic import BaseModel, ConfigDict

from arena_tui.spine.audio import SILENCE_KEPT_MS
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.events import (
    FINISHED, Judgement, RunEnded, RunEvent, TokenUsage, TurnEnded, TurnResult, Usage, parse_event,
)
from arena_tui.spine.times import wall_ms
from arena_tui.spine.recorded import RecordedRun
from arena_tui.spine.source import source_label, variant_labels
from ..verdicts import standing_judgements
from . import codec
from .connection import fetchall
from .errors import StoreError
from .projections import USAGE_COLUMNS
from .snapshots import benchmark_of

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
    turns_done: int  # turns whose latest row ran to its end (`spine.events.FINISHED`): one stopped or lost is not done
    config: dict[str, Any]
    versions: dict[str, str]
    turn_indices: list[int] = []
    reason: str = ""
    pid: int | None = None
    host: str | None = None
    heartbeat_at: datetime | None = None
    speed: float | None = None  # run timeline / wall clock; None: not recorded (latency not comparable)
    timeline_ms: float | None = None  # where its timeline got to (its last run/turn event): idle time never moves it
    resumed: bool = False  # it went on after an interruption (`run_resumed`)
    superseded_by: str | None = None  # the run that replaced this one (a campaign's re-run): it counts nowhere

    @property
    def recorded(self) -> RecordedRun:
        """Its settings read (`spine.recorded`): how every consumer reads `config`."""
        return RecordedRun.of(self.config)

    @property
    def source(self) -> str | None:
        """`simulator`, `protocol fake` or None (the real service): `spine.source.source_label`."""
        return source_label(self.simulator, self.recorded)

    @property
    def variants(self) -> tuple[str, ...]:
        """How its input differed from the default (`spine.source.variant_labels`): a campaign's runs
        under two conditions or efforts are otherwise the same line."""
        return variant_labels(self.recorded)

    def active_s(self, now: datetime | None = None) -> float:
        """Wall-clock time it ran, the idle time between an interruption and its resume left out: its
        timeline's length in wall time (a resume goes on where the timeline stopped), up to its last
        turn event. A run never resumed: its span, a running one up to `now`."""
        if not self.resumed or self.timeline_ms is None:  # its wall-clock span is the time it ran
            end = self.ended_at or now or datetime.now(UTC)
            return max(0.0, (end - self.started_at).total_seconds())
        return max(0.0, wall_ms(self.timeline_ms, self.speed) / 1000.0)


class AudioClip(BaseModel):
    """PCM16 little-endian samples, interleaved when stereo (left user, right bot), from
    `start_ms` on the run's timeline. `cuts` are the silences left out: (timeline ms where the
    clip skips ahead, ms skipped), each after `SILENCE_KEPT_MS` of a longer gap was kept."""

    model_config = ConfigDict(frozen=True)

    pcm: bytes
    sample_rate: int
    channels: int
    start_ms: float = 0.0
    cuts: tuple[tuple[float, float], ...] = ()

    @property
    def frames(self) -> int:
        return len(self.pcm) // (2 * self.channels)

    @property
    def duration_ms(self) -> float:
        return self.frames * 1000.0 / self.sample_rate

    def frame_at(self, t_ms: float) -> int:
        """The frame index of timeline time `t_ms` (a time inside a cut: where the clip goes on)."""
        audio_ms = t_ms - self.start_ms
        for at, skipped in self.cuts:
            if t_ms >= at + skipped:
                audio_ms -= skipped
            elif t_ms > at:
                audio_ms -= t_ms - at
        return min(max(round(audio_ms * self.sample_rate / 1000.0), 0), self.frames)


class StoreInfo(BaseModel):
    path: str
    schema_version: int
    file_bytes: int
    wal_bytes: int
    page_size: int
    freelist_pages: int
    counts: dict[str, int]
    audio_bytes: int  # the PCM16 the audio plays as
    audio_stored_bytes: int = 0  # what it takes in the file (FLAC where smaller)


def ts(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


_FINISHED = ", ".join(f"'{s}'" for s in sorted(FINISHED))
_SQL_RUNS = f"""SELECT r.run_id, r.benchmark, r.model, r.provider, r.simulator, r.status, r.started_at,
    r.ended_at, r.turns_total,
    (SELECT COUNT(*) FROM turns t WHERE t.run_id=r.run_id AND t.turn_index>=0 AND t.status IN ({_FINISHED})
        AND t.attempt=(SELECT MAX(attempt) FROM turns t2 WHERE t2.run_id=t.run_id AND t2.turn_index=t.turn_index)),
    r.config, r.versions, r.turn_indices, r.reason, r.pid, r.host, r.heartbeat_at, r.speed,
    (SELECT MAX(e.t_ms) FROM events e WHERE e.run_id=r.run_id
        AND e.kind IN ('run_started', 'run_resumed', 'turn_started', 'turn_ended', 'run_ended')),
    EXISTS(SELECT 1 FROM events e WHERE e.run_id=r.run_id AND e.kind='run_resumed'), r.superseded_by
    FROM runs r"""


class Reader:
    """Every query of the run database; `Store` adds writing on top of it."""

    def __init__(self, path: Path, reader: aiosqlite.Connection) -> None:
        self.path = path
        self._r = reader
        self._closed = False
        #: runs known to have ended whose end is not in the file (it refused the write: full, read-only)
        self._ended: Mapping[str, RunEnded] = {}

    async def data_version(self) -> int:
        """SQLite's `PRAGMA data_version` on the reading connection: it changes whenever another
        connection (this store's writer, another process) has committed since the last call, so a
        screen that polls can skip reading a database nobody wrote to."""
        rows = await self._read("PRAGMA data_version")
        return int(rows[0][0])

    async def list_runs(self) -> list[RunRow]:
        """All runs, newest first."""
        rows = await self._read(_SQL_RUNS + " ORDER BY r.started_at DESC, r.run_id")
        return [self._as_known(_run_row(r)) for r in rows]

    async def get_run(self, run_id: str) -> RunRow | None:
        rows = await self._read(_SQL_RUNS + " WHERE r.run_id=?", (run_id,))
        return self._as_known(_run_row(rows[0])) if rows else None

    def _as_known(self, row: RunRow) -> RunRow:
        """The row with an end this store knows of and the file refused (a dead recorder's run on a full
        disk): never shown `running`, never refused as "still recording"."""
        end = self._ended.get(row.run_id) if row.status == "running" else None
        if end is None:
            return row
        return row.model_copy(update={"status": end.status, "reason": end.reason, "ended_at": end.wall_time or row.heartbeat_at})

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

    async def last_t_ms(self, run_id: str) -> float:
        """Where the run's timeline ends: its last event's t_ms (0 for a run with none). A later
        judging (a re-judge, `judge RUN`) is stamped there, after what it judges."""
        rows = await self._read("SELECT MAX(t_ms) FROM events WHERE run_id=?", (run_id,))
        return float(rows[0][0] or 0.0) if rows else 0.0

    async def turn_times(self, run_id: str) -> tuple[list[tuple[int, float]], dict[int, float]]:
        """Where each turn started and ended on the run's timeline, without reading payloads:
        ([(turn, t_ms)] of every `turn_started`, {turn: t_ms of its last `turn_ended`})."""
        rows = await self._read(
            "SELECT kind, turn_index, t_ms FROM events WHERE run_id=? AND kind IN ('turn_started', 'turn_ended') "
            "AND turn_index IS NOT NULL ORDER BY seq",
            (run_id,),
        )
        started = [(int(i), float(t)) for kind, i, t in rows if kind == "turn_started"]
        ended = {int(i): float(t) for kind, i, t in rows if kind == "turn_ended"}
        return started, ended

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
            ", a.codec, a.data, a.channels, a.pcm_bytes" if audio else ", NULL, NULL, NULL, NULL",
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
        pcms = await self._decode(run_id, [(seq, r) for seq, _, _, *r in rows if r[1] is not None])
        return [(seq, self._parse(run_id, seq, kind, payload, pcms.get(seq))) for seq, kind, payload, *_ in rows]

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
            f"""SELECT {_SQL_CLIP} FROM audio
               WHERE run_id=? AND track=? AND turn_index IS ? AND take=(SELECT MAX(take) FROM audio
                   WHERE run_id=? AND track=? AND turn_index IS ?)
               ORDER BY seq""",
            (run_id, track, turn_index, run_id, track, turn_index),
        )
        return await self._clip(run_id, rows, f"run {run_id} turn {turn_index} track {track}")

    async def conversation_audio(self, run_id: str) -> AudioClip | None:
        """The whole stereo conversation track (left user, right bot), gaps filled with silence
        (a gap over `SILENCE_KEPT_MS`: that much, the rest listed in `cuts`)."""
        rows = await self._read(
            f"SELECT {_SQL_CLIP} FROM audio WHERE run_id=? AND track='conversation' ORDER BY seq",
            (run_id,),
        )
        return await self._clip(run_id, rows, f"run {run_id} conversation track")

    async def stored_benchmark(self, run_id: str) -> Benchmark | None:
        """The benchmark snapshot recorded with the run (None for runs recorded before snapshots)."""
        rows = await self._read(
            "SELECT b.snapshot FROM runs r JOIN benchmarks b ON b.sha256=r.benchmark_sha256 WHERE r.run_id=?",
            (run_id,),
        )
        if not rows:
            return None
        try:
            return benchmark_of(rows[0][0])
        except ValueError as e:
            first = str(e).splitlines()[0]
            raise StoreError(f"{self.path}: run {run_id}: its stored benchmark cannot be read: {first}") from None

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

    async def judgement_marks(self) -> dict[str, tuple[int, int]]:
        """Per run: (its judgement rows, the newest one's seq). Judgements are only appended (or
        deleted with their run), so an unchanged mark means unchanged judgements: a screen that
        polls re-reads only the runs whose mark moved."""
        rows = await self._read("SELECT run_id, COUNT(*), MAX(seq) FROM judgements GROUP BY run_id")
        return {run_id: (n, last) for run_id, n, last in rows}

    async def usage(self, run_id: str) -> list[Usage]:
        """What each service of the run said it used (`usage` events), in the order reported."""
        rows = await self._read(f"SELECT service, model, {', '.join(USAGE_COLUMNS)} FROM usage WHERE run_id=? ORDER BY seq",
                                (run_id,))
        return [Usage(service=r[0], model=r[1], **dict(zip(USAGE_COLUMNS, r[2:], strict=True))) for r in rows]

    async def judge_usage(self, run_id: str) -> dict[str, TokenUsage]:
        """judge label -> the tokens of every request it was sent about the run (every revision's,
        the whole-run request's too: each was billed), apart from the model's own usage."""
        rows = await self._read("""SELECT judge, SUM(input_tokens), SUM(cached_tokens), SUM(output_tokens) FROM judgements
                                   WHERE run_id=? GROUP BY judge ORDER BY judge""", (run_id,))
        return {j: TokenUsage(input_tokens=i or 0, cached_input_tokens=c or 0, output_tokens=o or 0) for j, i, c, o in rows}

    async def latest_judgements(self, run_id: str) -> dict[int, Judgement]:
        """The judgement each turn shows, by the one rule of `arena_tui.verdicts`."""
        return standing_judgements(await self.judgements(run_id))

    async def info(self) -> StoreInfo:
        counts = {}
        for table in ("runs", "events", "turns", "judgements", "audio", "benchmarks"):
            counts[table] = (await self._read(f"SELECT COUNT(*) FROM {table}"))[0][0]
        audio_bytes, stored_bytes = (
            await self._read(
                "SELECT COALESCE(SUM(COALESCE(pcm_bytes, LENGTH(data))), 0), COALESCE(SUM(LENGTH(data)), 0) FROM audio"
            )
        )[0]
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
            audio_stored_bytes=stored_bytes,
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

    async def _decode(self, run_id: str, rows: list[tuple[int, list[Any]]]) -> dict[int, bytes]:
        """PCM16 of audio rows `(seq, [codec, data, channels, pcm_bytes])`, by seq, decoded in a
        worker thread when any is compressed; a row that does not decode to its recorded length
        is a `StoreError` naming it."""

        def run() -> dict[int, bytes]:
            out = {}
            for seq, (kind, data, channels, pcm_bytes) in rows:
                try:
                    pcm = codec.decode(kind, data, channels)
                except ValueError as e:
                    raise StoreError(f"{self.path}: run {run_id} audio event {seq} cannot be read: {e}") from None
                if pcm_bytes is not None and len(pcm) != pcm_bytes:
                    raise StoreError(
                        f"{self.path}: run {run_id} audio event {seq} cannot be read: "
                        f"decodes to {len(pcm)} bytes, {pcm_bytes} were recorded"
                    )
                out[seq] = pcm
            return out

        if not any(r[0] != codec.PCM16 for _, r in rows):
            return run()
        return await asyncio.to_thread(run)

    async def _clip(self, run_id: str, rows: list[Any], what: str) -> AudioClip | None:
        """Rows of `_SQL_CLIP`, decoded and joined into one clip."""
        pcms = await self._decode(run_id, [(r[0], list(r[4:])) for r in rows])
        return _join_audio([(rate, ch, start, pcms[seq]) for seq, rate, ch, start, *_ in rows], what)
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
        reason=r[13], pid=r[14], host=r[15], heartbeat_at=ts(r[16]), speed=r[17], timeline_ms=r[18],
        resumed=bool(r[19]), superseded_by=r[20],
    )  # fmt: skip


# An audio row as `_clip` reads it.
_SQL_CLIP = "seq, sample_rate, channels, start_ms, codec, data, channels, pcm_bytes"


def _join_audio(rows: list[tuple[int, int, float, bytes]], what: str) -> AudioClip | None:
    """Concatenate chunks in order; a gap on the timeline becomes silence so time stays true,
    up to `SILENCE_KEPT_MS` of it: the rest of a longer gap is a cut (listed in the clip), the
    way the recorder stored it (`runners.timeline.recorder.ConversationRecorder`)."""
    if not rows:
        return None
    rate, channels, start_ms = rows[0][0], rows[0][1], rows[0][2]
    frame = 2 * channels
    kept = round(SILENCE_KEPT_MS * rate / 1000.0)
    parts: list[bytes] = []
    cuts: list[tuple[float, float]] = []
    frames = 0
    skipped = 0  # frames of timeline cut so far
    for r_rate, r_channels, r_start, pcm in rows:
        if (r_rate, r_channels) != (rate, channels):
            raise StoreError(
                f"{what}: chunks disagree on format ({rate} Hz x{channels} vs {r_rate} Hz x{r_channels})"
            )
        gap = round((r_start - start_ms) * rate / 1000.0) - frames - skipped
        if gap > 0 and frames > 0:
            silence = min(gap, kept)
            parts.append(b"\x00" * (silence * frame))
            frames += silence
            if gap > silence:
                cuts.append(((frames + skipped) * 1000.0 / rate + start_ms, (gap - silence) * 1000.0 / rate))
                skipped += gap - silence
        parts.append(pcm)
        frames += len(pcm) // frame
    return AudioClip(pcm=b"".join(parts), sample_rate=rate, channels=channels, start_ms=start_ms, cuts=tuple(cuts))
