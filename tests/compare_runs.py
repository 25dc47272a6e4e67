"""A constructed set of runs with hand-computed figures, recorded through the real Store.

`mini_bench` has four turns (turn 1 expects a call; turns 2 and 3 are scored on state_tracking).
The runs, and what the leaderboard must make of them (worked out by hand in the tests):

- gpt-realtime R1 (speed 1): all pass except turn 2's state_tracking (turn 0's re-judge failed, its first
  verdict stands); v2v 900/1500(tool)/1100/1300; its user audio placed on every turn, 150 ms of overlap on turn 3.
- gpt-realtime R2 (speed 1): turn 1 wrong call (tool fail), turn 2 empty response whose judge failed,
  turn 3 never ran (interrupted): v2v 1000/2500(tool).
- gpt-realtime R3 (speed 20): turn 2 fails state_tracking, turn 3 ended the session; v2v 50 each
  (must not reach the latency figures).
- gpt-realtime R4 on other_bench (no benchmark data): turn 0 pass, turn 1 never judged.
- sim R5 (simulator): all pass.
- gpt-realtime R6 (heuristic judge, config without speed): all pass.
- gpt-realtime R7: still recording (no run_ended).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from arena_tui.spine.events import (
    EMPTY_RESPONSE,
    DimensionScore,
    Interval,
    Judgement,
    Latencies,
    RunEnded,
    RunStarted,
    ToolCallRecord,
    TurnEnded,
    TurnResult,
)
from arena_tui.store import Store
from arena_tui.spine.benchmark import Benchmark, BenchmarkMeta, Tool, Turn

CORE = ["kb_grounding", "instruction_following", "tool_use_correct"]

MINI = Benchmark(
    meta=BenchmarkMeta(
        name="mini_bench",
        category_dimensions={"basic_qa": [], "tool_use": [], "long_range_memory": ["state_tracking"]},
    ),
    turns=[
        Turn(turn_index=0, input="Are you open Saturday?", golden_text="Yes, 9 to 4.", categories=["basic_qa"]),
        Turn(turn_index=1, input="Book me for Saturday.", golden_text="Booked.", categories=["tool_use"],
             required_function_call={"name": "book", "args": {"day": "saturday"}}, function_call_response={"ok": True}),
        Turn(turn_index=2, input="What day did I book?", golden_text="Saturday.", categories=["long_range_memory"],
             dimensions=[*CORE, "state_tracking"]),
        Turn(turn_index=3, input="And the time again?", golden_text="9 AM.", categories=["long_range_memory"],
             dimensions=[*CORE, "state_tracking"]),
    ],  # fmt: skip
    tools=[Tool(name="book")],
    system_prompt="You book bike repairs.",
)

P = "pass"
F = "fail"


@dataclass
class T:
    """One constructed turn: its verdicts (None = never judged), latency and what happened."""

    turn: int
    verdicts: dict[str, str] | None
    v2v: float | None = None
    calls: list[tuple[str, dict]] = field(default_factory=list)
    status: str = "ok"
    judge_error: bool = False
    leading_silence: float | None = None
    rejudge_error: bool = False  # a later revision whose judge failed (the verdict before it stands)
    overlap: float | None = None  # overlap_ms; set, the turn's user audio is placed on the timeline


def all_pass(turn: int, *, tool: bool = False, state: bool = False) -> dict[str, str]:
    v = {"kb_grounding": P, "instruction_following": P, "tool_use_correct": P if tool else "na", "turn_taking": P}
    if state:
        v["state_tracking"] = P
    return v


def events(run_id: str, model: str, bench: str, turns: list[T], *, config: dict, simulator: bool = False,
           heuristic: bool = False, indices: list[int] | None = None, status: str | None = "completed",
           provider: str | None = None) -> list:  # fmt: skip
    judge = "heuristic" if heuristic else "openai:gpt-5-mini"
    indices = indices if indices is not None else [t.turn for t in turns]
    provider = provider or ("sim" if simulator else "openai")
    evs: list = [RunStarted(run_id=run_id, t_ms=0, benchmark=bench, model=model, simulator=simulator,
                            provider=provider, turn_indices=indices, config=config)]  # fmt: skip
    t_ms = 100.0
    for t in turns:
        calls = [ToolCallRecord(call_id=f"{run_id}-{t.turn}-{n}", name=name, args=args, status="matched")
                 for n, (name, args) in enumerate(t.calls)]  # fmt: skip
        result = TurnResult(
            turn_index=t.turn, status=t.status, user_text=MINI.turn(t.turn).input if t.turn < 4 else f"turn {t.turn}",
            assistant_text=EMPTY_RESPONSE if t.status == "empty_response" else "reply", tool_calls=calls,
            sentinel=EMPTY_RESPONSE if t.status == "empty_response" else None,
            latencies=Latencies(voice_to_voice_ms=t.v2v, leading_silence_ms=t.leading_silence),
            **({"user_audio": Interval(start_ms=t_ms - 900, end_ms=t_ms - 500), "overlap_ms": t.overlap}
               if t.overlap is not None else {}),
        )  # fmt: skip
        evs.append(TurnEnded(run_id=run_id, t_ms=t_ms, turn_index=t.turn, result=result))
        if t.verdicts is not None:
            scores = {d: DimensionScore(verdict=v) for d, v in t.verdicts.items()}
            evs.append(Judgement(run_id=run_id, t_ms=t_ms + 1, turn_index=t.turn, judge=judge, heuristic=heuristic,
                                 scores=scores, error="judge timed out" if t.judge_error else None))  # fmt: skip
        if t.rejudge_error:
            evs.append(Judgement(run_id=run_id, t_ms=t_ms + 2, turn_index=t.turn, judge=judge, revision=2,
                                 heuristic=heuristic, error="re-judge: HTTP 503"))  # fmt: skip
        t_ms += 1000
    if status is not None:
        evs.append(RunEnded(run_id=run_id, t_ms=t_ms, status=status))
    return evs


def scenario() -> list[list]:
    s1 = {"speed": 1.0}
    r1 = [
        T(0, all_pass(0), 900, leading_silence=100, rejudge_error=True, overlap=0.0),
        T(1, all_pass(1, tool=True), 1500, calls=[("book", {"day": "saturday"})], leading_silence=200, overlap=0.0),
        T(2, {**all_pass(2, state=True), "state_tracking": F}, 1100, leading_silence=300, overlap=0.0),
        T(3, all_pass(3, state=True), 1300, leading_silence=400, overlap=150.0),
    ]
    r2 = [
        T(0, all_pass(0), 1000),
        T(1, {**all_pass(1, tool=True), "tool_use_correct": F}, 2500, calls=[("book", {"day": "sunday"})]),
        T(2, {"turn_taking": F}, None, status="empty_response", judge_error=True),
    ]
    r3 = [
        T(0, all_pass(0), 50),
        T(1, all_pass(1, tool=True), 50, calls=[("book", {"day": "saturday"})]),
        T(2, {**all_pass(2, state=True), "state_tracking": F}, 50),
        T(3, all_pass(3, state=True), 50, status="ended_session"),
    ]
    r4 = [T(0, all_pass(0), 800), T(1, None, 900)]
    r5 = [T(i, all_pass(i, tool=i == 1, state=i >= 2), 600, calls=[("book", {"day": "saturday"})] if i == 1 else [])
          for i in range(4)]  # fmt: skip
    r6 = [T(i, all_pass(i, tool=i == 1, state=i >= 2), 700, calls=[("book", {"day": "saturday"})] if i == 1 else [])
          for i in range(4)]  # fmt: skip
    return [
        events("r1", "gpt-realtime", "mini_bench", r1, config=s1),
        events("r2", "gpt-realtime", "mini_bench", r2, config=s1, indices=[0, 1, 2, 3], status="interrupted"),
        events("r3", "gpt-realtime", "mini_bench", r3, config={"speed": 20.0}),
        events("r4", "gpt-realtime", "other_bench", r4, config=s1),
        events("r5", "sim", "mini_bench", r5, config=s1, simulator=True),
        events("r6", "gpt-realtime", "mini_bench", r6, config={}, heuristic=True),
        events("r7", "gpt-realtime", "mini_bench", r1[:1], config=s1, indices=[0, 1, 2, 3], status=None),
    ]


def unjudged_run(run_id: str = "u1") -> list:
    """gpt-realtime on mini_bench with no judge at all (speed 1, v2v 800 ms each): "not judged", never 0 %."""
    return events(run_id, "gpt-realtime", "mini_bench", [T(i, None, 800) for i in range(4)], config={"speed": 1.0})


LONG_MODEL = "gemini-2.5-flash-native-audio-preview-12-2025"


def long_model_run(run_id: str = "g1") -> list:
    """A model with a long id on mini_bench (speed 1): turn 2 answered empty after retries, judged."""
    turns = [T(0, all_pass(0), 700), T(1, {**all_pass(1, tool=True), "kb_grounding": F}, 1900, calls=[("book", {"day": "saturday"})]),
             T(2, {"turn_taking": F}, None, status="empty_response"), T(3, all_pass(3, state=True), 1100)]  # fmt: skip
    return events(run_id, LONG_MODEL, "mini_bench", turns, config={"speed": 1.0}, provider="gemini")


async def record_scenario(path: Path, extra: list[list] | None = None) -> None:
    """Write the scenario (and `extra` runs after it) through the store's writer, one run after
    another (start order = id order)."""
    async with await Store.open(path) as store:
        for evs in scenario() + (extra or []):
            for ev in evs:
                store.submit(ev)
            await store.flush()


def write_data(root: Path) -> Path:
    """mini_bench as a benchmark folder under `root` (returned: what --data / data_dir takes)."""
    folder = root / "mini_bench"
    folder.mkdir(parents=True)
    (folder / "benchmark.json").write_text(MINI.meta.model_dump_json())
    (folder / "turns.jsonl").write_text("\n".join(t.model_dump_json(exclude_none=True) for t in MINI.turns) + "\n")
    (folder / "tools.json").write_text("[" + ",".join(t.model_dump_json() for t in MINI.tools) + "]")
    (folder / "system_prompt.txt").write_text(MINI.system_prompt)
    return root


def benchmark_for(name: str) -> Benchmark | None:
    return MINI if name == "mini_bench" else None
