"""Rehydrated runs: every turn in a fresh session seeded with the golden turns before it,
asserted at the peer (the simulator, the xAI fake, the Gemini Live fake), and recorded as a
rehydrated run the judge scores without turn-taking and without cross-turn realignment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.judge import HeuristicJudge, JudgeWorker
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from arena_tui.verdicts import TURN_TAKING
from benchmarks.registry import load_benchmark
from runners.base import get_runner
from runners.engine import CONTINUE_PROMPT, run_benchmark

GREETING = "Greet the user briefly."


def spoken(text: str) -> str:
    return " ".join(text.split())


async def rehydrated(tmp_path: Path, model: str, turns: list[int], **cfg):
    bench = load_benchmark("demo_bench", None)
    config = RunSettings(model=model, turns=turns, mode="rehydrated", **cfg)
    runner = get_runner(model)
    async with await Store.open(tmp_path / f"{model}.db") as store:
        bus = EventBus()
        rec = store.start_recording(bus)
        judge = JudgeWorker(bench, HeuristicJudge(), bus, "rh")
        judging = judge.start()
        events = bus.subscribe()
        await run_benchmark(bench, config, bus, "rh", provider=runner)
        await judging
        await store.flush()
        bus.close()
        await rec
        run = await store.get_run("rh")
        results = {r.turn_index: r for r in await store.turn_results("rh")}
        judgements = await store.latest_judgements("rh")
    return bench, runner, list(events.drain()), run, results, judgements


def assert_recorded(events, run, results, judgements, turns: list[int], parallel: int) -> None:
    if lost := [i for i in turns if i in results and results[i].status == "lost_pace"]:  # the product's flag, rightly
        pytest.fail(f"this machine lost pace on turn(s) {lost}: a fact about the machine, never a verdict "
                    "(scripts/test.sh runs the test again)")
    assert run.status == "completed" and run.turns_done == len(turns)
    assert (run.config["mode"], run.config["parallel"], run.config["turn_taking_supported"]) == ("rehydrated", parallel, False)
    assert all(results[i].status == "ok" for i in turns), {i: results[i].status for i in turns}
    assert [e.kind for e in events].count("run_started") == 1
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    assert set(judgements) == set(turns) and all(TURN_TAKING not in j.scores for j in judgements.values())
    opened = sorted(e.session for e in events if e.kind == "session_opened")
    assert opened == list(range(1, len(turns) + 1))  # one fresh session per turn, numbered once


async def test_simulator_sessions_get_the_golden_history_of_the_turns_before(tmp_path: Path) -> None:
    turns = [0, 1, 2, 3]
    bench, runner, events, run, results, judgements = await rehydrated(tmp_path, "sim", turns, speed=10.0)  # 20x: 1 ms of wall time per chunk, a busy 2-core machine lost pace
    assert_recorded(events, run, results, judgements, turns, parallel=1)
    sessions = runner.fake.sessions
    assert len(sessions) == len(turns)
    seen: list[int] = []
    for rec in sessions:
        users = [i["content"][0]["text"] for i in rec.items if i.get("role") == "user"]
        # a session with history is asked nothing (no kickoff, no greeting); the one without
        # (turn 0's) is greeted as a fresh session is. The session's own live turn (its audio,
        # calls and reply) follows the seed.
        assert CONTINUE_PROMPT not in users
        if users == [GREETING]:
            seed: list = []
        else:
            last = max(n for n, i in enumerate(rec.items) if i.get("role") == "assistant")
            seed = rec.items[: last + 1]
        users = [i["content"][0]["text"] for i in seed if i.get("role") == "user"]
        k = len(users)  # the session of turn k was given turns 0..k-1
        before = bench.turns[:k]
        assert users == [t.input for t in before]
        assert [i["content"][0]["text"] for i in seed if i.get("role") == "assistant"] == [t.golden_text for t in before]
        calls = [(i["name"], json.loads(i["arguments"])) for i in seed if i.get("type") == "function_call"]
        assert calls == [(c.name, c.args) for t in before for c in t.expected_calls]
        outputs = [json.loads(i["output"]) for i in seed if i.get("type") == "function_call_output"]
        assert outputs == [r for t in before for r in t.expected_responses]
        seen.append(k)
    assert sorted(seen) == turns


async def test_grok_fake_sessions_get_the_golden_history(tmp_path: Path) -> None:
    turns = [0, 1, 2, 3]
    bench, runner, events, run, results, judgements = await rehydrated(tmp_path, "grok-realtime", turns, speed=4.0, fake=True, fake_timing="instant")
    assert_recorded(events, run, results, judgements, turns, parallel=1)
    t2 = bench.turn(2)
    histories = [[{**h, **({"text": spoken(h["text"])} if "text" in h else {})} for h in c.history] for c in runner.fake.connections]
    assert histories[0] == [{"role": "user", "text": GREETING}]
    assert histories[1] == [  # the history only: no kickoff, and no reply asked for
        {"role": "user", "text": bench.turn(0).input},
        {"role": "assistant", "text": spoken(bench.turn(0).golden_text)},
    ]
    assert histories[3][4:] == [
        {"role": "user", "text": t2.input},
        {"role": "function_call", "call_id": "golden_2_0", "name": "check_repair_slots", "args": t2.expected_calls[0].args},
        {"role": "function_call_output", "call_id": "golden_2_0", "output": t2.function_call_response},
        {"role": "assistant", "text": spoken(t2.golden_text)},
    ]
    for c in runner.fake.connections[1:]:
        assert -1 not in c.replies, c.replies  # the fake gave no kickoff reply: every reply is a turn's


async def test_gemini_fake_sessions_get_the_golden_history(tmp_path: Path) -> None:
    turns = [1, 3]
    bench, runner, events, run, results, judgements = await rehydrated(
        tmp_path, "gemini-native-audio", turns, speed=4.0, fake=True, fake_timing="instant"
    )
    assert_recorded(events, run, results, judgements, turns, parallel=1)
    t2 = bench.turn(2)
    args = json.dumps(t2.expected_calls[0].args, ensure_ascii=False)
    result = json.dumps(t2.expected_responses[0], ensure_ascii=False)
    seeded = sorted(([(h["role"], h["text"]) for h in c.history] for c in runner.fake.connections), key=len)
    t0, t1 = bench.turn(0), bench.turn(1)
    assert seeded[0] == [("user", t0.input), ("model", t0.golden_text), ("user", CONTINUE_PROMPT)]
    assert seeded[1] == [
        ("user", t0.input), ("model", t0.golden_text), ("user", t1.input), ("model", t1.golden_text),
        ("user", t2.input),
        ("model", f"[Called function check_repair_slots with args {args}]"),
        ("user", f"[Function check_repair_slots returned {result}]"),
        ("model", t2.golden_text),
        ("user", CONTINUE_PROMPT),
    ]


async def test_simulator_rehydrated_turns_run_two_at_once(tmp_path: Path) -> None:
    """--parallel 2: the turns' sessions overlap in time, each still seeded with only its own past."""
    turns = [0, 1, 2, 3]
    bench, runner, events, run, results, judgements = await rehydrated(tmp_path, "sim", turns, speed=10.0, parallel=2)
    assert_recorded(events, run, results, judgements, turns, parallel=2)
    sessions = runner.fake.sessions
    assert len(sessions) == len(turns)
    seeded = sorted(sum(1 for i in rec.items if i.get("role") == "assistant" and i.get("content")
                        and i["content"][0]["text"] in [t.golden_text for t in bench.turns]) for rec in sessions)
    assert seeded == turns  # turn k's session got the k golden replies before it, never another's
    # two at once: some turn started before the previous one ended
    started = {e.turn_index: e.t_ms for e in events if e.kind == "turn_started"}
    ended = {e.turn_index: e.t_ms for e in events if e.kind == "turn_ended"}
    assert any(started[k + 1] < ended[k] for k in turns[:-1])
