"""The whole-run judgement (one request per run, through the real openai client against a loopback
fake), rehydrated runs judged turn by turn in isolation, and the verdicts code may never make:
an unanswered turn passing instruction_following."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.spine.judges import DEFAULT_MODELS
from arena_tui.judge import HeuristicJudge, rejudge_turn
from arena_tui.judge.backends import RetryPolicy
from arena_tui.judge.openai_judge import OpenAIJudge
from arena_tui.judge.whole_run import judge_run
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import EMPTY_RESPONSE, Latencies, RunEnded, RunStarted, TurnEnded, TurnResult
from arena_tui.store import Store
from arena_tui.verdicts import standing, tally
from arena_tui.judge import JudgeWorker
from benchmarks.registry import load_benchmark
from arena_tui.spine.benchmark import Benchmark

from .fakes.judge_answers import all_fail, run_answer
from .fakes.openai_chat import FakeOpenAI
from .test_judge_worker import RUN, record_run, results

FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.02)
IF = "instruction_following"


@pytest.fixture(scope="module")
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark(shared_data / "conversation_bench")


def schema_names(server: FakeOpenAI) -> list[str]:
    return [r["response_format"]["json_schema"]["name"] for r in server.chat_requests]


def test_judge_command_sends_one_request_for_the_whole_run_and_the_per_turn_prompt_for_one_turn(
        conv, tmp_path, shared_data, capsys, monkeypatch):
    db = tmp_path / "w.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-whole-run")
    server = FakeOpenAI().start()
    try:
        base = ["--db", str(db), "--data", str(shared_data), "judge", RUN, "--judge", "openai",
                "--judge-base-url", server.base_url]
        assert main(base) == 0
        out = capsys.readouterr().out
        assert schema_names(server) == ["run_judgement"]  # one request, every turn in it
        req = server.chat_requests[0]
        assert req["response_format"]["json_schema"]["strict"] is True
        system, task, run = (m["content"] for m in req["messages"])
        assert "Judge every turn of the run that follows" in task
        assert run.startswith("# The run") and [run.count(f"## Turn {i}\n") for i in (8, 9, 10, 11)] == [1] * 4
        assert "turn-taking (measured in code): fail: user/bot overlap 250 ms" in run
        assert "Judge exactly these turns, one entry each: [8, 9, 10, 11]" in run
        assert "# Knowledge base (all of it was in the assistant's prompt" in system
        assert "turn 8 r" in out and "turn 11 r" in out and "judged by openai:" in out
        assert "  judge's notes: fake judge: nothing realigned" in out.splitlines()
        assert main(base + ["--turn", "10"]) == 0
        capsys.readouterr()
        assert schema_names(server) == ["run_judgement", "turn_judgement"]
        one = server.chat_requests[1]["messages"]
        assert "# Target turn 10" in one[2]["content"] and "[turn 9]" in one[1]["content"]  # its history
    finally:
        server.stop()
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT judge, input_tokens FROM judgements WHERE turn_index IS NULL ORDER BY seq").fetchall()
    # the live run's heuristic whole-run judgement, then this one: the request's tokens on the run's own
    assert [j for j, _ in rows] == ["heuristic", f"openai:{DEFAULT_MODELS['openai']}"] and rows[1][1] > 1000


async def test_a_turn_the_whole_run_reply_leaves_out_is_a_judge_error_for_that_turn_alone(conv, tmp_path):
    def drop_turn_9(text: str) -> dict:
        answer = run_answer(text)
        answer["final_judgments"] = [j for j in answer["final_judgments"] if j["turn"] != 9]
        return answer

    server = FakeOpenAI(answer=drop_turn_9).start()
    backend = OpenAIJudge("gpt-test", base_url=server.base_url, api_key="sk-test")
    try:
        out = await judge_run(conv, results(conv), backend, run_id="r", policy=FAST)
    finally:
        await backend.aclose()
        server.stop()
    by_turn = {j.turn_index: j for j in out}
    assert sorted(by_turn, key=lambda t: -1 if t is None else t) == [None, 8, 9, 10, 11]
    assert by_turn[9].error == "judge_error: the whole-run reply had no judgement for turn 9"
    assert by_turn[9].scores["turn_taking"].verdict == "pass"  # measured in code: kept
    assert all(by_turn[i].error is None and by_turn[i].scope == "run" for i in (8, 10, 11))
    assert "no judgement for turns [9]" in (by_turn[None].notes or "")


async def test_the_heuristic_judge_answers_a_whole_run_request(conv):
    out = await judge_run(conv, results(conv), HeuristicJudge(), run_id="r")
    turns = {j.turn_index: j for j in out if j.turn_index is not None}
    assert sorted(turns) == [8, 9, 10, 11] and all(j.heuristic and not j.error for j in turns.values())
    assert turns[10].scores["tool_use_correct"].verdict == "pass"
    assert turns[8].scores[IF].verdict == "pass" and "golden-word recall" in turns[8].scores[IF].reasoning


async def test_a_rehydrated_run_is_judged_turn_by_turn_with_the_golden_turns_as_its_only_history(conv, tmp_path):
    db = tmp_path / "r.db"
    rs = results(conv)
    rs[1] = rs[1].model_copy(update={"assistant_text": "ACTUAL-REPLY-OF-TURN-9"})  # must not reach turn 10's history
    async with await Store.open(db) as store:
        store.submit(RunStarted(run_id="rh", t_ms=0, benchmark=conv.name, model="m", provider="p",
                                turn_indices=[8, 9, 10, 11], config={"mode": "rehydrated", "turn_taking_supported": False}))
        for r in rs:
            store.submit(TurnEnded(run_id="rh", t_ms=1.0, turn_index=r.turn_index, result=r))
        store.submit(RunEnded(run_id="rh", t_ms=2.0, status="completed"))
        await store.flush()
        server = FakeOpenAI().start()
        backend = OpenAIJudge("gpt-test", base_url=server.base_url, api_key="sk-test")
        try:
            out = await rejudge_turn(store, "rh", None, backend, benchmark=conv, policy=FAST)
        finally:
            await backend.aclose()
            server.stop()
    assert schema_names(server) == ["turn_judgement"] * 4  # one request per turn: no cross-turn credit
    assert {j.scope for j in out} == {"isolated"} and all(j.error is None for j in out)
    histories = {int(r["messages"][2]["content"].split("# Target turn ")[1].split()[0]): r["messages"][1]["content"]
                 for r in server.chat_requests}
    assert "golden turns this turn's session was seeded with" in histories[10]
    assert conv.turn(9).golden_text in histories[10] and "ACTUAL-REPLY-OF-TURN-9" not in histories[10]
    assert "[turn 10]" not in histories[10] and "[turn 7]" in histories[10]
    assert "rehydrated" in server.chat_requests[0]["messages"][2]["content"]


async def test_a_judge_failing_everything_passes_no_turn_on_instruction_following(conv, tmp_path):
    """The issue's case: with a judge that fails every dimension of every turn, main's only IF pass
    was the turn that was never answered (turn-taking leniency in code). Now none passes, live or
    in the whole-run judgement."""
    lat = Latencies(pipeline_ttfb_ms=950.0, voice_to_voice_ms=1200.0)
    answered = TurnResult(turn_index=8, status="ok", user_text=conv.turn(8).input, assistant_text="Sure.",
                          latencies=lat)
    silent = TurnResult(turn_index=9, status="no_response", user_text=conv.turn(9).input,
                        assistant_text=EMPTY_RESPONSE, sentinel=EMPTY_RESPONSE, retries=3)
    server = FakeOpenAI(answer=all_fail).start()
    backend = OpenAIJudge("gpt-test", base_url=server.base_url, api_key="sk-test")
    bus = EventBus()
    worker = JudgeWorker(conv, backend, bus, "nf", policy=FAST, run_policy=FAST)
    task = worker.start()
    try:
        bus.publish(RunStarted(run_id="nf", t_ms=0, benchmark=conv.name, model="m", provider="p", turn_indices=[8, 9]))
        for r in (answered, silent):
            bus.publish(TurnEnded(run_id="nf", t_ms=1.0, turn_index=r.turn_index, result=r))
        bus.publish(RunEnded(run_id="nf", t_ms=2.0, status="completed"))
        await asyncio.wait_for(task, 60)
    finally:
        await backend.aclose()
        server.stop()
    assert schema_names(server) == ["turn_judgement", "turn_judgement", "run_judgement"]
    now = standing(worker.judgements)
    assert now[9].judgement.scope == "run" and now[9].scores[IF] == "fail"
    assert now[9].scores["turn_taking"] == "fail"
    assert tally(worker.judgements).dimensions[IF] == (0, 2)
    live = [j for j in worker.judgements if j.scope == "live"]
    assert tally(live).dimensions[IF] == (0, 2)  # nor in the provisional scores


def test_the_demo_turn_that_got_no_answer_does_not_pass_instruction_following(tmp_path, monkeypatch, capsys):
    """`run demo_bench --model sim --faults "1:no_response*" --judge heuristic`: main passed turn 1's
    instruction_following by its turn-taking leniency (IF 3/3 for the run)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "d.db"
    assert main(["run", "demo_bench", "--model", "sim", "--faults", "1:no_response*", "--judge", "heuristic",
                 "--turns", "0,1", "--speed", "20", "--headless", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "1  no_response" in out
    lines = out.splitlines()
    live = [ln for ln in lines if ln.startswith("    turn 1 r1 heuristic: ")]
    assert live and live[0].endswith(" · provisional"), lines  # scored live: the whole-run judgement follows
    assert "    whole run r1 heuristic: judged in one request (offline, no LLM)" in lines
    summary = out[out.index("demo_bench judged by heuristic"):]
    assert "instruction_following          1/2" in summary, summary
    with sqlite3.connect(db) as c:
        rows = c.execute("""SELECT j.revision, s.verdict FROM judgements j JOIN judgement_scores s
                            ON s.run_id = j.run_id AND s.seq = j.seq
                            WHERE j.turn_index = 1 AND s.dimension = 'instruction_following'""").fetchall()
    assert rows and {v for _, v in rows} == {"fail"}  # no revision ever passed it


def test_live_scores_show_as_provisional_until_the_whole_run_revision_lands(conv):
    from rich.console import Console

    from arena_tui.run_view import RunState
    from arena_tui.widgets.judgement_text import judgement_renderable
    from arena_tui.widgets.turn_table import verdict_cell

    from .judge_helpers import judged

    def shown(renderable) -> str:
        console = Console(width=200, record=True)
        console.print(renderable)
        return console.export_text()

    state = RunState("run1")
    r = results(conv)[0]
    state.apply(TurnEnded(run_id="run1", t_ms=1.0, turn_index=8, result=r))
    live = judged(8, {"kb_grounding": "pass", "instruction_following": "pass"}).model_copy(update={"scope": "live"})
    state.apply(live)
    row = state.turns[8]
    assert row.provisional and verdict_cell(row).plain == "PASS~"
    assert "provisional: scored live" in shown(judgement_renderable(row))
    whole = live.model_copy(update={"scope": "run", "revision": 2})
    state.apply(whole)
    assert not row.provisional and verdict_cell(row).plain == "PASS"
    text = shown(judgement_renderable(row))
    assert "provisional" not in text.split("history")[0] and "(whole run)" in text
    assert "rev 1 (fake, phase 1, live, provisional)" in text


async def test_a_whole_run_attempt_may_take_longer_than_a_turn_request(conv):
    """A whole run's reply takes minutes: its attempt gets the run deadline, not the backend's
    per-turn request timeout (here 0.5 s against a judge that answers in 1 s)."""
    import time

    from .fakes.judge_answers import all_pass

    def slow(text: str) -> dict:
        time.sleep(1.0)
        return all_pass(text)

    server = FakeOpenAI(answer=slow).start()
    backend = OpenAIJudge("gpt-test", base_url=server.base_url, api_key="sk-test", timeout_s=0.5)
    try:
        out = await judge_run(conv, results(conv), backend, run_id="r",
                              policy=RetryPolicy(attempts=1, deadline_s=10.0, what="whole-run"))
    finally:
        await backend.aclose()
        server.stop()
    assert len(server.chat_requests) == 1 and all(j.error is None for j in out), [j.error for j in out]
    assert await judge_run(conv, [], HeuristicJudge(), run_id="r") == []  # nothing to judge: no request
