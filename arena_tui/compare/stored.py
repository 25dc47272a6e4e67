"""A stored run as every figure reads it (`StoredRun`: its row, its turn rows, every revision of
its judgements, its benchmark when there is one, its untrusted turns and wall-clock turn spans),
loaded through the store's reader (`load_runs`), and its one tally (`run_tally`): the report, the
leaderboard, the runs list and every campaign surface show these numbers. Which row of a
comparison a run is in is `row_identity`, the one place that says it: its model and what
produced its numbers (simulator, fake, offline heuristic, faults, …) and its judge with the
version of our rules (`verdicts.run_judge`), so two judges are never pooled."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import PACE_LOST, ErrorEvent, Judgement, SessionRotated, TokenUsage, TurnResult, Usage
from arena_tui.spine.source import variant_labels
from ..cost import Estimate, current_prices, judge_estimate, run_estimate
from ..judge.causes import run_causes
from ..judge.label import judge_text
from ..store import RunRow, Store
from ..timing import UntrustedTurns, speed_exclusion, turn_durations
from ..verdicts import (NOT_JUDGED, UNJUDGED, Standing, Tally, standing, tally)

LLM_JUDGE = "LLM judge"  # the judge kind of a run judged by an LLM (its rows carry no kind label: their judge says it)


@dataclass(frozen=True, order=True)
class RowId:
    """Which row of a comparison a run is in (`row_identity`): its model, what produced its numbers
    when that is not a real service judged by an LLM (`StoredRun.source_labels`), and its judge
    (`judge.label.judge_label`: kind:model and the rules version; "none" when never judged)."""

    model: str
    labels: tuple[str, ...]
    judge: str

    @property
    def group(self) -> str:
        """`model [labels]`: the row's name where its judge is said beside it (a judge column)."""
        return f"{self.model} [{', '.join(self.labels)}]" if self.labels else self.model

    @property
    def named(self) -> str:
        """The row's name with its judge in it, where one board holds the group under two judges."""
        return f"{self.model} [{', '.join(self.parts(judge=True))}]"

    def parts(self, judge: bool = False) -> tuple[str, ...]:
        """Its label parts (`spine.labels`: what every surface names the row by), with its judge
        (`judge`) where one board holds the group under two judges."""
        return (*self.labels, f"judge {self.judge}") if judge else self.labels


def run_speed(run: RunRow) -> float | None:
    """The run's recorded speed factor, or None when it was not recorded."""
    return run.speed


@dataclass(frozen=True)
class StoredRun:
    """One run as read back from the store, with the benchmark it ran (None when not loadable)."""

    row: RunRow
    results: Mapping[int, TurnResult]  # benchmark turns only (the greeting is not scored)
    revisions: Sequence[Judgement]  # every judgement revision of the run's benchmark turns
    benchmark: Benchmark | None = None
    untrusted: frozenset[int] = frozenset()  # turns whose latencies are untrusted (`timing.UntrustedTurns`)
    durations: Mapping[int, int] = field(default_factory=dict)  # turn -> wall ms first start -> end (`timing`)
    rotations: Sequence[SessionRotated] = ()  # its session rotations (what a new session was given)
    usage: Sequence[Usage] = ()  # what its services said they used (`usage` events)
    judge_usage: Mapping[str, TokenUsage] = field(default_factory=dict)  # judge -> its requests' tokens (`Store.judge_usage`)

    @cached_property
    def cost(self) -> Estimate:
        """What the model's side cost, estimated (`arena_tui.cost`: its usage, the price table now)."""
        return run_estimate(self.row.model, self.usage, current_prices())

    @cached_property
    def judge_cost(self) -> Estimate:
        """What judging it cost, apart from the model's (every request, re-judgings included)."""
        return judge_estimate(self.judge_usage, current_prices())

    @cached_property
    def causes(self) -> dict[int, tuple[str, ...]]:
        """turn -> why it failed (or why it counts apart), by the one rule (`judge.causes.run_causes`)."""
        return run_causes(self.benchmark, self.results.values(), self.revisions, rotations=self.rotations,
                          cross_turn=not self.row.recorded.rehydrated)

    @cached_property
    def standing(self) -> dict[int, Standing[Judgement]]:
        """turn -> the judgement that counts (the run's judge's, `Tally.judge`, and a person's), by the verdict module."""
        return standing(self.revisions, judge=self.tally.judge)

    @cached_property
    def tally(self) -> Tally:
        """The run's figures by the one rule (`run_tally`)."""
        return run_tally(self)

    @property
    def run_id(self) -> str:
        return self.row.run_id

    @property
    def audio(self) -> bool:
        return self.row.recorded.audio

    @property
    def speed(self) -> float | None:
        return run_speed(self.row)

    @property
    def latency_excluded(self) -> str | None:
        """Why this run's latencies are left out of latency figures (None: they count)."""
        if not self.audio:
            return "text run (no voice-to-voice)"
        return speed_exclusion(self.speed)

    @property
    def expected_turns(self) -> list[int]:
        if self.row.turn_indices:
            return [t for t in self.row.turn_indices if t >= 0]
        if self.benchmark is not None:
            return [t.turn_index for t in self.benchmark.turns]
        return sorted(t for t in self.results if t >= 0)

    @property
    def judged(self) -> bool:
        """Whether the judge said anything about the run (a verdict or an error, on any turn)."""
        return bool(self.revisions)

    @property
    def heuristic(self) -> bool:
        """Judged (wholly or partly) by the offline heuristic, on the turns that count."""
        return self.tally.heuristic

    @property
    def judge_kind(self) -> str:
        """What kind of judge its verdicts are (`LLM_JUDGE`, `heuristic judge`, or `not judged`): a
        heuristic's figures are labelled so (`source_labels`)."""
        t = self.tally
        if t.heuristic:
            return "heuristic judge"
        return LLM_JUDGE if self.judged else NOT_JUDGED

    @property
    def judge(self) -> str:
        """The run's judge (`verdicts.run_judge`): `openai:gpt-5.2`, `heuristic`; "none" never judged."""
        return self.tally.judge[0] if self.tally.judge is not None else "none"

    @property
    def judge_label(self) -> str:
        """The run's judge with the version of our rules: `openai:gpt-5.2 (arena-judge/3)` (`judge_label`)."""
        who = self.tally.judge
        return "none" if who is None else judge_text(*who)

    @property
    def identity(self) -> RowId:
        """Its row in every comparison (`row_identity`)."""
        return row_identity(self)

    @property
    def source_labels(self) -> tuple[str, ...]:
        """What produced these numbers, when it is not a real service judged by an LLM."""
        labels = []
        if self.row.source:
            labels.append(self.row.source)
        if self.judge_kind != LLM_JUDGE:
            labels.append(self.judge_kind)
        recorded = self.row.recorded
        if recorded.reference is not None:  # a reference harness's run (arena_tui.interop)
            labels.append("imported")
        if recorded.mode != "sequential":
            labels.append(recorded.mode)
        labels.extend(variant_labels(recorded))  # a human speaker, manual commits: their own rows
        return tuple(labels)

    @property
    def group(self) -> str:
        """Its model, labelled by its source (`RowId.group`): its row's name beside its judge."""
        return self.identity.group

    def turn(self, turn_index: int) -> Turn | None:
        """The benchmark's turn, when the benchmark data is at hand."""
        return self.benchmark.find_turn(turn_index) if self.benchmark is not None else None

    def apart(self, turn_index: int) -> str | None:
        """Why the turn counts in no figure (a `verdicts.APART` key, by its tally), None when it counts."""
        return next((why for why, turns in self.tally.apart.items() if turn_index in turns), None)

    def verdicts(self, turn_index: int) -> dict[str, str]:
        """The judge's verdicts that count on the turn; {} when it counts in no figure."""
        return self.standing[turn_index].scores if turn_index in self.tally.rows else {}

    def verdict(self, turn_index: int) -> str:
        """pass | fail | na, or why it counts in no figure (a `verdicts.APART` key)."""
        if turn_index in self.tally.rows:
            return self.standing[turn_index].verdict
        return self.apart(turn_index) or UNJUDGED

    def categories(self, turn_index: int) -> list[str]:
        turn = self.turn(turn_index)
        return list(turn.categories) if turn is not None else []

    def user_text(self, turn_index: int) -> str:
        """What the user said on the turn (recorded, else the benchmark's input, else empty)."""
        result = self.results.get(turn_index)
        if result is not None:
            return result.user_text
        turn = self.turn(turn_index)
        return turn.input if turn is not None else ""


async def load_runs(
    store: Store, run_ids: Sequence[str], benchmark_for: Callable[[str], Benchmark | None] | None = None
) -> list[StoredRun]:
    """Read runs through the store's reader API; `benchmark_for(name)` supplies benchmark data
    (turn dimensions and categories), once per benchmark name."""
    cache: dict[str, Benchmark | None] = {}
    out = []
    for run_id in run_ids:
        row = await store.get_run(run_id)
        if row is None:
            raise LookupError(f"{store.path}: no run {run_id}")
        if row.benchmark not in cache:
            cache[row.benchmark] = benchmark_for(row.benchmark) if benchmark_for else None
        results = {r.turn_index: r for r in await store.turn_results(run_id) if r.turn_index >= 0}
        revisions = [j for j in await store.judgements(run_id) if j.turn_index is not None and j.turn_index >= 0]
        untrusted = await untrusted_turns(store, run_id)
        t_start, t_end = await store.turn_times(run_id)
        durations = turn_durations(row.recorded.turn_durations, t_start, t_end, row.speed)
        rotations = [ev for _, ev in await store.events(run_id, kinds=["session_rotated"]) if isinstance(ev, SessionRotated)]
        out.append(StoredRun(row, results, revisions, cache[row.benchmark], frozenset(untrusted), durations, rotations,
                             await store.usage(run_id), await store.judge_usage(run_id)))
    return out


async def untrusted_turns(store: Store, run_id: str) -> set[int]:
    """The stored run's turns whose latencies are untrusted (`timing.UntrustedTurns`): its pacing
    notices and every take's turn row, in recorded order."""
    notices = [(seq, "error", ev.turn_index, ev.where) for seq, ev in await store.events(run_id, kinds=["error"])
               if isinstance(ev, ErrorEvent) and ev.where == PACE_LOST]
    if not notices:
        return set()
    takes = await store.read_rows("SELECT seq, turn_index FROM turns WHERE run_id=?", (run_id,))
    marks = sorted([*notices, *((seq, "turn_ended", turn, None) for seq, turn in takes)], key=lambda m: m[0])
    return UntrustedTurns.of(m[1:] for m in marks)


def row_identity(run: StoredRun) -> RowId:
    """The one rule of which row a run is in, in every comparison (leaderboard, report and its CSVs,
    campaigns, compare): one model, what produced its numbers, one judge and rules version. A run
    is in exactly one row; its judge is the one whose verdicts count (`verdicts.run_judge`), so a
    re-judge that gave no verdict leaves it where it was."""
    return RowId(run.row.model, run.source_labels, run.judge_label)


def run_tally(run: StoredRun) -> Tally:
    """The run's figures by the one rule (`verdicts.tally`, module docstring): the turns it set
    out to run, each with its row's status (a turn without one was not played). The one tally
    of a stored run: the report, the leaderboard, the runs list and every campaign surface show
    these numbers."""
    statuses = {t: r.status for t, r in run.results.items()}
    return tally(run.revisions, statuses, run.expected_turns)
