"""Builders for judge tests: tiny benchmarks, turn results and phase-1 judgements."""

from __future__ import annotations

from typing import Any

from pathlib import Path

from arena_tui.spine.events import (
    CallVerdict,
    DimensionScore,
    Judgement,
    Latencies,
    RunEnded,
    RunStarted,
    ToolCallRecord,
    TurnEnded,
    TurnResult,
)
from arena_tui.store import Store
from arena_tui.spine.benchmark import Benchmark, BenchmarkMeta, ExpectedCall, Turn

CORE = ["kb_grounding", "instruction_following", "tool_use_correct"]


def turn(i: int, calls: Any = None, dims: list[str] | None = None, golden: str = "ok") -> Turn:
    return Turn(turn_index=i, input=f"user {i}", golden_text=golden, required_function_call=calls,
                dimensions=dims or list(CORE))


def bench(*turns: Turn) -> Benchmark:
    return Benchmark(meta=BenchmarkMeta(name="tiny"), turns=list(turns), tools=[], system_prompt="")


def call(fn: str, cid: str, **args: Any) -> ToolCallRecord:
    return ToolCallRecord(call_id=cid, name=fn, args=args, status="matched")


def result(i: int, *calls: ToolCallRecord, text: str = "ok", status: str = "ok", **kw: Any) -> TurnResult:
    kw.setdefault("latencies", Latencies(pipeline_ttfb_ms=800.0, voice_to_voice_ms=900.0))
    return TurnResult(turn_index=i, status=status, user_text=f"user {i}", assistant_text=text,  # type: ignore[arg-type]
                      tool_calls=list(calls), **kw)


def judged(
    i: int, verdicts: dict[str, str], *, root: str | None = None, revision: int = 1,
    fabricated: bool | None = False, unexecuted: bool | None = False, verdicts_on_calls: list[CallVerdict] = (),  # type: ignore[assignment]
    error: str | None = None, words: bool | None = False,
) -> Judgement:
    return Judgement(
        run_id="run1", t_ms=0.0, turn_index=i, judge="fake", revision=revision, phase=1,
        scores={d: DimensionScore(verdict=v, reasoning="llm") for d, v in verdicts.items()},  # type: ignore[arg-type]
        root_cause=root, fabricated_action=fabricated, unexecuted_reference=unexecuted,
        call_verdicts=list(verdicts_on_calls), error=error, words_contradict_actions=words,
    )


def reg(sid: str) -> ExpectedCall:
    return ExpectedCall(name="register", args={"name": "Jo", "session_id": sid})


# A recorded run whose re-judge failed (tests/test_judge_verdicts.py, tests/test_app_flows.py).
RUN = "verdicts-1"
HTTP_500 = "judge_error after 4 attempts: HTTP 500"


def _scores(**verdicts: str) -> dict[str, DimensionScore]:
    return {d: DimensionScore(verdict=v, reasoning="r") for d, v in verdicts.items()}  # type: ignore[arg-type]


def rejudge_failed_run() -> list:
    """Two demo turns: turn 0 passes, then its re-judge errors; turn 1 fails kb_grounding."""
    ok = dict(instruction_following="pass", tool_use_correct="na", turn_taking="pass")
    evs: list = [RunStarted(run_id=RUN, t_ms=0, benchmark="demo_bench", model="sim", provider="simulator",
                            simulator=True, turn_indices=[0, 1])]
    for i in (0, 1):
        res = TurnResult(turn_index=i, status="ok", user_text=f"user {i}", assistant_text="reply",
                         latencies=Latencies(pipeline_ttfb_ms=700.0, voice_to_voice_ms=800.0))
        evs.append(TurnEnded(run_id=RUN, t_ms=1000.0 * (i + 1), turn_index=i, result=res))
    evs += [
        Judgement(run_id=RUN, t_ms=2100, turn_index=0, judge="heuristic", heuristic=True,
                  scores=_scores(kb_grounding="pass", **ok)),
        Judgement(run_id=RUN, t_ms=2200, turn_index=1, judge="heuristic", heuristic=True,
                  scores=_scores(kb_grounding="fail", **ok)),
        # the re-judge of turn 0 failed: only the code-computed turn_taking, and the error
        Judgement(run_id=RUN, t_ms=3000, turn_index=0, judge="heuristic", heuristic=True, revision=2,
                  scores=_scores(turn_taking="pass"), error=HTTP_500),
        RunEnded(run_id=RUN, t_ms=3100, status="completed"),
    ]
    return evs


async def record_rejudge_failed(db: Path) -> None:
    async with await Store.open(db) as store:
        for ev in rejudge_failed_run():
            store.submit(ev)
        await store.flush()


# Its pass rates: the failed re-judge erases nothing.
EXPECTED = {"kb_grounding": (1, 2), "instruction_following": (2, 2), "turn_taking": (2, 2)}
