"""The Grok runner end to end: the engine, the real `GrokRealtimeLLMService` (our replaying
subclass), the local xAI-dialect fake on 127.0.0.1, the real store. Assertions are on what
the fake received (including the history replayed into a new session) and on the record."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import pytest
from loguru import logger

from arena_tui.spine.bus import EventBus
from arena_tui.cli import main
from arena_tui.spine.events import Reconnected, SessionRotated
from arena_tui.spine.settings import RunSettings
from runners.base import HistoryItem, get_runner
from runners.engine import RunError, run_benchmark
from runners.fakes.script import Script, ScriptedReply, script_for_benchmark
from tests.provider_harness import GREETING, ServiceRig
from runners.providers.grok.fake import XaiRealtimeFake
from runners.providers.grok.runner import FAKE_KEY, GrokRealtimeRunner, GrokReplayingService, grok_history_items
from tests.provider_runs import quiet_loguru, record_run

SPEED = 3.0  # the fake's VAD works in audio time, so the run may go faster than real time


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


async def _run(bench, config: RunSettings, runner, db: Path):
    rec = await record_run(bench, config, runner, db)
    return rec.run_id, rec.events, rec.by_turn()


def _spoken(text: str) -> str:
    return " ".join(text.split())


async def test_tool_call_then_age_rotation_replays_history_items_into_the_new_session(demo, tmp_path):
    """Turn 2 calls check_repair_slots; the session is then older than 10 s (audio time), so
    the engine rotates before turn 3 and the new connection must get turn 2 back as items."""
    t2, t3 = demo.turns[2], demo.turns[3]
    runner = GrokRealtimeRunner()
    config = RunSettings(model="grok-realtime", fake=True, fake_timing="instant", speed=SPEED, turns=[2, 3], rotation={"max_age_s": 10})
    run_id, events, results = await _run(demo, config, runner, tmp_path / "grok.db")
    fake = runner.fake
    assert fake is not None and len(fake.connections) == 2, [c.closed for c in fake.connections]
    first, second = fake.connections

    # the session as xAI sees it: model in the URL, key sent (not stored), server VAD from config
    assert first.query == {"model": "grok-voice-latest"} and first.auth_present
    # (Pipecat appends its ASYNC TOOLS guidance because the engine registers the tool handler
    # with cancel_on_interruption=False; the benchmark prompt comes first, unchanged.)
    assert first.system_instruction.startswith(demo.system_prompt)
    assert {t["name"] for t in first.tools} == {t.name for t in demo.tools}
    td = first.setup["turn_detection"]
    assert (td["type"], td["threshold"], td["prefix_padding_ms"], td["silence_duration_ms"]) == ("server_vad", 0.7, 500, 800)
    assert first.history == [{"role": "user", "text": GREETING}]

    # the tool call of turn 2 was answered from the turn spec, and that payload reached the wire
    call_id = first.tool_results[0]["call_id"]
    assert first.tool_results == [{"call_id": call_id, "name": "check_repair_slots", "result": t2.function_call_response}]

    # the rotation is an event with the reason and what was replayed
    rotated = [e for e in events if e.kind == "session_rotated"]
    assert [(e.reason, e.from_session, e.to_session, e.turn_index) for e in rotated] == [("age", 1, 2, 3)]
    rep = rotated[0].replayed
    assert (rep.strategy, rep.messages, rep.tool_calls, rep.dropped_messages) == ("full_history", 2, 1, 0)
    assert [(e.session, e.reason) for e in events if e.kind == "reconnected"] == [(2, "age")]

    # the NEW connection received turn 2 as items, in order, and was asked for nothing: no
    # kickoff, no response.create until turn 3's call was answered (its server VAD answers turn 3)
    assert second.history == [
        {"role": "user", "text": t2.input},
        {"role": "function_call", "call_id": call_id, "name": "check_repair_slots", "args": {"date": "2025-05-06"}},
        {"role": "function_call_output", "call_id": call_id, "output": t2.function_call_response},
        {"role": "assistant", "text": _spoken(t2.golden_text)},
    ]
    kinds = [m["type"] for m in second.messages]
    creates = [i for i, k in enumerate(kinds) if k == "conversation.item.create"]
    assert len(creates) == 5 and creates[4] < kinds.index("response.create")  # the 5th: turn 3's call output
    assert second.messages[creates[4]]["item"]["type"] == "function_call_output"
    assert second.replies == [1]  # the one reply on it is turn 3's (reply 1 of the script), no kickoff reply
    assert second.errors == [] and first.errors == []
    assert second.system_instruction == first.system_instruction and second.tools == first.tools
    # turn 3's own call went to the new session
    assert [(r["name"], r["result"]) for r in second.tool_results] == [("book_repair", t3.function_call_response)]

    # both turns recorded ok, with their text, calls and session
    for t, session in ((t2, 1), (t3, 2)):
        r = results[t.turn_index]
        assert r.status == "ok", (t.turn_index, r.status, r.error)
        assert _spoken(r.assistant_text) == _spoken(t.golden_text)
        assert [(c.name, c.status) for c in r.tool_calls] == [(t.expected_calls[0].name, "matched")]
        assert r.session == session and r.user_transcript == t.input
    assert results[3].reconnects == 1 and results[2].reconnects == 0
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    assert not runner.fake._runner  # stopped after the run


async def test_server_close_mid_run_is_a_dead_session_rotated_and_the_turn_retried(demo, tmp_path):
    """xAI closes the socket after turn 0's reply (Pipecat's Grok service does not notice or
    reconnect): the engine sees the dead session, rotates with a `disconnect`/`error` event and
    plays turn 0 again into the new session; turn 1 then runs there with turn 0 replayed."""
    t0, t1 = demo.turns[0], demo.turns[1]
    script = Script(
        key="user_turn",
        replies=[
            ScriptedReply(user_transcript=t0.input, text=t0.golden_text, then="disconnect"),
            ScriptedReply(user_transcript=t0.input, text=t0.golden_text),
            ScriptedReply(user_transcript=t1.input, text=t1.golden_text),
        ],
    )
    async with XaiRealtimeFake(script) as fake:
        runner = GrokRealtimeRunner()
        config = RunSettings(model="grok-realtime", fake=True, fake_timing="instant", base_url=fake.base_url, speed=SPEED, turns=[0, 1])
        _, events, results = await _run(demo, config, runner, tmp_path / "dead.db")
        assert runner.fake is None  # an endpoint someone else started is used as is
    first, second = fake.connections
    assert first.closed == "server:1011" and first.user_turns == 1
    rotated = [e for e in events if e.kind == "session_rotated"]
    assert [(e.reason in ("disconnect", "error"), e.from_session, e.to_session, e.turn_index) for e in rotated] == [(True, 1, 2, 0)]
    assert rotated[0].replayed.messages == 0  # turn 0 had not finished: nothing to replay yet
    assert second.history == [] and -1 not in second.replies  # nothing asked of the new session
    assert [e.attempt for e in events if e.kind == "retry" and e.turn_index == 0] == [1]
    r0, r1 = results[0], results[1]
    assert (r0.status, r0.retries, r0.reconnects, r0.session) == ("ok", 1, 1, 2)
    assert (r1.status, r1.session) == ("ok", 2) and _spoken(r1.assistant_text) == _spoken(t1.golden_text)
    assert second.auth_present and second.user_turns == 2


def test_cli_run_fake_headless(tmp_path, capsys):
    db = tmp_path / "cli.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "grok-realtime", "--fake", "--fake-timing", "instant", "--headless", "--turns", "0-2", "--speed", "4"])
    out = capsys.readouterr().out
    assert code == 0, out
    with sqlite3.connect(db) as c:
        assert c.execute("select status, model from runs").fetchall() == [("completed", "grok-realtime")]
        rows = c.execute("select turn_index, status from turns order by turn_index").fetchall()
    assert [(i, s) for i, s in rows if i >= 0] == [(0, "ok"), (1, "ok"), (2, "ok")]


async def test_preflight_names_missing_key_and_package(demo, monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("XAI_API_KEY", raising=False)
    runner = get_runner("grok-realtime")
    assert isinstance(runner, GrokRealtimeRunner) and runner.resolve_model("grok-realtime") == "grok-voice-latest"
    problems = runner.preflight(RunSettings(model="grok-realtime"))
    assert problems == ["grok: environment variable XAI_API_KEY is not set (the API key)"]
    assert runner.preflight(RunSettings(model="grok-realtime", fake=True, fake_timing="instant", speed=4)) == []
    assert runner.preflight(RunSettings(model="grok-realtime", speed=4)) == [
        problems[0], "grok: --speed must be 1 against a real service (got 4.0)"]
    runner.packages = (*runner.packages, "pipecat_xai_missing_for_test")
    assert any("'pipecat_xai_missing_for_test' is not installed" in p for p in runner.preflight(RunSettings(model="grok-realtime", fake=True, fake_timing="instant")))
    with pytest.raises(RunError, match="XAI_API_KEY"):
        await run_benchmark(demo, RunSettings(model="grok-realtime", turns=[0]), EventBus())
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "grok-realtime", "--headless"])
    err = capsys.readouterr().err
    assert code == 2 and "XAI_API_KEY" in err and "Traceback" not in err


async def test_real_service_path_sends_the_key_only_on_the_wire(demo, tmp_path, monkeypatch):
    """`--model grok-realtime --base-url` (not --fake): the key from XAI_API_KEY authenticates
    the connection and appears nowhere in the database or the log."""
    secret = "xai-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("XAI_API_KEY", secret)
    log = io.StringIO()
    handler = logger.add(log, level="DEBUG")
    try:
        async with XaiRealtimeFake(script_for_benchmark(demo, [0])) as fake:
            runner = GrokRealtimeRunner()
            config = RunSettings(model="grok-voice-fast-1.0", base_url=fake.base_url, turns=[0])
            _, _, results = await _run(demo, config, runner, tmp_path / "k.db")
            assert results[0].status == "ok" and _spoken(results[0].assistant_text) == _spoken(demo.turns[0].golden_text)
            assert fake.connections[0].auth_present and fake.connections[0].query == {"model": "grok-voice-fast-1.0"}
            assert runner.fake is None
    finally:
        logger.remove(handler)
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f
    assert secret not in log.getvalue() and FAKE_KEY not in log.getvalue()


async def test_pipecat_reset_reseeds_history_at_once_and_is_reported(demo):
    """Pipecat's own `reset_conversation()` gives the new session no history until the client
    creates a response; the runner's service creates one at once (history items again, then
    this session's context packed by Pipecat) and reports the reset as events."""
    history = [
        HistoryItem(kind="user", turn_index=2, text="Any slots tomorrow?"),
        HistoryItem(kind="tool_call", turn_index=2, call_id="call_h1", name="check_repair_slots", args={"date": "2025-05-06"}),
        HistoryItem(kind="tool_result", turn_index=2, call_id="call_h1", name="check_repair_slots", response={"slots": ["10:00"]}),
        HistoryItem(kind="assistant", turn_index=2, text="Ten is free."),
    ]
    script = Script(replies=[
        ScriptedReply(text="Welcome back."),
        ScriptedReply(text="Here again."),
    ])
    published: list = []
    async with XaiRealtimeFake(script) as fake:
        llm = GrokReplayingService(
            api_key=FAKE_KEY, base_url=fake.base_url, replay=grok_history_items(history), session_number=4,
            publish=lambda cls, **kw: published.append((cls, kw)),
            settings=GrokReplayingService.Settings(model="grok-voice-latest", system_instruction=demo.system_prompt),
        )
        async with ServiceRig(llm, sample_rate=24000) as rig:
            await rig.wait_until(lambda: "Welcome back" in rig.collector.text, what="first reply")
            first = fake.connections[0]
            assert [h["role"] for h in first.history] == ["user", "function_call", "function_call_output", "assistant", "user"]
            assert first.history[-1] == {"role": "user", "text": GREETING} and llm.replayed_items == 4
            await llm.reset_conversation()
            await fake.wait_until(lambda: len(fake.connections) == 2 and len(fake.connections[1].history) >= 5, what="re-seeded history")
            second = fake.connections[1]
            assert second.history[:4] == first.history[:4]
            packed = second.history[4]
            assert packed["role"] == "user" and "previously saved conversation" in packed["text"]
            assert GREETING in packed["text"] and "Welcome back" in packed["text"]
            await rig.wait_until(lambda: "Here again" in rig.collector.text, what="reply on the reset session")
            assert second.errors == []
    assert [cls for cls, _ in published] == [SessionRotated, Reconnected]
    rot = published[0][1]
    assert (rot["reason"], rot["from_session"], rot["to_session"]) == ("provider_reset", 4, 4)
    assert rot["replayed"].tool_calls == 1 and rot["replayed"].messages >= 4
    assert published[1][1] == {"session": 4, "reason": "provider_reset", "attempt": 1}
