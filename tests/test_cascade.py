"""Cascades: `cascade:<stt>+<llm>+<tts>` through Pipecat's own services, each part against its
local fake speaking its real wire protocol on 127.0.0.1.

demo_bench runs end to end (paced user audio in, Pipecat's Silero VAD and turn strategy closing
the user's turn, the bot's TTS audio on our timeline) and every turn records the STT's
transcript and its stages on our clock. At the fakes: the audio format each STT got and the
turn it recognised, the conversation and the tool results the LLM got, the text each TTS spoke.
"""

from __future__ import annotations

import pytest

from arena_tui.cli import main
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from runners.base import SessionSpec, get_runner
from runners.engine import run_benchmark
from runners import catalog
from tests.provider_runs import quiet_loguru

OPENAI = "cascade:openai-stt+gpt-4.1-mini+openai-tts"
DEEPGRAM = "cascade:deepgram+claude-haiku-4-5+cartesia"
ELEVENLABS = "cascade:openai-stt+gpt-4.1-mini+elevenlabs"
SPEED = 3.0  # Silero scores every 32 ms of audio: faster, a busy machine loses pace


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


async def run(alias: str, demo, turns: list[int] | None = None, **cfg):
    runner = get_runner(alias)
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model=alias, fake=True, speed=SPEED, turns=turns, **cfg)
    await run_benchmark(demo, config, bus, provider=runner)
    return runner, sub.drain()


def results(events) -> dict:
    return {e.result.turn_index: e.result for e in events if e.kind == "turn_ended" and e.turn_index >= 0}


def check_turns(demo, got: dict) -> None:
    for i, r in got.items():
        turn = demo.turn(i)
        assert r.status == "ok", (i, r.status, r.error)
        assert r.user_transcript == turn.input, (i, r.user_transcript)  # what the STT heard, beside the text
        assert r.assistant_text == turn.golden_text, (i, r.assistant_text)  # spoken by the TTS, words and spaces
        assert sorted((c.name, c.status) for c in r.tool_calls) == sorted((c.name, "matched") for c in turn.expected_calls)
        lat = r.latencies
        stages = lat.stages()
        assert stages is not None and set(stages) == {"stt", "turn", "llm", "tts"}, lat
        # the stages add up to the pipeline TTFB (user speech end → first bot audio played), on our clock
        assert sum(stages.values()) == pytest.approx(lat.pipeline_ttfb_ms, abs=0.01), lat
        assert stages["turn"] > 0 and stages["llm"] > 0 and stages["tts"] > 0, lat
        assert lat.voice_to_voice_ms is not None and lat.voice_to_voice_ms > 0


async def test_demo_bench_end_to_end_openai_stt_llm_tts(demo) -> None:
    runner, events = await run(OPENAI, demo)
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    started = next(e for e in events if e.kind == "run_started")
    assert started.provider == "cascade" and started.simulator
    got = results(events)
    assert sorted(got) == [t.turn_index for t in demo.turns]
    check_turns(demo, got)
    fakes = runner.fakes
    # the STT got the paced user audio as WAV segments at the run's rate, and recognised every turn
    stt = fakes.stt.transcriptions
    assert stt and {(t.sample_rate, t.channels, t.sample_width) for t in stt} == {(24000, 1, 2)}
    assert {t.turn for t in stt} == {t.turn_index for t in demo.turns}
    assert {t.model for t in stt} == {"gpt-transcribe"}  # Pipecat's default transcription model
    # the LLM: the transcripts as the user's words, the prompt, the tools, turn 5's two results
    reqs = fakes.llm.chat_requests
    assert {r.model for r in reqs} == {"gpt-4.1-mini"}
    assert reqs[-1].messages[0]["content"] == demo.system_prompt
    for t in demo.turns:
        assert any(t.input in r.user_texts() for r in reqs), t.input
    t5 = [r for r in reqs if r.phase == "tool" and r.user_texts()[-1] == demo.turn(5).input][-1]
    assert sorted(str(x["content"]) for x in t5.tool_results()[-2:]) == sorted(map(str, demo.turn(5).expected_responses))
    # the TTS spoke each reply (the greeting's too), as PCM
    spoken = " ".join(s.text for s in fakes.tts.speeches)
    assert all(t.golden_text in spoken or all(w in spoken for w in t.golden_text.split()) for t in demo.turns)
    assert {(s.response_format, s.voice) for s in fakes.tts.speeches} == {("pcm", "alloy")}


async def test_deepgram_claude_cartesia(demo) -> None:
    runner, events = await run(DEEPGRAM, demo, [0, 1, 5])
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    got = results(events)
    check_turns(demo, got)
    fakes = runner.fakes
    (listen,) = fakes.stt.listens
    assert listen.query["encoding"] == "linear16" and listen.query["sample_rate"] == "24000"
    assert listen.auth_present and listen.finalizes >= 3 and listen.audio_ms > 0
    heard = " ".join(t for t in listen.transcripts if t)
    assert all(demo.turn(i).input in heard for i in (0, 1, 5)), listen.transcripts
    ex = [e for e in fakes.llm.exchanges if e.phase == "tool"][-1]
    assert len(ex.tool_results()) == 2 and ex.system == demo.system_prompt
    tts = fakes.tts
    assert tts.requests and {r.output_format.get("sample_rate") for r in tts.requests} == {24000}
    assert all(r.voice.get("id") for r in tts.requests) and all(r.add_timestamps for r in tts.requests)
    said = " ".join(tts.texts())
    assert all(w in said for i in (0, 1, 5) for w in demo.turn(i).golden_text.split())


async def test_openai_stt_llm_elevenlabs(demo) -> None:
    """ElevenLabs' multi-context websocket, timed like the real service (`--fake`'s default):
    one context per reply, each closed and answered `isFinal`, its words the turn's text."""
    from runners.providers.cascade import ELEVENLABS_VOICE

    runner, events = await run(ELEVENLABS, demo, [0, 1])
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    got = results(events)
    assert sorted(got) == [0, 1]
    check_turns(demo, got)
    tts = runner.fakes.tts
    assert tts.timing.name == "real"
    (sock,) = tts.sockets
    assert sock.voice_id == ELEVENLABS_VOICE and sock.auth_present
    assert sock.query["output_format"] == "pcm_24000" and sock.query["model_id"] == "eleven_flash_v2_5"
    contexts = [tts.contexts[c] for c in sock.contexts]
    assert len(contexts) == 3 and all(c.closed and c.final for c in contexts), contexts  # the greeting, turns 0 and 1
    for i, ctx in zip((0, 1), contexts[1:], strict=True):
        assert " ".join(t.strip() for t in ctx.texts) == demo.turn(i).golden_text


async def test_a_rotated_cascade_session_is_seeded_and_asks_nothing(demo) -> None:
    """Rotating after every turn: the new session's LLM gets the conversation so far with the
    next turn, and is asked nothing in between (no reply of its own lands in a turn)."""
    runner, events = await run(OPENAI, demo, [0, 1], rotation={"max_age_s": 0.5})
    assert any(e.kind == "session_rotated" for e in events)
    check_turns(demo, results(events))
    reqs = runner.fakes.llm.chat_requests
    asked = [r.user_texts()[-1] for r in reqs]
    assert asked == ["Greet the user briefly.", demo.turn(0).input, demo.turn(1).input], asked
    t1 = reqs[-1]
    assert demo.turn(0).input in t1.user_texts()
    assert any(m.get("role") == "assistant" and demo.turn(0).golden_text in str(m.get("content")) for m in t1.messages)


@pytest.mark.parametrize("alias", catalog.CASCADE_EXAMPLES)
async def test_every_part_of_a_fake_cascade_stays_on_loopback(alias, demo, monkeypatch) -> None:
    for env in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPGRAM_API_KEY", "CARTESIA_API_KEY", "ELEVENLABS_API_KEY"):
        monkeypatch.setenv(env, "sk-real-key-must-not-be-used")
    runner = get_runner(alias)
    config = RunSettings(model=alias, fake=True, turns=[0])
    assert runner.preflight(config) == []
    await runner.start(config, demo)
    try:
        spec = SessionSpec(model=runner.resolve_model(alias), system_prompt=demo.system_prompt, tools=demo.tools,
                           kickoff="Greet the user briefly.", config=config)
        llm = runner.build_service(spec)
        pipeline = runner.session_pipeline(spec, llm, None, None)
        stt, tts = pipeline.processors[1], pipeline.processors[5]
        urls = [str(llm._client.base_url), endpoint(stt), endpoint(tts)]
        assert all("127.0.0.1" in u for u in urls), urls
        stt_part, _, tts_part = runner.parts(config)
        keys = [llm._client.api_key, runner.key_of(stt_part), runner.key_of(tts_part)]
        assert "sk-real-key-must-not-be-used" not in keys, keys
    finally:
        await runner.stop()


def endpoint(service) -> str:
    """Where a built STT/TTS service connects, read from the service object itself."""
    from pipecat.services.cartesia.tts import CartesiaTTSService
    from pipecat.services.deepgram.stt import DeepgramSTTService
    from pipecat.services.elevenlabs.tts import ElevenLabsTTSService

    if isinstance(service, (CartesiaTTSService, ElevenLabsTTSService)):
        return service._url
    if isinstance(service, DeepgramSTTService):
        return service._client._client_wrapper.get_environment().production
    return str(service._client.base_url)


def test_cascade_spelling_errors_are_one_line(tmp_path, capsys) -> None:
    for alias, message in [("cascade:vosk+gpt-4.1+openai-tts", "unknown speech-to-text 'vosk'; known: openai-stt, deepgram, whisper"),
                           ("cascade:deepgram+sim+cartesia", "the middle of a cascade is a text model"),
                           ("cascade:deepgram+gpt-4.1", "a cascade is cascade:<stt>+<llm>+<tts>")]:
        code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", alias, "--fake", "--headless"])
        err = capsys.readouterr().err
        assert code == 2 and message in err and "Traceback" not in err, err
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", DEEPGRAM, "--headless"])
    err = capsys.readouterr().err
    assert code == 2 and "DEEPGRAM_API_KEY" in err and "CARTESIA_API_KEY" in err


def test_models_lists_the_cascade_spelling(capsys) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "cascade:<stt>+<llm>+<tts>" in out and "openai-stt, deepgram" in out and "openai-tts, cartesia, elevenlabs" in out
    assert OPENAI in out


def test_a_stored_cascade_run_shows_its_stages_and_what_the_stt_heard(tmp_path, capsys) -> None:
    """At speed 1 (latency counts): the leaderboard row carries the stage breakdown, the turn
    detail lists each stage under the pipeline TTFB and what the STT heard beside what was said."""
    import asyncio

    from rich.console import Console

    from arena_tui.compare.leaderboard import STAGES
    from arena_tui.compare.load import load_board
    from arena_tui.compare.selection import ALL
    from arena_tui.run_view import RunState
    from arena_tui.screens.turn_detail import latency_table
    from arena_tui.store import Store
    from arena_tui.compare.columns import board_columns
    from arena_tui.widgets.board_cells import cell

    db = tmp_path / "arena.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", OPENAI, "--fake", "--fake-timing", "instant",
                 "--turns", "1", "--no-greeting", "--headless", "--judge", "heuristic"])
    out = capsys.readouterr().out
    assert code == 0, out
    if "did not keep pace" in out:  # its latencies are rightly left off the board; scripts/test.sh runs it again
        pytest.fail("this machine did not keep pace with the run's audio: its stage latencies are no measurement")

    async def read():
        async with await Store.open(db) as store:
            loaded = await load_board(store, [ALL], None)
            (run,) = await store.list_runs()
            state = RunState(run.run_id)
            async for ev in store.replay(run.run_id):
                state.apply(ev)
            return loaded.board, state

    board, state = asyncio.run(read())
    row = next(r for r in board.rows if r.benchmark == "demo_bench")
    assert set(row.stages) == set(STAGES) and row.latency_runs == 1
    stages = next(c for c in board_columns(board.dimensions, stages=True) if c.key == "stages")
    shown = cell(stages.figure(row)).plain.split("/")
    assert len(shown) == 4 and all(c.isdigit() for c in shown), shown
    assert [c.key for c in board_columns(board.dimensions, stages=True)].count("stages") == 1
    assert "stages" not in [c.key for c in board_columns(board.dimensions)]
    console = Console(width=160, record=True)
    console.print(latency_table(state.turns[1], state.speed))
    text = console.export_text()
    for label in ("STT final", "turn end", "LLM first token", "TTS first audio"):
        assert label in text, text
    assert state.turns[1].result.user_transcript == "How much is a basic tune-up?"
