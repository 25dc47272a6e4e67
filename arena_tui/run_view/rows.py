"""What a run's screen shows, row by row: a turn's spec (from the benchmark) and its row (its
attempts, calls, the judgement that counts and its verdict), a transcript line, a log line, a
level meter (held, then falling on the wall clock), and how a wait reads. `RunState` fills them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from arena_tui.spine.benchmark import DuplexCue
from arena_tui.spine.events import (
    EMPTY_RESPONSE,
    MODEL_ENDED_SESSION,
    MODEL_ENDED_SESSION_EARLY,
    DimensionScore,
    Judgement,
    ToolAnswered,
    ToolCalled,
    TurnResult,
)
from arena_tui.spine.faults import TurnFault
from ..verdicts import ANY, JudgeId, Standing, apart_reason, counts, is_review, judge_id, run_judge, standing_of

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark

SENTINELS = (EMPTY_RESPONSE, MODEL_ENDED_SESSION, MODEL_ENDED_SESSION_EARLY)
SILENT_DBFS = -90.0
METER_HOLD_S = 0.25  # a meter with no new level for this long (wall clock) starts falling
METER_FALL_DB_PER_S = 60.0  # how fast it falls to silence, like a VU meter's release


def wait_text(what: str, left_ms: float) -> str:
    """`waiting for a reply to turn 3 — watchdog in 27 s` (left_ms: wall-clock ms until it gives up)."""
    return f"waiting for {what} — watchdog in {max(0, round(left_ms / 1000))} s"


class TurnSpec(BaseModel):
    """What the benchmark expects of a turn (the UI's view of `arena_tui.spine.benchmark.Turn`)."""

    turn_index: int
    categories: list[str] = Field(default_factory=list)
    dimensions: list[str] = Field(default_factory=list)
    golden_text: str = ""
    input: str = ""
    expected_calls: list[dict[str, Any]] = Field(default_factory=list)
    duplex: list[DuplexCue] = Field(default_factory=list)  # user speech scripted into the reply


def specs_from_benchmark(benchmark: Benchmark) -> dict[int, TurnSpec]:
    """TurnSpecs from a loaded `arena_tui.spine.benchmark.Benchmark` (duck-typed to keep imports light)."""
    out: dict[int, TurnSpec] = {}
    for t in benchmark.turns:
        out[t.turn_index] = TurnSpec(
            turn_index=t.turn_index,
            categories=list(t.categories),
            dimensions=list(t.dimensions),
            golden_text=t.golden_text,
            input=t.input,
            expected_calls=[c.model_dump() for c in t.expected_calls],
            duplex=list(t.duplex),
        )
    return out


def elect_judge(rows: dict[int, TurnRow], revisions: list[Judgement]) -> tuple[JudgeId | None, bool]:
    """The run's judge over its rows' revisions and the turns that count (`verdicts.run_judge`), set
    on every row (each counts that judge's revisions and a person's alone), and whether it is the heuristic."""
    counted = {i for i, r in rows.items() if r.status not in ("pending", "running") and counts(r.status)}
    judge = run_judge(revisions, counted)
    for row in rows.values():
        row.judge = judge
    return judge, judge is not None and any(j.heuristic for j in revisions if judge_id(j) == judge)


@dataclass
class TurnRow:
    index: int
    spec: TurnSpec | None = None
    status: str = "pending"  # pending | running | TurnStatus
    started_ms: float | None = None
    ended_ms: float | None = None
    result: TurnResult | None = None
    tool_calls: list[ToolCalled] = field(default_factory=list)
    tool_results: list[ToolAnswered] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)  # every revision, arrival order
    attempts: int = 0
    untrusted: bool = False  # its latencies are untrusted: this machine sent the user's audio late (`timing`)
    fault: TurnFault | None = None  # the simulator fault injected on it (the run's `faults`): a failure by design
    judge: Any = ANY  # the run's judge (`verdicts.run_judge`, set by `RunState`): only its revisions count
    _standing: tuple[Any, Standing[Judgement] | None] = field(default=(0, None), repr=False, compare=False)

    @property
    def standing(self) -> Standing[Judgement] | None:
        """Which revision counts (`arena_tui.verdicts`): the run's judge's and a person's; revisions
        are only ever appended. None: neither that judge nor a person judged it."""
        key = (len(self.judgements), self.judge)
        if self._standing[0] != key:
            st = standing_of(self.judgements, self.judge)
            mine = st is not None and (st.judging is not None or any(is_review(j) for j in self.judgements))
            self._standing = (key, st if mine else None)
        return self._standing[1]

    @property
    def latest(self) -> Judgement | None:
        """The judgement shown: the one that counts, else the newest error."""
        st = self.standing
        return st.shown if st else None

    @property
    def provisional(self) -> bool:
        """The verdict that stands was scored live: the whole-run judgement has not replaced it yet."""
        st = self.standing
        return bool(st and st.judgement is not None and st.judgement.provisional)

    @property
    def human(self) -> tuple[str, ...]:
        """The dimensions whose verdict that counts is a person's (`verdicts.Standing.human`)."""
        st = self.standing
        return st.human if st else ()

    @property
    def judge_error(self) -> str | None:
        """The newest revision's error, also when an earlier verdict still stands."""
        st = self.standing
        return st.error if st else None

    @property
    def scores(self) -> dict[str, DimensionScore]:
        st = self.standing
        return dict(st.judgement.scores) if st and st.judgement else {}

    @property
    def verdict(self) -> str:
        """pass / fail / na / judge_error / pending (`arena_tui.verdicts.row_verdict`), or why the
        turn counts in no figure (a `verdicts.APART` key: lost_pace, interrupted, infra_error, error)."""
        if self.status not in ("pending", "running") and (why := apart_reason(self.status)) is not None:
            return why
        st = self.standing
        return st.verdict if st else "pending"

    @property
    def categories(self) -> list[str]:
        return self.spec.categories if self.spec else []

    @property
    def expected_tools(self) -> list[str]:
        return [c.get("name", "?") for c in self.spec.expected_calls] if self.spec else []

    @property
    def made_tools(self) -> list[str]:
        if self.result is not None:
            return [c.name for c in self.result.tool_calls]
        return [c.name for c in self.tool_calls]

    @property
    def tools_ok(self) -> bool | None:
        """All expected calls matched and nothing wrong called; None while unknown or not applicable."""
        exp, made = self.expected_tools, self.made_tools
        if (not exp and not made) or self.result is None:
            return None
        calls = self.result.tool_calls
        matched = sum(1 for c in calls if c.status in ("matched", "end_session") and not c.is_duplicate)
        bad = any(c.status in ("unexpected_tool_call", "arg_mismatch", "not_available") for c in calls)
        return matched >= len(exp) and not bad


@dataclass
class TranscriptLine:
    t_ms: float
    turn: int | None
    role: str  # user | assistant | tool | result | sentinel | attempt (a retry's marker)
    text: str
    final: bool = False
    attempt: int = 0  # which attempt of the turn said it (0 = the first)
    cut: str | None = None  # why it stopped short (a retry's reason, "truncated"): shown as cut off


@dataclass
class LogLine:
    t_ms: float
    kind: str
    text: str
    turn: int | None = None


@dataclass
class Meter:
    rms_dbfs: float = SILENT_DBFS
    peak_dbfs: float = SILENT_DBFS
    speaking: bool = False
    updated_ms: float = 0.0
    updated_wall: float | None = None  # the state's clock when the level came (live runs only)

    def shown(self, wall_now: float | None) -> Meter:
        """The meter as it reads at `wall_now`: levels that stopped coming fall to silence."""
        if wall_now is None or self.updated_wall is None:
            return self
        fall = max(0.0, wall_now - self.updated_wall - METER_HOLD_S) * METER_FALL_DB_PER_S
        if fall <= 0:
            return self
        rms = self.rms_dbfs - fall if self.rms_dbfs - fall > -60.0 else SILENT_DBFS
        peak = self.peak_dbfs - fall if self.peak_dbfs - fall > -60.0 else SILENT_DBFS
        return Meter(rms, peak, self.speaking, self.updated_ms, self.updated_wall)
