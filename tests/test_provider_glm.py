"""GLM-Realtime runner end to end: the engine, our GLMRealtimeLLMService, the local GLM fake
on 127.0.0.1, the real store. Assertions are on what the fake received (tool results, the
replayed history of a new connection) and on what the store recorded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from runners.base import SessionSpec, get_runner
from runners.engine import RunError, run_benchmark
from runners.fakes.script import script_for_benchmark
from runners.providers.glm_realtime.runner import GLMRealtimeRunner, history_entries
from runners.providers.glm_realtime.wire import MAX_INSTRUCTION_CHARS, tool_note
from tests.provider_runs import quiet_loguru, record_run

SPEED = 3.0  # the fake answers at once and our service batches by audio time: it copes


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


async def run_glm(demo, runner: GLMRealtimeRunner, tmp_path: Path, **cfg):
    config = RunSettings(model="glm-realtime-flash", fake=True, fake_timing="instant", speed=SPEED, **cfg)
    rec = await record_run(demo, config, runner, tmp_path / "glm.db")
    results = {i: r for i, r in rec.by_turn().items() if i >= 0}  # -1: greeting
    return rec.run_id, results, rec.events


def kinds(events, kind):
    return [e for e in events if e.kind == kind]


async def test_rotation_replays_history_with_tool_state_and_text_only_turn_is_flagged(demo, tmp_path):
    turns = [1, 2, 3]
    script = script_for_benchmark(demo, turns)
    script.replies[0].audio = False  # turn 1: the air model's failure mode, a transcript but no audio
    runner = GLMRealtimeRunner(script=script)
    # a session older than 1 ms is rotated at every turn boundary: one rotation before each turn
    _, results, events = await run_glm(demo, runner, tmp_path, turns=turns, rotation={"max_age_s": 0.001})
    fake = runner.fake

    assert sorted(results) == turns
    for i in turns:
        r = results[i]
        assert r.status == "ok", (i, r.status, r.error)
        assert r.assistant_text == demo.turn(i).golden_text, i
    # tool turns: the call the fake made was answered from the turn spec, and the payload reached it
    for i in (2, 3):
        exp = demo.turn(i).expected_calls[0]
        (call,) = results[i].tool_calls
        assert call.name == exp.name and call.status == "matched", (i, call)
        assert call.response in demo.turn(i).expected_responses
        got = [t for c in fake.connections for t in c.tool_results if t["call_id"] == call.call_id]
        assert got == [{"call_id": call.call_id, "name": exp.name, "result": call.response}], i

    # rotations: greeting session + one new session per turn, each announced with its replay
    rotated = kinds(events, "session_rotated")
    assert [(e.reason, e.from_session, e.to_session) for e in rotated] == [("age", 1, 2), ("age", 2, 3), ("age", 3, 4)]
    assert [e.session for e in kinds(events, "reconnected")] == [2, 3, 4]
    assert len(fake.connections) == 4 and all(c.auth_present for c in fake.connections)
    assert all(c.system_instruction == demo.system_prompt for c in fake.connections)
    assert all({t["name"] for t in c.tools} == {t.name for t in demo.tools} for c in fake.connections)
    assert all(c.setup["turn_detection"] == {"type": "client_vad"} for c in fake.connections)
    assert all(c.setup["model"] == "glm-realtime-flash" for c in fake.connections)

    # what the LAST new connection received: turns 1 and 2 in order, turn 2's tool call with
    # its result — before any audio of turn 3, and no kickoff: no reply asked for but turn 3's
    call2 = results[2].tool_calls[0]
    t1, t2 = demo.turn(1), demo.turn(2)
    assert fake.connections[3].history == [
        {"role": "user", "text": t1.input},
        {"role": "assistant", "text": t1.golden_text},
        {"role": "user", "text": t2.input},
        {"role": "assistant", "text": tool_note(call2.name, call2.args, call2.response)},
        {"role": "assistant", "text": t2.golden_text},
    ]
    assert all(-1 not in c.replies for c in fake.connections[1:])
    assert rotated[-1].replayed.messages == 4 and rotated[-1].replayed.tool_calls == 1
    assert rotated[-1].replayed.dropped_messages == 0
    # and the one before it carried turn 1 only
    assert fake.connections[2].history[:2] == [
        {"role": "user", "text": t1.input},
        {"role": "assistant", "text": t1.golden_text},
    ]
    # each user turn was committed once, on its own connection, in ≥ 250 ms chunks but the last
    assert [c.user_turns for c in fake.connections] == [0, 1, 1, 1]
    for c in fake.connections[1:]:
        assert c.audio_in_rate == 16000 and sum(ms < 250 for ms in c.audio_chunk_ms) <= 1
        assert c.errors == []

    # turn 1 had text but no audio: flagged on that turn, no bot audio, the session kept going
    flagged = [e for e in kinds(events, "error") if "text but no audio" in e.message]
    assert [(e.turn_index, e.fatal) for e in flagged] == [(1, False)]
    assert results[1].bot_speech == [] and results[2].bot_speech
    assert results[1].no_audio and not results[2].no_audio  # recorded on the turn, for turn-taking
    assert results[1].retries == 0 and not kinds(events, "retry")


async def test_service_reconnect_is_reported_with_what_it_replayed_within_the_budget(demo, tmp_path):
    """The server drops the socket after turn 2; our service reconnects by itself and replays
    what fits next to a prompt that leaves 150 chars, and says what it dropped."""
    budget = 150
    pad = "\n" + "Keep answers short. " * 600
    prompt = (demo.system_prompt + pad)[: MAX_INSTRUCTION_CHARS - 200 - budget]
    bench = demo.model_copy(update={"system_prompt": prompt})
    turns = [2, 3]
    script = script_for_benchmark(bench, turns)
    script.replies[0].then = "disconnect"
    runner = GLMRealtimeRunner(script=script)
    _, results, events = await run_glm(bench, runner, tmp_path, turns=turns)
    fake = runner.fake

    assert [results[i].status for i in turns] == ["ok", "ok"], [(r.status, r.error) for r in results.values()]
    assert len(fake.connections) == 2 and fake.connections[0].closed == "server:1011"
    first, second = fake.connections
    assert first.system_instruction == second.system_instruction == prompt
    # reported as a rotation within the same engine session, with what was replayed
    (rot,) = kinds(events, "session_rotated")
    assert (rot.reason, rot.from_session, rot.to_session, rot.turn_index) == ("provider_reconnect", 1, 1, 2)
    (rec,) = kinds(events, "reconnected")
    assert rec.session == 1 and rec.reason.startswith("provider_reconnect: closed: 1011")
    # what the session had, in order: greeting request + reply, the user's words (as the
    # provider transcribed them), the tool call with its result, the spoken answer
    call = results[2].tool_calls[0]
    t2 = demo.turn(2)
    had = [
        ("user", "Greet the user briefly."),
        ("assistant", script.kickoff.text),
        ("user", t2.input),
        ("assistant", tool_note(call.name, call.args, call.response)),
        ("assistant", t2.golden_text),
    ]
    kept = []
    for role, text in reversed(had):  # newest first while it fits
        if sum(len(t) for _, t in kept) + len(text) > budget:
            break
        kept.insert(0, (role, text))
    assert 0 < len(kept) < len(had)
    assert [(h["role"], h["text"]) for h in second.history] == kept
    assert rot.replayed.messages == len(kept) and rot.replayed.dropped_messages == len(had) - len(kept)
    assert rot.replayed.chars == sum(len(t) for _, t in kept) <= budget
    # the drop is said plainly, on the bus, as a non-fatal error of that turn
    (note,) = [e for e in kinds(events, "error") if "dropped" in e.message]
    assert not note.fatal and note.turn_index == 2
    assert f"dropped the {len(had) - len(kept)} oldest message(s)" in note.message and f"budget is {budget} chars" in note.message
    # turn 3 ran on the new connection, its tool result too
    call3 = results[3].tool_calls[0]
    assert second.user_turns == 1 and [t["call_id"] for t in second.tool_results] == [call3.call_id]


def test_history_budget_drops_oldest_and_says_so(demo):
    """A prompt near the cap leaves little room: the seeded replay keeps the newest messages."""
    from runners.base import HistoryItem

    prompt = "p" * (MAX_INSTRUCTION_CHARS - 260)  # budget: 60 chars
    runner = GLMRealtimeRunner()
    policy = runner.rotation_policy(RunSettings(model="glm-realtime-flash"), prompt)
    assert policy.history_budget_chars == 60 and policy.max_context_chars == MAX_INSTRUCTION_CHARS
    # only what the user left unset is overridden
    mine = runner.rotation_policy(RunSettings(model="glm-realtime-flash", rotation={"history_budget_chars": 5}), prompt)
    assert mine.history_budget_chars == 5 and mine.max_context_chars == MAX_INSTRUCTION_CHARS
    history = [
        HistoryItem(kind="user", turn_index=0, text="a" * 40),
        HistoryItem(kind="assistant", turn_index=0, text="b" * 40),
        HistoryItem(kind="user", turn_index=1, text="c" * 20),
        HistoryItem(kind="assistant", turn_index=1, text="d" * 30),
    ]
    from runners.providers.glm_realtime.wire import ReplayReport, budget_for, fit_history

    report = ReplayReport(session=1, kind="seed", budget_chars=budget_for(prompt))
    kept = fit_history(history_entries(history), report)
    assert kept == [("user", "c" * 20), ("assistant", "d" * 30)]
    assert (report.messages, report.chars, report.dropped_messages) == (2, 50, 2)
    from runners.providers.glm_realtime.runner import _drop_note

    assert "dropped the 2 oldest message(s)" in _drop_note(report) and "budget is 60 chars" in _drop_note(report)


async def test_over_long_prompt_is_refused_naming_benchmark_and_sizes(shared_data, tmp_path):
    conv = load_benchmark(shared_data / "conversation_bench")
    runner = GLMRealtimeRunner()
    bus = EventBus()
    sub = bus.subscribe()
    with pytest.raises(RunError) as e:
        await run_benchmark(conv, RunSettings(model="glm-realtime-flash", fake=True, fake_timing="instant", turns=[0]), bus, provider=runner)
    msg = str(e.value)
    assert "conversation_bench" in msg and f"{len(conv.system_prompt):,} characters" in msg and "at most 12,000" in msg
    assert len(conv.system_prompt) > 49_000
    assert runner.fake is None  # refused before the fake started
    events = sub.drain()
    (err,) = kinds(events, "error")
    assert err.fatal and "conversation_bench" in err.message
    assert [e.status for e in kinds(events, "run_ended")] == ["failed"]
    # the two shared benchmarks that fit are accepted by the same check
    for name in ("grocery_bench", "product_bench"):
        runner.check_benchmark(load_benchmark(shared_data / name))


def test_aliases_and_preflight_name_the_key(monkeypatch):
    for alias, model in (("glm-realtime-flash", "glm-realtime-flash"), ("glm-realtime-air", "glm-realtime-air")):
        r = get_runner(alias)
        assert isinstance(r, GLMRealtimeRunner) and r.resolve_model(alias) == model and r.turn_frames
    for env in GLMRealtimeRunner.key_env:
        monkeypatch.delenv(env, raising=False)
    r = get_runner("glm-realtime-air")
    (problem,) = r.preflight(RunSettings(model="glm-realtime-air"))
    assert "ZHIPUAI_API_KEY (or GLM_API_KEY or ZAI_API_KEY) is not set" in problem
    assert r.preflight(RunSettings(model="glm-realtime-air", fake=True, fake_timing="instant", speed=3)) == []
    assert any("--speed must be 1" in p for p in r.preflight(RunSettings(model="glm-realtime-air", speed=3)))
    monkeypatch.setenv("ZAI_API_KEY", "zai-test")  # an accepted alias
    assert r.preflight(RunSettings(model="glm-realtime-air")) == [] and r.api_key(RunSettings(model="glm-realtime-air")) == "zai-test"
    monkeypatch.setenv("ZHIPUAI_API_KEY", "zhipu-test")  # the primary wins
    assert r.api_key(RunSettings(model="glm-realtime-air")) == "zhipu-test"
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "websockets" else object())
    assert any("'websockets' is not installed" in p for p in r.preflight(RunSettings(model="glm-realtime-air")))


def test_build_service_passes_model_prompt_tools_and_history(demo):
    from runners.base import HistoryItem

    runner = GLMRealtimeRunner()
    spec = SessionSpec(
        model="glm-realtime-air",
        system_prompt=demo.system_prompt,
        tools=demo.tools,
        history=[
            HistoryItem(kind="user", turn_index=2, text="slots?"),
            HistoryItem(kind="tool_call", turn_index=2, call_id="c1", name="check_repair_slots", args={"day": "tue"}),
            HistoryItem(kind="tool_result", turn_index=2, call_id="c1", name="check_repair_slots", response={"slots": ["10:00"]}),
            HistoryItem(kind="assistant", turn_index=2, text="Ten is free."),
        ],
        config=RunSettings(model="glm-realtime-air", base_url="ws://127.0.0.1:9/api/paas/v4/realtime"),
    )
    svc = runner.build_service(spec)
    assert svc._settings.model == "glm-realtime-air" and svc._base_url.startswith("ws://127.0.0.1:9")
    assert {t["name"] for t in svc._glm_tools} == {t.name for t in demo.tools}
    assert svc._history == [
        ("user", "slots?"),
        ("assistant", '[tool check_repair_slots({"day":"tue"}) returned {"slots":["10:00"]}]'),
        ("assistant", "Ten is free."),
    ]
    assert not svc._respond_on_seed  # no kickoff: the seeded session asks for no reply
    assert runner.is_alive(svc)  # connecting counts as alive; a failed connect does not
    svc.failed = "refused"
    assert not runner.is_alive(svc)


def test_cli_run_against_the_fake(tmp_path, capsys):
    from arena_tui.cli import main

    db = tmp_path / "cli.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "glm-realtime-flash", "--fake", "--fake-timing", "instant", "--headless",
                 "--turns", "0-2", "--speed", str(SPEED)])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    with sqlite3.connect(db) as c:
        (status, model) = c.execute("select status, model from runs").fetchone()
        rows = c.execute("select turn_index, status from turns order by turn_index").fetchall()
        payload = json.dumps(c.execute("select * from events").fetchall(), default=str)
    assert status == "completed" and model == "glm-realtime-flash"
    assert [(i, s) for i, s in rows if i >= 0] == [(0, "ok"), (1, "ok"), (2, "ok")]
    assert "glm-fake-not-a-secret" not in payload  # the fake's key never reaches the store


def test_cli_refuses_an_over_long_prompt_naming_it(shared_data, tmp_path, capsys):
    from arena_tui.cli import main

    code = main(["--db", str(tmp_path / "x.db"), "--data", str(shared_data), "run", "conversation_bench",
                 "--model", "glm-realtime-air", "--fake", "--fake-timing", "instant", "--headless", "--turns", "0"])
    err = capsys.readouterr().err
    assert code == 2 and "conversation_bench: its system prompt is" in err and "at most 12,000" in err
    assert "Traceback" not in err


async def test_real_service_path_sends_the_key_on_the_wire_only(demo, tmp_path, monkeypatch):
    """`--model glm-realtime-flash --base-url …` with a key set, against an externally started
    fake: the key authenticates the socket and appears nowhere in the store or the logs."""
    import io

    from loguru import logger

    from runners.fakes.script import Script, ScriptedReply
    from runners.providers.glm_realtime.fake import GLMRealtimeFake

    secret = "zhipu-SECRET-0123456789abcdef"
    for env in GLMRealtimeRunner.key_env:
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("ZHIPUAI_API_KEY", secret)
    log = io.StringIO()
    handler = logger.add(log, level="DEBUG")
    script = Script(key="user_turn", kickoff=ScriptedReply(text="Hi there!"), replies=[ScriptedReply(text="Yes, nine to four.")])
    fake = await GLMRealtimeFake(script).start()
    runner = GLMRealtimeRunner()
    try:
        store = await Store.open(tmp_path / "k.db")
        bus = EventBus()
        store.start_recording(bus)
        run_id = await run_benchmark(
            demo, RunSettings(model="glm-realtime-flash", base_url=fake.base_url, turns=[0]), bus, provider=runner
        )
        await store.flush()
        results = await store.turn_results(run_id)
        await store.close()
    finally:
        logger.remove(handler)
        await fake.stop()
    assert [(r.turn_index, r.status, r.assistant_text) for r in results if r.turn_index >= 0] == [(0, "ok", "Yes, nine to four.")]
    assert runner.fake is None and fake.connections[0].auth_present and fake.connections[0].user_turns == 1
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f
    assert secret not in log.getvalue()
