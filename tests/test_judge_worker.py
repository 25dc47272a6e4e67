"""JudgeWorker on a real bus and a real SQLite store; re-judging; the `judge` command."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.cli import main
from arena_tui.spine.events import Judgement, Latencies, RunEnded, RunStarted, ToolCallRecord, TurnEnded, TurnResult
from arena_tui.judge import HeuristicJudge, JudgeWorker, rejudge_turn
from arena_tui.judge.backends import RetryPolicy
from arena_tui.judge.openai_judge import OpenAIJudge
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from arena_tui.spine.benchmark import Benchmark

from .fakes.openai_chat import FakeOpenAI

RUN = "run-judge-1"


@pytest.fixture(scope="module")
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark(shared_data / "conversation_bench")


def results(b: Benchmark) -> list[TurnResult]:
    lat = Latencies(pipeline_ttfb_ms=950.0, voice_to_voice_ms=1200.0, leading_silence_ms=160.0)

    def r(i: int, calls: list[ToolCallRecord] | None = None, **kw) -> TurnResult:
        t = b.turn(i)
        return TurnResult(turn_index=i, status="ok", user_text=t.input, assistant_text=t.golden_text,
                          tool_calls=calls or [], latencies=lat, **kw)

    exp10 = b.turn(10).expected_calls[0]
    return [
        r(8),
        r(9, [ToolCallRecord(call_id="c9", name="vote_for_session", args={"name": "Jennifer Smith",
                                                                        "session_id": "1"}, status="not_available")]),
        r(10, [ToolCallRecord(call_id="c10", name=exp10.name, args=exp10.args, status="matched",
                              response={"status": "success"})]),
        r(11, overlap_ms=250.0),  # missed call, and talked over the user
    ]


async def wait_for_judgement(sub, turn: int) -> Judgement:
    async def go() -> Judgement:
        async for ev in sub:
            if ev.kind == "judgement" and ev.turn_index == turn:
                return ev
        raise AssertionError("bus closed")

    return await asyncio.wait_for(go(), timeout=60)


@pytest.fixture
def openai_fake():
    server = FakeOpenAI().start()
    yield server
    server.stop()


async def record_run(conv: Benchmark, db: Path, backend) -> tuple[list[Judgement], JudgeWorker]:
    bus = EventBus()
    store = await Store.open(db)
    recorder = store.start_recording(bus)
    worker = JudgeWorker(conv, backend, bus, RUN, policy=RetryPolicy(base_delay_s=0.01))
    task = worker.start()
    watch = bus.subscribe(accept=lambda e: e.kind == "judgement")
    bus.publish(RunStarted(run_id=RUN, t_ms=0, benchmark=conv.name, model="fake-model", provider="simulator",
                           simulator=True, turn_indices=[8, 9, 10, 11]))
    greeting = TurnResult(turn_index=-1, status="ok", user_text="Greet the user briefly.", assistant_text="Hi!")
    bus.publish(TurnEnded(run_id=RUN, t_ms=500.0, turn_index=-1, result=greeting))  # never judged
    streamed = []
    for k, res in enumerate(results(conv)):
        bus.publish(TurnEnded(run_id=RUN, t_ms=1000.0 * (k + 1), turn_index=res.turn_index, result=res))
        # streaming: this turn's judgement arrives before the next turn is even published
        streamed.append(await wait_for_judgement(watch, res.turn_index))
    bus.publish(RunEnded(run_id=RUN, t_ms=9000.0, status="completed"))
    await asyncio.wait_for(task, timeout=60)
    await store.flush()
    bus.close()
    await recorder
    await store.close()
    return streamed, worker


async def test_worker_streams_provisional_scores_then_judges_the_completed_run_as_a_whole(conv, openai_fake, tmp_path):
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key="sk-test")
    streamed, worker = await record_run(conv, tmp_path / "a.db", backend)
    await backend.aclose()
    assert [j.turn_index for j in streamed] == [8, 9, 10, 11] and all(j.phase == 1 for j in streamed)
    assert all(j.scope == "live" and j.provisional for j in streamed)
    assert streamed[3].scores["turn_taking"].verdict == "fail"  # 250 ms overlap, decided in code
    # the wire: one request per turn as it arrived, then ONE request for the whole run
    names = [r["response_format"]["json_schema"]["name"] for r in openai_fake.chat_requests]
    assert names == ["turn_judgement"] * 4 + ["run_judgement"]
    whole = openai_fake.chat_requests[-1]["messages"]
    assert whole[0]["content"] == openai_fake.chat_requests[0]["messages"][0]["content"]  # the same cached prefix
    assert [whole[2]["content"].count(f"## Turn {i}\n") for i in (8, 9, 10, 11)] == [1, 1, 1, 1]
    async with await Store.open(tmp_path / "a.db") as store:
        latest = await store.latest_judgements(RUN)
        all9 = await store.judgements(RUN, 9)
        run_level = [j for j in await store.judgements(RUN) if j.turn_index is None]
    assert -1 not in latest and all(not j.provisional for j in latest.values())
    assert (latest[8].scope, latest[8].phase, latest[10].phase) == ("run", 1, 1)
    assert latest[10].scores["tool_use_correct"].verdict == "pass"
    assert (latest[9].phase, latest[9].rule, latest[9].scores["tool_use_correct"].verdict) == (
        2, "tool_use_applicability", "fail")  # code overruled the judge's pass: on record
    assert [(j.revision, j.phase, j.scope) for j in all9] == [(1, 1, "live"), (2, 2, "live"), (3, 1, "run"), (4, 2, "run")]
    rules11 = [j.rule for j in await _all(tmp_path / "a.db", 11)]
    assert rules11 == [None, "realignment", None, "realignment"]
    assert latest[11].scores["tool_use_correct"].verdict == "fail"
    assert len(run_level) == 1 and run_level[0].usage.input_tokens > 1000 and not run_level[0].error
    assert "fake judge: nothing realigned" in (run_level[0].notes or "")
    s = worker.summary()
    assert (s.dimensions["tool_use_correct"].passes, s.dimensions["tool_use_correct"].denominator) == (1, 3)
    assert [(t.expected_turn, t.status) for t in s.tracking] == [(10, "matched"), (11, "missed")]


async def _all(db: Path, turn: int) -> list[Judgement]:
    async with await Store.open(db) as store:
        return await store.judgements(RUN, turn)


async def test_rejudge_turn_adds_revisions_and_keeps_old_ones(conv, tmp_path):
    await record_run(conv, tmp_path / "b.db", HeuristicJudge())
    async with await Store.open(tmp_path / "b.db") as store:
        before = await store.judgements(RUN, 10)
        end = max(ev.t_ms for _, ev in await store.events(RUN))
        j = await rejudge_turn(store, RUN, 10, HeuristicJudge(), benchmark=conv)
        after = await store.judgements(RUN, 10)
        with pytest.raises(LookupError, match="no turn 99"):
            await rejudge_turn(store, RUN, 99, HeuristicJudge(), benchmark=conv)
    assert j.revision == before[-1].revision + 1 and j.heuristic and j.judge == "heuristic"
    assert len(after) == len(before) + 1 and after[: len(before)] == before
    assert j.scores["tool_use_correct"].verdict == "pass"
    assert j.t_ms == end > 0  # on the run's own timeline, after all it judges (never 0.00s after 84 s of events)


def test_judge_command_rejudges_from_the_store(conv, tmp_path, shared_data, capsys, monkeypatch):
    db = tmp_path / "c.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    code = main(["--db", str(db), "--data", str(shared_data), "judge", RUN[:9], "--turn", "9"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "turn 9 r" in out and "[heuristic]" in out and "HEURISTIC" in out
    assert "tool_use_correct" in out and "strict" in out
    assert main(["--db", str(db), "--data", str(shared_data), "judge", RUN, "--turn", "99"]) == 2
    assert "no turn 99" in capsys.readouterr().err
    assert main(["--db", str(db), "judge", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["--db", str(db), "judge", RUN, "--judge", "openai"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


async def test_wait_returns_when_a_judging_finished_but_its_done_callback_has_not_run() -> None:
    """Regression: gathering already-done tasks never yields, so the worker must drop them itself."""
    worker = JudgeWorker.__new__(JudgeWorker)  # only the task bookkeeping is exercised
    worker._tasks = set()

    async def judged() -> None:
        return None

    task = asyncio.get_running_loop().create_task(judged())
    worker._tasks.add(task)
    task.add_done_callback(worker._tasks.discard)
    await asyncio.sleep(0)  # the task finishes; its discard callback is only scheduled
    assert task.done() and task in worker._tasks
    await asyncio.wait_for(worker.wait(), 5)
    assert not worker._tasks
