"""Two runs (or two models) side by side, turn by turn, with the differences named.

`compare_runs`: verdicts, calls, latencies and what each said of two runs ("same model, two
repeats: why did turn 7 flip?", or one run of each of two models), with the golden answer and the
causes of a failure. `compare_models`: two leaderboard rows of one benchmark, each turn's passing
repeats, median latency, and what each repeat said.
Calls are compared by name and arguments in the order made (what the model did, not whether it
matched the spec: the verdicts say that). Latency differences below `latency_tolerance_ms` are
not flagged: run-to-run jitter of a realtime service is hundreds of ms. What counts is
`arena_tui.verdicts` (through the runs' `run_tally`) and `arena_tui.timing` (`latency_counts`): a
turn a run never played (or stopped, lost, …) is said as such, never as a failure, and a
model's pass share is over the repeats that judged the turn.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from arena_tui.spine.events import DimensionScore, TurnResult
from ..judge.causes import mix
from ..timing import latency_counts, response_latency
from .leaderboard import BoardRow
from .stored import StoredRun
from ..stats import median
from ..verdicts import APART, apart_text, repeat_status

LATENCY_TOLERANCE_MS = 250.0
HUMAN_MARK = "✎"  # a person's verdict, as the turn table marks it (`widgets.turn_table.HUMAN`)


def call_summary(result: TurnResult | None) -> list[str]:
    """`name(arg=value, …)` per call made, duplicates marked; [] when none or the turn never ran."""
    if result is None:
        return []
    out = []
    for c in result.tool_calls:
        args = ", ".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in sorted(c.args.items()))
        out.append(f"{c.name}({args})" + (" [duplicate]" if c.is_duplicate else ""))
    return out


@dataclass(frozen=True)
class Side:
    """One run's view of one turn."""

    status: str  # the turn's engine status, or "not played" when it has no row
    verdict: str  # pass | fail | na, or why it counts in no figure (a `verdicts.APART` key)
    dimensions: dict[str, str]  # the verdicts that count ({} when it counts in no figure)
    calls: list[str]
    voice_to_voice_ms: float | None
    assistant_text: str
    answer: str = ""  # what it said: its words, or the sentinel a turn without them got ("" not played)
    played: bool = False  # the turn has a recorded row (it was played, whatever came of it)
    causes: tuple[str, ...] = ()  # why it failed (`judge.causes`), or why it counts apart (lost pace)
    reasons: dict[str, str] = field(default_factory=dict)  # failing dimension -> the reason that counts (a person's marked)
    human: tuple[str, ...] = ()  # the dimensions whose verdict that counts is a person's (`verdicts.Standing.human`)


@dataclass(frozen=True)
class TurnComparison:
    turn_index: int
    user_text: str
    a: Side
    b: Side
    differences: list[str] = field(default_factory=list)  # verdict, dimension names, calls, status, latency
    golden: str = ""  # the benchmark's golden answer ("" when its data is not at hand)

    @property
    def latency_delta_ms(self) -> float | None:
        if self.a.voice_to_voice_ms is None or self.b.voice_to_voice_ms is None:
            return None
        return self.b.voice_to_voice_ms - self.a.voice_to_voice_ms


def _side(run: StoredRun, turn: int) -> Side:
    r = run.results.get(turn)
    counted = r is not None and run.latency_excluded is None and latency_counts(r.status, turn in run.untrusted)
    v2v = response_latency(r.latencies.voice_to_voice_ms) if counted and r is not None else None
    dims = run.verdicts(turn)
    st = run.standing.get(turn)
    scores = st.judgement.scores if st is not None and st.judgement is not None and dims else {}
    human = tuple(d for d in (st.human if st is not None and dims else ()) if d in dims)
    return Side(
        status=r.status if r is not None else "not played",
        verdict=run.verdict(turn),
        dimensions=dims,
        calls=call_summary(r),
        voice_to_voice_ms=v2v,
        assistant_text=r.assistant_text if r is not None else "",
        answer=(r.sentinel or r.assistant_text) if r is not None else "",
        played=r is not None,
        causes=run.causes.get(turn, ()),
        reasons={d: person_said(s) if d in human else s.reasoning
                 for d, s in scores.items() if dims.get(d) == "fail" and (s.reasoning or d in human)},
        human=human,
    )


def person_said(score: DimensionScore) -> str:
    """A person's reason for their verdict, marked as theirs: `✎ a person (ana): wrong date`."""
    return f"{HUMAN_MARK} a person ({score.by or '?'}): {score.reasoning}"


def golden_text(runs: Iterable[StoredRun], turn: int) -> str:
    """The turn's golden answer, from the first run whose benchmark data is at hand."""
    return next((spec.golden_text for run in runs if (spec := run.turn(turn)) is not None), "")


def compare_runs(a: StoredRun, b: StoredRun, *, latency_tolerance_ms: float = LATENCY_TOLERANCE_MS) -> list[TurnComparison]:
    """One row per turn either run expected, in turn order. Latency is compared only where both
    runs count for latency (speed 1, audio); a sped-up side shows None rather than a false number."""
    turns = sorted(set(a.expected_turns) | set(b.expected_turns))
    rows = []
    for t in turns:
        sa, sb = _side(a, t), _side(b, t)
        diffs = []
        if sa.verdict != sb.verdict:  # a side that counts in no figure differs in that, not in a verdict
            diffs.append("verdict" if sa.verdict not in APART and sb.verdict not in APART else "counted")
        if sa.dimensions and sb.dimensions:  # one side without a valid verdict differs as a whole
            for d in sorted(set(sa.dimensions) | set(sb.dimensions)):
                if sa.dimensions.get(d, "na") != sb.dimensions.get(d, "na"):
                    diffs.append(d)
        if sa.calls != sb.calls:
            diffs.append("calls")
        if sa.status != sb.status:
            diffs.append("status")
        if sa.voice_to_voice_ms is not None and sb.voice_to_voice_ms is not None:
            if abs(sb.voice_to_voice_ms - sa.voice_to_voice_ms) >= latency_tolerance_ms:
                diffs.append("latency")
        user_text = a.user_text(t) or b.user_text(t)
        rows.append(TurnComparison(t, user_text, sa, sb, diffs, golden_text((a, b), t)))
    return rows


@dataclass(frozen=True)
class ModelSide:
    """One model's repeats of one turn."""

    pass_runs: int
    runs: int
    statuses: tuple[str, ...]  # per repeat, in run order (verdicts.repeat_status of the verdicts)
    voice_to_voice_p50_ms: float | None  # median over the repeats that count for latency
    apart: dict[str, int] = field(default_factory=dict)  # why -> repeats where the turn counts in no figure
    repeats: tuple[tuple[int, Side], ...] = ()  # (repeat number from 1, its side) of each repeat that played it

    @property
    def causes(self) -> dict[str, int]:
        """cause -> the repeats that failed the turn with it (one counted apart is no failure)."""
        return mix({n: side.causes} for n, side in self.repeats)

    @property
    def judged_runs(self) -> int:
        """The repeats whose verdict on the turn counts: what its pass share is over."""
        return self.runs - sum(self.apart.values())

    @property
    def share_text(self) -> str:
        """`2/4 pass · 4 not played`, or `not played` (every repeat apart); never `0/1 pass` for a turn never played."""
        if not self.judged_runs:
            return apart_text(self.apart) or "–"
        return " · ".join(x for x in (f"{self.pass_runs}/{self.judged_runs} pass", apart_text(self.apart)) if x)


@dataclass(frozen=True)
class ModelTurnComparison:
    turn_index: int
    user_text: str
    a: ModelSide
    b: ModelSide
    differences: list[str] = field(default_factory=list)  # pass share, latency
    golden: str = ""  # the benchmark's golden answer ("" when its data is not at hand)


def _model_side(row: BoardRow, turn: int) -> ModelSide:
    runs = [f for f in row.runs if turn in f.verdicts]  # the repeats that set out to run the turn
    statuses = tuple(repeat_status(f.verdicts.get(turn)) for f in runs)
    v2v = [v for f in runs if (v := _side(f.run, turn).voice_to_voice_ms) is not None]
    apart = Counter(f.apart[turn] for f in runs if turn in f.apart)
    played = tuple((f.run_index, side) for f in runs if (side := _side(f.run, turn)).played)
    return ModelSide(statuses.count("pass"), len(runs), statuses, median(v2v), dict(apart), played)


def compare_models(
    a: BoardRow, b: BoardRow, *, latency_tolerance_ms: float = LATENCY_TOLERANCE_MS
) -> list[ModelTurnComparison]:
    """Two leaderboard rows of one benchmark (two models, or one model from two sources) turn by
    turn: how many repeats passed each turn, and the median voice-to-voice. `pass share` is
    flagged when the fractions of passing repeats differ, each over its repeats that judged the
    turn (a side with none has no share to differ)."""
    if a.benchmark != b.benchmark:
        raise ValueError(f"compare_models: rows of different benchmarks ({a.benchmark} vs {b.benchmark})")
    turns = sorted({t for row in (a, b) for f in row.runs for t in f.run.expected_turns})
    out = []
    for t in turns:
        sa, sb = _model_side(a, t), _model_side(b, t)
        diffs = []
        if sa.judged_runs and sb.judged_runs and sa.pass_runs * sb.judged_runs != sb.pass_runs * sa.judged_runs:
            diffs.append("pass share")
        if sa.voice_to_voice_p50_ms is not None and sb.voice_to_voice_p50_ms is not None:
            if abs(sb.voice_to_voice_p50_ms - sa.voice_to_voice_p50_ms) >= latency_tolerance_ms:
                diffs.append("latency")
        text = next((x for row in (a, b) for f in row.runs if (x := f.run.user_text(t))), "")
        golden = golden_text((f.run for row in (a, b) for f in row.runs), t)
        out.append(ModelTurnComparison(t, text, sa, sb, diffs, golden))
    return out
