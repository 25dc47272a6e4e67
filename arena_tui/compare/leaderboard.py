"""Leaderboard figures from stored runs: one row per model, per benchmark and pooled.

What a figure counts is `arena_tui.verdicts` (`tally`: the judged turns the model played, every
other turn the run set out to run counted apart by reason, `runs.turn_indices` being that plan),
fed with every revision of a run's judgements and its turn rows by `run_tally`, the one tally of a
stored run: every surface that shows a stored run's figures (report, leaderboard, runs list,
`campaign show|list` and the campaign screens, compare) calls it, so none can disagree. A run in
which the model got no turn has no scored row (`Leaderboard.unscored` says why); one it heard and never
answered is in its row, each turn its failure, and said (`never_answered`). What
a latency statistic counts is `arena_tui.timing` (`latency_counts`: the model's turns, a turn whose
input went out late left out on its own, marked untrusted). What this module adds:
- Latency only from runs at speed 1 (`arena_tui.timing`): a sped-up run's voice-to-voice is on a
  compressed clock. Speed is the run's own field (`runs.speed`, from run_started); a run without
  one (e.g. imported from the reference harness) is excluded from latency too, and each exclusion
  is listed with its reason. A barge-in (negative voice-to-voice) is no latency and never counted.
- Runs are grouped by what produced their numbers, not only by model alias (`stored.row_identity`):
  a simulator run, a run against a protocol fake, a heuristic-judged run, and a run with injected
  faults each get their own labelled row, and runs judged by two judges (or two versions of our
  rules) are two rows (the judge said in the row's name where the group has two), so they can never
  be averaged with real, LLM-judged, clean runs of the same alias, nor with each other.
- A tool turn is a turn where the model made at least one call: the round trip is what makes
  its voice-to-voice longer.
- Two turn pass rates, each named: ours (`strict`: every scored dimension passes, turn_taking
  included) and the original eval's (`original`: tool use ∧ instruction following ∧ KB
  grounding), both by `arena_tui.verdicts` over the same fixed denominators.
- Overlap: per turn counted for latency whose user audio is on the timeline (`user_audio`: every
  live audio turn, every turn an import measured), whether the user's and the bot's speech
  overlapped (>= 100 ms, the turn's `overlap_ms`), and for how long.
- A run imported from the reference harness (its config's `imported`, set by
  `arena_tui.interop`) is labelled `imported`: another harness produced its numbers.
- Duplex figures (user speech during the bot's replies, and the bot starting over the user) are
  `duplex.duplex_figures`' per run, summed over a row's runs.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property


from arena_tui.spine.events import EMPTY_RESPONSE, TurnResult
from ..cost import Estimate
from ..judge.causes import mix
from .selection import ALL
from ..timing import comparable, latency_counts, response_latency
from ..verdicts import (APART, JUDGE_ERROR, UNJUDGED, TurnConsistency, apart_text,
                        ordered, turn_consistency)
from ..stats import Distribution, Rate, bootstrap_percentile_cis, describe
from .duplex import DuplexFigures, duplex_figures
from .stored import RowId, StoredRun

POOLED = ALL  # the benchmark column of a model's pooled row: all benchmarks
STAGES = ("stt", "turn", "llm", "tts")  # a cascade's stages, in order (`Latencies.stages`)
_EMPTY = {"empty_response", "no_response"}


@dataclass
class RunFigures:
    """The figures of one run: one row of run_results.csv."""

    run: StoredRun
    repeat: int  # 0-based order among the runs of its model row and benchmark, by start time
    name: str = ""  # its row's name on the board (`BoardRow.model`)
    strict: Rate = Rate(0, 0)  # turns where every scored dimension passes, over the turns counted
    original: Rate = Rate(0, 0)  # the original eval's turn pass (tool ∧ instruction ∧ KB), same turns
    dimensions: dict[str, Rate] = field(default_factory=dict)
    categories: dict[str, Rate] = field(default_factory=dict)  # strict pass per category
    # The verdicts that count per turn the run set out to run, {} where the turn counts in no
    # figure (`apart` says why): what consistency across repeats compares.
    verdicts: dict[int, dict[str, str]] = field(default_factory=dict)
    apart: dict[int, str] = field(default_factory=dict)  # turn -> why it counts in no figure (`verdicts.APART`)
    empty_responses: int = 0
    ended_session: int = 0
    v2v: list[float] = field(default_factory=list)  # only when the run counts for latency
    v2v_tool: list[float] = field(default_factory=list)
    v2v_non_tool: list[float] = field(default_factory=list)
    leading_silence: list[float] = field(default_factory=list)
    pipeline_ttfb: list[float] = field(default_factory=list)
    provider_ttfb: list[float] = field(default_factory=list)
    overlap: list[float] = field(default_factory=list)  # overlap_ms of each turn measured (counted for latency)
    turn_durations: list[float] = field(default_factory=list)  # the reference's latency_ms, runs at speed 1
    duplex: DuplexFigures = field(default_factory=DuplexFigures)  # what the bot did while the user spoke (`duplex.py`)
    untrusted: int = 0  # counted turns whose latencies were left out: input sent late (`timing`)

    @property
    def run_index(self) -> int:
        """The reference's `run_index`: the repeat number, from 1."""
        return self.repeat + 1
    #: a cascade's stages per turn (stt, turn, llm, tts: `Latencies.stages`), when the run counts for latency
    stages: dict[str, list[float]] = field(default_factory=dict)

    @property
    def fail_rows(self) -> int:
        """Turns counted that failed the strict rule."""
        return self.strict.n - self.strict.passes

    def count(self, *reasons: str) -> int:
        """How many of its turns count in no figure for one of these reasons (`verdicts.APART` keys)."""
        return sum(why in reasons for why in self.apart.values())

    @property
    def apart_counts(self) -> dict[str, int]:
        """why -> how many of its turns count in no figure for that reason, in `verdicts.APART` order."""
        return _in_order(Counter(self.apart.values()))

    @property
    def incomplete_rows(self) -> int:
        """Played turns without a usable verdict (judge error, never judged): the reference's incomplete rows."""
        return self.count(JUDGE_ERROR, UNJUDGED)


def _in_order(counts: Mapping[str, int]) -> dict[str, int]:
    return {k: counts[k] for k in APART if counts.get(k)}


def run_figures(run: StoredRun, repeat: int = 0, name: str | None = None) -> RunFigures:
    f = RunFigures(run, repeat, run.group if name is None else name)
    counted = run.tally
    f.strict = Rate(*counted.strict)
    f.original = Rate(*counted.original)
    f.dimensions = {d: Rate(*counted.dimensions[d]) for d in ordered(counted.dimensions)}
    f.apart = {t: why for why, turns in counted.apart.items() for t in turns}
    cats: dict[str, Rate] = {}
    for t, ok in counted.rows.items():
        for c in run.categories(t):
            cats[c] = cats.get(c, Rate(0, 0)) + Rate(int(ok), 1)
    f.categories = dict(sorted(cats.items()))
    with_latency = run.latency_excluded is None
    due = set(run.expected_turns)
    f.duplex = duplex_figures((r for t, r in run.results.items() if t in due), with_latency, run.untrusted)
    for t in sorted({*run.expected_turns, *counted.rows, *f.apart}):
        f.verdicts[t] = run.verdicts(t)
        result = run.results.get(t)
        if result is None or t in f.apart and f.apart[t] not in (JUDGE_ERROR, UNJUDGED):
            continue  # no measurement of the model: no verdict, no count
        f.empty_responses += result.status in _EMPTY or result.sentinel == EMPTY_RESPONSE
        f.ended_session += result.status == "ended_session"
        if not latency_counts(result.status, t in run.untrusted):
            f.untrusted += 1
            continue
        if comparable(run.speed) and t in run.durations:
            f.turn_durations.append(float(run.durations[t]))
        if with_latency:
            _add_latencies(f, result)
    return f


def _add_latencies(f: RunFigures, result: TurnResult) -> None:
    """One counted turn's latencies and overlap into the run's lists (a barge-in is no latency)."""
    if result.user_audio is not None:  # the user's audio was placed on the timeline: overlap measured
        f.overlap.append(result.overlap_ms)
    lat = result.latencies
    v2v = response_latency(lat.voice_to_voice_ms)
    if v2v is not None:
        f.v2v.append(v2v)
        (f.v2v_tool if result.tool_calls else f.v2v_non_tool).append(v2v)
    for value, dest in ((lat.leading_silence_ms, f.leading_silence), (response_latency(lat.pipeline_ttfb_ms), f.pipeline_ttfb),
                        (lat.provider_ttfb_ms, f.provider_ttfb)):  # fmt: skip
        if value is not None:
            dest.append(value)
    for stage, ms in (lat.stages() or {}).items():
        f.stages.setdefault(stage, []).append(ms)


@dataclass
class BoardRow:
    """One model on one benchmark (or pooled over benchmarks: `benchmark == POOLED`)."""

    model: str  # the row's name: its identity's group label, with its judge where two judges share the group
    benchmark: str
    runs: list[RunFigures]
    strict: Rate
    original: Rate  # the original eval's turn pass (tool ∧ instruction ∧ KB)
    dimensions: dict[str, Rate]
    categories: dict[str, Rate]
    v2v: Distribution | None
    v2v_p50_ci: tuple[float, float] | None
    v2v_p95_ci: tuple[float, float] | None
    v2v_tool: Distribution | None
    v2v_non_tool: Distribution | None
    leading_silence: Distribution | None
    pipeline_ttfb: Distribution | None
    provider_ttfb: Distribution | None
    overlap: Rate  # turns whose speech overlapped (>= 100 ms) over the turns counted for latency
    overlap_ms: Distribution | None  # how long, over the turns that overlapped
    #: a cascade's stages (stt, turn, llm, tts) over its turns; {} for a row without stages
    stages: dict[str, Distribution]
    empty_responses: int
    ended_session: int
    apart: dict[str, int]  # why -> turns of its runs that count in no figure (`verdicts.APART` keys)
    untrusted: int  # counted turns whose latencies were left out (input sent late)
    latency_excluded: dict[str, str]  # run id -> why its latencies are not counted
    consistency: list[TurnConsistency]  # per benchmark rows only (turn indices differ across benchmarks)
    duplex: DuplexFigures = field(default_factory=DuplexFigures)  # over the row's runs
    cost: Estimate = field(default_factory=Estimate)  # what its runs cost, the model's side (`arena_tui.cost`)
    judge_cost: Estimate = field(default_factory=Estimate)  # what judging them cost, apart
    parts: tuple[str, ...] = ()  # its name's label parts (`RowId.parts`): what `spine.labels` names it by

    @property
    def alias(self) -> str:
        """The model alias its runs ran (the row's name without its label parts)."""
        return self.identity.model if self.identity is not None else self.model

    @property
    def naming(self) -> tuple[str, tuple[str, ...]]:
        """(model, label parts): the row as `spine.labels.label_rows` takes it."""
        return self.alias, self.parts

    @property
    def cost_per_pass(self) -> float | None:
        """Dollars per turn that passed the strict rule (None: cost unknown, or none passed)."""
        return self.cost.per_pass(self.strict.passes)

    @property
    def identity(self) -> RowId | None:
        """What the row is (`stored.row_identity`): every run of it has this one."""
        return self.runs[0].run.identity if self.runs else None

    @property
    def labels(self) -> tuple[str, ...]:
        return self.identity.labels if self.identity is not None else ()

    @property
    def judge(self) -> str:
        """The row's one judge and rules version (`RowId.judge`)."""
        return self.identity.judge if self.identity is not None else "none"

    @property
    def never_answered(self) -> list[str]:
        """Its runs the model heard and never answered (`verdicts.NEVER_ANSWERED`): counted, each turn failed."""
        return [f.run.run_id for f in self.runs if f.run.tally.never_answered]

    @property
    def latency_runs(self) -> int:
        return len(self.runs) - len(self.latency_excluded)

    @property
    def judged(self) -> bool:
        """False when none of its runs was ever judged: its rates are "not judged", not 0 %."""
        return any(f.run.judged for f in self.runs)

    @property
    def apart_shown(self) -> dict[str, int]:
        """`apart` as surfaces say it: a row never judged is "not judged" once, not per turn."""
        return {k: n for k, n in self.apart.items() if self.judged or k != UNJUDGED}

    @property
    def apart_text(self) -> str:
        """`3 not played · 1 stopped` over its runs ('' when every turn counts)."""
        return apart_text(self.apart_shown)

    @property
    def causes(self) -> dict[str, int]:
        """Its failure mix: cause -> failed turns of its runs given it, most first (`judge.causes.mix`)."""
        return mix(f.run.causes for f in self.runs)

    def stages_p50(self) -> str | None:
        """A cascade's stage p50s in ms, `stt/turn/llm/tts` (`STAGES`), or None for a row without
        stages: how the leaderboard screen and the report's tables say it."""
        if not self.stages:
            return None
        return "/".join(f"{self.stages[k].p50:.0f}" if k in self.stages else "?" for k in STAGES)


def _board_row(model: str, benchmark: str, figs: list[RunFigures], parts: tuple[str, ...] = ()) -> BoardRow:
    def pool(attr: str) -> list[float]:
        return [v for f in figs for v in getattr(f, attr)]

    def total(rates: Iterable[Mapping[str, Rate]]) -> dict[str, Rate]:
        out: dict[str, Rate] = {}
        for m in rates:
            for k, r in m.items():
                out[k] = out.get(k, Rate(0, 0)) + r
        return out

    v2v = pool("v2v")
    p50_ci, p95_ci = bootstrap_percentile_cis(v2v, [50, 95]) or (None, None)
    dims = total(f.dimensions for f in figs)
    consistency = turn_consistency([f.verdicts for f in figs]) if benchmark != POOLED else []
    return BoardRow(
        model=model,
        benchmark=benchmark,
        runs=figs,
        strict=sum((f.strict for f in figs), Rate(0, 0)),
        original=sum((f.original for f in figs), Rate(0, 0)),
        dimensions={d: dims[d] for d in ordered(dims)},
        categories=dict(sorted(total(f.categories for f in figs).items())),
        v2v=describe(v2v),
        v2v_p50_ci=p50_ci,
        v2v_p95_ci=p95_ci,
        v2v_tool=describe(pool("v2v_tool")),
        v2v_non_tool=describe(pool("v2v_non_tool")),
        leading_silence=describe(pool("leading_silence")),
        pipeline_ttfb=describe(pool("pipeline_ttfb")),
        provider_ttfb=describe(pool("provider_ttfb")),
        overlap=Rate(sum(v > 0 for v in pool("overlap")), len(pool("overlap"))),
        overlap_ms=describe([v for v in pool("overlap") if v > 0]),
        stages={k: d for k in STAGES if (d := describe([v for f in figs for v in f.stages.get(k, [])])) is not None},
        empty_responses=sum(f.empty_responses for f in figs),
        ended_session=sum(f.ended_session for f in figs),
        apart=_in_order(sum((Counter(f.apart_counts) for f in figs), Counter())),
        untrusted=sum(f.untrusted for f in figs),
        latency_excluded={f.run.run_id: why for f in figs if (why := f.run.latency_excluded)},
        consistency=consistency,
        duplex=sum((f.duplex for f in figs), DuplexFigures()),
        cost=sum((f.run.cost for f in figs), Estimate()),
        judge_cost=sum((f.run.judge_cost for f in figs), Estimate()),
        parts=parts,
    )


@dataclass
class Leaderboard:
    """Every run's figures and the rows built from them (per benchmark, then pooled per model)."""

    runs: list[RunFigures]
    rows: list[BoardRow]
    #: run id -> why it has no scored row (the model got no turn: every one lost, stopped, not played): listed
    unscored: dict[str, str] = field(default_factory=dict)

    @cached_property
    def never_answered(self) -> list[str]:
        """Its runs the model heard and never answered: in their rows, and said (`verdicts.NEVER_ANSWERED`)."""
        return [f.run.run_id for f in self.runs if f.run.tally.never_answered]

    @cached_property
    def benchmarks(self) -> list[str]:
        return sorted({r.benchmark for r in self.rows if r.benchmark != POOLED})

    @cached_property
    def dimensions(self) -> list[str]:
        return ordered(d for r in self.rows for d in r.dimensions)

    @cached_property
    def models(self) -> list[str]:
        return sorted({r.model for r in self.rows})

    @cached_property
    def human(self) -> tuple[int, int]:
        """(verdicts, turns) of its runs' figures that are a person's, not the judge's (`verdicts.Tally.human`)."""
        tallies = [f.run.tally for f in self.runs]
        return sum(t.human_verdicts for t in tallies), sum(len(t.human) for t in tallies)

    def row(self, model: str, benchmark: str = POOLED) -> BoardRow | None:
        return next((r for r in self.rows if r.model == model and r.benchmark == benchmark), None)


def build_leaderboard(runs: Sequence[StoredRun]) -> Leaderboard:
    """Figures per run, then one row per (row identity, benchmark) and one pooled row per identity
    (over all its benchmarks; only when it ran more than one): a run is in exactly one row of each
    (`stored.row_identity`: model, source, judge and rules version). A run in which the model got
    no turn is in none (`unscored`); one it never answered is in its row (`never_answered`)."""
    by_cell: dict[tuple[RowId, str], list[StoredRun]] = defaultdict(list)
    unscored: dict[str, str] = {}
    for r in runs:
        if (why := unscored_reason(r)) is not None:
            unscored[r.run_id] = why
            continue
        by_cell[(r.identity, r.row.benchmark)].append(r)
    judges: dict[str, set[str]] = defaultdict(set)
    for ident, _ in by_cell:
        judges[ident.group].add(ident.judge)
    names = {ident: ident.named if len(judges[ident.group]) > 1 else ident.group for ident, _ in by_cell}
    parts = {ident: ident.parts(judge=len(judges[ident.group]) > 1) for ident, _ in by_cell}
    figures: list[RunFigures] = []
    rows: list[BoardRow] = []
    by_row: dict[RowId, list[RunFigures]] = defaultdict(list)
    for (ident, bench), cell in sorted(by_cell.items()):
        cell.sort(key=lambda r: (r.row.started_at, r.run_id))
        figs = [run_figures(r, i, names[ident]) for i, r in enumerate(cell)]
        figures += figs
        by_row[ident] += figs
        rows.append(_board_row(names[ident], bench, figs, parts[ident]))
    for ident, figs in sorted(by_row.items()):
        if len({f.run.row.benchmark for f in figs}) > 1:
            rows.append(_board_row(names[ident], POOLED, figs, parts[ident]))
    return Leaderboard(figures, rows, unscored)


def unscored_reason(run: StoredRun) -> str | None:
    """Why the run has no scored row anywhere, None when it has one: the model got no turn
    (`verdicts.Tally.scored`: every turn lost to the infrastructure, stopped, or never played)."""
    t = run.tally
    if t.scored:
        return None
    return "the model got no turn" + (f": {t.apart_text()}" if t.apart else "")
