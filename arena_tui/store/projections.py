"""The derived tables: `runs`, `turns`, `judgements` (+ scores), `usage`, `audio` and `benchmarks`,
projected from events.

`events` is the complete log; each projection row is written in the same transaction as the
event it comes from, so the tables never disagree with the log. The projector keeps the few
counters a row needs (next seq, the take of a turn's audio, the attempt of a turn's result)
and loads them from the file the first time a run is met in a batch. Audio is stored in its
`codec` form and a run's benchmark snapshot once per content (`encode_blobs`, off the loop).
"""

from __future__ import annotations

import json
import logging
import platform
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import aiosqlite

from arena_tui.spine.events import (
    AudioChunk, Judgement, RunEnded, RunEvent, RunResumed, RunStarted, RunSuperseded, TurnEnded, TurnStarted, Usage,
    UsageReported,
)
from . import codec
from .connection import fetchall
from .snapshots import SQL_SNAPSHOT, snapshot_row

log = logging.getLogger(__name__)

SQL_RUN_STUB = "INSERT OR IGNORE INTO runs(run_id, started_at, pid, host, heartbeat_at) VALUES (?,?,?,?,?)"
SQL_RUN_STARTED = """INSERT INTO runs(run_id, benchmark, model, provider, simulator, turn_indices,
    turns_total, config, versions, status, reason, started_at, ended_at, pid, host, heartbeat_at, speed,
    benchmark_sha256)
    VALUES (?,?,?,?,?,?,?,?,?,'running','',?,NULL,?,?,?,?,?)
    ON CONFLICT(run_id) DO UPDATE SET benchmark=excluded.benchmark, model=excluded.model,
    benchmark_sha256=excluded.benchmark_sha256,
    provider=excluded.provider, simulator=excluded.simulator, turn_indices=excluded.turn_indices,
    turns_total=excluded.turns_total, config=excluded.config, versions=excluded.versions,
    status='running', reason='', started_at=excluded.started_at, ended_at=NULL,
    pid=excluded.pid, host=excluded.host, heartbeat_at=excluded.heartbeat_at, speed=excluded.speed"""
# Wall clock both ends: the events' own `wall_time` (so an import or a replay of a recorded
# stream keeps the run's true times, never the time it was written), else the commit time of
# run_started and, for run_ended, started_at + its t_ms in wall time (`wall_ms`: `spine.times.wall_ms`,
# the store's connection's own function).
SQL_RUN_ENDED = """UPDATE runs SET status=?, reason=?, ended_at=COALESCE(?,
    strftime('%Y-%m-%dT%H:%M:%f+00:00', started_at, printf('%+.3f seconds', wall_ms(?, speed) / 1000.0)))
    WHERE run_id=?"""
# a resumed run is running again, recorded by this process (started_at stays: its timeline's origin)
SQL_RUN_RESUMED = """UPDATE runs SET status='running', reason='', ended_at=NULL, pid=?, host=?,
    heartbeat_at=? WHERE run_id=?"""
SQL_RUN_SUPERSEDED = "UPDATE runs SET superseded_by=? WHERE run_id=?"
SQL_HEARTBEAT = "UPDATE runs SET heartbeat_at=? WHERE run_id=? AND status='running'"
SQL_EVENT = "INSERT INTO events(run_id, seq, kind, t_ms, turn_index, payload) VALUES (?,?,?,?,?,?)"
SQL_TURN = """INSERT INTO turns(run_id, turn_index, attempt, seq, status, session, user_text,
    user_transcript, assistant_text, tool_calls, tool_results, voice_to_voice_ms, pipeline_ttfb_ms,
    provider_ttfb_ms, leading_silence_ms, overlap_ms, interrupted, retries, reconnects, sentinel, error)
    VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"""
SQL_JUDGEMENT = """INSERT INTO judgements(run_id, seq, turn_index, judge, revision, phase, rule,
    root_cause, fabricated_action, error, heuristic, input_tokens, cached_tokens, output_tokens,
    judge_version, judgings, reviewer, causes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"""
SQL_SCORE = "INSERT INTO judgement_scores(run_id, seq, dimension, verdict, agree) VALUES (?,?,?,?,?)"
#: the `usage` table's counts, in its column order (the fields of `spine.events.Usage` after service and model)
USAGE_COLUMNS = tuple(f for f in Usage.model_fields if f not in ("service", "model"))
SQL_USAGE = (f"INSERT INTO usage(run_id, seq, turn_index, service, model, {', '.join(USAGE_COLUMNS)}) "
             f"VALUES ({', '.join('?' * (5 + len(USAGE_COLUMNS)))})")
SQL_AUDIO = """INSERT INTO audio(run_id, seq, turn_index, take, track, start_ms, sample_rate,
    channels, codec, data, pcm_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?)"""

# What `encode_blobs` prepares for an event, by id(event): (codec, data) for audio, (sha256, JSON)
# for a run_started's benchmark snapshot.
Blobs = dict[int, tuple[str, Any]]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def wall_iso(ts: datetime | None) -> str | None:
    """An event's wall clock as stored (ISO 8601 UTC, ms)."""
    return None if ts is None else ts.astimezone(UTC).isoformat(timespec="milliseconds")


def recorder_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("arena-tui", "pipecat-ai", "textual", "openai", "boto3", "google-genai"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


@dataclass
class Batch:
    """The SQL of one batch, in event order; consecutive identical statements run as executemany."""

    ops: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def add(self, sql: str, params: tuple[Any, ...]) -> None:
        self.ops.append((sql, params))

    def grouped(self) -> Iterable[tuple[str, list[tuple[Any, ...]]]]:
        sql: str | None = None
        rows: list[tuple[Any, ...]] = []
        for s, p in self.ops:
            if s != sql and rows:
                yield sql, rows  # type: ignore[misc]  # `sql` is set whenever `rows` is not empty
                rows = []
            sql = s
            rows.append(p)
        if rows:
            yield sql, rows  # type: ignore[misc]  # `sql` is set whenever `rows` is not empty


def encode_blobs(events: Iterable[RunEvent]) -> Blobs:
    """The CPU-heavy part of a batch's rows, done in a worker thread before its transaction:
    audio compressed (`codec.encode`), benchmark snapshots hashed. What fails here is stored
    as it came (raw PCM) or without a snapshot, never lost."""
    out: Blobs = {}
    for ev in events:
        try:
            if isinstance(ev, AudioChunk):
                out[id(ev)] = codec.encode(ev.pcm, ev.sample_rate, ev.channels)
            elif isinstance(ev, RunStarted) and ev.benchmark_snapshot is not None:
                out[id(ev)] = snapshot_row(ev.benchmark_snapshot)
        except Exception as e:  # noqa: BLE001 - one odd event must not hold back the batch
            log.warning("run %s: %s event stored without its compressed form: %s", ev.run_id, ev.kind, e)
    return out


def needs_blobs(events: Iterable[RunEvent]) -> bool:
    return any(isinstance(ev, AudioChunk) or (isinstance(ev, RunStarted) and ev.benchmark_snapshot) for ev in events)


class Projector:
    """Turns events into projection rows; owns the per-run counters those rows need."""

    def __init__(self, pid: int, host: str) -> None:
        self.pid = pid
        self.host = host
        self.seq: dict[str, int] = {}
        self.takes: dict[tuple[str, int | None], int] = {}  # turn_started seen per turn
        self.attempts: dict[tuple[str, int], int] = {}  # turn_ended seen per turn
        self.versions: dict[str, str] | None = None

    async def load(self, conn: aiosqlite.Connection, events: Iterable[RunEvent], runs: list[str], now: str, batch: Batch) -> None:
        """Read the counters of runs and turns this batch meets for the first time."""
        for run_id in runs:
            batch.add(SQL_RUN_STUB, (run_id, now, self.pid, self.host, now))
            if run_id not in self.seq:
                rows = await fetchall(conn, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id=?", (run_id,))
                self.seq[run_id] = int(rows[0][0])
        for ev in events:
            if isinstance(ev, (TurnStarted, AudioChunk)) and (ev.run_id, ev.turn_index) not in self.takes:
                rows = await fetchall(
                    conn,
                    "SELECT COUNT(*) FROM events WHERE run_id=? AND turn_index IS ? AND kind='turn_started'",
                    (ev.run_id, ev.turn_index),
                )
                self.takes[(ev.run_id, ev.turn_index)] = int(rows[0][0])
            if isinstance(ev, TurnEnded) and (ev.run_id, ev.result.turn_index) not in self.attempts:
                rows = await fetchall(
                    conn,
                    "SELECT COUNT(*) FROM turns WHERE run_id=? AND turn_index=?",
                    (ev.run_id, ev.result.turn_index),
                )
                self.attempts[(ev.run_id, ev.result.turn_index)] = int(rows[0][0])

    async def numbered(self, conn: aiosqlite.Connection, ev: Judgement, taken: dict[tuple[str, int | None], int]) -> Judgement:
        """The judgement numbered after every revision of its turn already stored (read inside the write
        transaction, so two processes judging or reviewing one turn at once never share a number: each
        computed `newest + 1` from what it read before) and after those earlier in this batch (`taken`).
        A revision already past them keeps its number."""
        key = (ev.run_id, ev.turn_index)
        if key not in taken:
            rows = await fetchall(conn, "SELECT COALESCE(MAX(revision), 0) FROM judgements WHERE run_id=? AND turn_index IS ?",
                                  key)
            taken[key] = int(rows[0][0])
        rev = max(ev.revision, taken[key] + 1)
        taken[key] = rev
        return ev if rev == ev.revision else ev.model_copy(update={"revision": rev})

    def next_seq(self, run_id: str) -> int:
        seq = self.seq[run_id] + 1
        self.seq[run_id] = seq
        return seq

    def forget(self, run_ids: Iterable[str]) -> None:
        """Drop the counters of these runs (after a rollback or a delete): reloaded when next met."""
        gone = set(run_ids)
        for run_id in gone:
            self.seq.pop(run_id, None)
        self.takes = {k: v for k, v in self.takes.items() if k[0] not in gone}
        self.attempts = {k: v for k, v in self.attempts.items() if k[0] not in gone}

    def derive(
        self, batch: Batch, ev: RunEvent, seq: int, now: str, started: set[str], ended: set[str],
        blob: tuple[str, Any] | None = None,
    ) -> None:
        """The projection rows of one event; `blob` is what `encode_blobs` prepared for it."""
        if isinstance(ev, RunStarted):
            if self.versions is None:
                self.versions = recorder_versions()
            sha = None
            if blob is not None:
                sha, text = blob
                batch.add(SQL_SNAPSHOT, (sha, ev.benchmark, text, now))
            batch.add(
                SQL_RUN_STARTED,
                (
                    ev.run_id, ev.benchmark, ev.model, ev.provider, int(ev.simulator),
                    json.dumps(ev.turn_indices), len(ev.turn_indices), json.dumps(ev.config, default=str),
                    json.dumps(self.versions), wall_iso(ev.wall_time) or now, self.pid, self.host, now,
                    ev.timeline_speed, sha,
                ),
            )  # fmt: skip
            started.add(ev.run_id)
            ended.discard(ev.run_id)
        elif isinstance(ev, RunResumed):
            batch.add(SQL_RUN_RESUMED, (self.pid, self.host, now, ev.run_id))
            started.add(ev.run_id)
            ended.discard(ev.run_id)
        elif isinstance(ev, RunEnded):
            batch.add(SQL_RUN_ENDED, (ev.status, ev.reason, wall_iso(ev.wall_time), max(ev.t_ms, 0.0), ev.run_id))
            ended.add(ev.run_id)
            started.discard(ev.run_id)
        elif isinstance(ev, RunSuperseded):
            batch.add(SQL_RUN_SUPERSEDED, (ev.by, ev.run_id))
        elif isinstance(ev, TurnStarted):
            self.takes[(ev.run_id, ev.turn_index)] += 1
        elif isinstance(ev, TurnEnded):
            r = ev.result
            key = (ev.run_id, r.turn_index)
            attempt = self.attempts[key]
            self.attempts[key] = attempt + 1
            calls = [c.model_dump(mode="json", exclude={"response"}) for c in r.tool_calls]
            results = [{"call_id": c.call_id, "name": c.name, "response": c.response} for c in r.tool_calls]
            lat = r.latencies
            batch.add(
                SQL_TURN,
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
            agreed = ev.agreement
            batch.add(
                SQL_JUDGEMENT,
                (
                    ev.run_id, seq, ev.turn_index, ev.judge, ev.revision, ev.phase, ev.rule,
                    ev.root_cause, fab, ev.error, int(ev.heuristic), u.input_tokens,
                    u.cached_input_tokens, u.output_tokens, ev.judge_version,
                    agreed.judgings if agreed is not None else None,
                    ev.review.by if ev.review is not None else None, json.dumps(ev.causes) if ev.causes else None,
                ),
            )  # fmt: skip
            for dim, score in ev.scores.items():
                agree = agreed.agree.get(dim) if agreed is not None else None
                batch.add(SQL_SCORE, (ev.run_id, seq, dim, score.verdict, agree))
        elif isinstance(ev, UsageReported):
            used = ev.usage
            batch.add(SQL_USAGE, (ev.run_id, seq, ev.turn_index, used.service, used.model,
                                  *(getattr(used, f) for f in USAGE_COLUMNS)))
        elif isinstance(ev, AudioChunk):
            take = max(self.takes.get((ev.run_id, ev.turn_index), 0) - 1, 0)
            kind, data = blob if blob is not None else (codec.PCM16, ev.pcm)
            batch.add(
                SQL_AUDIO,
                (
                    ev.run_id, seq, ev.turn_index, take, ev.track, ev.start_ms, ev.sample_rate, ev.channels,
                    kind, data, len(ev.pcm),
                ),
            )  # fmt: skip
