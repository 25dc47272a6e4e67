"""Constructed demo_bench runs for the counting rule (tests/test_counting.py, tests/test_app_counting.py).

Each is an event stream as the engine and the judge publish it, recorded through the real Store:
- `interrupted_run`: ten turns planned, three played and judged, the run stopped (`S`) during the
  fourth (recorded `interrupted`, and judged by an older judge that did not skip it), six never played.
- `unanswered_run`: every turn lost to an infrastructure failure, or every turn `no_response`.
- `paced_run`: three turns at speed 1, the second's input sent late (the engine's `pacing` notice).
- `sim_run`: a simulator run, optionally with injected faults and judged by the heuristic, an LLM, or both.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from arena_tui.spine.events import (
    PACE_LOST,
    DimensionScore,
    ErrorEvent,
    Judgement,
    Latencies,
    RunEnded,
    RunResumed,
    RunStarted,
    ReplaySummary,
    TurnEnded,
    TurnResult,
)
from arena_tui.store import Store

BENCH = "demo_bench"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
LLM = "openai:gpt-5-mini"
PASSING = {"kb_grounding": "pass", "instruction_following": "pass", "tool_use_correct": "na", "turn_taking": "pass"}


def started(run_id: str, turns: list[int], *, model: str = "gpt-realtime", simulator: bool = False,
            config: dict | None = None, wall: datetime = T0) -> RunStarted:
    return RunStarted(run_id=run_id, t_ms=0.0, benchmark=BENCH, model=model, provider="sim" if simulator else "openai",
                      simulator=simulator, turn_indices=turns, config={"speed": 1.0, **(config or {})}, speed=1.0,
                      wall_time=wall)  # fmt: skip


def ended(run_id: str, turn: int, status: str = "ok", v2v: float | None = 1000.0, t_ms: float | None = None,
          error: str | None = None) -> TurnEnded:
    result = TurnResult(turn_index=turn, status=status, user_text=f"user {turn}", assistant_text="reply",  # type: ignore[arg-type]
                        latencies=Latencies(voice_to_voice_ms=v2v), error=error)
    return TurnEnded(run_id=run_id, t_ms=t_ms if t_ms is not None else 1000.0 * (turn + 1), turn_index=turn,
                     result=result)


def judged(run_id: str, turn: int, scores: dict[str, str] | None = None, *, judge: str = LLM,
           heuristic: bool = False) -> Judgement:
    return Judgement(run_id=run_id, t_ms=1000.0 * (turn + 1) + 1, turn_index=turn, judge=judge, heuristic=heuristic,
                     scores={d: DimensionScore(verdict=v) for d, v in (scores or PASSING).items()})  # type: ignore[arg-type]


def interrupted_run(run_id: str = "stopped") -> list:
    """Turns 0-2 judged (turn 1 fails kb_grounding), turn 3 stopped under way (and judged FAIL by
    a judge that did not skip it), turns 4-9 never played."""
    evs: list = [started(run_id, list(range(10)))]
    for t in range(3):
        evs += [ended(run_id, t), judged(run_id, t, {**PASSING, "kb_grounding": "fail"} if t == 1 else None)]
    evs += [ended(run_id, 3, "interrupted", v2v=900.0),
            judged(run_id, 3, {**PASSING, "kb_grounding": "fail", "turn_taking": "fail"}),
            RunEnded(run_id=run_id, t_ms=5000.0, status="interrupted", reason="stopped by the user")]
    return evs


def unanswered_run(run_id: str, status: str = "infra_error") -> list:
    """Every turn of four ended `status`: the model never answered (judged all the same by the heuristic)."""
    why = "endpoint unreachable: connection refused" if status == "infra_error" else None
    evs: list = [started(run_id, [0, 1, 2, 3], model="local:llama3.2")]
    for t in range(4):
        evs += [ended(run_id, t, status, v2v=None, error=why), judged(run_id, t, {**PASSING, "kb_grounding": "fail"},
                                                                        judge="heuristic", heuristic=True)]
    evs.append(RunEnded(run_id=run_id, t_ms=5000.0, status="failed", reason="no turn got an answer"))
    return evs


def paced_run(run_id: str = "paced") -> list:
    """Three turns at speed 1: v2v 1000, 1584 (its input went out 211 ms late), 1200."""
    return [
        started(run_id, [0, 1, 2]),
        ended(run_id, 0, v2v=1000.0), judged(run_id, 0),
        ErrorEvent(run_id=run_id, t_ms=1900.0, turn_index=1, where=PACE_LOST,
                   message="input audio went out up to 211 ms (wall clock) behind its schedule"),
        ended(run_id, 1, v2v=1584.0), judged(run_id, 1),
        ended(run_id, 2, v2v=1200.0), judged(run_id, 2),
        RunEnded(run_id=run_id, t_ms=4000.0, status="completed"),
    ]  # fmt: skip


def sim_run(run_id: str, *, faults: str | None = None, judge: str = "heuristic", mixed: bool = False,
            wall: datetime = T0) -> list:
    """A simulator run of turns 0-1; `mixed`: turn 1 re-judged by an LLM."""
    config = {"faults": faults} if faults else {}
    heuristic = judge == "heuristic"
    evs: list = [started(run_id, [0, 1], model="sim", simulator=True, config=config, wall=wall)]
    for t in (0, 1):
        evs += [ended(run_id, t), judged(run_id, t, judge=judge, heuristic=heuristic)]
    if mixed:
        evs.append(judged(run_id, 1, judge=LLM).model_copy(update={"revision": 2}))
    evs.append(RunEnded(run_id=run_id, t_ms=3000.0, status="completed"))
    return evs


def resumed_run(run_id: str = "resumed") -> list:
    """Ran 0:37 (turns 0-1), sat idle 10 minutes interrupted, then ran 1:50 more (turns 2-3)."""
    return [
        started(run_id, [0, 1, 2, 3]),
        ended(run_id, 0, t_ms=20_000.0), ended(run_id, 1, t_ms=36_000.0),
        RunEnded(run_id=run_id, t_ms=37_000.0, status="interrupted", wall_time=T0 + timedelta(seconds=37)),
        RunResumed(run_id=run_id, t_ms=37_001.0, from_turn=2, turns=[2, 3], replayed_turns=[0, 1],
                   replayed=ReplaySummary(strategy="full_history")),
        ended(run_id, 2, t_ms=90_000.0), ended(run_id, 3, t_ms=146_000.0),
        RunEnded(run_id=run_id, t_ms=147_000.0, status="completed", wall_time=T0 + timedelta(seconds=37 + 600 + 110)),
    ]  # fmt: skip


async def record(db: Path, *runs: list) -> None:
    """Each run's events through the store's writer, one run after another."""
    async with await Store.open(db) as store:
        for evs in runs:
            for ev in evs:
                store.submit(ev)
            await store.flush()
