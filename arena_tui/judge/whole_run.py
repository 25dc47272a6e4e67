"""The whole-run judgement: every turn of a run in one request, as the reference's judge sees a run.

The judge LLM realigns across turns itself (early and late calls, absorption, cascade) and answers
one judgement per turn, its realignment notes and its call tracking (`RunJudgeOutput`). Each turn's
verdicts become a phase-1 revision with scope "run" (turn_taking measured in code beside them); the
request's token usage, the judge's notes or its error go on one judgement with no turn. The code
rules (`phase2.apply_rules`, run by the caller) then check what code can decide and record, as
phase-2 revisions, where they overrule the judge. A turn the reply leaves out, or on which it
leaves "na" on a dimension the turn must be judged on (`left_out`), is a judge error for that turn
alone. Nothing here raises for a judge that fails: the failure is a judgement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import DimensionScore, Judgement, TokenUsage, TurnResult
from ..verdicts import LLM_DIMENSIONS, TURN_TAKING, counts, left_unjudged, must_judge
from . import limits
from .backends import JudgeBackend, JudgeRequest, RetryPolicy, judge_with_retries
from .prompt import PromptBuilder
from .rubric import JUDGE_VERSION, dimensions_for, turn_taking
from .schema import RUN_SCHEMA, RUN_SCHEMA_NAME, CallTrack, RunJudgeOutput, TurnVerdicts, judgement_flags


def judgeable(benchmark: Benchmark, results: Iterable[TurnResult]) -> list[tuple[Turn, TurnResult]]:
    """The turns a judge scores, in turn order: benchmark turns (no greeting) that count (`verdicts.counts`)."""
    out = []
    for r in sorted(results, key=lambda r: r.turn_index):
        turn = benchmark.find_turn(r.turn_index) if r.turn_index >= 0 else None
        if turn is not None and counts(r.status):
            out.append((turn, r))
    return out


def run_request(benchmark: Benchmark, pairs: list[tuple[Turn, TurnResult]], *, audio: bool,
                builder: PromptBuilder | None = None, timeout_s: float | None = None) -> JudgeRequest:
    """The one request of a whole-run judgement (`RUN_SCHEMA`, parsed into `RunJudgeOutput`)."""
    builder = builder or PromptBuilder(benchmark)
    dims = {t.turn_index: dimensions_for(t, audio=audio) for t, _ in pairs}
    coded = {r.turn_index: turn_taking(r) for _, r in pairs} if audio else {}
    return JudgeRequest(
        prefix=builder.prefix, history=builder.run_task(), target=builder.run_target(pairs, dims, coded),
        benchmark=benchmark, results=[r for _, r in pairs], turn_dimensions=dims,
        schema=RUN_SCHEMA, schema_name=RUN_SCHEMA_NAME, output=RunJudgeOutput, timeout_s=timeout_s,
    )


def tracking_text(tracks: Iterable[CallTrack]) -> str:
    parts = [f"{t.name} expected on turn {t.expected_turn}, "
             + ("never made" if t.actual_turn is None else f"made on turn {t.actual_turn}") + f" ({t.status})"
             for t in tracks]
    return "; ".join(parts)


def left_out(turn: Turn, result: TurnResult, scores: Mapping[str, DimensionScore]) -> str | None:
    """The judge error of a reply that left "na" on a dimension the turn must be judged on
    (`verdicts.must_judge`: IF and KB always, a listed category dimension, tool use where a call
    was expected or made), naming them and what it did say; None when it judged every one."""
    calls = bool(turn.expected_calls) or any(not c.is_duplicate for c in result.tool_calls)
    left = left_unjudged(scores, must_judge(turn.dimensions, calls=calls))
    if not left:
        return None
    said = ", ".join(f"{d} {s.verdict}" for d, s in scores.items() if d in LLM_DIMENSIONS)
    return (f"judge_error: the judge left {', '.join(left)} unjudged (na) on a turn judged on it; "
            f"no verdict on the turn (it said: {said})")


def turn_judgement(common: dict[str, Any], dims: list[str], coded: dict[str, DimensionScore], v: TurnVerdicts,
                   *, heuristic: bool, turn: Turn, result: TurnResult) -> Judgement:
    """One turn of the reply as a judgement: its verdicts on the turn's dimensions, the turn's
    commentary as each one's reasoning, and the flags the code rules read; a judge error when it
    left a dimension the turn must be judged on unjudged (`left_out`)."""
    scores = {d: DimensionScore(verdict=getattr(v, d), reasoning=v.reasoning) for d in dims if d in LLM_DIMENSIONS}
    if (error := left_out(turn, result, scores)) is not None:
        return Judgement(**common, scores=coded, error=error)
    scores.update(coded)
    return Judgement(**common, scores=scores, **judgement_flags(v, heuristic=heuristic))


async def judge_run(
    benchmark: Benchmark,
    results: Iterable[TurnResult],
    backend: JudgeBackend,
    *,
    run_id: str,
    revisions: Mapping[int | None, int] | None = None,
    audio: bool = True,
    t_ms: float = 0.0,
    policy: RetryPolicy | None = None,
    builder: PromptBuilder | None = None,
) -> list[Judgement]:
    """The whole-run judgement of `results`: one phase-1 judgement per judgeable turn (scope "run",
    numbered after `revisions`: turn -> its newest revision so far), then the run's own (no turn);
    nothing, and no request, when no turn can be judged."""
    pairs = judgeable(benchmark, results)
    if not pairs:
        return []  # nothing the judge could score: no request
    revisions = revisions or {}
    policy = policy or limits.run_policy()
    request = run_request(benchmark, pairs, audio=audio, builder=builder, timeout_s=policy.deadline_s)

    def common(turn: int | None) -> dict[str, Any]:
        return dict(run_id=run_id, t_ms=t_ms, turn_index=turn, judge=backend.name, revision=revisions.get(turn, 0) + 1,
                    phase=1, heuristic=backend.heuristic, judge_version=JUDGE_VERSION, scope="run")

    coded = {r.turn_index: {TURN_TAKING: turn_taking(r)} if audio else {} for _, r in pairs}
    try:
        outcome = await judge_with_retries(backend, request, policy)
        error = outcome.error
    except Exception as e:  # a bug in a backend must not lose the run's judgement either
        outcome, error = None, f"judge_error: {type(e).__name__}: {e}"
    if outcome is None or outcome.reply is None:
        out = [Judgement(**common(r.turn_index), scores=coded[r.turn_index], error=error) for _, r in pairs]
        return [*out, Judgement(**common(None), error=error, usage=outcome.usage if outcome else TokenUsage())]
    reply: RunJudgeOutput = outcome.reply.output  # type: ignore[assignment]
    by_turn: dict[int, TurnVerdicts] = {}
    for v in reply.final_judgments:
        by_turn.setdefault(v.turn, v)  # the first judgement of a turn stands; repeats are ignored
    out = []
    for turn, r in pairs:
        idx = r.turn_index
        v = by_turn.get(idx)
        if v is None:
            out.append(Judgement(**common(idx), scores=coded[idx],
                                 error=f"judge_error: the whole-run reply had no judgement for turn {idx}"))
        else:
            out.append(turn_judgement(common(idx), request.turn_dimensions[idx], coded[idx], v,
                                      heuristic=backend.heuristic, turn=turn, result=r))
    missing = [r.turn_index for _, r in pairs if r.turn_index not in by_turn]
    notes = [reply.realignment_notes.strip()]
    if reply.function_call_tracking:
        notes.append(f"call tracking: {tracking_text(reply.function_call_tracking)}")
    if missing:
        notes.append(f"no judgement for turns {missing}")
    run = Judgement(**common(None), usage=outcome.usage, notes="\n".join(n for n in notes if n) or None)
    return [*out, run]
