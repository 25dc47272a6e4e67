"""Builders for judge tests: tiny benchmarks, turn results and phase-1 judgements."""

from __future__ import annotations

from typing import Any

from arena_tui.events import CallVerdict, DimensionScore, Judgement, Latencies, ToolCallRecord, TurnResult
from benchmarks.model import Benchmark, BenchmarkMeta, ExpectedCall, Turn

CORE = ["kb_grounding", "instruction_following", "tool_use_correct"]


def turn(i: int, calls: Any = None, dims: list[str] | None = None, golden: str = "ok") -> Turn:
    return Turn(turn_index=i, input=f"user {i}", golden_text=golden, required_function_call=calls,
                dimensions=dims or list(CORE))


def bench(*turns: Turn) -> Benchmark:
    return Benchmark(meta=BenchmarkMeta(name="tiny"), turns=list(turns), tools=[], system_prompt="")


def call(fn: str, cid: str, **args: Any) -> ToolCallRecord:
    return ToolCallRecord(call_id=cid, name=fn, args=args, status="matched")


def result(i: int, *calls: ToolCallRecord, text: str = "ok", **kw: Any) -> TurnResult:
    kw.setdefault("latencies", Latencies(pipeline_ttfb_ms=800.0, voice_to_voice_ms=900.0))
    return TurnResult(turn_index=i, status="ok", user_text=f"user {i}", assistant_text=text,
                      tool_calls=list(calls), **kw)


def judged(
    i: int, verdicts: dict[str, str], *, root: str | None = None, revision: int = 1,
    fabricated: bool | None = False, unexecuted: bool | None = False, verdicts_on_calls: list[CallVerdict] = (),  # type: ignore[assignment]
    error: str | None = None,
) -> Judgement:
    return Judgement(
        run_id="run1", t_ms=0.0, turn_index=i, judge="fake", revision=revision, phase=1,
        scores={d: DimensionScore(verdict=v, reasoning="llm") for d, v in verdicts.items()},  # type: ignore[arg-type]
        root_cause=root, fabricated_action=fabricated, unexecuted_reference=unexecuted,
        call_verdicts=list(verdicts_on_calls), error=error,
    )


def reg(sid: str) -> ExpectedCall:
    return ExpectedCall(name="register", args={"name": "Jo", "session_id": sid})
