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
  earlier verdict. It stays visible as an error: `Standing.error` is set whenever the judge's newest
  revision errored, and every screen shows it beside the verdict that stands. A turn whose
  every revision errored is a judge error (`verdict == "judge_error"`). Phase 2 revises the
  standing phase-1 judgement and numbers its revisions after the newest one.
- **A person's verdict wins** (`standing`). A revision carrying a `Review` is a person's verdict
  on the dimensions it scores (`arena-tui review`, `arena_tui.judge.human`). Over the judge's
  standing revision, each of those dimensions takes the newest person's verdict on it, also
  when the judge judges the turn again later (a re-judge, a whole-run judgement, phase 2), until
  a review that `withdraw`s them: from then on the judge's count again. What counts is that
  overlay (`Standing.judgement`; its person's scores carry `by`, the dimensions are
  `Standing.human`); the judge's own is `Standing.machine` (what phase 2 and judge agreement
  read). A turn with a person's verdict and no valid judge's counts on the person's alone.
  Every figure says how many of its verdicts are a person's (`Tally.human`).
- **What a figure counts** (`counts`, `tally`). Every figure on every surface (runs list, run
  header, headless and `judge` summaries, leaderboard, compare, campaigns, report, export) counts
  the turns the model played and the judge judged: a turn whose status is the model's
  (`MODEL_STATUSES`: ok, no_response, empty_response, ended_session, ended_early) with a valid
  verdict. Every other turn the run set out to run is no verdict on the model, neither its
  failure nor its pass: it is counted apart by reason (`APART`, worded once: not played,
  stopped, lost pace, infra failure, engine error; judge error and not judged for a played
  turn the judge could not score) and every surface says how many (`apart_text`: "3 not
  played · 1 stopped"). The judge never judges such a turn (`counts`), and a judgement left
  from an earlier take of it counts nowhere. A run in which no turn of the model's got an
  answer (`ANSWERED`) has no scored row anywhere (`Tally.scored`). A run the judge never saw
  has no rates: "not judged", never 0 %.
- **Pass rates** (`tally`, `pass_rates`). Per dimension: passes over scored verdicts ("na" is
  not scored) of each counted turn's standing judgement. A verdict that scores nothing (every
  dimension "na": an imported reference row whose scores are all null, its "incomplete" row)
  is no valid verdict: the turn is not judged.
- **Strict row rule** (`row_verdict`, `row_passes`; named `STRICT` everywhere). A turn passes
  strictly when every scored dimension passes (none fails).
- **The original eval's turn pass** (`original_row_passes`; named `ORIGINAL`). The original
  30-turn eval (kwindla/aiewf-eval) passes a turn on tool use ∧ instruction following ∧ KB
  grounding alone (`ORIGINAL_DIMENSIONS`: none of the three fails; tool use not scored, no
  call expected nor made, is right), over the same turns. Ours is every scored dimension,
  turn_taking included: both are counted (`Tally.strict`, `Tally.original`) and shown, each named.
- **Consistency across repeats** (`turn_consistency`). Per turn, its row verdict in each repeat
  (`repeat_status`: "missing" where it has none), how often that changes from one repeat to the
  next, and which turns never pass. A model that passes 80 % of turns by passing a different 80 %
  each time is a different model from one that always fails the same 20 %.

Judgements may be `arena_tui.spine.events.Judgement` objects or plain dicts with the same field
names (`turn_index`, `revision`, `phase`, `error`, `scores`, `heuristic`, `review`, `causes`), as read from rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from arena_tui.spine.benchmark import CORE_DIMENSIONS
from arena_tui.spine.events import FINISHED, INFRA_ERROR, LOST_PACE

TURN_TAKING = "turn_taking"
TOOL = "tool_use_correct"
# The original eval's turn pass: these three, none failing (see "The original eval's turn pass")
ORIGINAL_DIMENSIONS: tuple[str, ...] = (TOOL, "instruction_following", "kb_grounding")
# Scored by the LLM (every judge reply carries all of them, "na" where not scored).
LLM_DIMENSIONS: list[str] = [*CORE_DIMENSIONS, "state_tracking", "ambiguity_handling"]
# Every dimension, in the order they are shown and summed.
DIMENSIONS: list[str] = [*LLM_DIMENSIONS, TURN_TAKING]


@dataclass(frozen=True)
class Named:
    """How one dimension reads on every surface."""

    label: str  # a column's header where a column has room (the leaderboard, report tables)
    code: str  # two letters, where many share a line (the turn table, lists; a legend spells it out)
    words: str  # the legend's words for the code, and the report's header


#: every dimension in one row: a new dimension is its name in the lists above and one line here
NAMES: dict[str, Named] = {
    "kb_grounding": Named("KB", "KB", "knowledge base"),
    "instruction_following": Named("Instr", "IF", "instructions"),
    "tool_use_correct": Named("Tool✓", "TU", "tool use"),
    "state_tracking": Named("State", "ST", "state"),
    "ambiguity_handling": Named("Ambig", "AH", "ambiguity"),
    TURN_TAKING: Named("Taking", "TT", "turn-taking"),
}


def named(dim: str) -> Named:
    """The dimension's row; one the table lacks (a judge's own) reads from its name."""
    return NAMES.get(dim) or Named(dim[:6], dim[:2].upper(), dim.replace("_", " "))

#: the statuses of a turn that is the model's doing: it got the turn, and answered or failed to. The
#: same set as `FINISHED` (what a resume never plays again): every other turn is no measurement of
#: the model, played again by a resume and counted apart
MODEL_STATUSES: frozenset[str] = FINISHED
#: the model answered (a reply, calls, or the call that ended the session): a run without one such turn
#: has no scored row anywhere (the engine's `unanswered_run` fails it the same way)
ANSWERED: frozenset[str] = frozenset({"ok", "ended_session"})
NOT_PLAYED = "not_played"  # a turn the run set out to run that has no row
JUDGE_ERROR = "judge_error"  # played, every judging of it failed
UNJUDGED = "unjudged"  # played, never judged (or judged with nothing scored)
#: why a turn is left out of a run's figures, as every surface words it, in the order they are listed
APART: dict[str, str] = {
    NOT_PLAYED: "not played",
    "interrupted": "stopped",
    LOST_PACE: "lost pace",
    INFRA_ERROR: "infra failure",
    "error": "engine error",
    JUDGE_ERROR: "judge error",
    UNJUDGED: "not judged",
}
NO_ANSWER = "no answer"  # what a run without a scored row shows where its figures would be (`Tally.scored`)
NOT_JUDGED = APART[UNJUDGED]  # what a run the judge never saw shows for its rates, and its rows' label (never 0 %)
APART_REASONS: tuple[str, ...] = tuple(APART)
PLAY_REASONS: tuple[str, ...] = APART_REASONS[:5]  # the turn's own status said why: not the model's doing
#: the two turn passes, named once for every surface (CSV columns keep their own names, docs/reports.md)
STRICT = "strict pass"  # every scored dimension passes, turn_taking included (`row_passes`)
ORIGINAL = "tool+IF+KB pass"  # the original eval's: tool use, instruction following, KB grounding (`original_row_passes`)

J = TypeVar("J")
RepeatStatus = Literal["pass", "fail", "missing"]


def _get(obj: Any, name: str, default: Any = None) -> Any:
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


def counts(status: str) -> bool:
    """Whether a turn with this recorded status is the model's doing: judged, and counted in
    every figure (pass rates, latency). Any other is counted apart (`APART`)."""
    return status in MODEL_STATUSES


def apart_reason(status: str | None) -> str | None:
    """Why a turn the run set out to run is counted apart (an `APART` key), None when it counts;
    `status` None: the turn has no row (not played)."""
    if status is None:
        return NOT_PLAYED
    return None if counts(status) else status if status in APART else "error"


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
    """A turn's judgement that counts (the judge's, a person's verdicts over it), and the revisions
    behind it."""

    judgement: J | None  # what counts: the judge's newest valid revision, a person's verdicts over it
    newest: J  # the newest revision of any kind: the next one is numbered after it
    machine: J | None = None  # the judge's newest valid revision alone, no person's verdict over it
    judging: J | None = None  # the judge's newest revision, errored or not (None: only a person's)
    human: tuple[str, ...] = ()  # the dimensions whose verdict that counts is a person's
    reviews: tuple[J, ...] = ()  # the person's revisions that stand (since the last withdrawal), oldest first

    @property
    def error(self) -> str | None:
        """The judge's newest revision's error: a failed (re-)judge, shown even when a verdict stands."""
        return _get(self.judging, "error") if self.judging is not None else None

    @property
    def shown(self) -> J:
        """What a screen shows as the turn's judgement: the one that counts, else the judge's error."""
        if self.judgement is not None:
            return self.judgement
        return self.judging if self.judging is not None else self.newest

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


def is_review(judgement: Any) -> bool:
    """Whether a revision is a person's verdict (or its withdrawal), not a judge's."""
    return _get(judgement, "review") is not None


def _with(judgement: J, **fields: Any) -> J:
    """A copy of a revision (an event or a row dict) with these fields replaced."""
    if isinstance(judgement, Mapping):
        return {**judgement, **fields}  # type: ignore[return-value]
    return judgement.model_copy(update=fields)  # type: ignore[attr-defined]


def _overlay(machine: J | None, reviews: list[J]) -> J | None:
    """The judge's revision with the standing reviews' verdicts over it (each dimension the newest
    person's), their causes where one named any, and the newest review on it."""
    if not reviews:
        return machine
    human: dict[str, Any] = {}
    for r in reviews:
        human.update(_get(r, "scores") or {})
    named = [c for r in reviews if (c := _get(r, "causes"))]
    base = machine if machine is not None else reviews[-1]
    causes = named[-1] if named else _get(base, "causes") or []
    return _with(base, scores={**(_get(base, "scores") or {}), **human}, causes=causes,
                 review=_get(reviews[-1], "review"))


def standing_of(judgements: Iterable[J]) -> Standing[J] | None:
    """The standing of one turn's revisions (None when it has none)."""
    revs = in_order(judgements)
    if not revs:
        return None
    judgings = [j for j in revs if not is_review(j)]
    valid = [j for j in judgings if not _get(j, "error")]
    machine = valid[-1] if valid else None
    reviews: list[J] = []
    for j in revs:
        if is_review(j):
            reviews = [] if _get(_get(j, "review"), "withdraw") else [*reviews, j]
    human = tuple(ordered({d for r in reviews for d in (_get(r, "scores") or {})}))
    return Standing(judgement=_overlay(machine, reviews), newest=revs[-1], machine=machine,
                    judging=judgings[-1] if judgings else None, human=human, reviews=tuple(reviews))


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
    """What the pass-rate rule counts over a run (see "What a figure counts" in the module docstring):
    the judged turns the model played, and every other turn the run set out to run, apart by reason."""

    # dim -> (passes, scored), in the order first scored (turn order); `ordered` sorts them
    dimensions: dict[str, tuple[int, int]] = field(default_factory=dict)
    rows: dict[int, bool] = field(default_factory=dict)  # turn -> strict pass, for the turns counted
    original_rows: dict[int, bool] = field(default_factory=dict)  # turn -> the original eval's pass, same turns
    judge_errors: list[int] = field(default_factory=list)  # played, every revision errored: counted apart
    unjudged: list[int] = field(default_factory=list)  # played, never judged (or judged with nothing scored)
    rejudge_errors: list[int] = field(default_factory=list)  # newest revision errored, a verdict stands (counted)
    # status (or NOT_PLAYED) -> turns: not the model's doing, counted in no figure
    uncounted: dict[str, list[int]] = field(default_factory=dict)
    answered: bool = True  # some turn of the model's got its answer (`ANSWERED`); False: the run has no scored row
    heuristic: bool = False  # some turn counted (or its judge error) was judged by the offline heuristic
    llm: bool = False  # some was judged by an LLM (both: a mixed run, its own row wherever runs are pooled)
    human: dict[int, list[str]] = field(default_factory=dict)  # turn -> its scored dimensions a person's verdict decides

    @property
    def human_verdicts(self) -> int:
        """How many of the verdicts counted (a turn's scored dimension each) are a person's, not the judge's."""
        return sum(len(dims) for dims in self.human.values())

    @property
    def strict(self) -> tuple[int, int]:
        """(passes, turns) by the strict row rule (`STRICT`)."""
        return sum(self.rows.values()), len(self.rows)

    @property
    def original(self) -> tuple[int, int]:
        """(passes, turns) by the original eval's rule (`original_row_passes`), over the same turns."""
        return sum(self.original_rows.values()), len(self.original_rows)

    @property
    def apart(self) -> dict[str, list[int]]:
        """reason -> turns, for every turn left out of the figures, in `APART` order (none empty)."""
        got = {**self.uncounted, JUDGE_ERROR: self.judge_errors, UNJUDGED: self.unjudged}
        return {k: sorted(got[k]) for k in APART if got.get(k)}

    @property
    def scored(self) -> bool:
        """Whether the run has a scored row anywhere: some turn of the model's got an answer."""
        return self.answered

    @property
    def judged(self) -> bool:
        """Whether the judge said anything about the turns that count (a run it never saw: "not judged")."""
        return bool(self.rows or self.judge_errors)

    def apart_text(self, *, live: bool = False, reasons: Iterable[str] = APART_REASONS) -> str:
        """`3 not played · 1 stopped` for `reasons` (default all), '' when none. `live`: a run still
        going, whose turns still to come or still being judged are not said; a run never judged
        is said so once (its rates), never as each turn "not judged"."""
        left_out = {NOT_PLAYED, UNJUDGED} if live else set() if self.judged else {UNJUDGED}
        return apart_text({k: v for k, v in self.apart.items() if k in set(reasons) - left_out})


def human_text(verdicts: int, turns: int) -> str:
    """`3 verdicts on 2 turns are a person's, not the judge's` ('' for none): how every surface
    says how many of its figures rest on a person's verdict (`Tally.human`)."""
    if not verdicts:
        return ""
    are = "are" if verdicts != 1 else "is"
    return f"{verdicts} verdict{'s' * (verdicts != 1)} on {turns} turn{'s' * (turns != 1)} {are} a person's, not the judge's"


def apart_text(apart: Mapping[str, Sequence[int] | int]) -> str:
    """`3 not played · 1 stopped` from reason -> turns (or a count), in `APART` order."""
    parts = []
    for k, label in APART.items():
        got = apart.get(k)
        n = got if isinstance(got, int) else len(got or ())
        if n:
            parts.append(f"{n} {label}")
    return " · ".join(parts)


def tally(judgements: Iterable[Any], statuses: Mapping[int, str] | None = None,
          expected: Iterable[int] | None = None) -> Tally:
    """The one count of a run's figures (see "What a figure counts").

    `statuses`: turn -> the recorded status of every turn with a row; a turn whose status is not
    the model's (`counts`) is counted apart and its judgements (an earlier take's, a stopped
    turn's) are ignored. `expected`: the turns the run set out to run; one without a row was not
    played. Without `statuses`, every judged turn is taken as played (judgements alone)."""
    now = standing(judgements)
    out = Tally(answered=statuses is None)
    acc: dict[str, list[int]] = {}
    known = set(statuses) if statuses is not None else set(now)
    for idx in sorted({*known, *(expected or ())}):
        if idx < 0:  # the greeting is no benchmark turn
            continue
        if statuses is not None:
            status = statuses.get(idx)
            if status is None or not counts(status):
                out.uncounted.setdefault(NOT_PLAYED if status is None else status, []).append(idx)
                continue
            out.answered |= status in ANSWERED
        st = now.get(idx)
        if st is None:
            out.unjudged.append(idx)
            continue
        for j in (st.machine, st.judging):  # what judged it (a person is neither)
            if j is not None:
                heuristic = bool(_get(j, "heuristic", False))
                out.heuristic, out.llm = out.heuristic or heuristic, out.llm or not heuristic
        if st.judgement is None:  # every judging errored (or only a withdrawn review: never judged)
            (out.judge_errors if st.judging is not None else out.unjudged).append(idx)
            continue
        verdicts = st.scores
        if row_verdict(verdicts) == "na":  # a verdict that scores nothing (the reference's incomplete row) is none
            out.unjudged.append(idx)
            continue
        if st.error:
            out.rejudge_errors.append(idx)
        for d, v in verdicts.items():
            if v != "na":
                a = acc.setdefault(d, [0, 0])
                a[1] += 1
                a[0] += v == "pass"
        out.rows[idx] = row_passes(verdicts)
        out.original_rows[idx] = original_row_passes(verdicts)
        if human := [d for d in st.human if verdicts.get(d, "na") != "na"]:
            out.human[idx] = human
    out.dimensions = {d: (a[0], a[1]) for d, a in acc.items()}
    return out


def pass_rates(judgements: Iterable[Any], statuses: Mapping[int, str] | None = None) -> dict[str, tuple[int, int]]:
    """dimension -> (passed, scored) by the one rule (`tally`)."""
    return tally(judgements, statuses).dimensions


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
