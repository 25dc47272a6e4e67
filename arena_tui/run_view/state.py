"""`RunState`: one run's event stream folded into what its screens show (turn rows, transcript,
log, meters, the wait under way, the tally), live or replayed alike. Live, it gets a clock (wall
seconds): elapsed ticks on it, a wait counts down on it, a meter without new levels falls."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from arena_tui.spine.events import (
    GREETING_TURN, ErrorEvent, DuplexPlayed, Interruption, Judgement, Level, Overlap, Reconnected,
    Retry, RunEnded, RunSuperseded, RunEvent, RunResumed, RunStarted, SessionOpened, SessionRotated,
    SpeechBoundary, ToolAnswered, ToolCalled, TranscriptDelta, TurnEnded, TurnStarted, Waiting,
)
from arena_tui.spine.faults import TurnFault
from arena_tui.spine.times import wall_ms
from arena_tui.spine.source import against, source_label, variant_labels, variants_text
from ..timing import UntrustedTurns, latency_caveat, speed_note, v2v_text
from ..verdicts import NOT_PLAYED, TURN_TAKING, JudgeId, Tally, counts, ordered, tally
from .costs import RunCosts
from .rows import SILENT_DBFS, LogLine, Meter, TranscriptLine, TurnRow, TurnSpec, elect_judge, wait_text


class RunState:
    """Everything the run screen shows about one run, built only from events."""

    def __init__(self, run_id: str, specs: dict[int, TurnSpec] | None = None,
                 clock: Callable[[], float] | None = None, planned: tuple[str, str] | None = None) -> None:
        """`clock` (seconds, monotonic) only for a run followed live: elapsed then ticks on the wall
        clock, the watchdog counts down and silent meters fall; a replay has none. `planned`: the
        (benchmark, model) a run being started was asked for, said until its `run_started` comes."""
        self.run_id = run_id
        self.clock = clock
        self.planned = planned
        self.wall_started: float | None = None
        self.wall_ended: float | None = None
        self.started_wall_time: datetime | None = None  # the first run_started's (a resumed run keeps its origin)
        self.waiting: Waiting | None = None  # what the engine waits on, until something comes
        self.waiting_wall: float | None = None
        self.specs = specs or {}
        self.started: RunStarted | None = None
        self.ended: RunEnded | None = None
        self.turns: dict[int, TurnRow] = {}
        self.transcript: list[TranscriptLine] = []
        self.log: list[LogLine] = []
        self.meters = {"user": Meter(), "bot": Meter()}
        self.session = 1
        self.rotations = 0
        self.current_turn: int | None = None
        self.last_ms = 0.0
        self.overlap_until_ms = -1.0
        self.version = 0  # bumped on every change, so widgets can skip identical repaints
        # bumped on every change but a level: levels arrive 40 times/s and only move the meters, so
        # the table, transcript, log and header are rebuilt only when this moves
        self.content_version = 0
        self.judges: set[str] = set()  # the run's judge's name (`judge`), as the header says it
        self.revisions: list[Judgement] = []  # every turn's, in arrival order: the run's judge (`judge`) is theirs
        self.any_heuristic = False
        self.judge: JudgeId | None = None  # the run's judge (`verdicts.run_judge`): the one whose verdicts count
        self.errors = 0
        self.start_error: str | None = None  # the run never started (engine missing, bad benchmark...)
        self.user_spoke_ms: dict[tuple[int | None, int], float] = {}  # (turn, attempt) -> user speech start
        self.resumed = False  # a `run_resumed` came: it went on after an interruption
        self.untrusted = UntrustedTurns()  # turns whose latencies are untrusted (`timing`: input sent late)
        # what the run ran (`arena_tui.spine.benchmark.Benchmark`, set with `specs` where it is loaded):
        # the call alignment behind a failure's causes; None: no call causes (nothing to align to)
        self.benchmark_data: Any = None
        self.rotated: list[SessionRotated] = []  # its session rotations (a lossy one is a cause)
        self.verdict_version = 0  # bumped when what a turn's causes read changes (results, revisions, rotations)
        self._causes: tuple[tuple, dict[int, tuple[str, ...]]] | None = None
        self.costs = RunCosts()  # its usage and the judge's tokens, priced when shown (`costs.py`)

    def log_local(self, text: str, kind: str = "error") -> None:
        """A line that is not an event (e.g. why a run could not start)."""
        self.log.append(LogLine(self.last_ms, kind, text))
        if kind == "error" and self.started is None:
            self.start_error = text
        self.version += 1
        self.content_version += 1

    # --- derived -------------------------------------------------------------------------
    @property
    def status(self) -> str:
        if self.ended is not None:
            return self.ended.status
        if self.start_error is not None:
            return "failed"
        return "running" if self.started is not None else "starting"

    @property
    def benchmark(self) -> str:
        if self.started:
            return self.started.benchmark
        return self.planned[0] if self.planned else "?"

    @property
    def model_name(self) -> str:
        """The model alias: the run's, or while it starts the one it was asked for."""
        if self.started:
            return self.started.model
        return self.planned[1] if self.planned else "?"

    @property
    def model_label(self) -> str:
        if not self.started:
            return f"{self.model_name} (starting)" if self.planned else "?"
        label = f"{self.started.model} ({self.started.provider})"
        label = f"{label} [{self.source.upper()}]" if self.source else label
        return label + variants_text(self.variants)

    @property
    def variants(self) -> tuple[str, ...]:
        """How the run's input differed from the default (`spine.source.variant_labels`; faults apart:
        the run screen says them on their own line); () before it started."""
        return variant_labels(self.started.recorded, faults=False) if self.started else ()

    @property
    def source(self) -> str | None:
        """`simulator`, `protocol fake` or None (the real service): `spine.source.source_label`."""
        return source_label(self.started.simulator, self.started.recorded) if self.started else None

    @property
    def speed(self) -> float | None:
        """How much faster than the wall clock the run timeline ran (None: not recorded)."""
        return self.started.timeline_speed if self.started else 1.0

    @property
    def latency_note(self) -> str | None:
        """Why this run's latencies are not comparable (`arena_tui.timing`), None when they are."""
        return speed_note(self.speed) if self.started else None

    @property
    def latency_caveat(self) -> str | None:
        """`latency at 20× — not comparable` over the run's latencies, None when they are comparable."""
        return latency_caveat(self.speed) if self.started else None

    @property
    def turns_total(self) -> int:
        return len(self.started.turn_indices) if self.started else len(self.turns)

    @property
    def turns_done(self) -> int:
        """Turns that ran to their end (`verdicts.counts`): one stopped or lost is not done."""
        return sum(1 for r in self.turns.values() if r.result is not None and r.index >= 0 and counts(r.status))

    @property
    def dimensions(self) -> list[str]:
        """Every dimension a turn is due or was scored on, in `verdicts.DIMENSIONS` order: known from
        the start (turn_taking too, for a run it is judged on), so columns do not come and go."""
        seen: dict[str, None] = {}
        for spec in self.specs.values():
            for d in spec.dimensions:
                seen.setdefault(d, None)
        if self.specs and self.started is not None and self.started.recorded.judges_turn_taking:
            seen.setdefault(TURN_TAKING, None)
        for row in self.turns.values():
            for d in row.scores:
                seen.setdefault(d, None)
        return ordered(seen)

    def wall_now(self) -> float | None:
        return self.clock() if self.clock is not None else None

    def elapsed_ms(self) -> float:
        """Wall-clock ms since the run started: the live clock; for an ended run the wall clock its
        start and end carry (what the runs list says, `runs.started_at`/`ended_at`); else as far as
        its events go (`last_ms` is audio time, run `speed` times faster than the wall); a resumed
        run's is its timeline's, which stood still while it was interrupted (`RunRow.active_s`)."""
        if self.clock is None or self.wall_started is None:
            end = self.ended.wall_time if self.ended is not None and not self.resumed else None
            if end is not None and self.started_wall_time is not None:
                return max(0.0, (end - self.started_wall_time).total_seconds() * 1000.0)
            return wall_ms(self.last_ms, self.speed)
        end = self.wall_ended if self.wall_ended is not None else self.clock()
        return (end - self.wall_started) * 1000.0

    def wait_left_ms(self) -> float | None:
        """Wall-clock ms until the engine's watchdog gives up on what it waits on; None if not waiting."""
        w = self.waiting
        if w is None:
            return None
        left = wall_ms(w.deadline_t_ms - w.t_ms, self.speed)
        if self.clock is not None and self.waiting_wall is not None:
            left -= (self.clock() - self.waiting_wall) * 1000.0
        return max(0.0, left)

    def wait_line(self) -> str | None:
        left = self.wait_left_ms()
        return None if left is None or self.waiting is None else wait_text(self.waiting.what, left)

    def shown_meter(self, who: str) -> Meter:
        return self.meters[who].shown(self.wall_now())

    @property
    def overlapping(self) -> bool:
        both = self.meters["user"].speaking and self.meters["bot"].speaking
        return both or self.last_ms <= self.overlap_until_ms

    def tally(self) -> Tally:
        """The run's figures by the one rule (`arena_tui.verdicts.tally`): its turns' statuses, and
        once it has ended the turns it set out to run (one never played is then not played)."""
        statuses = {i: r.status for i, r in self.turns.items() if r.status not in ("pending", "running")}
        expected = self.started.turn_indices if self.started is not None and self.ended is not None else None
        return tally(self.revisions, statuses, expected)

    def pass_rates(self) -> dict[str, tuple[int, int]]:
        """dimension -> (passed, scored)."""
        return self.tally().dimensions

    def causes(self) -> dict[int, tuple[str, ...]]:
        """turn -> why it failed (or why it counts apart), by the one rule (`judge.causes.run_causes`,
        as a stored run's `StoredRun.causes`); recomputed only when a result, a revision or a
        rotation came."""
        key = (self.verdict_version, id(self.benchmark_data))
        if self._causes is not None and self._causes[0] == key:
            return self._causes[1]
        try:
            from ..judge.causes import run_causes  # deferred: the UI starts, and says why, even when the judge cannot load
        except ImportError:
            return {}
        rehydrated = self.started is not None and self.started.recorded.rehydrated
        results = [r.result for r in self.turns.values() if r.result is not None]
        found = run_causes(self.benchmark_data, results, self.revisions, rotations=self.rotated,
                           cross_turn=not rehydrated)
        self._causes = (key, found)
        return found

    def row(self, index: int) -> TurnRow:
        if index not in self.turns:
            self.turns[index] = TurnRow(index=index, spec=self.specs.get(index), fault=self.faults.get(index))
        return self.turns[index]

    @property
    def faults(self) -> dict[int, TurnFault]:
        """turn -> the simulator fault injected on it (`spine.faults`), from the run's config."""
        return self.started.recorded.turn_faults if self.started is not None else {}

    # --- folding -------------------------------------------------------------------------
    def apply_all(self, events: list[RunEvent]) -> bool:
        return any([self.apply(ev) for ev in events])  # every one folded in (a list, not a short-circuit)

    def apply(self, ev: RunEvent) -> bool:
        """Fold one event in; False when it is not for this run (nothing changes)."""
        if ev.run_id != self.run_id or ev.kind == "audio":
            return False
        self.version += 1
        if ev.kind != "level":
            self.content_version += 1
        self.last_ms = max(self.last_ms, ev.t_ms)
        if self.waiting is not None and ev.kind in _WAIT_OVER and getattr(ev, "role", "assistant") == "assistant":
            self.waiting = None
        self.costs.see(ev)
        handler = getattr(self, f"_on_{ev.kind}", None)
        before = self.verdict_version
        if handler is not None:
            handler(ev)
        if self.verdict_version != before:  # a verdict or a turn's status came: the run's judge again
            self.judge, self.any_heuristic = elect_judge(self.turns, self.revisions)
            self.judges = {self.judge[0]} if self.judge is not None else set()  # what the header says judged it
        return True

    def _log(self, ev: RunEvent, text: str, kind: str | None = None) -> None:
        self.log.append(LogLine(ev.t_ms, kind or ev.kind, text, ev.turn_index))

    def _on_run_started(self, ev: RunStarted) -> None:
        self.started = ev
        self.wall_started = self.wall_now()
        if self.started_wall_time is None:
            self.started_wall_time = ev.wall_time
        for i in ev.turn_indices:
            self.row(i)
        for i, fault in self.faults.items():  # rows made before the run said its faults
            if i in self.turns:
                self.turns[i].fault = fault
        sim = f" against {against(self.source)}" if self.source else ""
        faults = ev.recorded.fault_text
        extra = f" (faults: {faults})" if faults else ""
        self._log(ev, f"run started: {ev.benchmark}, {len(ev.turn_indices)} turns, {ev.model}{sim}{extra}")

    def _on_run_resumed(self, ev: RunResumed) -> None:
        self.resumed = True
        self._log(ev, f"run resumed at turn {ev.from_turn}")

    def _on_session_opened(self, ev: SessionOpened) -> None:
        self.session = ev.session
        self._log(ev, f"session {ev.session} opened" + (f": {ev.detail}" if ev.detail else ""))

    def _on_turn_started(self, ev: TurnStarted) -> None:
        if ev.turn_index is None:
            return
        greeting = self.turns.get(GREETING_TURN)
        if ev.turn_index != GREETING_TURN and greeting is not None and greeting.status == "running":
            greeting.status = "ok"  # the greeting has no turn_ended: it is over when turn 0 starts
            greeting.ended_ms = ev.t_ms
            for ln in self.transcript:
                if ln.turn == GREETING_TURN:
                    ln.final = True
        row = self.row(ev.turn_index)
        if ev.attempt > 0:
            self._new_attempt(ev.turn_index, ev.attempt, ev.t_ms, None)
        row.status = "running"
        row.attempts = max(row.attempts, ev.attempt + 1)
        if row.started_ms is None:
            row.started_ms = ev.t_ms
        self.current_turn = ev.turn_index
        if ev.attempt == 0:
            label = "greeting" if ev.turn_index == GREETING_TURN else f"turn {ev.turn_index}"
            self._log(ev, f"{label} started")

    def _on_level(self, ev: Level) -> None:
        m = self.meters[ev.source]
        m.rms_dbfs, m.peak_dbfs, m.updated_ms, m.updated_wall = ev.rms_dbfs, ev.peak_dbfs, ev.t_ms, self.wall_now()
        if ev.source == "bot" and ev.rms_dbfs > -60.0:
            self.waiting = None  # the bot is audible: the wait is over

    def _on_waiting(self, ev: Waiting) -> None:
        self.waiting, self.waiting_wall = ev, self.wall_now()
        self._log(ev, wait_text(ev.what, wall_ms(ev.deadline_t_ms - ev.t_ms, self.speed)))

    def _speech(self, ev: SpeechBoundary, who: str, on: bool) -> None:
        self.meters[who].speaking = on

    def _on_user_speech_started(self, ev: SpeechBoundary) -> None:
        self._speech(ev, "user", True)
        self.user_spoke_ms.setdefault((ev.turn_index, self._attempt(ev.turn_index)), ev.t_ms)

    def _attempt(self, turn: int | None) -> int:
        return max(self.turns[turn].attempts - 1, 0) if turn in self.turns else 0

    def _on_user_speech_stopped(self, ev: SpeechBoundary) -> None:
        self._speech(ev, "user", False)

    def _on_bot_speech_started(self, ev: SpeechBoundary) -> None:
        self._speech(ev, "bot", True)

    def _on_bot_speech_stopped(self, ev: SpeechBoundary) -> None:
        self._speech(ev, "bot", False)

    def _on_transcript_delta(self, ev: TranscriptDelta) -> None:
        last = next((ln for ln in reversed(self.transcript) if ln.role == ev.role and ln.turn == ev.turn_index), None)
        if last is not None and not last.final:
            last.text += ev.text
            last.final = ev.final
        else:
            attempt = self._attempt(ev.turn_index)
            # the user's words arrive once they are transcribed, often after the reply began: the line
            # belongs where the user started speaking, before the reply and the turn's tool calls
            t = self.user_spoke_ms.get((ev.turn_index, attempt), ev.t_ms) if ev.role == "user" else ev.t_ms
            at = len(self.transcript)
            while at and self.transcript[at - 1].t_ms > t:
                at -= 1
            self.transcript.insert(at, TranscriptLine(t, ev.turn_index, ev.role, ev.text, ev.final, attempt))

    def _cut(self, turn: int | None, why: str, role: str | None = None, close: bool = True) -> None:
        """Mark the turn's unfinished lines as cut off; closed, later text starts a line of its own."""
        for ln in self.transcript:
            if ln.turn == turn and not ln.final and ln.role in ("user", "assistant") and role in (None, ln.role):
                ln.cut = ln.cut or why
                ln.final = close

    def _new_attempt(self, turn: int | None, attempt: int, t_ms: float, reason: str | None) -> None:
        """A retry: what the last attempt said is cut off, and a marker separates the attempts."""
        for ln in self.transcript:
            if ln.role == "attempt" and ln.turn == turn and ln.attempt == attempt:
                return  # the retry event already marked it (turn_started follows it)
        self._cut(turn, reason or "retried")
        label = f"attempt {attempt + 1} (retry {attempt}" + (f": {reason})" if reason else ")")
        self.transcript.append(TranscriptLine(t_ms, turn, "attempt", label, True, attempt))

    def _on_tool_call(self, ev: ToolCalled) -> None:
        if ev.turn_index is not None:
            self.row(ev.turn_index).tool_calls.append(ev)
        dup = " (duplicate)" if ev.is_duplicate else ""
        self.transcript.append(TranscriptLine(ev.t_ms, ev.turn_index, "tool", f"{ev.name}({_args(ev.args)}){dup}", True))

    def _on_tool_result(self, ev: ToolAnswered) -> None:
        if ev.turn_index is not None:
            self.row(ev.turn_index).tool_results.append(ev)
        self.transcript.append(TranscriptLine(ev.t_ms, ev.turn_index, "result", f"{ev.name} → {ev.status}", True))

    def _on_overlap(self, ev: Overlap) -> None:
        # reported once one of its two speech intervals has closed (runners.timeline.overlaps.LiveOverlaps),
        # so after it began: flag it from when it arrives, for a second of run time
        self.overlap_until_ms = max(self.overlap_until_ms, ev.end_ms, self.last_ms) + 1000
        self._log(ev, f"overlap {ev.duration_ms:.0f} ms ({ev.start_ms / 1000:.2f}s–{ev.end_ms / 1000:.2f}s)")

    def _on_duplex(self, ev: DuplexPlayed) -> None:
        self._log(ev, f"user speaks during the reply ({ev.cue.replace('_', ' ')}, {ev.at_ms:,.0f} ms in): “{ev.text}”")

    def _on_interruption(self, ev: Interruption) -> None:
        if ev.cause == "bot_truncated":  # the reply ended incomplete; its text still streams with its audio
            self._cut(ev.turn_index, "truncated", "assistant", close=False)
        what = {"bot_truncated": "bot truncated", "bot_barge_in": "bot talked over the user"}.get(ev.cause, "user barged in")
        self._log(ev, f"interruption: {what}" + (f" ({ev.detail})" if ev.detail else ""))

    def _on_session_rotated(self, ev: SessionRotated) -> None:
        self.rotations += 1
        self.rotated.append(ev)
        self.verdict_version += 1
        self.session = ev.to_session
        r = ev.replayed
        replay = f"{r.strategy}: {r.messages} msgs, {r.tool_calls} tool calls, {r.chars} chars"
        if r.dropped_messages:
            replay += f", {r.dropped_messages} dropped"
        self._log(ev, f"session rotated {ev.from_session}→{ev.to_session} ({ev.reason}); replayed {replay}")

    def _on_reconnected(self, ev: Reconnected) -> None:
        self.session = ev.session
        self._log(ev, f"reconnected (session {ev.session}, attempt {ev.attempt}): {ev.reason}")

    def _on_retry(self, ev: Retry) -> None:
        self._new_attempt(ev.turn_index, ev.attempt, ev.t_ms, ev.reason)
        self._log(ev, f"retry {ev.attempt}: {ev.reason}")

    def _on_error(self, ev: ErrorEvent) -> None:
        self.errors += 1
        self.untrusted.see(ev.kind, ev.turn_index, ev.where)
        self._log(ev, f"{'FATAL ' if ev.fatal else ''}{ev.where} error: {ev.message}")

    def _on_turn_ended(self, ev: TurnEnded) -> None:
        res = ev.result
        row = self.row(res.turn_index)
        row.result, row.status, row.ended_ms = res, res.status, ev.t_ms
        self.verdict_version += 1
        self.untrusted.see(ev.kind, res.turn_index)
        row.untrusted = res.turn_index in self.untrusted.turns
        self.meters["user"].speaking = self.meters["bot"].speaking = False
        if res.sentinel:
            self.transcript.append(TranscriptLine(ev.t_ms, res.turn_index, "sentinel", res.sentinel, True))
        for ln in self.transcript:
            if ln.turn == res.turn_index:
                ln.final = True
        seen = {ln.kind for ln in self.log if ln.turn == res.turn_index}
        if res.overlap_ms > 0 and "overlap" not in seen:  # measured, but no overlap event came
            self.overlap_until_ms = max(self.overlap_until_ms, self.last_ms) + 1000
            self._log(ev, f"overlap {res.overlap_ms:.0f} ms in turn {res.turn_index} (from the turn's measurements)", "overlap")
        if res.interrupted and "interruption" not in seen:
            self._log(ev, f"interruption in turn {res.turn_index} (from the turn's measurements)", "interruption")
        label = "greeting" if res.turn_index == GREETING_TURN else f"turn {res.turn_index}"
        extra = f", v2v {v2v_text(res.latencies, self.speed)}" if res.latencies.voice_to_voice_ms is not None else ""
        self._log(ev, f"{label} ended: {res.status}{extra}" + (f" — {res.error}" if res.error else ""))

    def _on_judgement(self, ev: Judgement) -> None:
        if ev.turn_index is None:
            return
        row = self.row(ev.turn_index)
        if ev in row.judgements:  # the same revision twice (the bus's, and the store's read back): once
            return
        row.judgements.append(ev)
        self.revisions.append(ev)
        self.verdict_version += 1
        if ev.error:
            self._log(ev, f"judge error on turn {ev.turn_index}: {ev.error}")
        elif ev.review is not None:
            what = "withdrew their verdict" if ev.review.withdraw else \
                "gave a verdict: " + ", ".join(f"{d} {s.verdict}" for d, s in ev.scores.items())
            self._log(ev, f"turn {ev.turn_index}: {ev.review.by} {what} (rev {ev.revision})")
        elif ev.revision > 1 or ev.phase == 2:
            self._log(ev, f"turn {ev.turn_index} re-judged (rev {ev.revision}{', ' + ev.rule if ev.rule else ''})")

    def _on_run_ended(self, ev: RunEnded) -> None:
        self.ended = ev
        self.verdict_version += 1
        self.wall_ended = self.wall_now()
        for row in self.turns.values():  # what was under way was stopped; what was still to come, never played
            row.status = {"running": "interrupted", "pending": NOT_PLAYED}.get(row.status, row.status)
        for m in self.meters.values():  # nothing plays once the run is over (a stored run showed its last level)
            m.speaking, m.rms_dbfs, m.peak_dbfs = False, SILENT_DBFS, SILENT_DBFS
        for ln in self.transcript:
            ln.final = True
        self._log(ev, f"run {ev.status}" + (f": {ev.reason}" if ev.reason else ""))

    def _on_run_superseded(self, ev: RunSuperseded) -> None:
        self._log(ev, f"superseded by run {ev.by}, which re-ran it from scratch: this run counts nowhere"
                  + (f" ({ev.reason})" if ev.reason else ""))


# what ends a wait in the state's eyes: the reply (its text, a call), or the turn's course moving on
_WAIT_OVER = frozenset({"transcript_delta", "tool_call", "bot_speech_started", "retry", "turn_started", "turn_ended",
                        "run_ended", "session_rotated"})


def _args(args: dict[str, Any]) -> str:
    s = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return s if len(s) <= 80 else s[:77] + "…"
