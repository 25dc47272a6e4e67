"""How sure the judge is: a run judged N times (`arena-tui judge RUN --repeat N`), each turn's
majority verdict per dimension and how many judgings gave it, and the "judge agreement" figure.

The rules, stated once (docs/judging.md, "Judge agreement"):
- **A repeat** is one whole judging of the stored run by the ordinary path (`worker.rejudge_turn`,
  phase 2 included), recorded as ordinary revisions. A turn's verdict in that repeat is the
  judge's own: its standing phase-1 judgement afterwards, before the code rules (what code
  decides, e.g. tool use after realignment, is the same every time and no judgement of the
  judge's), counted only if that repeat's own judging of the turn gave one (a judge error in one
  repeat is no verdict there, and never a copy of an earlier repeat's).
- **The majority counts.** Per dimension, the verdict most judgings gave; a tie goes to fail,
  then pass, then na (a pass needs more judgings for it than any other verdict). It is recorded
  as one more revision of the turn (`rule="majority"`, phase 1, so phase 2 re-applied later
  revises it and not a single repeat), with `Agreement`: the judgings counted, their revisions,
  and per dimension how many gave the majority verdict; the code rules are then applied over it
  (`reapply`: phase 2 revises the majority). The newest valid revision, it is the one that
  counts (`arena_tui.verdicts.standing`); nothing earlier is changed. A turn with fewer than two
  verdicts gets no majority revision (one judging agrees with nothing).
- **Judge agreement** over turns: the judgings that gave the majority verdict over all judgings,
  pooled over every turn whose standing phase-1 judgement (the majority itself, never the code
  rules' revision of it) carries an `Agreement` and every LLM dimension it was judged on
  (`turn_taking` is computed in code and always agrees; a dimension every judging left "na" was
  never judged). A revision that is not a majority has no agreement: no figure, never 100 %.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena_tui.spine.events import Agreement, DimensionScore, Judgement, TokenUsage
from ..verdicts import LLM_DIMENSIONS, newest_revisions, ordered, standing

if TYPE_CHECKING:
    from arena_tui.store import Store

MAJORITY = "majority"  # the rule name of a majority revision
TIE_ORDER = ("fail", "pass", "na")  # a tie goes to the first of these


def majority(verdicts: Sequence[str]) -> tuple[str, int]:
    """The verdict most of `verdicts` are, and how many are; a tie by `TIE_ORDER`."""
    counts = Counter(verdicts)
    top = max(counts.values())
    tied = [v for v, n in counts.items() if n == top]
    return min(tied, key=lambda v: (TIE_ORDER.index(v) if v in TIE_ORDER else len(TIE_ORDER), v)), top


def majority_judgement(judgings: Sequence[Judgement], *, asked: int, revision: int, t_ms: float = 0.0) -> Judgement:
    """One turn's majority revision over its repeats' verdicts (oldest first). Its non-score
    fields (root cause, call verdicts, what phase 2 reads) are the latest judging's that agrees
    with the majority on the most dimensions; each dimension's reasoning, the latest that gave
    its majority verdict."""
    assert judgings, "a majority of no judgings"
    scores: dict[str, DimensionScore] = {}
    agree: dict[str, int] = {}
    for d in ordered(d for j in judgings for d in j.scores):
        verdicts = [j.scores[d].verdict if d in j.scores else "na" for j in judgings]
        verdict, n = majority(verdicts)
        said = [j.scores[d] for j in judgings if d in j.scores and j.scores[d].verdict == verdict]
        scores[d] = DimensionScore(verdict=verdict, reasoning=said[-1].reasoning if said else "")
        agree[d] = n
    like = [sum(j.scores.get(d) is not None and j.scores[d].verdict == s.verdict for d, s in scores.items())
            for j in judgings]  # fmt: skip
    base = judgings[max(range(len(judgings)), key=lambda i: (like[i], i))]
    return base.model_copy(update={
        "revision": revision, "phase": 1, "rule": MAJORITY, "scores": scores, "usage": TokenUsage(), "t_ms": t_ms,
        "error": None, "agreement": Agreement(asked=asked, revisions=[j.revision for j in judgings], agree=agree),
    })  # fmt: skip


@dataclass(frozen=True)
class AgreementFigure:
    """Judge agreement over some turns (module docstring): `agree` of `verdicts` judgings' verdicts."""

    agree: int = 0
    verdicts: int = 0
    turns: int = 0
    unanimous: int = 0  # turns on which every judging agreed on every dimension
    judgings: tuple[int, ...] = ()  # how many judgings the turns had (distinct counts)

    def __add__(self, other: AgreementFigure) -> AgreementFigure:
        return AgreementFigure(self.agree + other.agree, self.verdicts + other.verdicts, self.turns + other.turns,
                               self.unanimous + other.unanimous, tuple(sorted({*self.judgings, *other.judgings})))

    @property
    def rate(self) -> float | None:
        return self.agree / self.verdicts if self.verdicts else None

    @property
    def each(self) -> str:
        """`3 judgings each` (or `2–3 judgings each` when turns differ)."""
        n = self.judgings
        return f"{n[0]}{'' if len(n) == 1 else '–' + str(n[-1])} judgings each" if n else "no judgings"

    def text(self) -> str:
        """`94.4% (51/54 verdicts; 10 turns, 3 judgings each)`, or `–` without repeated judgings."""
        if self.rate is None:
            return "–"
        return f"{100 * self.rate:.1f}% ({self.agree}/{self.verdicts} verdicts; {self.turns} turns, {self.each})"


def agreement_of(counted: Iterable[Judgement | None]) -> AgreementFigure:
    """The figure over the judge's judgements that count, one per turn (`Standing.machine`: how sure
    the judge is, whatever a person said over it)."""
    out = AgreementFigure()
    for j in counted:
        a = j.agreement if j is not None else None
        if a is None or a.judgings < 2:
            continue
        dims = [d for d, s in j.scores.items() if d in LLM_DIMENSIONS and d in a.agree  # type: ignore[union-attr]  # a judgement with scores here (judged ones only)
                and not (s.verdict == "na" and a.agree[d] == a.judgings)]  # fmt: skip
        agree, of = sum(a.agree[d] for d in dims), a.judgings * len(dims)
        out += AgreementFigure(agree, of, 1, int(agree == of), (a.judgings,))
    return out


def run_agreement(judgements: Iterable[Judgement], turns: Iterable[int] | None = None) -> AgreementFigure:
    """One run's figure, over every revision of its judgements: each turn's majority (its run judge's
    standing phase-1 judgement: the judge's own verdicts, not the code rules'); `turns`: only these."""
    keep = set(turns) if turns is not None else None
    return agreement_of(st.machine for t, st in standing(judgements, phase=1).items() if keep is None or t in keep)


Rejudge = Callable[[], Awaitable[Any]]


async def judge_repeatedly(store: Store, run_id: str, repeats: int, rejudge: Rejudge, *, t_ms: float = 0.0,
                           reapply: Rejudge | None = None) -> dict[int, list[Judgement]]:
    """Judge the stored run `repeats` times (`rejudge()`: one whole judging, recorded in the store),
    then record each turn's majority revision (module docstring) and apply the code rules over them
    (`reapply()`, when given). Returns turn -> the judge's own verdicts counted (phase 1), one per
    repeat that gave one, oldest first."""
    judgings: dict[int, list[Judgement]] = {}
    for _ in range(repeats):
        before = newest_revisions(await store.judgements(run_id))
        await rejudge()
        after = await store.judgements(run_id)
        made = {(j.turn_index, j.phase) for j in after if not j.error and j.revision > before.get(j.turn_index, 0)}
        for t, st in standing(after, phase=1).items():
            if (t, 1) in made and st.machine is not None:  # the judge's: a person's verdict is no judging
                judgings.setdefault(t, []).append(st.machine)
    newest = newest_revisions(await store.judgements(run_id))
    majorities = [majority_judgement(js, asked=repeats, revision=newest[t] + 1, t_ms=t_ms)
                  for t, js in sorted(judgings.items()) if len(js) >= 2]
    for j in majorities:
        store.submit(j)
    await store.flush()
    if majorities and reapply is not None:
        await reapply()
    return judgings
