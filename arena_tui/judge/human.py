"""A person's verdict on a turn, and its withdrawal: what `arena-tui review` and the turn detail record.

A person's verdict is one more judgement revision (append-only: nothing is overwritten) carrying a
`Review` (who, why) and scoring only the dimensions the person judged, each `DimensionScore.by`
them; it may name causes (`spine.causes`) of the failure. It wins over the judge's verdict on those
dimensions wherever a figure is counted, also over a later judging, until a withdrawal (a further
revision, `Review.withdraw`): the rule is `arena_tui.verdicts.standing`. Only a turn the model
played and whose verdict counts can be reviewed (`verdicts.counts`): a turn counted apart gets no
verdict from anyone.
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, Unpack

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.bus import EventBus
from arena_tui.spine.causes import APART_CAUSES, CODE, JUDGE
from arena_tui.spine.events import DimensionScore, Judgement, Review, wall_now
from arena_tui.spine.recorded import RecordedRun
from ..verdicts import APART, DIMENSIONS, apart_reason, judged_dimensions, ordered, standing_of

if TYPE_CHECKING:
    from arena_tui.store import RunRow, Store

HUMAN = "human"  # the judge kind of a person's revision: `human:<name>`
VERDICTS = ("pass", "fail")
#: the causes a person may name: what code or a judge could (not the heuristic's reading, nor "none given")
CAUSES: tuple[str, ...] = tuple(c for c in (*CODE, *JUDGE) if c not in APART_CAUSES)


class ReviewError(ValueError):
    """A review that cannot be recorded; the message is one line naming the run, turn or field."""


def default_reviewer() -> str:
    """Who reviews unless told otherwise: $USER, else the login name the system knows ("" when none)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


def reviewer_label(by: str) -> str:
    return f"{HUMAN}:{by}"


async def record_verdict(store: Store, run_id: str, turn: int, verdicts: Mapping[str, str], reason: str, by: str, *,
                         causes: Sequence[str] = (), benchmark: Benchmark | None = None,
                         bus: EventBus | None = None) -> Judgement:
    """Record `by`'s verdicts (dimension -> pass|fail) on a turn of a stored run, with their reason
    and the causes of a failure; returns the revision. Published on `bus` when given (the monitor's,
    which the store records), else submitted to the store and flushed. `benchmark`: what the run ran,
    so a dimension the turn is not judged on is refused (without it any dimension is taken)."""
    by, reason = _who(by), _why(reason)
    if not verdicts:
        raise ReviewError("give at least one verdict: DIMENSION=pass|fail")
    bad = {d: v for d, v in verdicts.items() if v not in VERDICTS}
    if bad:
        d, v = next(iter(bad.items()))
        raise ReviewError(f"{d}={v}: a verdict is pass or fail")
    causes = list(dict.fromkeys(causes))
    if unknown := [c for c in causes if c not in CAUSES]:
        raise ReviewError(f"unknown cause {unknown[0]!r} (causes: {', '.join(CAUSES)})")
    if causes and "fail" not in verdicts.values():
        raise ReviewError("causes say why a turn fails: give them with a fail verdict")
    revisions, run = await _turn(store, run_id, turn)
    spec = benchmark.find_turn(turn) if benchmark is not None else None
    allowed = reviewable(run.recorded, spec.dimensions if spec is not None else None, revisions)
    if wrong := [d for d in verdicts if d not in allowed]:
        raise ReviewError(f"run {run_id}: turn {turn} is not judged on {wrong[0]} (it is: {', '.join(allowed)})")
    scores = {d: DimensionScore(verdict=verdicts[d], reasoning=reason, by=by) for d in ordered(verdicts)}
    return await _emit(store, bus, revisions, run_id, turn, by, Review(by=by, reason=reason, at=wall_now()), scores=scores,
                       causes=causes)


#: the reason a withdrawal keeps when none is given: taking a verdict back needs no case made for it
NO_REASON = "withdrawn (no reason given)"


async def withdraw(store: Store, run_id: str, turn: int, reason: str | None, by: str, *,
                   bus: EventBus | None = None) -> Judgement:
    """Take back every person's verdict standing on the turn (a further revision): the judge's count
    again. Refused when none stands. A reason is kept when given (`NO_REASON` otherwise)."""
    by, reason = _who(by), " ".join((reason or "").split()) or NO_REASON
    revisions, _ = await _turn(store, run_id, turn)
    st = standing_of(revisions)
    if st is None or not st.reviews:
        raise ReviewError(f"run {run_id}: turn {turn} has no person's verdict to withdraw")
    return await _emit(store, bus, revisions, run_id, turn, by, Review(by=by, reason=reason, withdraw=True, at=wall_now()))


def _who(by: str) -> str:
    by = (by or "").strip()
    if not by:
        raise ReviewError("say who reviews: --by NAME (or set $USER)")
    return by


def _why(reason: str) -> str:
    reason = " ".join((reason or "").split())
    if not reason:
        raise ReviewError("say why: --reason \"...\" (kept with the verdict)")
    return reason


async def _turn(store: Store, run_id: str, turn: int) -> tuple[list[Judgement], RunRow]:
    """The turn's revisions and the run's row; refused when the turn is no verdict on the model."""
    run = await store.get_run(run_id)
    if run is None:
        raise ReviewError(f"no run {run_id!r} in the database")
    status = next((r.status for r in await store.turn_results(run_id) if r.turn_index == turn), None)
    if turn < 0 or (status is None and turn not in run.turn_indices):
        raise ReviewError(f"run {run_id}: no turn {turn}")
    if (why := apart_reason(status)) is not None:
        raise ReviewError(f"run {run_id}: turn {turn} is {APART[why]}: no verdict on the model, from the judge or a person")
    return await store.judgements(run_id, turn), run


def reviewable(run: RecordedRun, dimensions: Sequence[str] | None,
               revisions: Sequence[Judgement]) -> list[str]:
    """The dimensions a person may judge on a turn of a run with these recorded settings: those the
    turn is judged on (its benchmark `dimensions`, turn_taking on an audio run) and any the judge
    scored; without the turn's dimensions (no benchmark data), any. The turn detail offers these."""
    if dimensions is None:
        return list(DIMENSIONS)
    scored = {d for j in revisions if j.review is None for d, s in j.scores.items() if s.verdict != "na"}
    return ordered({*judged_dimensions(dimensions, audio=run.judges_turn_taking), *scored})


class _Verdicts(TypedDict, total=False):
    """What a person's revision scores beside its `Review` (none: a withdrawal)."""

    scores: dict[str, DimensionScore]
    causes: list[str]


async def _emit(store: Store, bus: EventBus | None, revisions: Sequence[Judgement], run_id: str, turn: int, by: str,
                review: Review, **fields: Unpack[_Verdicts]) -> Judgement:
    newest = max((j.revision for j in revisions), default=0)
    j = Judgement(run_id=run_id, t_ms=max((j.t_ms for j in revisions), default=0.0), turn_index=turn,
                  judge=reviewer_label(by), revision=newest + 1, phase=1, rule="withdraw" if review.withdraw else "review",
                  review=review, **fields)
    if bus is not None:
        bus.publish(j)
        return j
    store.submit(j)
    await store.flush()
    # as stored: the store numbers it after a revision another process recorded meanwhile
    return next((s for s in reversed(await store.judgements(run_id, turn)) if s.review == j.review and s.judge == j.judge), j)
