"""gpt-live-1 end to end: the engine's full-duplex turn loop, the real `OpenAILiveLLMService` (our
subclass), the local Live API fake with its Responses backend on 127.0.0.1, and a client backend
running one of our text models against its own fake. Assertions are on what each fake received
(what the real service requires of a session) and on the record: every turn answered, each call
the backend's and answered from the turn spec, the duplex figures read off our timeline."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from aiohttp import ClientSession, WSMsgType

from arena_tui.compare.duplex import duplex_figures
from arena_tui.judge.prompt import render_turn
from arena_tui.spine.bus import EventBus
from arena_tui.spine.duplex import early_start
from arena_tui.spine.events import Interval, TurnResult
from arena_tui.spine.settings import Greeting, RunSettings
from arena_tui.spine.source import FULL_DUPLEX, FULL_DUPLEX_LABEL, variant_labels
from runners.base import get_runner
from runners.engine import run_benchmark
from runners.fakes.script import Script, ScriptedReply
from runners.fakes.text_replies import SPOKEN_MARK_RULE, heard_request, spoken
from runners.fakes.timing import INSTANT, TurnTiming
from runners.providers.openai_live.fake import EARLY_START, LIVE_DUPLEX, OpenAILiveFake
from runners.providers.openai_live.runner import RESPONSES_MODEL
from runners.run.full_duplex import FullDuplexRun
from tests.provider_runs import quiet_loguru

SPEED = 6.0  # the fake's clock and endpointer run in audio time


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


async def _run(bench, alias: str, turns: list[int], timing=INSTANT, speed: float = SPEED, **kw):
    runner = get_runner(alias)
    runner.timing = timing
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model=alias, fake=True, speed=speed, turns=turns, **kw)
    await run_benchmark(bench, config, bus, provider=runner)
    events = sub.drain()
    results = {e.result.turn_index: e.result for e in events if e.kind == "turn_ended"}
    return runner, events, results


async def test_demo_turns_answered_with_the_backends_calls_and_what_the_session_requires(demo):
    """demo_bench 0-2 against the fake: each turn ok with its golden answer, turn 2's call made by the
    hosted backend (Responses delegation) and answered from the turn spec, the fake saw a session as
    the Live API requires it (no commit, no response trigger, 24 kHz PCM) and refused nothing."""
    runner, events, results = await _run(demo, "gpt-live-1", [0, 1, 2])
    assert [results[t].status for t in (0, 1, 2)] == ["ok"] * 3, {t: r.error for t, r in results.items()}
    for t in (0, 1, 2):
        assert " ".join(results[t].assistant_text.split()) == " ".join(demo.turns[t].golden_text.split())
    (call,) = results[2].tool_calls
    assert (call.name, call.status, call.made_by, call.made_by_model) == ("check_repair_slots", "matched", "back", RESPONSES_MODEL)
    assert call.response == demo.turns[2].function_call_response
    called = [e for e in events if e.kind == "tool_call"]
    assert [(e.made_by, e.made_by_model) for e in called] == [("back", RESPONSES_MODEL)]
    started = next(e for e in events if e.kind == "run_started")
    assert started.config[FULL_DUPLEX] is True and FULL_DUPLEX_LABEL in variant_labels(started.config)

    fake = runner.fake
    assert isinstance(fake, OpenAILiveFake)
    (rec,) = fake.connections
    assert rec.errors == [] and rec.auth_present and rec.path == "/v1/live/sessions"
    first = rec.messages[0]
    assert first["type"] == "session.start"
    session = first["session"]
    assert session["model"] == "gpt-live-1" and session["instructions"] == demo.system_prompt
    assert "audio" not in session  # the API's default: PCM16 at 24 kHz both ways
    delegation = session["delegation"]
    assert delegation["type"] == "responses" and delegation["responses"]["model"] == RESPONSES_MODEL
    assert delegation["responses"]["instructions"] == demo.system_prompt
    assert {t["name"] for t in delegation["responses"]["tools"]} == {t.name for t in demo.tools}
    assert all("strict" not in t for t in delegation["responses"]["tools"])  # the Live schema refuses it
    kinds = {m["type"] for m in rec.messages}
    assert not kinds & {"input_audio_buffer.commit", "conversation.item.create", "session.update"}
    assert rec.audio_in_rate == 24000 and rec.audio_in_ms > 5000
    # the greeting is Pipecat's opening instruction: commentary for the session (delegation_id null)
    opening = next(m for m in rec.messages if m["type"] == "session.commentary.append")
    assert opening["delegation_id"] is None and opening["content"] == "Greet the user briefly."
    # the function output went back, then the delegated work was continued
    outputs = [m for m in rec.messages if m["type"] == "response.item.create"]
    assert [json.loads(m["item"]["output"]) for m in outputs] == [demo.turns[2].function_call_response]
    assert kinds >= {"response.create"} and fake.tool_results()[0]["name"] == "check_repair_slots"
    # OpenAI's part: the hosted backend was asked with the session's config, then given the output
    ask, follow = fake.backend.exchanges
    assert ask.model == RESPONSES_MODEL and ask.system == demo.system_prompt and ask.user_texts()[-1] == demo.turns[2].input
    assert follow.body["previous_response_id"] and follow.tool_results()[0]["result"] == demo.turns[2].function_call_response


async def test_a_client_backend_is_our_text_model_and_makes_both_calls(demo):
    """`gpt-live-1+gpt-4.1-mini`: the live model delegates to Pipecat's backend worker running our
    text model against its own fake; the backend is handed the transcript, makes turn 5's two calls
    (answered from the turn spec, recorded as the backend's), and what it marks for the user comes
    back as commentary the model says."""
    runner, events, results = await _run(demo, "gpt-live-1+gpt-4.1-mini", [5], greeting=Greeting(enabled=False))
    r = results[5]
    assert r.status == "ok", r.error
    assert sorted((c.args.get("part"), c.status, c.made_by, c.made_by_model) for c in r.tool_calls) == [
        ("brake pads", "matched", "back", "gpt-4.1-mini"), ("inner tube", "matched", "back", "gpt-4.1-mini")]
    assert " ".join(r.assistant_text.split()) == " ".join(demo.turns[5].golden_text.split())
    fake = runner.fake
    (rec,) = fake.connections
    assert rec.errors == [] and rec.setup["delegation"] == {"type": "client"}
    chat = fake.client_backend
    first = chat.requests[0]
    assert heard_request(first.user_texts()[-1]) == demo.turns[5].input  # the transcript, its USER line the turn
    system = next(m["content"] for m in first.messages if m["role"] == "system")
    assert system.startswith(demo.system_prompt) and SPOKEN_MARK_RULE in system
    answer = next(m for m in rec.messages if m["type"] == "session.commentary.append" and m["delegation_id"])
    assert " ".join(answer["content"].split()) == " ".join(demo.turns[5].golden_text.split())
    assert len(fake.tool_results()) == 2


async def test_an_early_start_is_measured_before_the_user_finished(demo):
    """Quirk `early_start` forced on turn 1: the fake knows the turn by its audio and answers before
    the user's speech ends; the turn's record says by how much, and the run's figures count it."""
    timing = INSTANT.with_turns({0: TurnTiming(quirks={EARLY_START: True})})
    # (a modest speed: every ms of this machine's own transit is `speed` ms on our timeline)
    runner, _, results = await _run(demo, "gpt-live-1", [1, 2], timing=timing, speed=3.0, greeting=Greeting(enabled=False))
    rec = runner.fake.connections[0]
    assert rec.marks(EARLY_START, 0) and rec.marks("reply_start", 0)[0].t_ms < rec.marks("user_end")[0].t_ms
    r = results[1]
    # by how much, on our timeline: the fake aimed 400-1000 ms before its own idea of where the speech ends
    assert r.status == "ok" and r.early_start_ms is not None and 0.0 < r.early_start_ms <= 1000.0, r.early_start_ms
    assert results[2].early_start_ms is None
    f = duplex_figures(results.values(), with_latency=False)
    assert (f.early.passes, f.early.n, f.answered.passes, f.answered.n) == (1, 2, 2, 2)


async def test_a_turn_the_model_lets_pass_is_its_choice_and_not_asked_again(demo):
    """A full-duplex model that says nothing to a turn: no_response, the turn played once (no retry
    into a fresh session), and the answered share says so."""
    runner = get_runner("gpt-live-1")
    runner.timing = INSTANT
    runner.script = Script(key="user_turn", replies=[ScriptedReply(user_transcript=demo.turns[0].input, text="", audio=False)])
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model="gpt-live-1", fake=True, speed=SPEED, turns=[0, 1], greeting=Greeting(enabled=False),
                         watchdog={"extra_ms": 4000.0, "min_wall_ms": 0.0})
    await run_benchmark(demo, config, bus, provider=runner)
    events = sub.drain()
    results = {e.result.turn_index: e.result for e in events if e.kind == "turn_ended"}
    assert results[0].status == "no_response" and results[0].retries == 0
    assert not [e for e in events if e.kind == "retry"] and len(runner.fake.connections) == 1
    f = duplex_figures(results.values(), with_latency=False)
    assert (f.answered.passes, f.answered.n) == (1, 2)


async def test_the_fake_refuses_what_the_live_api_refuses():
    """Straight on the wire: audio before the session starts, a schema field it lacks, a second
    start, a Realtime-API commit, Responses-only events under client delegation, and an append
    without its delegation id are each an `error` event (recorded), as the real service's."""
    async with OpenAILiveFake(Script()) as fake:
        async with ClientSession() as http:
            async def session(*first: dict) -> list[dict]:
                async with http.ws_connect(fake.base_url, headers={"Authorization": "Bearer k"}) as ws:
                    for m in first:
                        await ws.send_json(m)
                    got: list[dict] = []
                    until = asyncio.get_running_loop().time() + 0.5  # (its output never stops: a frame every 200 ms)
                    while True:
                        try:
                            msg = await ws.receive(timeout=max(0.01, until - asyncio.get_running_loop().time()))
                        except asyncio.TimeoutError:
                            return got
                        if msg.type != WSMsgType.TEXT:
                            return got
                        evt = json.loads(msg.data)
                        if evt["type"] not in ("session.output_audio.delta", "session.usage.updated"):
                            got.append(evt)

            audio = {"type": "session.input_audio.append", "audio": base64.b64encode(bytes(960)).decode()}
            start = {"type": "session.start", "session": {"model": "gpt-live-1", "instructions": "x"}}
            errs = await session(audio, {**start, "session": {**start["session"], "turn_detection": {"type": "server_vad"}}})
            assert [e["error"]["code"] for e in errs if e["type"] == "error"] == ["session_not_started", "unknown_parameter"]
            got = await session(start, start, {"type": "input_audio_buffer.commit"}, {"type": "response.create"},
                                {"type": "session.commentary.append", "content": "hi"}, audio)
            assert got[0]["type"] == "session.started"
            assert [e["error"]["code"] for e in got if e["type"] == "error"] == [
                "session_already_started", "unknown_event", "invalid_request", "missing_required_parameter"]
        assert len(fake.connections[-1].errors) == 4 and fake.connections[-1].audio_in_bytes == 960


def test_early_start_rule_and_the_figures() -> None:
    """Early start: the bot's first speech began after the user began and before their last speech
    ended (a pause inside the turn counts); the figures count turns and answered turns."""
    user = [Interval(start_ms=1000, end_ms=2000), Interval(start_ms=2600, end_ms=3500)]
    assert early_start(user, [Interval(start_ms=2200, end_ms=5000)]) == 1300.0  # in the user's pause
    assert early_start(user, [Interval(start_ms=3600, end_ms=5000)]) is None
    assert early_start(user, [Interval(start_ms=500, end_ms=900)]) is None  # before the user began: not this reply
    rs = [TurnResult(turn_index=0, status="ok", user_text="x", agent_interruptions=0, early_start_ms=400.0),
          TurnResult(turn_index=1, status="no_response", user_text="y", agent_interruptions=0),
          TurnResult(turn_index=2, status="lost_pace", user_text="z", agent_interruptions=0, early_start_ms=900.0)]
    f = duplex_figures(rs, with_latency=True)
    assert (f.early.passes, f.early.n, f.early_ms, f.answered.passes, f.answered.n) == (1, 2, [400.0], 1, 2)


def test_a_backend_reads_the_users_last_words_and_marks_what_the_user_hears() -> None:
    transcript = "Voice conversation so far:\nUSER: Hi there.\nASSISTANT: Hello!\nUSER: Any slots tomorrow?\n\nAct on …"
    assert heard_request(transcript) == "Any slots tomorrow?" and heard_request(" plain ") == "plain"
    assert spoken("Yes.", f"prompt\n\n{SPOKEN_MARK_RULE} and …") == ">> Yes." and spoken("Yes.", "prompt") == "Yes."


def test_the_judge_is_told_which_model_made_each_call(demo) -> None:
    from arena_tui.spine.events import ToolCallRecord

    call = ToolCallRecord(call_id="c1", name="check_repair_slots", args={}, status="matched", made_by="back",
                          made_by_model=RESPONSES_MODEL)
    result = TurnResult(turn_index=2, status="ok", user_text=demo.turns[2].input, tool_calls=[call])
    text = render_turn("turn 2", demo.turns[2], result, ["tool_use_correct"])
    assert f"[made by the backend model {RESPONSES_MODEL}]" in text
    single = result.model_copy(update={"tool_calls": [call.model_copy(update={"made_by": None, "made_by_model": None})]})
    assert "made by" not in render_turn("turn 2", demo.turns[2], single, ["tool_use_correct"])


def test_the_live_model_is_listed_full_duplex_with_its_key_and_runs_in_its_loop(capsys) -> None:
    from arena_tui.cli import main

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("gpt-live-1 "))
    assert "openai-live" in line and "duplex" in line and "OPENAI_API_KEY" in line
    assert "full duplex" in out and "gpt-live-1+<text model>" in out
    runner = get_runner("gpt-live-1")
    assert runner.caps.duplex and runner.caps.delegation and LIVE_DUPLEX.reacts("interruption")
    assert FullDuplexRun.retried(None, "no_response") is False  # type: ignore[arg-type]


def _headless(args: list[str], capsys) -> str:
    from arena_tui.cli import main

    assert main(args) == 0
    return capsys.readouterr().out


def test_conversation_bench_against_the_fake_is_judged_like_any_run(shared_data, tmp_path, capsys):
    """conversation_bench 0-13 (recorded speech, pauses inside turns; 10, 11 and 13 call tools,
    delegated to the Responses fake) through the CLI at 4×: every turn answered and judged (the
    offline judge), the calls matched and the backend's; the row labelled full duplex."""
    import sqlite3

    db = tmp_path / "cb.db"
    out = _headless(["--db", str(db), "--data", str(shared_data), "run", "conversation_bench", "--model", "gpt-live-1",
                     "--fake", "--turns", "0-13", "--speed", "4", "--headless"], capsys)
    assert "turns 14/14 done" in out and "tool calls expected 3: ✓3 matched" in out, out
    assert "judged by heuristic" in out and "answered 14/14 turns" in out, out
    with sqlite3.connect(db) as con:
        calls = [json.loads(p) for (p,) in con.execute("SELECT payload FROM events WHERE kind = 'tool_call'")]
    assert [(c["made_by"], c["made_by_model"]) for c in calls] == [("back", RESPONSES_MODEL)] * 3


def test_duplex_bench_gives_the_duplex_figures(capsys, tmp_path):
    """duplex_bench against the fake at 2× (the yes/no figures; the yield latency needs 1×): the model
    yields to every interruption, talks through the backchannels it hears while speaking and leaves
    side speech unanswered (its real timing's manners, `LIVE_DUPLEX`); every turn answered."""
    out = _headless(["--db", str(tmp_path / "d.db"), "run", "duplex_bench", "--model", "gpt-live-1", "--fake", "--speed", "2",
                     "--headless"], capsys)
    line = next(x for x in out.splitlines() if x.startswith("duplex (our timeline)"))
    assert "interruptions yielded 3/3" in line and "side speech answered 0/2" in line, line
    assert "backchannels talked through" in line and "answered 8/8 turns" in line, line
    talked = line.split("backchannels talked through ")[1].split(";")[0]
    assert talked.split("/")[0] == talked.split("/")[1], line  # every one it spoke over, talked through
