"""Phase 2: the rubric's cross-turn rules, applied in code and deterministically.

Phase 1 scores each turn in isolation; these rules need the whole run. Each rule that
changes a turn yields a NEW judgement revision (`phase=2, rule=<name>`); nothing is
overwritten. Rules, in order:

1. `tool_use_applicability` - turns that expect no call: `tool_use_correct` is na, or fail
   when an unsolicited call was made (it then counts in the denominator).
2. `realignment` - which call satisfied which expected call across turns: a call made early
   satisfies the later expecting turn; a call made late is credited where made and the
   expecting turn carries one failure. Canonical matching (arena_tui.spine.calls) first, then the
   judge's semantic-equivalence verdict, but IDs must match exactly.
3. `penalty_absorption` - a missed call is charged once: over-clarification to
   `ambiguity_handling` if scored on that turn, forgotten state to `state_tracking` if
   scored, else it stays on `tool_use_correct`. Genuine ambiguity (clarifying was right) is
   judged under `ambiguity_handling` alone where that is scored.
4. `cascade` - a turn asking about an earlier action that never executed, where the
   assistant does not fabricate it, is not failed again.
5. `turn_taking_leniency` - when `turn_taking` fails, `instruction_following` is not also failed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, Field

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import CallVerdict, DimensionScore, Judgement, TokenUsage, ToolCallRecord, TurnResult
from ..verdicts import TOOL, TURN_TAKING, standing
from .matching import call_matches, ids_equal

LinkStatus = Literal["matched", "early", "late", "missed", "wrong"]


class CallLink(BaseModel):
    """One expected call and the actual call (if any) that satisfied it."""

    expected_turn: int
    expected_index: int
    name: str
    status: LinkStatus
    actual_turn: int | None = None
    call_id: str | None = None
    via: Literal["canonical", "judge"] | None = None


class Alignment(BaseModel):
    links: list[CallLink] = Field(default_factory=list)
    unsolicited: dict[int, list[str]] = Field(default_factory=dict)  # no-call turns -> call ids
    extra: dict[int, list[str]] = Field(default_factory=dict)  # expecting turns -> unmatched call ids

    def expecting(self, turn: int) -> list[CallLink]:
        return [lk for lk in self.links if lk.expected_turn == turn]

    def credited(self, turn: int) -> list[CallLink]:
        """Late calls made on this turn (credited where made)."""
        return [lk for lk in self.links if lk.status == "late" and lk.actual_turn == turn]


def _matching(n_left: int, n_right: int, ok: Callable[[int, int], bool]) -> dict[int, int]:
    """Maximum bipartite matching (augmenting paths): list-shaped expectations are order-free."""
    owner: dict[int, int] = {}  # right -> left

    def augment(i: int, seen: set[int]) -> bool:
        for j in range(n_right):
            if j in seen or not ok(i, j):
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(n_left):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _calls(result: TurnResult) -> list[ToolCallRecord]:
    return [c for c in result.tool_calls if not c.is_duplicate]


def align(
    benchmark: Benchmark, results: Iterable[TurnResult], verdicts: Iterable[CallVerdict] = (), *, cross_turn: bool = True
) -> Alignment:
    """Link every expected call of the turns that ran to the actual call that satisfied it
    (`cross_turn=False`: only within its own turn, for rehydrated runs whose turns are independent)."""
    by_turn = {r.turn_index: r for r in sorted(results, key=lambda r: r.turn_index)}
    turns: dict[int, Turn] = {}
    for idx in by_turn:
        try:
            turns[idx] = benchmark.turn(idx)
        except KeyError:
            continue
    equivalent = {(v.call_id, v.expected_turn, v.expected_index): v.equivalent for v in verdicts}

    def how(exp_turn: int, k: int, call: ToolCallRecord) -> str | None:
        exp = turns[exp_turn].expected_calls[k]
        if call_matches(exp, call.name, call.args):
            return "canonical"
        if (
            call.name == exp.name
            and equivalent.get((call.call_id, exp_turn, k))
            and ids_equal(exp, call.args)
        ):
            return "judge"
        return None

    used: set[tuple[int, str]] = set()
    links: dict[tuple[int, int], CallLink] = {}
    # Pass 1: within each turn.
    for idx in sorted(turns):
        expected = turns[idx].expected_calls
        calls = _calls(by_turn[idx])
        pairs = _matching(len(expected), len(calls), lambda i, j: how(idx, i, calls[j]) is not None)
        for i, j in pairs.items():
            c = calls[j]
            used.add((idx, c.call_id))
            links[(idx, i)] = CallLink(
                expected_turn=idx, expected_index=i, name=expected[i].name, status="matched",
                actual_turn=idx, call_id=c.call_id, via=how(idx, i, c),  # type: ignore[arg-type]
            )
    # Pass 2: early and late calls, nearest turn first (earlier on a tie).
    for idx in sorted(turns) if cross_turn else ():
        for i, exp in enumerate(turns[idx].expected_calls):
            if (idx, i) in links:
                continue
            candidates = [
                (abs(t - idx), t, c)
                for t in sorted(turns)
                if t != idx
                for c in _calls(by_turn[t])
                if (t, c.call_id) not in used and how(idx, i, c) is not None
            ]
            if candidates:
                _, t, c = min(candidates, key=lambda x: (x[0], x[1]))
                used.add((t, c.call_id))
                links[(idx, i)] = CallLink(
                    expected_turn=idx, expected_index=i, name=exp.name,
                    status="early" if t < idx else "late", actual_turn=t, call_id=c.call_id,
                    via=how(idx, i, c),  # type: ignore[arg-type]
                )
    # What is left: wrong or missed expectations, unsolicited or extra calls.
    out = Alignment()
    for idx in sorted(turns):
        leftover = [c for c in _calls(by_turn[idx]) if (idx, c.call_id) not in used]
        for i, exp in enumerate(turns[idx].expected_calls):
            if (idx, i) in links:
                continue
            same = next((c for c in leftover if c.name == exp.name), None)
            links[(idx, i)] = CallLink(
                expected_turn=idx, expected_index=i, name=exp.name,
                status="wrong" if same else "missed",
                actual_turn=idx if same else None, call_id=same.call_id if same else None,
            )
        if leftover:
            target = out.extra if turns[idx].expected_calls else out.unsolicited
            target[idx] = [c.call_id for c in leftover]
    out.links = [links[k] for k in sorted(links)]
    return out


def _score(verdict: str, reasoning: str) -> DimensionScore:
    return DimensionScore(verdict=verdict, reasoning=reasoning)  # type: ignore[arg-type]


def _describe(lk: CallLink) -> str:
    where = {
        "matched": "made on this turn",
        "early": f"made early on turn {lk.actual_turn}",
        "late": f"made late on turn {lk.actual_turn}",
        "missed": "never made",
        "wrong": f"wrong arguments in call {lk.call_id}",
    }[lk.status]
    via = " (judged equivalent)" if lk.via == "judge" else ""
    return f"{lk.name} #{lk.expected_index}: {where}{via}"


Scores = dict[str, DimensionScore]


def _rule_applicability(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    if TOOL not in s or ctx.turns[idx].expected_calls or ctx.al.credited(idx):
        return None
    calls = ctx.al.unsolicited.get(idx)
    new = (
        _score("fail", f"unsolicited call(s) {', '.join(calls)} on a turn that expects none")
        if calls
        else _score("na", "no call expected and none made")
    )
    return _set(s, TOOL, new)


def _rule_realignment(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    if TOOL not in s:
        return None
    mine = ctx.al.expecting(idx)
    credited = ctx.al.credited(idx)
    if not mine and not credited:
        return None
    bad = [lk for lk in mine if lk.status in ("late", "missed", "wrong")]
    extra = ctx.al.extra.get(idx, []) + ctx.al.unsolicited.get(idx, [])
    parts = [_describe(lk) for lk in mine] + [f"credits late {lk.name} expected on turn {lk.expected_turn}" for lk in credited]
    if extra:
        parts.append(f"extra call(s) {', '.join(extra)}")
    return _set(s, TOOL, _score("fail" if bad or extra else "pass", "; ".join(parts)))


def _rule_absorption(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    mine = ctx.al.expecting(idx)
    absent = [lk for lk in mine if lk.status in ("missed", "late")]
    if not absent or s.get(TOOL) is None or s[TOOL].verdict != "fail":
        return None
    if any(lk.status == "wrong" for lk in mine) or ctx.al.extra.get(idx):
        return None  # a wrong call is a tool failure in its own right
    cause = ctx.base[idx].root_cause
    target = {
        "over_clarification": "ambiguity_handling",
        "genuine_ambiguity": "ambiguity_handling",
        "forgotten_state": "state_tracking",
    }.get(cause or "")
    if target is None or target not in s:
        return None  # nothing scored on this turn can take the penalty: it stays a tool failure
    names = ", ".join(lk.name for lk in absent)
    changed: str | None = None
    if cause == "genuine_ambiguity":
        # Asking on a genuinely ambiguous request is right; ambiguity_handling keeps the judge's verdict.
        why = f"{names} not called: the request was genuinely ambiguous; judged under {target}"
    else:
        changed = _set(s, target, _score("fail", f"absorbs the missed {names} ({cause})"))
        why = f"missed {names} charged to {target} ({cause})"
    return _set(s, TOOL, _score("pass", why)) or changed


def _rule_cascade(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    base = ctx.base[idx]
    if not base.unexecuted_reference or base.fabricated_action is not False:
        return None
    never = [
        lk
        for lk in ctx.al.links
        if lk.expected_turn < idx
        and (lk.status in ("missed", "wrong") or (lk.status == "late" and (lk.actual_turn or 0) > idx))
    ]
    if not never:
        return None
    origin = ", ".join(sorted({f"{lk.name} (turn {lk.expected_turn})" for lk in never}))
    changed: str | None = None
    for dim, sc in list(s.items()):
        if dim != TURN_TAKING and sc.verdict == "fail":
            changed = _set(s, dim, _score("pass", f"cascade: asks about {origin}, which never executed; "
                                                  "not fabricated, not failed again")) or changed
    return changed


def _rule_leniency(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    tt, inf = s.get(TURN_TAKING), s.get("instruction_following")
    if tt is None or inf is None or tt.verdict != "fail" or inf.verdict != "fail":
        return None
    return _set(s, "instruction_following", _score("pass", f"lenient: turn-taking failed ({tt.reasoning}); "
                                                           f"judge said: {inf.reasoning}"))


def _set(s: Scores, dim: str, new: DimensionScore) -> str | None:
    if dim in s and s[dim].verdict == new.verdict:
        return None
    s[dim] = new
    return dim


class _Ctx:
    def __init__(self, turns: dict[int, Turn], al: Alignment, base: dict[int, Judgement]) -> None:
        self.turns, self.al, self.base = turns, al, base


_RULE_FUNCS: list[tuple[str, Callable[[int, Scores, _Ctx], str | None]]] = [
    ("tool_use_applicability", _rule_applicability),
    ("realignment", _rule_realignment),
    ("penalty_absorption", _rule_absorption),
    ("cascade", _rule_cascade),
    ("turn_taking_leniency", _rule_leniency),
]


CROSS_TURN_RULES = frozenset({"cascade"})  # rules about earlier turns (besides realignment's pass 2)


def apply_rules(
    benchmark: Benchmark,
    results: Iterable[TurnResult],
    judgements: Iterable[Judgement],
    *,
    t_ms: float = 0.0,
    cross_turn: bool = True,
) -> tuple[list[Judgement], Alignment]:
    """New phase-2 revisions for every turn the rules change, and the alignment they used.

    `cross_turn=False` (rehydrated runs: every turn saw the golden history, not the model's):
    no call is realigned to another turn and no cascade from an earlier turn is applied.

    Rules revise each turn's standing phase-1 judgement (`arena_tui.verdicts`: a failed
    re-judge does not erase it); new revisions are numbered after the turn's newest one.
    """
    results = sorted(results, key=lambda r: r.turn_index)
    judgements = list(judgements)
    base = {i: st.judgement for i, st in standing(judgements, phase=1).items() if st.judgement is not None}
    current = standing(judgements)
    own_calls = {r.turn_index: {c.call_id for c in r.tool_calls} for r in results}
    tagged = [
        (v.call_id in own_calls.get(i, set()), v)
        for i, j in sorted(base.items())
        for v in j.call_verdicts
    ]
    # A call's own turn knows it best: its verdicts go last so they win.
    verdicts = [v for _, v in sorted(tagged, key=lambda x: x[0])]
    al = align(benchmark, results, verdicts, cross_turn=cross_turn)
    turns: dict[int, Turn] = {}
    for r in results:
        try:
            turns[r.turn_index] = benchmark.turn(r.turn_index)
        except KeyError:
            pass
    ctx = _Ctx(turns, al, base)
    out: list[Judgement] = []
    for idx in sorted(turns):
        if idx not in base:
            continue  # judge_error or not judged yet: nothing to revise
        b = base[idx]
        scores: Scores = dict(b.scores)
        steps: list[tuple[str, Scores]] = []
        for name, fn in _RULE_FUNCS:
            if not cross_turn and name in CROSS_TURN_RULES:
                continue
            if fn(idx, scores, ctx):
                steps.append((name, dict(scores)))
        cur = current[idx]
        if cur.judgement is not None and scores == cur.judgement.scores:
            continue
        if not steps:
            steps = [("recomputed", scores)]
        rev = cur.newest.revision
        for name, snap in steps:
            rev += 1
            out.append(
                b.model_copy(
                    update={
                        "revision": rev, "phase": 2, "rule": name, "scores": snap,
                        "usage": TokenUsage(), "t_ms": t_ms,
                    }
                )
            )
    return out, al
