"""Which causes a failed turn gets (the list: `arena_tui.spine.causes`; docs/judging.md, "Causes").

Code decides what the run knows, for every turn that fails (the verdict that counts: the judge's,
a person's over it, `verdicts.standing`):
- its record: `ended_early`; else no answer at all (`no_answer`, `empty_reply`); a reply cut off
  that was no barge-in (`truncated`);
- the turn-taking facts, when turn_taking fails: each reason it fails, as `rubric.turn_taking_issues`
  names it (no answer, no audio, no timing, barge-in, overlap, reconnected, slow start);
- phase 2's call alignment, when tool use fails or a missed call's penalty landed on state
  tracking or ambiguity handling (its root cause): `missed_call`, `wrong_arguments`, `late_call`,
  `early_call` (expected here and made before, or made here for a later turn), `unsolicited_call`
  (also an extra call on a turn that expects others; only where tool use fails);
- `rotation_lost_context`, when a dimension the judge scores fails on a turn that ran in a session
  whose rotation replayed less than the history (messages dropped, or none replayed).
The judge names the rest when a dimension it scores fails: its structured `causes`, its flags
(`words_contradict_actions`; `fabricated_action` is an invented fact; the root cause of a missed
call: over-clarification, an unnecessary confirmation, forgotten state), or a person's causes
where the person named any. The offline heuristic names none: a failure it decided reads
`golden_mismatch`, all it can tell. A failed turn nobody gave a cause is `no_cause_given`.
A turn counted apart gets its apart cause (`lost_pace`), shown, never counted (`mix`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.causes import APART_CAUSES, NO_CAUSE_GIVEN, label, ordered
from arena_tui.spine.events import LOST_PACE, Judgement, SessionRotated, TurnResult
from ..verdicts import LLM_DIMENSIONS, TOOL, TURN_TAKING, Standing, standing, tally
from .phase2 import AH, ST, Alignment, alignment_of
from .rubric import answered, turn_taking_issues

_CALL_LINKS = {"missed": "missed_call", "wrong": "wrong_arguments", "late": "late_call", "early": "early_call"}
_ROOT_CAUSES = {"over_clarification", "forgotten_state", "unnecessary_confirmation"}  # the judge's root causes that are causes


def lossy_sessions(rotations: Iterable[SessionRotated]) -> frozenset[int]:
    """The sessions a rotation opened with less than the history: messages dropped, or none replayed."""
    return frozenset(r.to_session for r in rotations
                     if r.replayed.dropped_messages > 0 or r.replayed.strategy == "zero_context")


def _call_causes(result: TurnResult, al: Alignment, *, extras: bool) -> list[str]:
    idx = result.turn_index
    out = [_CALL_LINKS[lk.status] for lk in al.expecting(idx) if lk.status in _CALL_LINKS]
    if any(lk.status == "early" and lk.actual_turn == idx for lk in al.links):
        out.append("early_call")  # made here, for a later turn
    wrong = {lk.name for lk in al.expecting(idx) if lk.status == "wrong"}  # such a call is that one, made wrong
    names = {c.call_id: c.name for c in result.tool_calls}
    if extras and any(names.get(cid) not in wrong for cid in (*al.unsolicited.get(idx, ()), *al.extra.get(idx, ()))):
        out.append("unsolicited_call")
    return out


def _judged_causes(st: Standing[Judgement], failed: set[str], *, spoke: bool) -> list[str]:
    """What the judge (or the person over it) said of a failure of the dimensions it scores."""
    j = st.judgement
    if j is None or not failed & set(LLM_DIMENSIONS):
        return []
    out = list(j.causes)  # a person's where they named any (`verdicts.standing`), else the judge's
    if j.words_contradict_actions:
        out.append("words_contradict_actions")
    if j.fabricated_action:
        out.append("invented_fact")
    if j.root_cause in _ROOT_CAUSES:
        out.append(j.root_cause)
    judges = {d for d in failed & set(LLM_DIMENSIONS) if d not in st.human}  # decided by the judge, not a person
    if not out and spoke and st.machine is not None and st.machine.heuristic and judges - {TOOL}:
        out.append("golden_mismatch")  # word overlap is all the heuristic read (silence is no_answer's)
    return out


def turn_causes(result: TurnResult, st: Standing[Judgement] | None, al: Alignment | None = None,
                lossy: frozenset[int] = frozenset()) -> tuple[str, ...]:
    """The causes of one turn: () when it does not fail (or counts apart without a cause)."""
    if result.status == LOST_PACE:
        return (LOST_PACE,)
    failed = {d for d, v in st.scores.items() if v == "fail"} if st is not None else set()
    if st is None or not failed:
        return ()
    out: list[str] = []
    if result.status == "ended_early":
        out.append("ended_early")
    elif not answered(result):
        out.append("empty_reply" if result.status == "empty_response" else "no_answer")
    timing = [cause for cause, _ in turn_taking_issues(result)]
    if TURN_TAKING in failed:
        out += timing
    if result.interrupted and "barge_in" not in timing and "overlap" not in timing:
        out.append("truncated")
    root = st.judgement.root_cause if st.judgement is not None else None
    absorbed = (root == "over_clarification" and AH in failed) or (root == "forgotten_state" and ST in failed)
    if al is not None and (TOOL in failed or absorbed):  # a call's fault only where it was charged
        out += _call_causes(result, al, extras=TOOL in failed)
    if result.session in lossy and failed & (set(LLM_DIMENSIONS) - {TOOL}):
        out.append("rotation_lost_context")
    out += _judged_causes(st, failed, spoke=answered(result))
    return ordered(out) or (NO_CAUSE_GIVEN,)


def run_causes(benchmark: Benchmark | None, results: Iterable[TurnResult], judgements: Iterable[Judgement], *,
               rotations: Iterable[SessionRotated] = (), cross_turn: bool = True) -> dict[int, tuple[str, ...]]:
    """turn -> its causes, for every benchmark turn of the run that fails (by the verdict that
    counts) or counts apart with a cause; `benchmark` None: no call causes (nothing to align to)."""
    results = [r for r in results if r.turn_index >= 0]
    judgements = list(judgements)
    counted = tally(judgements, {r.turn_index: r.status for r in results})
    now = standing(judgements, judge=counted.judge)
    al = alignment_of(benchmark, results, judgements, cross_turn=cross_turn) if benchmark is not None else None
    lossy = lossy_sessions(rotations)
    out: dict[int, tuple[str, ...]] = {}
    for r in sorted(results, key=lambda r: r.turn_index):
        idx = r.turn_index
        if idx in counted.rows or r.status == LOST_PACE:
            if causes := turn_causes(r, now.get(idx) if idx in counted.rows else None, al, lossy):
                out[idx] = causes
    return out


def mix(runs: Iterable[Mapping[int, Sequence[str]]]) -> dict[str, int]:
    """cause -> the failed turns it was given, over runs (each run's `run_causes`), most first (then
    in list order): a model's failure mix. A turn counted apart is no failure: its cause is left out."""
    n: Counter[str] = Counter(c for causes in runs for turn in causes.values() for c in set(turn) if c not in APART_CAUSES)
    order = {c: i for i, c in enumerate(ordered(n))}
    return dict(sorted(n.items(), key=lambda kv: (-kv[1], order[kv[0]])))


def causes_text(causes: Iterable[str]) -> str:
    """`missed call, over clarification`: how a list shows a turn's causes."""
    return ", ".join(label(c) for c in causes)
