"""Which judgement counts for a turn (`standing`): of the run's one judge (`run_judge`: its judge and
rules version, never two pooled), the newest revision without an error (a failed re-judge never
erases a valid verdict, and stays visible as `Standing.error`), with a person's verdicts over it on
the dimensions they score until withdrawn (`Standing.judgement`; the judge's own is `Standing.machine`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .dimensions import field_of, ordered, row_verdict, scores_of

J = TypeVar("J")
#: who judged a revision: (the judge, e.g. "openai:gpt-5.2"; the version of our rules it was asked by, "" unknown)
JudgeId = tuple[str, str]
ANY: Any = object()  # a standing's judge: every judge's revisions (one turn alone, no run to choose by)
RUN: Any = object()  # `standing`'s judge: the run's (`run_judge`)


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
        return field_of(self.judging, "error") if self.judging is not None else None

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


def judge_id(judgement: object) -> JudgeId | None:
    """Who judged a revision: (judge, rules version); None for a person's verdict (no judge's)."""
    if is_review(judgement):
        return None
    return str(field_of(judgement, "judge") or ""), str(field_of(judgement, "judge_version") or "")


def run_judge(judgements: Iterable[Any], turns: Collection[int] | None = None) -> JudgeId | None:
    """The run's judge: the one judge (and rules version) whose verdicts count on every turn of the
    run, so two judges are never pooled in one figure. Each turn (of `turns`, the turns that count;
    default every judged turn) names the judge whose valid verdict on it is newest; the judge
    named by most turns is the run's (a tie: the one that judged more of them, then the one named
    by the later turn). A judging that gave no verdict (no server, every turn errored) names none
    and changes nothing; nor does one turn re-judged by another judge. No judge gave a verdict:
    the one that tried last (its errors are the run's judge errors)."""
    judgements = list(judgements)
    return _elected(judgements, turns, valid=True) or _elected(judgements, turns, valid=False)


def _elected(judgements: list[Any], turns: Collection[int] | None, *, valid: bool) -> JudgeId | None:
    """`run_judge` by valid verdicts (`valid`), or, when no judge gave one, by every judging (its errors)."""
    newest: dict[int, dict[JudgeId, tuple[int, int, int]]] = {}
    for arrival, j in enumerate(judgements):
        idx, who = field_of(j, "turn_index"), judge_id(j)
        if idx is None or who is None or (valid and field_of(j, "error")) or (turns is not None and idx not in turns):
            continue
        mine = newest.setdefault(idx, {})
        mine[who] = max(mine.get(who, (0, 0, 0)), (*_order((arrival, j))[:2], arrival))
    votes: Counter[JudgeId] = Counter()
    covers: Counter[JudgeId] = Counter(who for mine in newest.values() for who in mine)
    last: dict[JudgeId, int] = {}
    for idx, mine in newest.items():
        top = max(mine, key=lambda w: (mine[w], w))
        votes[top] += 1
        last[top] = max(last.get(top, idx), idx)
    return max(votes, key=lambda w: (votes[w], covers[w], last[w], w)) if votes else None


def _order(indexed: tuple[int, Any]) -> tuple[int, int, int]:
    arrival, j = indexed
    return (int(field_of(j, "revision", 1) or 1), int(field_of(j, "phase", 1) or 1), arrival)


def in_order(judgements: Iterable[J]) -> list[J]:
    """One turn's revisions oldest first: revision, then phase, then arrival."""
    return [j for _, j in sorted(enumerate(judgements), key=_order)]


def is_review(judgement: object) -> bool:
    """Whether a revision is a person's verdict (or its withdrawal), not a judge's."""
    return field_of(judgement, "review") is not None


def _with(judgement: J, **fields: object) -> J:
    """A copy of a revision (an event or a row dict) with these fields replaced."""
    if isinstance(judgement, Mapping):
        return {**judgement, **fields}  # type: ignore[return-value]  # J is that dict's type here
    return judgement.model_copy(update=fields)  # type: ignore[attr-defined]  # not a Mapping: J is the Judgement event


def _overlay(machine: J | None, reviews: list[J]) -> J | None:
    """The judge's revision with the standing reviews' verdicts over it (each dimension the newest
    person's), their causes where one named any, and the newest review on it."""
    if not reviews:
        return machine
    human: dict[str, Any] = {}
    for r in reviews:
        human.update(field_of(r, "scores") or {})
    named = [c for r in reviews if (c := field_of(r, "causes"))]
    base = machine if machine is not None else reviews[-1]
    causes = named[-1] if named else field_of(base, "causes") or []
    return _with(base, scores={**(field_of(base, "scores") or {}), **human}, causes=causes,
                 review=field_of(reviews[-1], "review"))


def standing_of(judgements: Iterable[J], judge: JudgeId | None = ANY) -> Standing[J] | None:
    """The standing of one turn's revisions (None when it has none): `judge`'s revisions (the run's,
    `run_judge`; ANY: every judge's) and every person's; `newest` is the newest of all of them."""
    revs = in_order(judgements)
    if not revs:
        return None
    judgings = [j for j in revs if not is_review(j) and (judge is ANY or judge_id(j) == judge)]
    valid = [j for j in judgings if not field_of(j, "error")]
    machine = valid[-1] if valid else None
    reviews: list[J] = []
    for j in revs:
        if is_review(j):
            reviews = [] if field_of(field_of(j, "review"), "withdraw") else [*reviews, j]
    human = tuple(ordered({d for r in reviews for d in (field_of(r, "scores") or {})}))
    return Standing(judgement=_overlay(machine, reviews), newest=revs[-1], machine=machine,
                    judging=judgings[-1] if judgings else None, human=human, reviews=tuple(reviews))


def standing(judgements: Iterable[J], *, phase: int | None = None, turns: Collection[int] | None = None,
             judge: JudgeId | None = RUN) -> dict[int, Standing[J]]:
    """turn -> Standing over the revisions given (optionally of one phase), by turn index: the run's
    judge's (`run_judge` over `turns`, the turns that count; or `judge` when given, ANY: every
    judge's) and every person's. A turn neither that judge nor a person judged has none: not judged."""
    judgements = list(judgements)
    who = run_judge(judgements, turns) if judge is RUN else judge
    by_turn: dict[int, list[J]] = {}
    for j in judgements:
        idx = field_of(j, "turn_index")
        if idx is None or (phase is not None and field_of(j, "phase", 1) != phase):
            continue
        by_turn.setdefault(idx, []).append(j)
    out: dict[int, Standing[J]] = {}
    for idx in sorted(by_turn):
        st = standing_of(by_turn[idx], who)
        assert st is not None
        if st.judging is not None or any(is_review(j) for j in by_turn[idx]):
            out[idx] = st
    return out


def newest_revisions(judgements: Iterable[Any]) -> dict[int | None, int]:
    """turn -> its newest revision number of any judge's or person's: the next one is numbered after it."""
    out: dict[int | None, int] = {}
    for j in judgements:
        idx = field_of(j, "turn_index")
        out[idx] = max(out.get(idx, 0), int(field_of(j, "revision", 1) or 1))
    return out


def standing_judgements(judgements: Iterable[J]) -> dict[int, J]:
    """turn -> the judgement a screen shows: the one that counts, else the turn's newest error."""
    return {i: st.shown for i, st in standing(judgements).items()}
