"""Verdicts: the judge's dimensions, which judgement counts, pass rates and the strict row rule.

One home for these rules, so the live screen, the runs list, the store, phase 2, the summary
and the exports can never disagree about a number. The rules:

- **Dimensions.** The LLM scores `LLM_DIMENSIONS`; `turn_taking` is computed in code from the
  run's timeline (audio runs only). A turn is judged on its own `dimensions` (the benchmark
  data switches category dimensions on) that the LLM scores, plus `turn_taking` on audio runs
  (`judged_dimensions`). Summaries and table columns list them in `DIMENSIONS` order (`ordered`).
- **Which judgement counts** (`standing`). A turn's revisions are ordered by revision number,
  then phase (a phase-2 revision over the phase-1 one it revises), then arrival. The one that
  counts is the newest revision *without an error*: a re-judge that fails never erases a valid
  earlier verdict. It stays visible as an error: `Standing.error` is set whenever the newest
  revision errored, and every screen shows it beside the verdict that stands. A turn whose
  every revision errored is a judge error (`verdict == "judge_error"`). Phase 2 revises the
  standing phase-1 judgement and numbers its revisions after the newest one.
- **Pass rates** (`tally`, `pass_rates`). Per dimension: passes over scored verdicts ("na" is
  not scored) of each turn's standing judgement. Turns without a valid verdict (never judged,
  or judge error) are left out of the rates unless the caller knows which dimensions they were
  due (`due`, from the benchmark: the summary and the exports). Then every due dimension
  counts as a failure, except those the errored revision still carries (computed in code, e.g.
  `turn_taking`), so failures cannot vanish from a run's report. A verdict that scores nothing
  (every dimension "na": an imported reference row whose scores are all null, its "incomplete"
  row) is no valid verdict either: never a pass.
- **Invalid turns** (`counts`). A turn our machine lost pace on (`lost_pace`) is no measurement
  of the model: it is not judged, is due nothing, and counts in no pass rate (a resume plays it
  again; the new row counts).
- **Strict row rule** (`row_verdict`, `row_passes`). A turn passes strictly when every scored
  dimension passes (none fails); a turn without a valid verdict never passes strictly.
- **The original eval's turn pass** (`original_row_passes`). The original 30-turn eval
  (kwindla/aiewf-eval) passes a turn on tool use ∧ instruction following ∧ KB grounding alone
  (`ORIGINAL_DIMENSIONS`: none of the three fails; tool use not scored, no call expected nor
  made, is right), over the same fixed denominator. Ours is every scored dimension, turn_taking
  included: both are counted (`Tally.strict`, `Tally.original`) and shown, each named.
- **Consistency across repeats** (`turn_consistency`). Per turn, its row verdict in each repeat
  (`repeat_status`: "missing" where it has none), how often that changes from one repeat to the
  next, and which turns never pass. A model that passes 80 % of turns by passing a different 80 %
  each time is a different model from one that always fails the same 20 %.

Judgements may be `arena_tui.spine.events.Judgement` objects or plain dicts with the same field
names (`turn_index`, `revision`, `phase`, `error`, `scores`, `heuristic`), as read from rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from arena_tui.spine.benchmark import CORE_DIMENSIONS
from arena_tui.spine.events import LOST_PACE

TURN_TAKING = "turn_taking"
TOOL = "tool_use_correct"
# The original eval's turn pass: these three, none failing (see "The original eval's turn pass")
ORIGINAL_DIMENSIONS: tuple[str, ...] = (TOOL, "instruction_following", "kb_grounding")
# Scored by the LLM (every judge reply carries all of them, "na" where not scored).
LLM_DIMENSIONS: list[str] = [*CORE_DIMENSIONS, "state_tracking", "ambiguity_handling"]
# Every dimension, in the order they are shown and summed.
DIMENSIONS: list[str] = [*LLM_DIMENSIONS, TURN_TAKING]

J = TypeVar("J")
RepeatStatus = Literal["pass", "fail", "missing"]


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


def counts(status: str) -> bool:
    """Whether a turn with this recorded status is judged and counted (see "Invalid turns")."""
    return status != LOST_PACE


def verdict_of(score: Any) -> str:
    """"pass" | "fail" | "na" from a DimensionScore, a {"verdict": ...} dict or the bare string."""
    return score if isinstance(score, str) else str(_get(score, "verdict"))


def ordered(dims: Iterable[str]) -> list[str]:
    """Known dimensions in `DIMENSIONS` order, then any others (benchmark-specific) by name."""
    seen = list(dict.fromkeys(dims))
    return sorted(seen, key=lambda d: (DIMENSIONS.index(d), "") if d in DIMENSIONS else (len(DIMENSIONS), d))


def judged_dimensions(dimensions: Iterable[str], *, audio: bool) -> list[str]:
    """What a turn is judged on: its own dimensions the LLM scores, plus turn_taking for audio."""
    dims = [d for d in dimensions if d in LLM_DIMENSIONS]
    return dims + [TURN_TAKING] if audio else dims


def judges_turn_taking(config: Mapping[str, Any] | None) -> bool:
    """Whether a run with this recorded config can be scored on turn_taking: not a text-model run
    (`modality: text`), nor one that says it has no turn-taking to score (a rehydrated run)."""
    config = config if isinstance(config, Mapping) else {}
    return config.get("modality") != "text" and config.get("turn_taking_supported") is not False


def due_dimensions(dimensions: Iterable[str], *, tool_applies: bool) -> list[str]:
    """What a turn without a valid verdict is charged a failure on: its LLM dimensions, and
    tool use only where a call was expected or made unsolicited (phase 2's applicability)."""
    dims = [d for d in dimensions if d != TOOL]
    return dims + [TOOL] if tool_applies else dims


def turn_due(turn: Any | None, result: Any | None) -> list[str]:
    """The dimensions a turn is charged a failure on when it has no valid verdict: the benchmark
    turn's (the core ones without benchmark data), tool use where a call was expected or made."""
    dims = turn.dimensions if turn is not None else CORE_DIMENSIONS
    made_call = result is not None and bool(_get(result, "tool_calls", None))
    return due_dimensions(dims, tool_applies=bool(turn is not None and turn.expected_calls) or made_call)


def due_turns(expected: Iterable[int], results: Mapping[int, Any],
              turn_of: Callable[[int], Any | None]) -> dict[int, list[str]]:
    """turn -> `turn_due`, for every benchmark turn a run set out to run (a fixed denominator: a
    turn that never ran or was never judged is charged, so failures cannot vanish), but one our
    machine lost pace on (`counts`): neither its row nor an earlier take's judgement counts. The
    one rule of what a run is charged: the report, the leaderboard, every campaign surface, the
    runs list and the judge's own summary (headless, `judge`, the export) count by it."""
    due: dict[int, list[str]] = {}
    for t in expected:
        result = results.get(t)
        if t >= 0 and (result is None or counts(_get(result, "status", "ok"))):
            due[t] = turn_due(turn_of(t), result)
    return due


def scores_of(judgement: Any) -> dict[str, str]:
    """dimension -> verdict of one judgement (an errored one carries only code-computed scores)."""
    return {d: verdict_of(s) for d, s in (_get(judgement, "scores") or {}).items()}


def row_verdict(scores: Mapping[str, Any]) -> str:
    """"fail" if any scored dimension fails, "pass" if some pass and none fails, else "na"."""
    verdicts = [verdict_of(s) for s in scores.values()]
    if "fail" in verdicts:
        return "fail"
    return "pass" if "pass" in verdicts else "na"


def row_passes(scores: Mapping[str, Any]) -> bool:
    """The strict row rule: every scored dimension passes (none fails)."""
    return row_verdict(scores) != "fail"


def original_row_passes(scores: Mapping[str, Any]) -> bool:
    """The original eval's turn pass: tool use, instruction following and KB grounding, none failing."""
    return row_passes({d: s for d, s in scores.items() if d in ORIGINAL_DIMENSIONS})


@dataclass(frozen=True)
class Standing(Generic[J]):
    """A turn's judgement that counts, and the newest revision (which may have errored)."""

    judgement: J | None  # the newest valid revision; None when every revision errored
    newest: J

    @property
    def error(self) -> str | None:
        """The newest revision's error: a failed (re-)judge, shown even when a verdict stands."""
        return _get(self.newest, "error")

    @property
    def shown(self) -> J:
        """What a screen shows as the turn's judgement: the one that counts, else the error."""
        return self.judgement if self.judgement is not None else self.newest

    @property
    def scores(self) -> dict[str, str]:
        """The verdicts that count (none when the turn has no valid judgement)."""
        return scores_of(self.judgement) if self.judgement is not None else {}

    @property
    def verdict(self) -> str:
        """pass | fail | na | judge_error."""
        return "judge_error" if self.judgement is None else row_verdict(self.scores)


def _order(indexed: tuple[int, Any]) -> tuple[int, int, int]:
    arrival, j = indexed
    return (int(_get(j, "revision", 1) or 1), int(_get(j, "phase", 1) or 1), arrival)


def in_order(judgements: Iterable[J]) -> list[J]:
    """One turn's revisions oldest first: revision, then phase, then arrival."""
    return [j for _, j in sorted(enumerate(judgements), key=_order)]


def standing_of(judgements: Iterable[J]) -> Standing[J] | None:
    """The standing of one turn's revisions (None when it has none)."""
    revs = in_order(judgements)
    if not revs:
        return None
    valid = [j for j in revs if not _get(j, "error")]
    return Standing(judgement=valid[-1] if valid else None, newest=revs[-1])


def standing(judgements: Iterable[J], *, phase: int | None = None) -> dict[int, Standing[J]]:
    """turn -> Standing over every revision given (optionally of one phase), by turn index."""
    by_turn: dict[int, list[J]] = {}
    for j in judgements:
        idx = _get(j, "turn_index")
        if idx is None or (phase is not None and _get(j, "phase", 1) != phase):
            continue
        by_turn.setdefault(idx, []).append(j)
    out: dict[int, Standing[J]] = {}
    for idx in sorted(by_turn):
        st = standing_of(by_turn[idx])
        assert st is not None
        out[idx] = st
    return out


def standing_judgements(judgements: Iterable[J]) -> dict[int, J]:
    """turn -> the judgement a screen shows: the one that counts, else the turn's newest error."""
    return {i: st.shown for i, st in standing(judgements).items()}


@dataclass
class Tally:
    """What the pass-rate rule counts over a run (see the module docstring)."""

    # dim -> (passes, scored), in the order first scored (turn order); `ordered` sorts them
    dimensions: dict[str, tuple[int, int]] = field(default_factory=dict)
    rows: dict[int, bool] = field(default_factory=dict)  # turn -> strict pass, for the turns counted
    original_rows: dict[int, bool] = field(default_factory=dict)  # turn -> the original eval's pass, same turns
    judge_errors: list[int] = field(default_factory=list)  # every revision errored
    unjudged: list[int] = field(default_factory=list)  # due, never judged (or judged with nothing scored)
    rejudge_errors: list[int] = field(default_factory=list)  # newest revision errored, a verdict stands
    heuristic: bool = False

    @property
    def strict(self) -> tuple[int, int]:
        return sum(self.rows.values()), len(self.rows)

    @property
    def original(self) -> tuple[int, int]:
        """(passes, turns) by the original eval's rule (`original_row_passes`), over the same turns."""
        return sum(self.original_rows.values()), len(self.original_rows)


def tally(judgements: Iterable[Any], due: Mapping[int, Iterable[str]] | None = None) -> Tally:
    """Pass rates, strict rows and judge errors over every revision given.

    `due`: turn -> the dimensions it must be scored on (e.g. `due_dimensions` of the benchmark
    turn). Given, exactly those turns are counted and one without a valid verdict is charged a
    failure on each; without it, every turn that has a valid verdict is counted.
    """
    now = standing(judgements)
    out = Tally()
    acc: dict[str, list[int]] = {}
    for idx in list(due) if due is not None else list(now):
        st = now.get(idx)
        if st is None:
            out.unjudged.append(idx)
            verdicts: dict[str, str] = {}
        else:
            out.heuristic |= any(bool(_get(j, "heuristic", False)) for j in (st.judgement, st.newest) if j is not None)
            if st.judgement is None:
                out.judge_errors.append(idx)
            elif st.error:
                out.rejudge_errors.append(idx)
            verdicts = st.scores
        usable = st is not None and st.judgement is not None and row_verdict(verdicts) != "na"
        if st is not None and st.judgement is not None and not usable:
            out.unjudged.append(idx)  # a verdict that scores nothing (the reference's incomplete row) is none
        if usable:
            ok, ok_original = row_passes(verdicts), original_row_passes(verdicts)
        elif due is None:
            continue  # no valid verdict and no denominators known: shown as a judge error only
        else:
            verdicts = {d: "fail" for d in due[idx]}
            if st is not None and st.judgement is None:
                verdicts.update(scores_of(st.newest))  # computed in code (turn_taking): still valid
            ok = ok_original = False
        for d, v in verdicts.items():
            if v == "na":
                continue
            a = acc.setdefault(d, [0, 0])
            a[1] += 1
            a[0] += v == "pass"
        out.rows[idx] = ok
        out.original_rows[idx] = ok_original
    out.dimensions = {d: (a[0], a[1]) for d, a in acc.items()}
    return out


def pass_rates(judgements: Iterable[Any], due: Mapping[int, Iterable[str]] | None = None) -> dict[str, tuple[int, int]]:
    """dimension -> (passed, scored) by the one rule (`tally`)."""
    return tally(judgements, due).dimensions


# --- consistency across repeats ----------------------------------------------------------------


def repeat_status(verdicts: Mapping[str, Any] | None) -> RepeatStatus:
    """One repeat's say on one turn: its row verdict (`row_verdict`), "missing" where that has
    none (the turn never ran, was never judged, or nothing was scored)."""
    v = row_verdict(verdicts or {})
    return "missing" if v == "na" else "fail" if v == "fail" else "pass"


def _changes(seq: Sequence[str]) -> int:
    return sum(1 for a, b in zip(seq, seq[1:]) if a != b)


@dataclass(frozen=True)
class TurnConsistency:
    """How one turn fared over the repeats of one model (repeats in run order, `repeat_status` each)."""

    turn_index: int
    statuses: tuple[RepeatStatus, ...]
    flips: int  # changes between consecutive verdicts that exist (pass→fail, fail→pass; a missing repeat is skipped)
    metric_flips: dict[str, int] = field(default_factory=dict)  # per dimension, changes among its non-na verdicts

    @property
    def runs(self) -> int:
        return len(self.statuses)

    @property
    def pass_runs(self) -> int:
        return self.statuses.count("pass")

    @property
    def fail_runs(self) -> int:
        return self.statuses.count("fail")

    @property
    def missing_runs(self) -> int:
        return self.statuses.count("missing")

    @property
    def unstable(self) -> bool:
        """It passed in one repeat and failed in another: a flip is a change between two verdicts that
        exist, so a repeat where the turn is missing makes no turn unstable."""
        return self.flips > 0

    @property
    def always_fails(self) -> bool:
        """Never passed in any repeat, and failed (not just missing) in at least one."""
        return self.pass_runs == 0 and self.fail_runs > 0

    @property
    def pattern(self) -> str:
        """`1:pass|2:fail|…`, the repeat number first (from 1, as the reference's run_index)."""
        return "|".join(f"{i}:{s}" for i, s in enumerate(self.statuses, 1))


def turn_consistency(repeats: Sequence[Mapping[int, Mapping[str, str] | None]]) -> list[TurnConsistency]:
    """Per turn, its verdicts across `repeats` (one mapping turn → {dimension: verdict} per repeat,
    in run order). A turn absent from a repeat is `missing` there."""
    turns = sorted({t for rep in repeats for t in rep})
    out = []
    for t in turns:
        per_repeat = [rep.get(t) for rep in repeats]
        statuses = tuple(repeat_status(v) for v in per_repeat)
        dims = sorted({d for v in per_repeat if v for d in v})
        metric_flips = {}
        for d in dims:
            seq = [v[d] for v in per_repeat if v and v.get(d, "na") != "na"]
            n = _changes(seq)
            if n:
                metric_flips[d] = n
        out.append(TurnConsistency(t, statuses, _changes([s for s in statuses if s != "missing"]), metric_flips))
    return out
