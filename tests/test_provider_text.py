"""Text models end to end: the real Pipecat `OpenAILLMService` (its real `openai` client) against
a local OpenAI-compatible chat server scripted from demo_bench, through `run_benchmark`, into the
real store. Assertions are on what the server RECEIVED (the exact conversation of each request,
replayed history included), on the events on the bus and on what the store holds."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import EMPTY_RESPONSE, MODEL_ENDED_SESSION, MODEL_ENDED_SESSION_EARLY
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from runners.base import get_runner
from runners.engine import RunError, run_benchmark
from runners.fakes.script import Script, ScriptedReply, ToolCallSpec, script_for_benchmark
from runners.providers.text_chat.fake import ChatFault, OpenAIChatFake
from runners.providers.text_chat.runner import MODEL_ENV, OTHER_KEY_ENV, TextChatRunner
from tests.provider_runs import RecordedRun, quiet_loguru, record_run

FAST = {"backoff_ms": 10.0}


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


@pytest.fixture
async def text_run(tmp_path: Path):
    """Runs whose store stays open until the test ends (tests read or re-judge it)."""
    stores: list[Store] = []

    async def go(bench, config: RunSettings, runner: TextChatRunner, before=None) -> RecordedRun:
        store = await Store.open(tmp_path / f"arena{len(stores)}.db")
        stores.append(store)
        return await record_run(bench, config, runner, store, before=before)

    yield go
    for s in stores:
        await s.close()


def convo(messages: list[dict[str, Any]]) -> list[tuple]:
    """A request's conversation, comparable: (role, text) / ("call", name, args) / ("tool", payload)."""
    out: list[tuple] = []
    for m in messages:
        if m["role"] == "system":
            continue
        if m["role"] == "tool":
            out.append(("tool", json.loads(m["content"])))
        elif m.get("tool_calls"):
            for c in m["tool_calls"]:
                out.append(("call", c["function"]["name"], json.loads(c["function"]["arguments"])))
        else:
            out.append((m["role"], m["content"]))
    return out


def qa(bench, i: int) -> list[tuple]:
    t = bench.turn(i)
    return [("user", t.input), ("assistant", t.golden_text)]


def with_call(bench, i: int) -> list[tuple]:
    t = bench.turn(i)
    exp = t.expected_calls[0]
    return [("user", t.input), ("call", exp.name, exp.args), ("tool", t.expected_responses[0]), ("assistant", t.golden_text)]


# ---------------------------------------------------------------------------- the full path


async def test_multi_turn_run_with_tools_a_500_and_a_dropped_connection(demo, text_run):
    """Turn 2's tool re-prompt gets a 500, turn 3's first request loses its connection mid-stream:
    each is retried on a new session that carries the whole conversation so far, tool calls and
    their scripted payloads included, and every turn is recorded ok with its tool records."""
    runner = TextChatRunner()
    turns = [0, 1, 2, 3]
    config = RunSettings(model="gpt-4.1", fake=True, turns=turns, watchdog=FAST)

    async def start(config, benchmark):
        await TextChatRunner.start(runner, config, benchmark)
        runner.fake.faults = [
            ChatFault(kind="status", status=500, reply=2, phase="tool"),
            ChatFault(kind="drop", reply=3, phase="user", after_chunks=2),
        ]

    runner.start = start  # type: ignore[method-assign]  # the real start, plus the faults
    run = await text_run(demo, config, runner)
    fake = runner.fake

    # what the store holds
    results = {r.turn_index: r for r in await run.store.turn_results(run.run_id)}
    assert sorted(results) == turns
    for i in turns:
        r = results[i]
        assert r.status == "ok", (i, r.status, r.error)
        assert r.assistant_text == demo.turn(i).golden_text
        assert r.latencies.provider_ttfb_ms is not None and r.latencies.provider_ttfb_ms > 0
        assert r.latencies.voice_to_voice_ms is None and r.latencies.pipeline_ttfb_ms is None
        assert r.user_audio is None and r.tokens.get("input_tokens", 0) > 0
    for i in (2, 3):
        t = demo.turn(i)
        [call] = results[i].tool_calls
        assert (call.name, call.args, call.status, call.response) == (
            t.expected_calls[0].name, t.expected_calls[0].args, "matched", t.expected_responses[0]
        )
    assert (results[2].retries, results[2].reconnects, results[2].session) == (1, 1, 2)
    assert (results[3].retries, results[3].reconnects, results[3].session) == (1, 1, 3)
    assert results[0].session == results[1].session == 1

    # the events: run_started marks the modality; each failure is an error, a retry and a rotation
    [started] = run.kinds("run_started")
    assert started.config["modality"] == "text" and started.provider == "text" and started.simulator is True
    assert "our clock" in started.config["labels"]["provider_ttfb_ms"]
    assert [e.reason for e in run.kinds("retry")] == ["failed: error", "failed: disconnect"]
    rot = run.kinds("session_rotated")
    assert [(e.turn_index, e.reason, e.from_session, e.to_session) for e in rot] == [(2, "error", 1, 2), (3, "disconnect", 2, 3)]
    assert (rot[0].replayed.strategy, rot[0].replayed.messages, rot[0].replayed.tool_calls) == ("full_history", 4, 0)
    assert (rot[1].replayed.messages, rot[1].replayed.tool_calls) == (6, 1)
    assert [(e.reason, e.session) for e in run.kinds("reconnected")] == [("error", 2), ("disconnect", 3)]
    assert any("500" in e.message for e in run.kinds("error", 2))
    deltas = "".join(e.text for e in run.kinds("transcript_delta", 1) if e.role == "assistant")
    assert deltas == demo.turn(1).golden_text  # streamed in pieces, on the bus as they came
    assert [e.kind for e in run.events][-1] == "run_ended" and run.kinds("run_ended")[0].status == "completed"

    # what the server received
    faulted = [q for q in fake.requests if q.fault]
    assert [(q.reply, q.phase, q.fault) for q in faulted] == [(2, "tool", "status:500"), (3, "user", "drop")]
    after_500 = fake.requests[fake.requests.index(faulted[0]) + 1]
    assert after_500.phase == "user" and convo(after_500.messages) == qa(demo, 0) + qa(demo, 1) + [("user", demo.turn(2).input)]
    followup = fake.requests[fake.requests.index(after_500) + 1]
    assert convo(followup.messages)[-2:] == [("call", "check_repair_slots", {"date": "2025-05-06"}), ("tool", demo.turn(2).expected_responses[0])]
    after_drop = fake.requests[fake.requests.index(faulted[1]) + 1]
    assert convo(after_drop.messages) == qa(demo, 0) + qa(demo, 1) + with_call(demo, 2) + [("user", demo.turn(3).input)]
    last = fake.requests[-1]
    assert last.phase == "tool" and last.tool_results()[-1]["content"] == demo.turn(3).expected_responses[0]
    for q in fake.requests:
        assert q.auth_present and q.model == "gpt-4.1" and q.messages[0] == {"role": "system", "content": demo.system_prompt}
        assert {t["function"]["name"] for t in q.tools} == {t.name for t in demo.tools}


async def test_history_budget_trims_the_replay_and_says_so(demo, text_run):
    """Over `history_budget_chars` at a turn boundary: a new session gets tool items first, then the
    most recent Q&A that fits, and session_rotated reports exactly that."""
    runner = TextChatRunner()
    budget = len(json.dumps({"date": "2025-05-06"})) + len("check_repair_slots") * 2 + len(
        json.dumps(demo.turn(2).expected_responses[0])
    ) + len(demo.turn(2).input) + len(demo.turn(2).golden_text)
    config = RunSettings(model="gpt-4.1-mini", fake=True, turns=[0, 1, 2, 3], watchdog=FAST,
                       rotation={"history_budget_chars": budget})
    run = await text_run(demo, config, runner)
    rot = run.kinds("session_rotated")
    assert rot and rot[0].reason == "context_budget" and rot[0].turn_index == 3
    s = rot[0].replayed
    assert (s.strategy, s.tool_calls, s.messages, s.dropped_messages) == ("tool_priority", 1, 2, 4)
    first_of_3 = next(q for q in runner.fake.requests if q.reply == 3)
    assert convo(first_of_3.messages) == with_call(demo, 2) + [("user", demo.turn(3).input)]
    assert first_of_3.model == "gpt-4.1-mini"
    results = {r.turn_index: r for r in await run.store.turn_results(run.run_id)}
    assert [results[i].status for i in range(4)] == ["ok"] * 4 and results[3].session == 2


async def test_a_request_that_hangs_times_out_and_is_retried_on_a_new_session(demo, text_run):
    runner = TextChatRunner()
    config = RunSettings(model="gpt-4.1", fake=True, turns=[0, 1], watchdog={"backoff_ms": 10, "extra_ms": 1500})

    async def start(config, benchmark):
        await TextChatRunner.start(runner, config, benchmark)
        runner.fake.faults = [ChatFault(kind="stall", reply=1, delay_s=30)]

    runner.start = start  # type: ignore[method-assign]
    run = await text_run(demo, config, runner)
    r1 = (await run.store.turn_results(run.run_id))[1]
    assert (r1.status, r1.retries, r1.reconnects, r1.assistant_text) == ("ok", 1, 1, demo.turn(1).golden_text)
    [rot] = run.kinds("session_rotated")
    assert (rot.reason, rot.replayed.messages) == ("timeout", 2)
    stalled, retried = [q for q in runner.fake.requests if q.reply == 1]
    assert stalled.fault == "stall" and convo(retried.messages) == qa(demo, 0) + [("user", demo.turn(1).input)]


# ---------------------------------------------------------------------------- statuses


async def test_empty_replies_are_retried_then_recorded_with_the_sentinel(demo, text_run, monkeypatch):
    script = Script(key="user_turn", replies=[
        ScriptedReply(user_transcript=demo.turn(0).input, text=""),
        ScriptedReply(user_transcript=demo.turn(1).input, text="Forty-five dollars."),
    ])
    async with OpenAIChatFake(script) as fake:
        runner = TextChatRunner()
        config = RunSettings(model="text", base_url=fake.base_url, turns=[0, 1], watchdog={"backoff_ms": 10, "max_retries": 2})
        run = await text_run(demo, config, runner)
        r0, r1 = await run.store.turn_results(run.run_id)
        assert (r0.status, r0.assistant_text, r0.sentinel, r0.retries) == ("empty_response", EMPTY_RESPONSE, EMPTY_RESPONSE, 2)
        assert r0.reconnects == 0 and len(run.kinds("retry", 0)) == 2
        assert (r1.status, r1.assistant_text) == ("ok", "Forty-five dollars.")
        # each retry re-asks the same conversation, not a pile of repeated user messages
        asks = [convo(q.messages) for q in fake.requests]
        assert asks[:3] == [[("user", demo.turn(0).input)]] * 3
        assert asks[3] == [("user", demo.turn(0).input), ("user", demo.turn(1).input)]
        assert fake.requests[0].model == "gpt-4.1"


async def test_end_session_ends_the_run_early(demo, text_run):
    script = Script(key="user_turn", replies=[
        ScriptedReply(user_transcript=demo.turn(0).input, tool_calls=[ToolCallSpec(name="end_session")], text="Goodbye!"),
    ])
    async with OpenAIChatFake(script) as fake:
        config = RunSettings(model="gpt-4o-mini", base_url=fake.base_url, turns=[0, 1, 2], watchdog=FAST)
        run = await text_run(demo, config, TextChatRunner())
        r = {x.turn_index: x for x in await run.store.turn_results(run.run_id)}
        assert (r[0].status, r[0].sentinel, r[0].tool_calls[0].name) == ("ended_session", MODEL_ENDED_SESSION, "end_session")
        assert [(r[i].status, r[i].assistant_text) for i in (1, 2)] == [("ended_early", MODEL_ENDED_SESSION_EARLY)] * 2
        assert fake.requests[-1].tool_results() == [{"call_id": "call_fake0001", "content": {"status": "success"}}]
        ended = run.kinds("run_ended")[0]
        assert (ended.status, ended.reason) == ("completed", "model ended the session")  # its call is an answer: no failure


async def test_cancel_records_the_turn_under_way_as_interrupted(demo, tmp_path):
    runner = TextChatRunner()
    bus = EventBus()
    store = await Store.open(tmp_path / "c.db")
    store.start_recording(bus)
    sub = bus.subscribe()
    config = RunSettings(model="gpt-4.1", fake=True, turns=[0, 1], watchdog=FAST)

    async def start(config, benchmark):
        await TextChatRunner.start(runner, config, benchmark)
        runner.fake.faults = [ChatFault(kind="stall", reply=1, delay_s=30)]

    runner.start = start  # type: ignore[method-assign]
    task = asyncio.create_task(run_benchmark(demo, config, bus, provider=runner))
    while not any(q.reply == 1 for q in (runner.fake.requests if runner.fake else [])):
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await store.flush()
    events = sub.drain()
    r = {x.turn_index: x for x in await store.turn_results(events[0].run_id)}
    assert (r[0].status, r[1].status) == ("ok", "interrupted")
    assert events[-1].kind == "run_ended" and events[-1].status == "interrupted"
    assert (await store.get_run(events[0].run_id)).status == "interrupted"
    await store.close()


async def test_a_rejected_key_stops_the_run_and_names_it(demo, tmp_path):
    """401 is not worth retrying: the run fails at once, naming the status, the endpoint and the model;
    the turn before stays recorded, the turn under way is recorded infra_error (never the model's)."""
    runner = TextChatRunner()
    config = RunSettings(model="gpt-5-mini", fake=True, turns=[0, 1, 2], watchdog=FAST)

    async def start(config, benchmark):
        await TextChatRunner.start(runner, config, benchmark)
        runner.fake.faults = [ChatFault(kind="status", status=401, reply=1)]

    runner.start = start  # type: ignore[method-assign]
    store = await Store.open(tmp_path / "f.db")
    bus = EventBus()
    store.start_recording(bus)
    sub = bus.subscribe()
    with pytest.raises(RunError, match=r"turn 1: auth refused: http://127\.0\.0\.1:\d+/v1\S* answered HTTP 401 .*'gpt-5-mini'"):
        await run_benchmark(demo, config, bus, provider=runner)
    await store.flush()
    assert [q.reply for q in runner.fake.requests] == [0, 1]  # not retried
    events = sub.drain()
    r = {x.turn_index: x for x in await store.turn_results(events[0].run_id)}
    assert (r[0].status, r[1].status, sorted(r)) == ("ok", "infra_error", [0, 1])  # never the model's
    assert "401" in (r[1].error or "")
    assert events[-1].kind == "run_ended" and events[-1].status == "failed"
    await store.close()


# ---------------------------------------------------------------------------- judge, CLI, keys


async def test_text_runs_are_not_scored_on_turn_taking(demo):
    from arena_tui.judge import JudgeWorker, make_backend

    runner = TextChatRunner()
    config = RunSettings(model="gpt-4.1", fake=True, turns=[0, 2], watchdog=FAST)
    run_id = "textjudge0001"
    bus = EventBus()
    worker = JudgeWorker(demo, make_backend("heuristic"), bus, run_id)
    task = worker.start()
    await run_benchmark(demo, config, bus, run_id=run_id, provider=runner)
    await asyncio.wait_for(task, timeout=60)
    assert worker.judgements and all("turn_taking" not in j.scores for j in worker.judgements)
    assert {j.turn_index for j in worker.judgements} == {0, 2}



async def test_rejudging_a_stored_text_run_adds_no_turn_taking(demo, text_run):
    from arena_tui.judge import make_backend, rejudge_turn

    run = await text_run(demo, RunSettings(model="gpt-4.1", fake=True, turns=[0, 2], watchdog=FAST), TextChatRunner())
    out = await rejudge_turn(run.store, run.run_id, None, make_backend("heuristic"), benchmark=demo)
    assert [j.turn_index for j in out] == [0, 2]
    assert all("turn_taking" not in j.scores and j.scores for j in out)

def test_cli_run_text_model_against_its_fake(tmp_path, capsys, monkeypatch):
    from arena_tui.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "cli.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "gpt-4.1", "--fake", "--headless", "--turns", "0-2"])
    out = capsys.readouterr().out
    assert code == 0, out
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT turn_index, status FROM turns ORDER BY turn_index").fetchall()
        (provider, model, status), = con.execute("SELECT provider, model, status FROM runs").fetchall()
    assert rows == [(0, "ok"), (1, "ok"), (2, "ok")]
    assert (provider, model, status) == ("text", "gpt-4.1", "completed")
    assert "turns 3/3 done: ok 3" in out


def test_preflight_names_the_missing_key_or_package(monkeypatch, capsys, tmp_path):
    from arena_tui.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv(OTHER_KEY_ENV, raising=False)
    for alias in ("text", "gpt-4.1", "gpt-4.1-mini", "gpt-4o-mini", "gpt-5-mini"):
        assert isinstance(get_runner(alias), TextChatRunner)
    runner = TextChatRunner()
    [p] = runner.preflight(RunSettings(model="gpt-4.1"))
    assert "OPENAI_API_KEY is not set" in p
    [p] = runner.preflight(RunSettings(model="text", base_url="https://llm.example.com/v1"))
    assert OTHER_KEY_ENV in p and "llm.example.com" in p
    assert runner.preflight(RunSettings(model="text", base_url="http://127.0.0.1:9/v1")) == []  # local server: no key
    assert runner.preflight(RunSettings(model="gpt-4.1", fake=True)) == []
    assert runner.reply_timeout_ms(RunSettings(model="gpt-5-mini")) == 120_000  # reasoning models think first
    assert runner.reply_timeout_ms(RunSettings(model="gpt-5-mini", watchdog={"extra_ms": 5000})) == 5000
    assert runner.reply_timeout_ms(RunSettings(model="gpt-4.1")) == 30_000
    monkeypatch.setenv(MODEL_ENV, "llama-3.1-8b")
    assert runner.resolve_model("text") == "llama-3.1-8b" and runner.resolve_model("gpt-4.1-mini") == "gpt-4.1-mini"
    monkeypatch.setattr(TextChatRunner, "packages", ("openai", "no_such_pkg_xyz"))
    assert any("'no_such_pkg_xyz' is not installed" in p for p in runner.preflight(RunSettings(model="gpt-4.1", fake=True)))
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "gpt-4.1", "--headless"])
    err = capsys.readouterr().err
    assert code == 2 and "OPENAI_API_KEY" in err and "Traceback" not in err


async def test_key_reaches_the_wire_only(demo, tmp_path, monkeypatch):
    """--base-url to an OpenAI-compatible server: its key is sent as the bearer token and appears
    nowhere in the database."""
    secret = "sk-text-secret-0123456789abcdef"
    monkeypatch.setenv(OTHER_KEY_ENV, secret)
    async with OpenAIChatFake(script_for_benchmark(demo, [0, 2])) as fake:
        db = tmp_path / "k.db"
        store = await Store.open(db)
        bus = EventBus()
        store.start_recording(bus)
        await run_benchmark(demo, RunSettings(model="text", base_url=fake.base_url, turns=[0, 2], watchdog=FAST), bus,
                            provider=TextChatRunner())
        await store.flush()
        await store.close()
        assert len(fake.requests) == 3
        assert {q.auth_sha256 for q in fake.requests} == {hashlib.sha256(secret.encode()).hexdigest()}
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("k.db*"))
    assert secret.encode() not in raw
    assert secret not in json.dumps([q.model_dump() for q in fake.requests])


async def test_unknown_turn_is_a_clear_error(demo):
    with pytest.raises(RunError, match="no turn"):
        await run_benchmark(demo, RunSettings(model="gpt-4.1", fake=True, turns=[0, 99]), EventBus(), provider=TextChatRunner())


async def test_the_monitor_runs_a_text_model_and_judges_it_without_turn_taking(tmp_path):
    """The real Textual app: start a text run against its fake with the heuristic judge, watch it
    on the run screen to the end; the store has every turn and no turn_taking score."""
    from arena_tui.app import ArenaApp
    from arena_tui.orchestration.launch import EngineLauncher
    from arena_tui.screens.run import RunScreen

    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.pause()
        run_id = app.start_run("demo_bench", RunSettings(model="gpt-4.1", fake=True, turns=[0, 2, 3]), judge="heuristic")
        app.open_run(run_id)
        state = app.live[run_id]
        loop = asyncio.get_running_loop()
        end = loop.time() + 60
        while state.ended is None:
            assert loop.time() < end, "the text run did not finish in the app"
            await pilot.pause(0.1)
        assert isinstance(app.screen, RunScreen)
        assert state.ended.status == "completed" and state.start_error is None
    async with await Store.open(tmp_path / "arena.db") as store:
        results = await store.turn_results(run_id)
        assert [(r.turn_index, r.status) for r in results] == [(0, "ok"), (2, "ok"), (3, "ok")]
        for _ in range(100):
            judged = await store.latest_judgements(run_id)
            if len(judged) == 3:
                break
            await asyncio.sleep(0.1)
        assert len(judged) == 3 and all("turn_taking" not in j.scores for j in judged.values())


def test_cli_a_model_that_never_answered_fails_the_run(tmp_path):
    """Nothing listens at the endpoint: every turn ends infra_error (never the model's no_response).
    That run failed — exit code 2, one line on stderr saying why (no traceback, no library log),
    stored as failed with that reason."""
    import os
    import subprocess
    import sys

    exe = Path(sys.executable).with_name("arena-tui")
    cli = [str(exe)] if exe.is_file() else [sys.executable, "-m", "arena_tui.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AWS_", "ARENA_TUI_TEXT"))}
    db = tmp_path / "never.db"
    p = subprocess.run(
        [*cli, "--db", str(db), "run", "demo_bench", "--model", "text", "--base-url", "http://127.0.0.1:1/v1",
         "--turns", "0", "--headless"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180, stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena-tui: no turn got an answer: turn 0 ended infra_error 1"), p.stderr
    assert "endpoint unreachable: http://127.0.0.1:1/v1" in err[0] and "Traceback" not in p.stderr
    assert f"run failed: {err[0].removeprefix('arena-tui: ')}" in p.stdout, p.stdout
    with sqlite3.connect(db) as con:
        (status, reason), = con.execute("SELECT status, reason FROM runs").fetchall()
        turns = con.execute("SELECT turn_index, status FROM turns WHERE turn_index >= 0").fetchall()
    assert (status, reason) == ("failed", err[0].removeprefix("arena-tui: "))
    assert turns == [(0, "infra_error")]
