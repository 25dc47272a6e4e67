"""Phase 2: the rules code decides, applied deterministically over the whole run.

Code decides what code can know (which call satisfied which expected call, whether a turn answered
at all; turn-taking is measured in code before phase 2); the judge decides the rest, and its flags
(`root_cause`, `fabricated_action`, `unexecuted_reference`, `words_contradict_actions`,
`call_verdicts`) are the inputs of the rules below. Each rule that changes a turn yields a NEW
judgement revision (`phase=2, rule=<name>`): where code overrules the judge is on record; nothing
is overwritten. docs/judging.md holds the rule table. Rules, in order:

1. `tool_use_applicability` - turns that expect no call: `tool_use_correct` is na, or fail
   when an unsolicited call was made (it then counts in the denominator).
2. `realignment` - which call satisfied which expected call across turns: a call made early
   satisfies the later expecting turn; a call made late is credited where made and the
   expecting turn carries one failure, unless the judge passed its tool use naming no fault
   (waiting was right there: code cannot know what the user had said). Canonical matching
   (arena_tui.spine.calls) first, then the judge's semantic-equivalence verdict, but IDs must
   match exactly. An extra call beside the expected ones fails tool use only if the judge failed
   it (a harmless lookup is the judge's call); a call on a turn that expects none always fails.
3. `penalty_absorption` - a missed call is charged once: over-clarification to
   `ambiguity_handling` if scored on that turn, forgotten state to `state_tracking` if
   scored, else it stays on `tool_use_correct`. Genuine ambiguity (asking was right) passes
   `tool_use_correct` where `ambiguity_handling` is scored, which keeps the judge's verdict.
4. `cascade` - a turn asking about an earlier call that never executed, whose expecting turn
   already failed `state_tracking`, passes `state_tracking` if the assistant does not
   fabricate the outcome, unless the turn's own missed call was charged there. It passes nothing else.
5. `words_actions` - words that contradict a call made in the same turn (says it will wait for
   the user, yet calls) fail `instruction_following` and `tool_use_correct`. A turn that made no
   call has no such contradiction (asking instead of calling is rule 3's).
6. `no_answer` - a turn with neither speech nor a call did not engage: `instruction_following`
   fails, whatever the judge said (leniency for failed turn-taking is the judge's, prompted,
   and never covers silence).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel, Field

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import CallVerdict, DimensionScore, Judgement, TokenUsage, ToolCallRecord, TurnResult
from ..verdicts import TOOL, standing
from .matching import call_matches, ids_equal
from .rubric import answered

IF, ST, AH = "instruction_following", "state_tracking", "ambiguity_handling"

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
                actual_turn=idx, call_id=c.call_id, via=how(idx, i, c),
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
                    via=how(idx, i, c),
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
    return DimensionScore(verdict=verdict, reasoning=reasoning)


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


def _waiting_excused(base: Judgement) -> bool:
    """The judge passed the turn's tool use naming no fault: where the expected call came later,
    waiting was right (the user had not yet given what it needs), which only the judge can tell."""
    own = base.scores.get(TOOL)
    return own is not None and own.verdict == "pass" and base.root_cause in (None, "genuine_ambiguity")


def _rule_realignment(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    if TOOL not in s:
        return None
    mine = ctx.al.expecting(idx)
    credited = ctx.al.credited(idx)
    if not mine and not credited:
        return None
    base = ctx.base[idx]
    excused = _waiting_excused(base)
    bad = [lk for lk in mine if lk.status in ("missed", "wrong") or (lk.status == "late" and not excused)]
    unsolicited = ctx.al.unsolicited.get(idx, [])
    extra = ctx.al.extra.get(idx, [])
    judge_passed = base.scores.get(TOOL) is not None and base.scores[TOOL].verdict == "pass"
    parts = [_describe(lk) + ("; the judge found waiting right here" if lk.status == "late" and excused else "")
             for lk in mine]
    parts += [f"credits late {lk.name} expected on turn {lk.expected_turn}" for lk in credited]
    if unsolicited:
        parts.append(f"extra call(s) {', '.join(unsolicited)}")
    if extra:
        parts.append(f"extra call(s) {', '.join(extra)}" + (": harmless, by the judge" if judge_passed else ""))
    failed = bool(bad or unsolicited or (extra and not judge_passed))
    return _set(s, TOOL, _score("fail" if failed else "pass", "; ".join(parts)))


def _rule_absorption(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    mine = ctx.al.expecting(idx)
    absent = [lk for lk in mine if lk.status in ("missed", "late")]
    if not absent or s.get(TOOL) is None or s[TOOL].verdict != "fail":
        return None
    if any(lk.status == "wrong" for lk in mine) or ctx.al.extra.get(idx):
        return None  # a wrong call is a tool failure in its own right
    cause = ctx.base[idx].root_cause
    target = {"over_clarification": AH, "genuine_ambiguity": AH, "forgotten_state": ST}.get(cause or "")
    if target is None or target not in s:
        return None  # nothing scored on this turn can take the penalty: it stays a tool failure
    names = ", ".join(lk.name for lk in absent)
    if cause == "genuine_ambiguity":  # asking was right: how well it asked is the judge's ambiguity verdict
        why = f"{names} not called: the request was genuinely ambiguous (ambiguity_handling: the judge's {s[AH].verdict})"
        return _set(s, TOOL, _score("pass", why))
    changed = _set(s, target, _score("fail", f"absorbs the missed {names} ({cause})"))
    ctx.absorbed.add((idx, target))
    why = f"missed {names} charged to {target} ({cause})"
    return _set(s, TOOL, _score("pass", why)) or changed


def _rule_cascade(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    base = ctx.base[idx]
    st = s.get(ST)
    if st is None or st.verdict != "fail" or not base.unexecuted_reference or base.fabricated_action is not False:
        return None
    if (idx, ST) in ctx.absorbed:
        return None  # this turn's own missed call landed there: counted once, never passed away
    never = [
        lk
        for lk in ctx.al.links
        if lk.expected_turn < idx
        and (lk.status in ("missed", "wrong") or (lk.status == "late" and (lk.actual_turn or 0) > idx))
        and ctx.verdict(lk.expected_turn, ST) == "fail"  # its turn already took the state_tracking failure
    ]
    if not never:
        return None
    origin = ", ".join(sorted({f"{lk.name} (turn {lk.expected_turn})" for lk in never}))
    return _set(s, ST, _score("pass", f"cascade: asks about {origin}, which never executed and was charged to "
                                      "state_tracking there; not fabricated, not failed again"))


def _rule_words_actions(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    if not ctx.base[idx].words_contradict_actions or not _calls(ctx.results[idx]):
        return None  # words can contradict only a call that was made: a turn that only asked is rule 3's
    why = "words contradict actions: says it will wait for the user, yet makes the call in the same turn"
    changed = _set(s, IF, _score("fail", why)) if IF in s else None
    if TOOL in s:
        changed = _set(s, TOOL, _score("fail", why)) or changed
    return changed


def _rule_no_answer(idx: int, s: Scores, ctx: "_Ctx") -> str | None:
    result = ctx.results[idx]
    if IF not in s or answered(result):
        return None
    return _set(s, IF, _score("fail", f"no answer: neither speech nor a call (turn {result.status})"))


def _set(s: Scores, dim: str, new: DimensionScore) -> str | None:
    if dim in s and s[dim].verdict == new.verdict:
        return None
    s[dim] = new
    return dim


class _Ctx:
    def __init__(self, turns: dict[int, Turn], al: Alignment, base: dict[int, Judgement],
                 results: dict[int, TurnResult]) -> None:
        self.turns, self.al, self.base, self.results = turns, al, base, results
        self.final: dict[int, Scores] = {}  # the turns already ruled on (earlier ones first)
        self.absorbed: set[tuple[int, str]] = set()  # (turn, dimension) that took the turn's own missed call

    def verdict(self, turn: int, dim: str) -> str | None:
        """An earlier turn's verdict on `dim` after the rules."""
        score = self.final.get(turn, {}).get(dim)
        return None if score is None else score.verdict


_RULE_FUNCS: list[tuple[str, Callable[[int, Scores, _Ctx], str | None]]] = [
    ("tool_use_applicability", _rule_applicability),
    ("realignment", _rule_realignment),
    ("penalty_absorption", _rule_absorption),
    ("cascade", _rule_cascade),
    ("words_actions", _rule_words_actions),
    ("no_answer", _rule_no_answer),
]


CROSS_TURN_RULES = frozenset({"cascade"})  # rules about earlier turns (besides realignment's pass 2)


def _judged(judgements: Iterable[Judgement]) -> dict[int, Judgement]:
    """turn -> the judge's standing phase-1 judgement: what the rules revise (never a person's verdict)."""
    return {i: st.machine for i, st in standing(judgements, phase=1).items() if st.machine is not None}


def _call_verdicts(base: dict[int, Judgement], results: Iterable[TurnResult]) -> list[CallVerdict]:
    """The judge's call verdicts, a call's own turn's last: it knows the call best, so its verdict wins."""
    own_calls = {r.turn_index: {c.call_id for c in r.tool_calls} for r in results}
    tagged = [(v.call_id in own_calls.get(i, set()), v) for i, j in sorted(base.items()) for v in j.call_verdicts]
    return [v for _, v in sorted(tagged, key=lambda x: x[0])]


def alignment_of(benchmark: Benchmark, results: Iterable[TurnResult], judgements: Iterable[Judgement], *,
                 cross_turn: bool = True) -> Alignment:
    """The call alignment of a judged run, as the rules see it (`apply_rules`): what the summary's
    call tracking and the causes of a failure read."""
    results = list(results)
    return align(benchmark, results, _call_verdicts(_judged(judgements), results), cross_turn=cross_turn)


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

    Rules revise each turn's standing phase-1 judgement of the judge's (`arena_tui.verdicts`: a
    failed re-judge does not erase it; a person's verdict is not the judge's and stays over
    whatever they make); new revisions are numbered after the turn's newest one.
    """
    results = sorted(results, key=lambda r: r.turn_index)
    judgements = list(judgements)
    base = _judged(judgements)
    current = standing(judgements)
    al = align(benchmark, results, _call_verdicts(base, results), cross_turn=cross_turn)
    turns: dict[int, Turn] = {}
    for r in results:
        try:
            turns[r.turn_index] = benchmark.turn(r.turn_index)
        except KeyError:
            pass
    ctx = _Ctx(turns, al, base, {r.turn_index: r for r in results})
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
        ctx.final[idx] = scores
        cur = current[idx]
        if cur.machine is not None and scores == cur.machine.scores:
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
