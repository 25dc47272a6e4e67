"""The Gemini Live runner end to end: engine → real `GeminiLiveLLMService` (our subclass) →
google-genai over TLS → the local Gemini Live fake, recorded by the real store.

Assertions are on what the fake RECEIVED (setup, 16 kHz audio, activity windows, tool
responses, seeded history, resumption handles), on the events on the bus, and on the
TurnResults the store holds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.cli import main
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from runners.base import get_runner
from runners.engine import RunError, run_benchmark
from runners.fakes.script import ScriptedReply
from runners.fakes.wire import pick
from runners.providers.gemini_live.runner import GeminiLiveRunner
from tests.provider_runs import RecordedRun, quiet_loguru, record_run

SPEED = 4.0  # the fake sends replies at once; the engine paces them at this speed


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("ERROR")


class Run:
    def __init__(self, rec: RecordedRun, runner: GeminiLiveRunner) -> None:
        self.run_id, self.events, self.results, self.runner = rec.run_id, rec.events, rec.by_turn(), runner
        self.fake = runner.fake
        self.kinds = rec.kinds


@pytest.fixture
async def gemini_run(tmp_path: Path):
    runs = 0

    async def go(bench, runner: GeminiLiveRunner, model: str = "gemini-native-audio", **cfg: Any) -> Run:
        nonlocal runs
        runs += 1
        config = RunSettings(model=model, fake=True, fake_timing="instant", speed=SPEED, **cfg)
        return Run(await record_run(bench, config, runner, tmp_path / f"g{runs - 1}.db"), runner)

    return go


def realtime_inputs(rec) -> list[dict]:
    return [pick(m, "realtimeInput") for m in rec.messages if pick(m, "realtimeInput") is not None]


def assert_golden(run: Run, demo, turns: list[int]) -> None:
    for i in turns:
        r = run.results[i]
        t = demo.turn(i)
        assert r.status == "ok", (i, r.status, r.error)
        assert r.assistant_text == t.golden_text, i
        assert [c.name for c in r.tool_calls] == [c.name for c in t.expected_calls[:1]], i
        assert all(c.status == "matched" for c in r.tool_calls), (i, r.tool_calls)


# ---------------------------------------------------------------------------- engine rotation


async def test_tool_turns_and_engine_rotation_replay_history_with_tool_state(demo, gemini_run):
    """Turns 2-3 (two tool calls); the session is older than 12 s before turn 3, so the engine
    rotates and the new connection is seeded with the history, tool call and result as text."""
    runner = GeminiLiveRunner()
    run = await gemini_run(demo, runner, turns=[2, 3], rotation={"max_age_s": 12})
    assert_golden(run, demo, [2, 3])
    assert run.results[3].session == 2 and run.results[3].reconnects == 1

    first, second = run.fake.connections
    # setup: model, prompt, tools, resumption, transcription, our VAD choice
    assert first.setup["model"] == "models/" + GeminiLiveRunner.aliases["gemini-native-audio"]  # the catalog's id
    assert first.system_instruction == demo.system_prompt
    assert {t["name"] for t in first.tools} == {t.name for t in demo.tools}
    assert first.auth_present
    setup = first.setup
    assert pick(setup, "sessionResumption") is not None
    assert pick(setup, "inputAudioTranscription") is not None and pick(setup, "outputAudioTranscription") is not None
    aad = pick(pick(setup, "realtimeInputConfig"), "automaticActivityDetection")
    assert pick(aad, "disabled") is True
    assert pick(pick(setup, "contextWindowCompression"), "slidingWindow") is not None
    # tools are declared blocking (no NON_BLOCKING behaviour): the engine answers at once
    assert all(pick(t, "behavior") in (None, "BLOCKING") for t in first.tools)

    # audio: resampled to 16 kHz, only inside our activity windows
    for rec in (first, second):
        assert rec.audio_in_rate == 16000
        kinds = [next(iter(ri)) for ri in realtime_inputs(rec)]
        assert kinds.count("activity_start") + kinds.count("activityStart") == 1
        assert kinds.count("activity_end") + kinds.count("activityEnd") == 1
    wav_ms = run.results[2].user_audio.end_ms - run.results[2].user_audio.start_ms
    assert first.audio_in_ms <= wav_ms + 600  # the clip's speech (+ pre-roll), not the silence around it
    assert first.audio_in_ms >= (run.results[2].user_speech[-1].end_ms - run.results[2].user_speech[0].start_ms) - 100

    # the engine's tool answers are what reached the wire, on the connection that asked
    t2, t3 = demo.turn(2), demo.turn(3)
    assert [tr["result"] for tr in first.tool_results] == [t2.expected_responses[0]]
    assert [tr["result"] for tr in second.tool_results] == [t3.expected_responses[0]]
    assert first.tool_results[0]["call_id"] == run.results[2].tool_calls[0].call_id
    assert first.tool_results[0]["name"] == "check_repair_slots"

    # the rotation event: reason, sessions, what was replayed
    (rot,) = run.kinds("session_rotated")
    assert (rot.reason, rot.from_session, rot.to_session) == ("age", 1, 2)
    assert rot.replayed.strategy == "full_history"
    assert rot.replayed.messages == 2 and rot.replayed.tool_calls == 1
    (rec_ev,) = run.kinds("reconnected")
    assert rec_ev.session == 2 and rec_ev.reason == "age"

    # what the NEW connection was seeded with: turn 2, its call and result (as text), the kickoff
    assert second.resumed_from is None
    seeded = [(h["role"], h["text"]) for h in second.history]
    args = json.dumps(t2.expected_calls[0].args, ensure_ascii=False)
    result = json.dumps(t2.expected_responses[0], ensure_ascii=False)
    assert seeded == [
        ("user", t2.input),
        ("model", f"[Called function check_repair_slots with args {args}]"),
        ("user", f"[Function check_repair_slots returned {result}]"),
        ("model", t2.golden_text),
        ("user", "Please continue our conversation."),
    ]
    assert first.history == [{"role": "user", "text": "Greet the user briefly."}]
    assert second.errors == [] and first.errors == []
    # the fake's 1007 on seeded functionCall parts never fired, and the key never reached the record
    assert all("fake-key-not-a-secret" not in c.model_dump_json() for c in run.fake.connections)
    assert run.kinds("run_ended")[0].status == "completed"


# ---------------------------------------------------------------------------- Pipecat's own reconnect


class GoAwayAfterTurn0(GeminiLiveRunner):
    """The fake sends goAway after turn 0's reply, then closes the socket."""

    async def start(self, config, benchmark):
        await super().start(config, benchmark)
        self.fake.script.replies[0].then = "go_away"


async def test_go_away_resumes_with_handle_and_the_run_goes_on(demo, gemini_run):
    runner = GoAwayAfterTurn0()
    run = await gemini_run(demo, runner, model="gemini-3.1-flash", turns=[0, 1, 2])
    assert_golden(run, demo, [0, 1, 2])
    first, second = run.fake.connections
    assert first.setup["model"] == second.setup["model"] == "models/gemini-3.1-flash-live-preview"
    assert first.closed == "server:go_away"
    # Pipecat presented the last handle the fake issued and re-sent no history
    assert second.resumed_from is not None and second.history == []
    kept = [(h["role"], h["text"]) for h in run.fake.resumable_history(second.resumed_from)]
    assert ("user", demo.turn(0).input) in kept and ("model", demo.turn(0).golden_text) in kept
    assert second.system_instruction == demo.system_prompt
    # turns 1 and 2 (with its tool call) were served by the resumed connection
    assert second.replies == [1, 2] and second.user_turns == 2
    assert [tr["result"] for tr in second.tool_results] == [demo.turn(2).expected_responses[0]]

    (rot,) = run.kinds("session_rotated")
    assert rot.reason == "provider_go_away" and rot.from_session == rot.to_session == 1
    assert rot.replayed.strategy == "provider_resumption"
    (rec_ev,) = run.kinds("reconnected")
    assert rec_ev.reason == "provider_go_away" and rec_ev.session == 1 and rec_ev.attempt == 1
    assert rot.turn_index in (0, 1)
    assert all(run.results[i].session == 1 for i in (0, 1, 2))  # one engine session throughout


class DisconnectWithoutHandle(GeminiLiveRunner):
    async def start(self, config, benchmark):
        await super().start(config, benchmark)
        self.fake.grant_resumption = False
        self.fake.script.replies[0].then = "disconnect"


async def test_close_without_handle_reseeds_context_and_reports_it(demo, gemini_run):
    run = await gemini_run(demo, DisconnectWithoutHandle(), turns=[0, 1])
    assert_golden(run, demo, [1])
    # Pipecat forces a reply to the re-seeded context (Gemini 2.5); it came inside turn 0's
    # quiet window, so turn 0 holds it after its answer: what a listener would have heard.
    r0 = run.results[0]
    assert r0.status == "ok" and r0.assistant_text.startswith(demo.turn(0).golden_text)
    first, second = run.fake.connections
    assert second.replies == [-1, 1]
    assert first.closed == "server:1011" and second.resumed_from is None
    # Pipecat re-seeds its LLMContext, which the aggregators update at PLAYED time: a close
    # right after a reply re-seeds without that last exchange. The event says what was sent.
    seeded = [(h["role"], h["text"]) for h in second.history if h["text"].strip()]
    assert seeded[:2] == [("user", "Greet the user briefly."), ("model", "Hello! How can I help you today?")]
    (rot,) = run.kinds("session_rotated")
    assert rot.reason == "provider_reconnect" and rot.replayed.strategy == "full_history"
    assert rot.replayed.messages == len(seeded) and rot.replayed.tool_calls == 0
    assert "re-seeded" in rot.replayed.note and "1011" in rot.replayed.note


# ---------------------------------------------------------------------------- Gemini's stalls


class StallsAndControlTokens(GeminiLiveRunner):
    """After a tool result the fake waits for realtime input; turn 0's first reply is `<ctrl46>` only."""

    async def start(self, config, benchmark):
        await super().start(config, benchmark)
        self.fake.stall_after_tool = True
        self.fake.script.replies.insert(0, ScriptedReply(text="<ctrl46>", audio=False))


async def test_tool_stall_is_nudged_and_control_token_reply_is_retried(demo, gemini_run):
    runner = StallsAndControlTokens(tool_nudge_s=0.5)
    run = await gemini_run(demo, runner, turns=[0, 2], watchdog={"backoff_ms": 200})
    assert_golden(run, demo, [0, 2])
    # <ctrl46> alone is an empty reply: retried once, then the real answer
    r0 = run.results[0]
    assert r0.retries == 1 and "<ctrl46>" not in r0.assistant_text
    assert [e.reason for e in run.kinds("retry")] == ["empty"]
    # the stall: the fake only went on after the nudge, which came after the tool response
    # (the retry played into a fresh session: the one that heard turn 0 is never sent it again)
    assert len(run.fake.connections) == 2
    order = [
        "tool" if pick(m, "toolResponse") is not None else "nudge"
        for rec in run.fake.connections for m in rec.messages
        if pick(m, "toolResponse") is not None or (pick(m, "realtimeInput") or {}).get("text") == " "
    ]
    assert order == ["tool", "nudge"]
    notes = [e.message for e in run.kinds("error") if "nudged" in e.message]
    assert len(notes) == 1 and "check_repair_slots" in notes[0]
    assert not any(e.fatal for e in run.kinds("error"))


# ---------------------------------------------------------------------------- CLI, registry, preflight


def test_cli_run_fake_records_the_turns(tmp_path, capsys):
    db = tmp_path / "cli.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "gemini-native-audio", "--fake", "--fake-timing", "instant", "--headless",
                 "--turns", "0-2", "--speed", "4"])
    out, err = capsys.readouterr()
    assert code == 0, out
    assert "WARNING" not in err, err  # nothing for the user to act on (Pipecat's turn-frames notice is not)
    with sqlite3.connect(db) as c:
        (status, model) = c.execute("select status, model from runs").fetchone()
        assert status == "completed" and model == "gemini-native-audio"
        rows = c.execute("select turn_index, status from turns where turn_index >= 0 order by turn_index").fetchall()
    assert rows == [(0, "ok"), (1, "ok"), (2, "ok")]


def test_aliases_resolve_to_model_ids():
    for alias in ("gemini-native-audio", "gemini-3.1-flash"):
        runner = get_runner(alias)
        assert isinstance(runner, GeminiLiveRunner)
    r = GeminiLiveRunner()
    assert r.resolve_model("gemini-native-audio") == "models/gemini-2.5-flash-native-audio-preview-12-2025"
    assert r.resolve_model("gemini-3.1-flash") == "models/gemini-3.1-flash-live-preview"


async def test_preflight_names_the_missing_key_and_package(demo, monkeypatch):
    for env in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    bus = EventBus()
    sub = bus.subscribe()
    with pytest.raises(RunError, match="GOOGLE_API_KEY \\(or GEMINI_API_KEY\\) is not set"):
        await run_benchmark(demo, RunSettings(model="gemini-3.1-flash"), bus)
    assert sub.drain() == []
    assert GeminiLiveRunner().preflight(RunSettings(model="gemini-3.1-flash", fake=True, fake_timing="instant")) == []
    monkeypatch.setenv("GEMINI_API_KEY", "g-key")
    assert GeminiLiveRunner().preflight(RunSettings(model="gemini-3.1-flash")) == []
    assert "--speed must be 1" in " ".join(GeminiLiveRunner().preflight(RunSettings(model="gemini-3.1-flash", speed=2)))

    class Missing(GeminiLiveRunner):
        packages = ("google.genai_not_here", "nope_pkg.sub")

    problems = Missing().preflight(RunSettings(model="gemini-3.1-flash", fake=True, fake_timing="instant"))
    assert any("'google.genai_not_here' is not installed" in p for p in problems)
    assert any("'nope_pkg.sub' is not installed" in p for p in problems)


# ---------------------------------------------------------------------------- a real-service path, offline


async def test_base_url_path_keeps_the_key_on_the_wire_only(demo, tmp_path, monkeypatch):
    """`--model gemini-native-audio --base-url` (no --fake): the key comes from GEMINI_API_KEY,
    the endpoint's certificate from SSL_CERT_FILE; the key reaches the server and nothing else."""
    import io

    from loguru import logger

    from runners.fakes.script import script_for_benchmark
    from runners.providers.gemini_live.fake import GeminiLiveFake

    secret = "AIza-test-SECRET-0123456789abcdef"
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", secret)
    log = io.StringIO()
    handler = logger.add(log, level="DEBUG")
    db = tmp_path / "k.db"
    store = await Store.open(db)
    bus = EventBus()
    store.start_recording(bus)
    async with GeminiLiveFake(script_for_benchmark(demo, [1])) as fake:
        monkeypatch.setenv("SSL_CERT_FILE", str(fake.tls.cert_pem))
        try:
            run_id = await run_benchmark(
                demo, RunSettings(model="gemini-3.1-flash", base_url=fake.base_url, turns=[1]), bus
            )
            await store.flush()
            results = await store.turn_results(run_id)
        finally:
            logger.remove(handler)
            await store.close()
    assert [(r.status, r.assistant_text) for r in results if r.turn_index >= 0] == [("ok", demo.turn(1).golden_text)]
    (rec,) = fake.connections
    assert rec.auth_present and rec.setup["model"] == "models/gemini-3.1-flash-live-preview"
    assert rec.audio_in_rate == 16000
    for f in tmp_path.iterdir():
        assert secret.encode() not in f.read_bytes(), f
    assert "Connecting to Gemini service" in log.getvalue()  # the debug log was captured
    assert secret not in log.getvalue()


async def test_untrusted_endpoint_fails_the_run_with_the_reason(demo, monkeypatch):
    """A connection that cannot open (here: the fake's certificate is not trusted) ends the run
    with an error that says why, after the configured reconnects."""
    from runners.fakes.script import Script
    from runners.providers.gemini_live.fake import GeminiLiveFake

    monkeypatch.setenv("GOOGLE_API_KEY", "g-key-not-a-secret")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    bus = EventBus()
    sub = bus.subscribe()
    async with GeminiLiveFake(Script()) as fake:
        cfg = RunSettings(model="gemini-native-audio", base_url=fake.base_url, turns=[0], rotation={"max_reconnects": 1})
        with pytest.raises(RunError, match="Gemini Live connection failed: .*CERTIFICATE_VERIFY_FAILED"):
            await run_benchmark(demo, cfg, bus)
    events = sub.drain()
    assert [e.status for e in events if e.kind == "run_ended"] == ["failed"]
    assert any(e.kind == "error" and e.where == "provider" and "certificate" in e.message.lower() for e in events)
    assert all(c.setup == {} for c in fake.connections)  # nothing got past the TLS handshake
