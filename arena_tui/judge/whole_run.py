"""The whole-run judgement: every turn of a run in one request, as the reference's judge sees a run.

The judge LLM realigns across turns itself (early and late calls, absorption, cascade) and answers
one judgement per turn, its realignment notes and its call tracking (`RunJudgeOutput`). Each turn's
verdicts become a phase-1 revision with scope "run" (turn_taking measured in code beside them); the
request's token usage, the judge's notes or its error go on one judgement with no turn. The code
rules (`phase2.apply_rules`, run by the caller) then check what code can decide and record, as
phase-2 revisions, where they overrule the judge. A turn the reply leaves out, or on which it
leaves "na" on a dimension the turn must be judged on (`left_out`), is a judge error for that turn
alone. Nothing here raises for a judge that fails: the failure is a judgement.

A run whose reply cannot fit its model's output cap, or whose prompt and reply cannot fit its window
(`budget.misfit`), is judged in consecutive parts, one request each, one after another
(`plan_parts`): each holds its own turns in full and the judgeable turns before them as the
conversation so far, and asks verdicts for its own turns only. The parts' verdicts are merged turn
by turn, so the code rules run over them as over one reply; a part that fails errors its own turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import DimensionScore, Judgement, TokenUsage, TurnResult
from ..verdicts import LLM_DIMENSIONS, TURN_TAKING, counts, left_unjudged, must_judge
from . import limits
from . import budget
from .backends import JudgeBackend, JudgeRequest, Outcome, RetryPolicy, judge_with_retries
from .budget import turns_text
from .errors import PermanentError
from .model_limits import ModelLimits
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
                builder: PromptBuilder | None = None, timeout_s: float | None = None,
                earlier: list[TurnResult] | None = None, part: tuple[int, int] | None = None) -> JudgeRequest:
    """The request of a whole-run judgement (`RUN_SCHEMA`, parsed into `RunJudgeOutput`): every turn
    of `pairs`; or part `part` = (i, n) of a split run, the judgeable turns before it as `earlier`."""
    builder = builder or PromptBuilder(benchmark)
    dims = {t.turn_index: dimensions_for(t, audio=audio) for t, _ in pairs}
    coded = {r.turn_index: turn_taking(r) for _, r in pairs} if audio else {}
    turns = turns_text([t.turn_index for t, _ in pairs])
    return JudgeRequest(
        prefix=builder.prefix, history=builder.run_task(earlier or [], part, turns),
        target=builder.run_target(pairs, dims, coded),
        benchmark=benchmark, results=[r for _, r in pairs], turn_dimensions=dims, earlier=list(earlier or []),
        schema=RUN_SCHEMA, schema_name=RUN_SCHEMA_NAME, output=RunJudgeOutput, timeout_s=timeout_s,
        part=f"part {part[0]} of {part[1]}" if part else "",
    )


def plan_parts(benchmark: Benchmark, pairs: list[tuple[Turn, TurnResult]], limits: ModelLimits | None, *, audio: bool,
               builder: PromptBuilder | None = None, timeout_s: float | None = None) -> list[JudgeRequest]:
    """The requests that judge `pairs`: one when it fits the model (`budget.misfit`), else the fewest
    consecutive parts that each fit, each seeing the judgeable turns before it: of near-equal size
    (each with the most headroom) where those fit, else as many turns each as fit in turn order (a
    small window: later parts carry a longer conversation before them). PermanentError when one turn
    alone does not fit (nothing is sent)."""
    builder = builder or PromptBuilder(benchmark)
    whole = run_request(benchmark, pairs, audio=audio, builder=builder, timeout_s=timeout_s)
    if limits is None or (why := budget.misfit(whole, limits)) is None:
        return [whole]

    def part(a: int, b: int, i: int = 0, k: int = 0) -> JudgeRequest:
        return run_request(benchmark, pairs[a:b], audio=audio, builder=builder, timeout_s=timeout_s,
                           earlier=[r for _, r in pairs[:a]], part=(i, k))

    spans: list[tuple[int, int]] = []  # greedily: each part as long as fits
    a = 0
    while a < len(pairs):
        if (w := budget.misfit(part(a, a + 1), limits)) is not None:
            raise PermanentError(f"not even one turn a request fits: the request judging "
                                 f"{turns_text([pairs[a][0].turn_index])}: {w} (the whole run: {why})")
        b = a + 1
        while b < len(pairs) and budget.misfit(part(a, b + 1), limits) is None:
            b += 1
        spans.append((a, b))
        a = b
    n, k = len(pairs), len(spans)
    even = [(i * n // k, (i + 1) * n // k) for i in range(k)]
    parts = [part(a, b, i + 1, k) for i, (a, b) in enumerate(even)]
    if any(budget.misfit(p, limits) is not None for p in parts):
        parts = [part(a, b, i + 1, k) for i, (a, b) in enumerate(spans)]
    return parts


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

    def common(turn: int | None) -> dict[str, Any]:
        return dict(run_id=run_id, t_ms=t_ms, turn_index=turn, judge=backend.name, revision=revisions.get(turn, 0) + 1,
                    phase=1, heuristic=backend.heuristic, judge_version=JUDGE_VERSION, scope="run")

    coded = {r.turn_index: {TURN_TAKING: turn_taking(r)} if audio else {} for _, r in pairs}
    try:
        requests = plan_parts(benchmark, pairs, await backend.model_limits(), audio=audio, builder=builder,
                              timeout_s=policy.deadline_s)
    except PermanentError as e:  # not even one turn fits the model: nothing is sent
        refused = f"judge_error: {backend.name}: {e}"
        out = [Judgement(**common(r.turn_index), scores=coded[r.turn_index], error=refused) for _, r in pairs]
        return [*out, Judgement(**common(None), error=refused)]
    answers = [(request, *await _ask(backend, request, policy)) for request in requests]  # one after another: the
    # later parts read the prompt cache the earlier ones wrote

    out, notes, errors, usage = [], [], [], TokenUsage()
    turn_of = {r.turn_index: turn for turn, r in pairs}
    if len(requests) > 1:
        spans = ", ".join(turns_text(budget.turns_of(r)) for r in requests)
        notes.append(f"{SPLIT_NOTE} {len(requests)} requests ({spans}): one reply cannot hold every turn's "
                     f"verdicts within {backend.name}'s limits")
    for request, outcome, error in answers:
        reply = outcome.reply.output if outcome is not None and outcome.reply else None
        assert reply is None or isinstance(reply, RunJudgeOutput)  # what a whole-run request asks for (`output`)
        if outcome is not None:
            usage = _add(usage, outcome.usage)
        label = f"{request.part} ({turns_text(budget.turns_of(request))}): " if request.part else ""
        if reply is None:
            errors.append(f"{label}{error}" if label else str(error))
            out += [Judgement(**common(r.turn_index), scores=coded[r.turn_index], error=error) for r in request.results]
            continue
        by_turn: dict[int, TurnVerdicts] = {}
        for v in reply.final_judgments:
            by_turn.setdefault(v.turn, v)  # the first judgement of a turn stands; repeats (and other turns) are ignored
        for r in request.results:
            idx = r.turn_index
            given = by_turn.get(idx)
            if given is None:
                out.append(Judgement(**common(idx), scores=coded[idx],
                                     error=f"judge_error: the whole-run reply had no judgement for turn {idx}"))
            else:
                out.append(turn_judgement(common(idx), request.turn_dimensions[idx], coded[idx], given,
                                          heuristic=backend.heuristic, turn=turn_of[idx], result=r))
        said = [reply.realignment_notes.strip()]
        if reply.function_call_tracking:
            said.append(f"call tracking: {tracking_text(reply.function_call_tracking)}")
        if missing := [r.turn_index for r in request.results if r.turn_index not in by_turn]:
            said.append(f"no judgement for turns {missing}")
        notes += [f"{label}{line}" for line in said if line]
    run = Judgement(**common(None), usage=usage, notes="\n".join(notes) or None, error="; ".join(errors) or None)
    return [*out, run]


SPLIT_NOTE = "judged in"  # the first words of a split run's notes: "judged in 3 requests (turns 0-24, …)"


def requests_said(notes: str | None) -> str:
    """How many requests a whole-run judgement took, as its notes say: "3 requests", else "one request"."""
    first = (notes or "").split("\n", 1)[0]
    if first.startswith(SPLIT_NOTE + " "):
        return first.removeprefix(SPLIT_NOTE + " ").split(" (", 1)[0]
    return "one request"


async def _ask(backend: JudgeBackend, request: JudgeRequest, policy: RetryPolicy) -> tuple[Outcome | None, str | None]:
    """One request's outcome and its error; a bug in a backend must not lose the run's judgement either."""
    try:
        outcome = await judge_with_retries(backend, request, policy)
        return outcome, outcome.error
    except Exception as e:
        return None, f"judge_error: {type(e).__name__}: {e}"


def _add(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(input_tokens=a.input_tokens + b.input_tokens, output_tokens=a.output_tokens + b.output_tokens,
                      cached_input_tokens=a.cached_input_tokens + b.cached_input_tokens)
