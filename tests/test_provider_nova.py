"""Nova Sonic runner end to end: the engine + the real Pipecat `AWSNovaSonicLLMService`
(subclassed: 16 kHz input, tool-aware replay, engine-owned rotation) + the real store,
against the local Nova fake at the SDK boundary. Assertions are on what the fake's
streams received (history, tool results, audio rate and duration) and what the store holds."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.cli import main
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from runners.base import HistoryItem, get_runner
from runners.engine import RunError, run_benchmark
from runners.fakes.script import Script, script_for_benchmark
from runners.providers.nova_sonic.runner import ROTATE_AFTER_S, NovaSonicRunner, history_messages
from tests.provider_runs import quiet_loguru, record_run

SPEED = 4.0  # the fake answers at once and counts audio time, so a faster clock is safe


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("ERROR")


def turn(bench, i: int):
    return next(t for t in bench.turns if t.turn_index == i)


async def run(bench, runner: NovaSonicRunner, tmp_path: Path, **cfg):
    config = RunSettings(model="nova-sonic", fake=True, fake_timing="instant", speed=SPEED, **cfg)
    rec = await record_run(bench, config, runner, tmp_path / "nova.db")
    return rec.events, rec.by_turn()


def speech_span_ms(result) -> float:
    """First speech onset to last speech end of the user clip, on the engine's timeline."""
    return result.user_speech[-1].end_ms - result.user_speech[0].start_ms


async def test_rotation_replays_tool_state_as_text_and_input_is_16k(demo, tmp_path):
    runner = NovaSonicRunner()
    events, results = await run(demo, runner, tmp_path, turns=[2, 3], rotation={"max_age_s": 0.5})
    fake = runner.fake
    t2, t3 = turn(demo, 2), turn(demo, 3)

    # Every turn recorded, with the fake's golden reply and the tool call the engine answered.
    for t in (t2, t3):
        r = results[t.turn_index]
        assert r.status == "ok", r
        assert r.assistant_text == t.golden_text
        assert [c.name for c in r.tool_calls] == [t.expected_calls[0].name]
        assert r.tool_calls[0].status == "matched"

    # One stream per session: greeting, then a rotation (age) before each turn.
    rotations = [e for e in events if e.kind == "session_rotated"]
    assert [(e.reason, e.from_session, e.to_session) for e in rotations] == [("age", 1, 2), ("age", 2, 3)]
    assert [e.session for e in events if e.kind == "reconnected"] == [2, 3]
    before_t3 = rotations[1].replayed
    assert (before_t3.strategy, before_t3.messages, before_t3.tool_calls) == ("full_history", 2, 1)
    assert len(fake.connections) == 3
    first, second, third = fake.connections

    # Turn 2's stream got the engine's answer from the turn spec as the toolResult.
    assert [(x["name"], x["result"]) for x in second.tool_results] == [
        (t2.expected_calls[0].name, t2.function_call_response)
    ]

    # The stream after the rotation was given turn 2 as history: the user's words, the tool
    # call with its arguments AND its result (as assistant text), the reply — and no kickoff:
    # nothing interactive, so Nova answers turn 3 only (no reply to nothing in between).
    assert [h["role"] for h in third.history] == ["USER", "ASSISTANT"]
    assert third.history[0]["text"] == t2.input
    said = third.history[1]["text"]
    call = t2.expected_calls[0]
    assert f"check_repair_slots with {json.dumps(call.args, sort_keys=True)}" in said
    assert json.dumps(t2.function_call_response, ensure_ascii=False) in said
    assert said.endswith(t2.golden_text)
    assert "interactive" not in third.history[0] and "interactive" not in third.history[1]
    assert -1 not in second.replies + third.replies  # every reply after the greeting is a turn's
    # ...and nothing was replayed into the first two (no history yet); only the greeting asked for a reply.
    assert [h.get("interactive") for h in first.history + second.history] == [True]

    # Every stream: system prompt, tools, and user audio declared and delivered at 16 kHz.
    for rec in fake.connections:
        assert rec.system_instruction == demo.system_prompt
        assert {t["name"] for t in rec.tools} == {t.name for t in demo.tools}
        assert rec.audio_in_rate == 16000 and rec.audio_in_bytes > 0
    # The fake heard each clip's speech for as long as it lasts (24 kHz bytes sent as 16 kHz
    # would last 1.5x as long): compare with the engine's own VAD of the WAV.
    for stream, t in ((fake.streams[1], t2), (fake.streams[2], t3)):
        assert len(stream.utterances) == 1, stream.utterances
        start, end = stream.utterances[0]
        assert abs((end - start) - speech_span_ms(results[t.turn_index])) < 250, (stream.utterances, results[t.turn_index].user_speech)


async def test_stream_ended_by_aws_rotates_through_the_engine_with_tool_history(demo, tmp_path):
    """AWS ends the stream after turn 3's reply: Pipecat's reset (text-only, no tools) must not
    run; the engine opens ONE new session with the tool history and retries the turn."""
    r2, r3 = script_for_benchmark(demo, [2, 3]).replies
    runner = NovaSonicRunner()
    runner.script = Script(replies=[r2, r3.model_copy(update={"then": "expire"}), r3], key="user_turn")
    events, results = await run(demo, runner, tmp_path, turns=[2, 3])
    fake = runner.fake

    assert len(fake.connections) == 2  # no in-service reconnect next to the engine's
    old, new = fake.connections
    assert old.closed == "server:expire"
    rot = [e for e in events if e.kind == "session_rotated"]
    # "error" or "disconnect": whichever the engine notices first, the ErrorFrame or the dead stream.
    assert [(e.from_session, e.to_session, e.turn_index) for e in rot] == [(1, 2, 3)]
    assert rot[0].reason in ("error", "disconnect")
    assert rot[0].replayed.tool_calls == 1
    errors = [e.message for e in events if e.kind == "error"]
    assert any("AWS Bedrock ended the response stream" in m for m in errors), errors  # Pipecat's ErrorFrame
    assert any("reset_conversation is not used" in m for m in errors), errors  # ours: why no in-service reconnect
    assert [h["role"] for h in new.history] == ["USER", "ASSISTANT"]  # the history, no kickoff
    assert new.replies == [2]  # its one reply is the retry of turn 3 (script reply 2), nothing asked before it
    assert new.history[0]["text"] == turn(demo, 2).input
    assert "check_repair_slots" in new.history[1]["text"] and '"14:30"' in new.history[1]["text"]
    assert new.system_instruction == demo.system_prompt and new.tools == old.tools

    r = results[3]
    assert (r.status, r.retries, r.reconnects, r.session) == ("ok", 1, 1, 2)
    assert r.assistant_text == turn(demo, 3).golden_text
    assert [c.name for c in r.tool_calls] == ["book_repair"]
    assert [x["name"] for x in new.tool_results] == ["book_repair"]
    assert results[2].status == "ok" and results[2].session == 1


def test_cli_run_with_the_fake(tmp_path, capsys):
    db = tmp_path / "cli.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "nova-sonic", "--fake", "--fake-timing", "instant", "--headless",
                 "--turns", "0-2", "--speed", str(SPEED)])
    out = capsys.readouterr().out
    assert code == 0, out
    with sqlite3.connect(db) as c:
        assert c.execute("select status from runs").fetchone() == ("completed",)
        rows = c.execute("select turn_index, status from turns where turn_index >= 0 order by turn_index").fetchall()
    assert rows == [(0, "ok"), (1, "ok"), (2, "ok")]


def test_cli_without_keys_names_them(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "nova-sonic", "--headless"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "AWS_ACCESS_KEY_ID" in err and "AWS_SECRET_ACCESS_KEY" in err and "Traceback" not in err


# ------------------------------------------------------------------ preflight, aliases, policy


def test_aliases_and_registry():
    r = get_runner("nova-sonic")
    assert isinstance(r, NovaSonicRunner)
    assert r.resolve_model("nova-sonic") == "amazon.nova-sonic-v1:0"
    assert get_runner("nova-sonic-2").resolve_model("nova-sonic-2") == "amazon.nova-2-sonic-v1:0"


def test_preflight_names_missing_keys_and_packages(monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    problems = NovaSonicRunner().preflight(RunSettings(model="nova-sonic"))
    assert problems == ["nova-sonic: environment variable AWS_ACCESS_KEY_ID is not set (the API key)"]
    assert NovaSonicRunner().preflight(RunSettings(model="nova-sonic", fake=True, fake_timing="instant", speed=4)) == []
    monkeypatch.setitem(sys.modules, "aws_sdk_bedrock_runtime", None)  # find_spec → None: not installed
    problems = NovaSonicRunner().preflight(RunSettings(model="nova-sonic", fake=True, fake_timing="instant"))
    assert problems == ["nova-sonic: Python package 'aws_sdk_bedrock_runtime' is not installed"]


async def test_engine_refuses_before_anything_starts(demo, monkeypatch):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA-test")
    bus = EventBus()
    sub = bus.subscribe()
    with pytest.raises(RunError, match="AWS_SECRET_ACCESS_KEY"):
        await run_benchmark(demo, RunSettings(model="nova-sonic"), bus)
    with pytest.raises(RunError, match=r"max_age_s=600 is not below AWS's ~480 s"):
        await run_benchmark(demo, RunSettings(model="nova-sonic", fake=True, fake_timing="instant", rotation={"max_age_s": 600}), bus)
    with pytest.raises(RunError, match=r"max_age_s must be set below"):
        await run_benchmark(demo, RunSettings(model="nova-sonic", fake=True, fake_timing="instant", rotation={"max_age_s": None}), bus)
    assert sub.drain() == []


def test_rotation_policy_defaults_to_180_s_unless_set():
    r = NovaSonicRunner()
    assert r.rotation_policy(RunSettings(), "p").max_age_s == ROTATE_AFTER_S == 180.0
    assert r.rotation_policy(RunSettings(rotation={"max_age_s": 60}), "p").max_age_s == 60
    kept = r.rotation_policy(RunSettings(rotation={"history_budget_chars": 1000}), "p")
    assert (kept.max_age_s, kept.history_budget_chars) == (180.0, 1000)


def test_history_messages_render_tools_and_join_roles():
    h = [
        HistoryItem(kind="user", turn_index=0, text="Slots?"),
        HistoryItem(kind="tool_call", turn_index=0, call_id="c1", name="slots", args={"d": "1"}),
        HistoryItem(kind="tool_result", turn_index=0, call_id="c1", name="slots", response={"s": [1]}),
        HistoryItem(kind="assistant", turn_index=0, text="One."),
        HistoryItem(kind="tool_result", turn_index=1, call_id="c9", name="orphan", response={"ok": True}),
    ]
    assert history_messages(h) == [
        ("USER", "Slots?"),
        ("ASSISTANT", '(I called the tool slots with {"d": "1"}; it returned {"s": [1]}.)\nOne.\n'
                      '(The tool orphan returned {"ok": true}.)'),
    ]


def test_real_client_uses_region_and_endpoint_and_keeps_keys_out_of_the_config(demo, monkeypatch):
    from runners.base import SessionSpec

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA-SECRET-ID")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "SECRET-KEY-123")
    monkeypatch.setenv("AWS_REGION", "eu-north-1")
    runner = NovaSonicRunner()
    cfg = RunSettings(model="nova-sonic")
    spec = SessionSpec(model="amazon.nova-sonic-v1:0", system_prompt="p", tools=demo.tools, kickoff="hi", config=cfg)
    client = runner.build_service(spec).create_client()
    assert client._config.endpoint_uri == "https://bedrock-runtime.eu-north-1.amazonaws.com"
    cfg = RunSettings(model="nova-sonic", base_url="https://vpce.example.test")
    client = runner.build_service(spec.model_copy(update={"config": cfg})).create_client()
    assert client._config.endpoint_uri == "https://vpce.example.test"
    assert "SECRET" not in json.dumps(cfg.public())


async def test_real_sdk_client_unreachable_endpoint_is_a_clear_error_and_keys_stay_secret(demo, tmp_path, monkeypatch):
    """The real Bedrock client (SigV4, event stream) against a closed local port: the run fails
    naming the socket error, and the keys appear neither in the store nor in the log."""
    import io
    import socket

    from loguru import logger

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA-NOVA-TEST-ID-0001")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "nova-secret-key-value-0002")
    log = io.StringIO()
    handler = logger.add(log, level="DEBUG")
    store = await Store.open(tmp_path / "k.db")
    bus = EventBus()
    store.start_recording(bus)
    cfg = RunSettings(
        model="nova-sonic", turns=[0], base_url=f"http://127.0.0.1:{port}",
        rotation={"max_reconnects": 1}, watchdog={"max_retries": 1, "extra_ms": 3000, "min_wall_ms": 1000},
    )
    try:
        with pytest.raises(RunError, match="gave up after 1 reconnects.*CONNECTION_REFUSED"):
            await run_benchmark(demo, cfg, bus)
        await store.flush()
    finally:
        logger.remove(handler)
        await store.close()
    for f in tmp_path.iterdir():
        data = f.read_bytes()
        assert b"AKIA-NOVA-TEST-ID-0001" not in data and b"nova-secret-key-value-0002" not in data, f
    assert "nova-secret-key-value-0002" not in log.getvalue() and "AKIA-NOVA-TEST-ID-0001" not in log.getvalue()
