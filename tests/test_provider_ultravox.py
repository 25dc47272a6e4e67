"""The Ultravox runner through the real engine, Pipecat's real `UltravoxRealtimeLLMService`, the
local Ultravox fake (REST call creation + call websocket) and the real store. Assertions are
on what the fake RECEIVED (creation bodies, tool results, replayed history) and on what the
store holds."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.cli import main
from arena_tui.spine.settings import RunSettings
from runners.base import SessionSpec
from runners.engine import RunError, run_benchmark
from runners.fakes.script import Script, script_for_benchmark
from tests.provider_harness import ServiceRig, read_wav_pcm16, scripted_tool_handler
from runners.providers.ultravox.fake import UltravoxFake
from runners.providers.ultravox.runner import UltravoxCallError, UltravoxRunner, call_body
from tests.provider_runs import RecordedRun, quiet_loguru, record_run

SPEED = 4.0  # the fake's VAD and replies work in audio time, so a faster clock is safe
SECRET = "uvx-test-secret-0123456789"


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("ERROR")


async def run(bench, config: RunSettings, runner: UltravoxRunner, tmp_path: Path, **kw) -> RecordedRun:
    return await record_run(bench, config, runner, tmp_path / "arena.db", **kw)


def tool_answer(rec) -> tuple[str, dict]:
    """(invocation id, decoded payload) of the one client_tool_result a connection received."""
    assert len(rec.tool_results) == 1, rec.tool_results
    return rec.tool_results[0]["call_id"], json.loads(rec.tool_results[0]["result"])


async def test_tool_call_and_age_rotation_replay_history_as_initial_messages(demo, tmp_path):
    t2, t3 = demo.turns[2], demo.turns[3]
    runner = UltravoxRunner()
    config = RunSettings(model="ultravox", fake=True, fake_timing="instant", turns=[2, 3], speed=SPEED, rotation={"max_age_s": 14})
    r = await run(demo, config, runner, tmp_path)
    fake = runner.fake
    assert len(fake.connections) == 2
    first, second = fake.connections

    # The call the runner created: prompt, client tools, model, audio at the run's rate.
    body = fake.creations[0]["body"]
    assert fake.creations[0]["auth_present"] and fake.creations[0]["prior_call_id"] is None
    assert body["systemPrompt"] == demo.system_prompt and body["model"] == "fixie-ai/ultravox"
    assert body["medium"] == {"serverWebSocket": {"inputSampleRate": 24000, "outputSampleRate": 24000}}
    tools = {t["temporaryTool"]["modelToolName"]: t["temporaryTool"] for t in body["selectedTools"]}
    assert set(tools) == {"check_repair_slots", "book_repair", "check_part_stock"}
    assert tools["check_repair_slots"]["client"] == {}
    assert tools["check_repair_slots"]["dynamicParameters"] == [
        {"name": "date", "location": "PARAMETER_LOCATION_BODY",
         "schema": {"type": "string", "description": "Date, YYYY-MM-DD."}, "required": True}
    ]
    assert first.audio_in_rate == 24000 and first.audio_in_ms > 4000  # turn 2's clip went out

    # Turn 2: the fake called the turn's tool; the engine answered from the turn spec, and
    # that payload reached the fake as the client_tool_result (not Pipecat's async placeholder).
    inv2, payload2 = tool_answer(first)
    assert payload2 == t2.function_call_response
    assert first.tool_results[0]["name"] == "check_repair_slots"

    # Rotation by age before turn 3: a new call seeded with our history, tool state included.
    (rot,) = r.kinds("session_rotated")
    assert (rot.reason, rot.from_session, rot.to_session, rot.turn_index) == ("age", 1, 2, 3)
    assert rot.replayed.strategy == "full_history"
    assert (rot.replayed.messages, rot.replayed.tool_calls, rot.replayed.dropped_messages) == (2, 1, 0)
    (rec,) = r.kinds("reconnected")
    assert (rec.session, rec.reason) == (2, "age")
    creation = fake.creations[1]
    assert creation["prior_call_id"] is None and creation["status"] == 201
    assert creation["body"]["systemPrompt"] == demo.system_prompt
    assert creation["body"]["initialMessages"] == [
        {"role": "MESSAGE_ROLE_USER", "text": t2.input},
        {"role": "MESSAGE_ROLE_TOOL_CALL", "text": json.dumps({"date": "2025-05-06"}),
         "toolName": "check_repair_slots", "invocationId": inv2},
        {"role": "MESSAGE_ROLE_TOOL_RESULT", "text": json.dumps(t2.function_call_response),
         "toolName": "check_repair_slots", "invocationId": inv2},
        {"role": "MESSAGE_ROLE_AGENT", "text": t2.golden_text},
    ]
    assert second.resumed_from is None
    assert [h["role"] for h in second.history] == ["user", "tool_call", "tool_result", "agent"]
    assert second.history[0]["text"] == t2.input and second.history[3]["text"] == t2.golden_text
    assert json.loads(second.history[2]["text"]) == t2.function_call_response
    # the new call waits for the user: no continuation of the agent's before turn 3's answer
    assert creation["body"]["firstSpeakerSettings"] == {"user": {}} and "firstSpeakerSettings" not in fake.creations[0]["body"]
    assert second.replies == [1]
    assert [c.call_id for c in runner.calls] == list(fake.calls)

    # Turn 3 on the new call, with its own tool call answered.
    _, payload3 = tool_answer(second)
    assert payload3 == t3.function_call_response

    # What the store holds.
    assert [x.turn_index for x in r.results] == [-1, 2, 3]
    assert r.result(-1).assistant_text == fake.script.kickoff.text  # Ultravox's agent speaks first
    for turn, session, tool in ((t2, 1, "check_repair_slots"), (t3, 2, "book_repair")):
        res = r.result(turn.turn_index)
        assert res.status == "ok" and res.session == session
        assert res.assistant_text == turn.golden_text
        assert res.user_transcript == turn.input
        assert [(c.name, c.status) for c in res.tool_calls] == [(tool, "matched")]
        assert res.tool_calls[0].response == turn.function_call_response
    assert r.kinds("run_ended")[-1].status == "completed"


async def test_prior_call_mode_continues_the_call_server_side(demo, tmp_path):
    t2 = demo.turns[2]
    runner = UltravoxRunner(replay="prior_call")
    config = RunSettings(model="ultravox", fake=True, fake_timing="instant", turns=[2, 3], speed=SPEED, rotation={"max_age_s": 14})
    r = await run(demo, config, runner, tmp_path)
    fake = runner.fake
    first, second = fake.connections
    first_call = runner.calls[0].call_id
    creation = fake.creations[1]
    assert creation["prior_call_id"] == first_call
    assert "initialMessages" not in creation["body"]  # the API forbids both
    assert second.resumed_from == first_call
    # What Ultravox carries over: the first call's own messages, greeting and tool state included.
    inv2, _ = tool_answer(first)
    assert [h["role"] for h in second.history] == ["agent", "user", "tool_call", "tool_result", "agent"]
    assert second.history[0]["text"] == fake.script.kickoff.text
    assert second.history[1]["text"] == t2.input
    assert second.history[2] == {"role": "tool_call", "toolName": "check_repair_slots", "invocationId": inv2,
                                 "text": json.dumps({"date": "2025-05-06"})}
    assert json.loads(second.history[3]["text"]) == t2.function_call_response
    assert second.history[4]["text"] == t2.golden_text
    (rot,) = r.kinds("session_rotated")
    assert rot.reason == "age" and rot.replayed.strategy == "provider_resumption"  # we sent nothing ourselves
    assert creation["body"]["firstSpeakerSettings"] == {"user": {}} and -1 not in second.replies
    assert rot.replayed.dropped_messages == 0 and rot.replayed.messages >= 2
    assert [(x.turn_index, x.status) for x in r.results] == [(-1, "ok"), (2, "ok"), (3, "ok")]


async def test_failed_call_creation_at_rotation_is_reported_and_recovered(demo, tmp_path):
    """A rotation whose new call is refused: a provider error naming status and message, then
    the engine's next rotation creates another call and the turn is retried there."""
    runner = UltravoxRunner()
    config = RunSettings(model="ultravox", fake=True, fake_timing="instant", turns=[2, 3], speed=SPEED, rotation={"max_age_s": 14},
                       watchdog={"backoff_ms": 200})

    def on_session(session) -> None:
        if session.number == 1:
            runner.fake.create_failures.append((503, {"detail": "No capacity right now"}))

    r = await run(demo, config, runner, tmp_path, on_session=on_session)
    statuses = [c["status"] for c in runner.fake.creations]
    assert statuses == [201, 503, 201]
    errors = [e for e in r.kinds("error") if e.where == "provider"]
    assert any("HTTP 503" in e.message and "No capacity right now" in e.message for e in errors), errors
    assert [e.reason for e in r.kinds("session_rotated")] == ["age", "error"]
    # The call that finally took turn 3 was seeded with turn 2's history.
    assert [m["role"] for m in runner.fake.creations[2]["body"]["initialMessages"]] == [
        "MESSAGE_ROLE_USER", "MESSAGE_ROLE_TOOL_CALL", "MESSAGE_ROLE_TOOL_RESULT", "MESSAGE_ROLE_AGENT"]
    res = r.result(3)
    assert res.status == "ok" and res.assistant_text == demo.turns[3].golden_text
    assert (res.retries, res.reconnects, res.session) == (1, 2, 3)


async def test_server_closing_the_call_is_reported_and_the_turn_retried_on_a_new_call(demo, tmp_path):
    """Pipecat's Ultravox service never rejoins: the runner reports the close (code, call id) and
    the engine's disconnect rotation creates a new call; the turn is retried there."""
    t2 = demo.turns[2]
    script = script_for_benchmark(demo, [2])
    script.replies = [script.replies[0].model_copy(update={"then": "disconnect"}), script.replies[0]]
    runner = UltravoxRunner()
    async with UltravoxFake(script) as fake:
        config = RunSettings(model="ultravox", fake=True, fake_timing="instant", base_url=fake.base_url, turns=[2], speed=SPEED,
                           watchdog={"backoff_ms": 200})
        r = await run(demo, config, runner, tmp_path)
    assert runner.fake is None  # an externally started fake is the caller's
    first, second = fake.connections
    assert first.closed == "server:1011"
    closes = [e for e in r.kinds("error") if e.where == "provider" and "Ultravox closed call" in e.message]
    assert len(closes) == 1 and runner.calls[0].call_id in closes[0].message and "1011" in closes[0].message
    assert not closes[0].fatal
    (rot,) = r.kinds("session_rotated")
    assert (rot.reason, rot.from_session, rot.to_session) == ("disconnect", 1, 2)
    assert "initialMessages" not in fake.creations[1]["body"]  # turn 2 never finished on call 1
    _, payload = tool_answer(second)
    assert payload == t2.function_call_response
    res = r.result(2)
    assert (res.status, res.session, res.retries, res.reconnects) == ("ok", 2, 1, 1)
    assert res.assistant_text == t2.golden_text


async def test_tool_answer_is_the_client_tool_result_even_for_an_async_registration(demo):
    """Pipecat would answer an async-registered tool (cancel_on_interruption=False) with a
    placeholder and send the real result later as user text; the runner's service sends the
    handler's answer itself, which is what a benchmark turn is judged on."""
    t2 = demo.turns[2]
    runner = UltravoxRunner()
    async with UltravoxFake(script_for_benchmark(demo, [2])) as fake:
        await runner.start(RunSettings(model="ultravox", fake=True, fake_timing="instant", base_url=fake.base_url, turns=[2]), demo)
        spec = SessionSpec(model="fixie-ai/ultravox", system_prompt=demo.system_prompt, tools=demo.tools,
                           kickoff="Greet the user briefly.", config=RunSettings(model="ultravox", fake=True, fake_timing="instant"))
        llm = runner.build_service(spec)
        seen: list = []
        llm.register_function(None, scripted_tool_handler({"check_repair_slots": t2.function_call_response}, seen),
                              cancel_on_interruption=False)
        async with ServiceRig(llm, sample_rate=24000, speed=SPEED, send_context=False) as rig:
            rig.feeder.play(read_wav_pcm16(demo.audio_path(t2), 24000))
            await fake.wait_until(lambda: fake.connections and fake.last.tool_results, what="client_tool_result")
            await rig.wait_until(lambda: t2.golden_text[:20] in rig.collector.text, what="reply after the tool")
        await runner.stop()
    _, payload = tool_answer(fake.last)
    assert payload == t2.function_call_response and seen == [("check_repair_slots", {"date": "2025-05-06"})]
    assert not [m for m in fake.last.messages if m.get("type") == "user_text_message"]


def test_cli_run_against_the_fake(tmp_path, capsys):
    db = tmp_path / "cli.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "ultravox", "--fake", "--fake-timing", "instant", "--headless",
                 "--turns", "0-2", "--speed", str(SPEED)])
    out = capsys.readouterr().out
    assert code == 0, out
    with sqlite3.connect(db) as c:
        (status,) = c.execute("select status from runs").fetchone()
        rows = c.execute(
            "select turn_index, status, tool_calls from turns where turn_index >= 0 order by turn_index"
        ).fetchall()
    assert status == "completed"
    assert [(i, s) for i, s, _ in rows] == [(0, "ok"), (1, "ok"), (2, "ok")]
    assert [c["name"] for c in json.loads(rows[2][2])] == ["check_repair_slots"]


@pytest.mark.parametrize(
    "failure,expected",
    [
        ((401, {"detail": "Invalid API key."}), ["HTTP 401", "Invalid API key."]),
        ((400, {"selectedTools": ["[0]: bad"]}), ["HTTP 400", "selectedTools"]),
        ((500, "<html>Internal Server Error</html>"), ["HTTP 500", "Internal Server Error"]),
        ((201, "this is not json"), ["not JSON", "this is not json"]),
        ((201, {"callId": "x"}), ["without callId/joinUrl"]),
    ],
)
async def test_call_creation_errors_stop_the_run_naming_status_and_message(demo, monkeypatch, failure, expected):
    monkeypatch.setenv("ULTRAVOX_API_KEY", SECRET)
    async with UltravoxFake(Script()) as fake:
        fake.create_failures.append(failure)
        bus = EventBus()
        sub = bus.subscribe()
        with pytest.raises(RunError) as e:
            await run_benchmark(demo, RunSettings(model="ultravox", base_url=fake.base_url, turns=[0]), bus,
                                provider=UltravoxRunner())
        assert fake.creations[0]["auth_present"]  # the key went in the header ...
    msg = str(e.value)
    assert "creating the call failed" in msg and all(x in msg for x in expected), msg
    events = sub.drain()
    assert [ev.kind for ev in events if ev.kind != "audio"] == ["run_started", "error", "run_ended"]
    assert not [ev for ev in events if ev.kind == "session_opened"]
    assert events[-1].status == "failed"
    assert SECRET not in msg and all(SECRET not in ev.model_dump_json() for ev in events)  # ... nowhere else


async def test_unreachable_api_is_named(demo, monkeypatch):
    monkeypatch.setenv("ULTRAVOX_API_KEY", SECRET)
    with pytest.raises(RunError, match=r"cannot reach http://127\.0\.0\.1:9/api/calls"):
        await run_benchmark(demo, RunSettings(model="ultravox", base_url="http://127.0.0.1:9", turns=[0]), EventBus(),
                            provider=UltravoxRunner())


def test_tools_ultravox_refuses_are_named_before_any_request(demo):
    bad = demo.tools[0].model_copy(update={"name": "check repair slots"})
    with pytest.raises(UltravoxCallError, match="'check repair slots'"):
        call_body("fixie-ai/ultravox", "p", [bad, *demo.tools[1:]], 24000)


async def test_preflight_names_missing_key_and_package(demo, monkeypatch):
    monkeypatch.delenv("ULTRAVOX_API_KEY", raising=False)
    runner = UltravoxRunner()
    problems = runner.preflight(RunSettings(model="ultravox"))
    assert problems == ["ultravox: environment variable ULTRAVOX_API_KEY is not set (the API key)"]
    assert runner.preflight(RunSettings(model="ultravox", fake=True, fake_timing="instant", speed=4)) == []
    monkeypatch.setenv("ULTRAVOX_API_KEY", SECRET)
    assert any("--speed must be 1" in p for p in runner.preflight(RunSettings(model="ultravox", speed=2)))
    monkeypatch.delenv("ULTRAVOX_API_KEY")
    with pytest.raises(RunError, match="ULTRAVOX_API_KEY"):
        await run_benchmark(demo, RunSettings(model="ultravox"), EventBus())

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pipecat.services.ultravox.llm" else real(name, *a))
    assert "Python package 'pipecat.services.ultravox.llm' is not installed" in "; ".join(
        runner.preflight(RunSettings(model="ultravox", fake=True, fake_timing="instant")))


def test_aliases_resolve_and_rotation_default(demo):
    from runners.base import get_runner

    runner = get_runner("ultravox")
    assert isinstance(runner, UltravoxRunner) and runner.resolve_model("ultravox") == "fixie-ai/ultravox"
    assert runner.rotation_policy(RunSettings(model="ultravox"), demo.system_prompt).max_age_s == 3000.0
    mine = RunSettings(model="ultravox", rotation={"max_age_s": 60})
    assert runner.rotation_policy(mine, demo.system_prompt).max_age_s == 60


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ULTRAVOX_API_KEY"), reason="needs ULTRAVOX_API_KEY (real service)")
async def test_real_service_two_turns(demo, tmp_path):
    """Against https://api.ultravox.ai (network, a key, real time): the run completes and records."""
    r = await run(demo, RunSettings(model="ultravox", turns=[0, 2]), UltravoxRunner(), tmp_path)
    assert r.kinds("run_ended")[-1].status == "completed"
    assert [x.turn_index for x in r.results if x.turn_index >= 0] == [0, 2]
