"""What a figure counts: the turns the model played and the judge judged (`counts`, `tally`);
every other turn the run set out to run counted apart by reason (`APART`, worded once), pass
rates per dimension over the standing verdicts, and how a figure says what it left out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena_tui.spine.events import ANSWERED_STATUSES, FINISHED, INFRA_ERROR, LOST_PACE

from .dimensions import field_of, original_row_passes, row_passes, row_verdict
from .standing import JudgeId, judge_id, run_judge, standing

#: the statuses of a turn that is the model's doing: it got the turn, and answered or failed to. The
#: same set as `FINISHED` (what a resume never plays again): every other turn is no measurement of
#: the model, played again by a resume and counted apart
MODEL_STATUSES: frozenset[str] = FINISHED
#: the model answered (a reply, calls, or the call that ended the session): a run whose every turn of the
#: model's is none of these never answered (`Tally.never_answered`; the engine's `unanswered_run` fails it)
ANSWERED: frozenset[str] = ANSWERED_STATUSES
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
#: what every surface says of a run the model heard and never answered (`Tally.never_answered`): its turns
#: count, each the model's failure; most often a setup fault (a wrong voice, modality or key), so say so
NEVER_ANSWERED = "never answered — check the setup"
NOT_JUDGED = APART[UNJUDGED]  # what a run the judge never saw shows for its rates, and its rows' label (never 0 %)
APART_REASONS: tuple[str, ...] = tuple(APART)
PLAY_REASONS: tuple[str, ...] = APART_REASONS[:5]  # the turn's own status said why: not the model's doing


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
    played: bool = True  # some turn was the model's (`MODEL_STATUSES`); False: the run has no scored row
    answered: bool = True  # some turn of the model's got its answer (`ANSWERED`); False: it never answered
    judge: JudgeId | None = None  # the run's judge, whose verdicts count (`standing.run_judge`); None: never judged
    heuristic: bool = False  # the run's judge is the offline heuristic
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
        """Whether the run has a scored row anywhere: the model got some turn (one it never answered counts)."""
        return self.played

    @property
    def never_answered(self) -> bool:
        """The model got turns and answered none (`NEVER_ANSWERED`): its row counts them, each its failure."""
        return self.played and not self.answered

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
    judgements = list(judgements)
    counted = {i for i, s in statuses.items() if counts(s)} if statuses is not None else None
    out = Tally(played=statuses is None, answered=statuses is None, judge=run_judge(judgements, counted))
    now = standing(judgements, judge=out.judge)
    out.heuristic = any(field_of(j, "heuristic", False) for j in judgements if judge_id(j) == out.judge)
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
            out.played = True
            out.answered |= status in ANSWERED
        st = now.get(idx)
        if st is None:
            out.unjudged.append(idx)
            continue
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
