"""The OpenAI-Realtime simulator on the wire: a raw websocket client and Pipecat's real service.

Audio is the benchmark's own WAVs from the shared data; every timing assertion is in AUDIO
time (what the simulator counted), never wall clock.
"""

from __future__ import annotations

import os

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from arena_tui.spine.audio import load_pcm16
from arena_tui.spine.benchmark import Benchmark, BenchmarkMeta, Tool, Turn
from runners.simulator import FaultSpecError, SimulatorServer, parse_faults
from runners.simulator.voice import GREETING_TEXT, spoken_text

RATE = 24000
CHUNK = RATE // 50  # 20 ms
SECRET = "sk-test-must-never-be-stored-123"
WALL_LIMIT = 60.0  # generous wall-clock guard so a broken server fails instead of hanging


@pytest.fixture(scope="module")
def bench() -> Benchmark:
    """conversation_bench read straight from the shared data (env ARENA_TUI_SHARED honoured)."""
    from tests.conftest import shared_root

    folder = shared_root() / "conversation_bench"
    if not (folder / "turns.jsonl").is_file():
        pytest.fail(f"shared benchmark data not found at {folder} (set ARENA_TUI_SHARED)")
    turns = [Turn(**json.loads(line)) for line in (folder / "turns.jsonl").read_text().splitlines() if line.strip()]
    return Benchmark(
        meta=BenchmarkMeta(**json.loads((folder / "benchmark.json").read_text())),
        turns=turns,
        tools=[Tool(**t) for t in json.loads((folder / "tools.json").read_text())],
        system_prompt=(folder / "system_prompt.txt").read_text(),
        root=folder,
    )


def wav(bench: Benchmark, turn: int) -> np.ndarray:
    path = bench.audio_path(bench.turn(turn))
    assert path is not None
    return load_pcm16(path)


def silence(ms: float) -> np.ndarray:
    return np.zeros(int(RATE * ms / 1000), dtype=np.int16)


class Client:
    """A raw Realtime client: the same events Pipecat sends, and every server event kept."""

    def __init__(self, url: str, *, model: str = "gpt-realtime") -> None:
        self.url = f"{url}?model={model}"
        self.events: list[dict[str, Any]] = []
        self.closed = False
        self.close_code: int | None = None
        self._new = asyncio.Event()

    async def __aenter__(self) -> Client:
        self.ws = await connect(self.url, additional_headers={"Authorization": f"Bearer {SECRET}"}, max_size=None)
        self._reader = asyncio.create_task(self._read())
        await self.wait_for("session.created")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ws.close()
        self._reader.cancel()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                self.events.append(json.loads(raw))
                self._new.set()
        except ConnectionClosed:
            pass
        self.closed, self.close_code = True, self.ws.close_code
        self._new.set()

    async def send(self, type_: str, **fields: Any) -> None:
        await self.ws.send(json.dumps({"type": type_, **fields}))

    async def configure(self, silence_ms: int = 800) -> None:
        await self.send("session.update", session={
            "type": "realtime",
            "instructions": "You are a conference assistant.",
            "tools": [{"type": "function", "name": "register_for_session", "parameters": {"type": "object"}}],
            "audio": {"input": {"turn_detection": {"type": "server_vad", "threshold": 0.7,
                                                   "prefix_padding_ms": 500, "silence_duration_ms": silence_ms}}},
        })
        await self.wait_for("session.updated")

    async def stream(self, pcm: np.ndarray, speed: float | None = None) -> None:
        """20 ms appends; `speed` paces on an absolute schedule, None sends as fast as possible."""
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        for k, i in enumerate(range(0, pcm.size, CHUNK)):
            if self.closed:
                return
            try:
                await self.send("input_audio_buffer.append",
                                audio=base64.b64encode(pcm[i : i + CHUNK].tobytes()).decode())
            except ConnectionClosed:
                return
            if speed:
                await asyncio.sleep(max(0.0, t0 + (k + 1) * 0.02 / speed - loop.time()))
            else:
                await asyncio.sleep(0)

    def of(self, type_: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == type_]

    async def wait_for(self, type_: str, count: int = 1, pred=lambda e: True) -> list[dict[str, Any]]:
        async def _wait() -> list[dict[str, Any]]:
            while True:
                found = [e for e in self.of(type_) if pred(e)]
                if len(found) >= count:
                    return found
                if self.closed:
                    raise AssertionError(f"connection closed ({self.close_code}) before {count}x {type_}")
                self._new.clear()
                await self._new.wait()

        return await asyncio.wait_for(_wait(), WALL_LIMIT)

    def audio_bytes(self, response_id: str | None = None) -> int:
        return sum(len(base64.b64decode(e["delta"])) for e in self.of("response.output_audio.delta")
                   if response_id is None or e["response_id"] == response_id)


async def speak_turn(client: Client, bench: Benchmark, turn: int, tail_ms: float = 2500,
                     speed: float | None = None) -> None:
    await client.stream(np.concatenate([silence(300), wav(bench, turn), silence(tail_ms)]), speed)


async def session_closed(sim: SimulatorServer, number: int = 1) -> None:
    """The server notices a close a moment after the client: wait for it (bounded)."""

    async def _wait() -> None:
        while not sim.session(number).closed:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(_wait(), WALL_LIMIT)


# ----------------------------------------------------------------------------- fault specs


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("3:foo", "unknown fault 'foo' in '3:foo'"),
        ("x:no_response", "turn 'x' in 'x:no_response' is not an integer"),
        ("7:slow_first_audio", "fault 'slow_first_audio' needs a value"),
        ("7:slow_first_audio=soon", "value 'soon' in '7:slow_first_audio=soon' is not a number"),
        ("3:no_response=2", "fault 'no_response' takes no value"),
        ("expire=-5", "must be a positive number"),
        ("3:no_response,3:barge_in", "turn 3 has two faults"),
        ("3:no_response,,5:barge_in", "empty item"),
        ("nonsense", "expected 'TURN:FAULT' or 'expire=SECONDS'"),
        ("2:truncated=1.5", "fraction of the reply"),
    ],
)
def test_bad_fault_spec_names_the_item(spec: str, message: str) -> None:
    with pytest.raises(FaultSpecError) as err:
        parse_faults(spec)
    assert message in str(err.value)


def test_fault_plan_parses_and_applies_to_first_attempt_unless_sticky() -> None:
    spec = "3:no_response,5:barge_in,7:slow_first_audio=1500,9:disconnect*,expire=120"
    plan = parse_faults(spec)
    assert str(plan) == spec
    assert plan.expire_s == 120
    assert plan.turns[7].value == 1500
    assert plan.fault_for(3, 1).kind == "no_response"
    assert plan.fault_for(3, 2) is None
    assert plan.fault_for(9, 3).kind == "disconnect"
    assert plan.fault_for(4, 1) is None
    assert parse_faults("") == parse_faults(None)
    assert not parse_faults("")


# ----------------------------------------------------------------------------- raw protocol


async def test_greeting_then_turn_identified_by_its_audio(bench: Benchmark) -> None:
    async with SimulatorServer(bench, voice="tone") as sim:
        assert sim.base_url.startswith("ws://127.0.0.1:") and sim.base_url.endswith("/v1/realtime")
        async with Client(sim.base_url) as c:
            created = c.of("session.created")[0]["session"]
            assert created["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}
            await c.configure()
            await c.send("response.create", response={"output_modalities": ["audio"]})
            greet = (await c.wait_for("response.done"))[0]["response"]
            assert greet["status"] == "completed"
            assert greet["usage"]["input_tokens"] > 0 and greet["usage"]["output_tokens"] > 0
            assert "cached_tokens" in greet["usage"]["input_token_details"]
            transcript = c.of("response.output_audio_transcript.done")[0]["transcript"]
            assert transcript == GREETING_TEXT
            assert c.audio_bytes(greet["id"]) > 0
            # Turn 2 first: recognised from the audio, not from the order of turns.
            await speak_turn(c, bench, 2)
            await c.wait_for("response.done", 2)

        types = [e["type"] for e in c.events]
        for t in ("input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped",
                  "input_audio_buffer.committed", "conversation.item.input_audio_transcription.completed",
                  "response.output_item.added", "response.content_part.added",
                  "response.output_audio.done", "response.output_item.done"):
            assert t in types, t
        assert types.index("input_audio_buffer.speech_stopped") < types.index("input_audio_buffer.committed")
        heard = c.of("conversation.item.input_audio_transcription.completed")[0]
        assert heard["transcript"] == bench.turn(2).input
        said = c.of("response.output_audio_transcript.done")[1]["transcript"]
        assert said == spoken_text(bench.turn(2).golden_text)

        truth = sim.truth[2]
        assert truth.identified_by == "fingerprint" and truth.attempt == 1 and truth.status == "answered"
        assert sim.fallbacks == []
        assert sim.truth[-1].identified_by == "greeting"
        # VAD in audio time: speech begins shortly after the 300 ms of lead-in silence.
        started = c.of("input_audio_buffer.speech_started")[0]
        assert started["audio_start_ms"] == round(truth.speech_start_ms)
        assert 300 <= truth.speech_start_ms < 300 + 500
        stopped = c.of("input_audio_buffer.speech_stopped")[0]
        assert stopped["audio_end_ms"] == round(truth.speech_stopped_ms)
        assert truth.speech_stopped_ms - truth.speech_end_ms == pytest.approx(800, abs=10)
        # default reply delay 300 ms of audio time, at 20 ms chunk granularity
        assert 300 <= truth.first_audio_after_stop_ms < 320
        assert truth.leading_silence_ms == 150
        assert truth.voice == "tone"

        await session_closed(sim)
        rec = sim.sessions[0]
        assert rec.model == "gpt-realtime" and rec.auth_present
        assert rec.turn_detection["silence_duration_ms"] == 800
        assert rec.instructions == "You are a conference assistant."
        appends = [r for r in sim.log if r.type == "input_audio_buffer.append"]
        assert appends and all(set(r.payload) == {"bytes"} for r in appends)
        # one record per stretch of appends, not one per 20 ms append (a 75-turn run grew ~1.5 MB a turn)
        assert not [(a, b) for a, b in zip(sim.log, sim.log[1:], strict=False)
                    if a.type == b.type == "input_audio_buffer.append" and a.session == b.session]
        assert sum(r.payload["bytes"] for r in appends) / 2 / RATE * 1000 == pytest.approx(rec.audio_ms)
        everything = json.dumps([r.model_dump() for r in sim.log]) + json.dumps([s.model_dump() for s in sim.sessions])
        assert SECRET not in everything
        assert rec.close_reason and "client closed" in rec.close_reason


async def test_unknown_audio_falls_back_to_next_unanswered_turn(bench: Benchmark) -> None:
    t = np.arange(RATE) / RATE
    tone = (8000 * np.sin(2 * np.pi * 300 * t)).astype(np.int16)
    async with SimulatorServer(bench, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await c.stream(np.concatenate([silence(200), tone, silence(1500)]))
            await c.wait_for("response.done")
        assert sim.truth[0].identified_by == "fallback"
        assert sim.fallbacks and sim.fallbacks[0]["turn_index"] == 0
        heard = c.of("conversation.item.input_audio_transcription.completed")[0]["transcript"]
        assert heard == bench.turn(0).input


async def test_handshake_needs_path_and_bearer(bench: Benchmark) -> None:
    async with SimulatorServer(bench, voice="tone") as sim:
        with pytest.raises(InvalidStatus) as err:
            async with connect(sim.base_url + "?model=x"):
                pass
        assert err.value.response.status_code == 401
        with pytest.raises(InvalidStatus) as err:
            async with connect(sim.base_url.replace("/v1/realtime", "/v2/other"),
                               additional_headers={"Authorization": "Bearer k"}):
                pass
        assert err.value.response.status_code == 404
        assert [r["reason"] for r in sim.rejected] == ["missing bearer token", "not found"]
        assert sim.sessions == []


async def test_tool_call_turn_and_output_recorded(bench: Benchmark) -> None:
    turn = bench.turn(34)
    expected = turn.expected_calls[0]
    async with SimulatorServer(bench, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 34, tail_ms=1500)
            call = (await c.wait_for("response.function_call_arguments.done"))[0]
            added = [e["item"] for e in c.of("conversation.item.added") if e["item"]["type"] == "function_call"]
            assert added[0]["call_id"] == call["call_id"] and added[0]["name"] == expected.name
            assert json.loads(call["arguments"]) == expected.args
            first = (await c.wait_for("response.done"))[0]["response"]
            assert [o["type"] for o in first["output"]] == ["function_call"]
            assert c.audio_bytes() == 0  # no speech until the output arrives
            payload = turn.expected_responses[0]
            await c.send("conversation.item.create", item={"type": "function_call_output",
                                                           "call_id": call["call_id"], "output": json.dumps(payload)})
            await c.send("response.create")
            await c.stream(silence(1000))
            second = (await c.wait_for("response.done", 2))[1]["response"]
            assert second["status"] == "completed" and c.audio_bytes(second["id"]) > 0
        rec = sim.sessions[0]
        out = rec.tool_outputs[call["call_id"]]
        assert out.parsed == payload and out.name == expected.name and out.turn_index == 34
        truth = sim.truth[34]
        assert [(k.name, k.args, k.for_turn) for k in truth.calls] == [(expected.name, expected.args, 34)]
        assert truth.status == "answered" and truth.text == spoken_text(turn.golden_text)
        # 300 ms before the call + 300 ms after the output, on the 20 ms grid; the client's own
        # round trip (calls out -> output + response.create in) is reported apart
        assert 600 <= truth.injected_delay_ms < 640
        assert truth.first_audio_after_stop_ms == pytest.approx(truth.injected_delay_ms + truth.tool_roundtrip_ms)
        assert rec.errors_sent == []


async def test_vad_and_reply_timing_are_in_audio_time(bench: Benchmark) -> None:
    """Same ground truth whether the client streams in real time or 20x faster."""
    results = []
    for speed in (1.0, 20.0):
        async with SimulatorServer(bench, voice="tone") as sim:
            async with Client(sim.base_url) as c:
                await c.configure()
                await speak_turn(c, bench, 0, tail_ms=1400, speed=speed)
                await c.wait_for("response.done")
            t = sim.truth[0]
            results.append((t.speech_start_ms, t.speech_end_ms, t.speech_stopped_ms, t.first_audio_ms,
                            [e["audio_end_ms"] for e in c.of("input_audio_buffer.speech_stopped")]))
    assert results[0] == results[1]


# ----------------------------------------------------------------------------- faults


async def test_no_response_then_retry_succeeds(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:no_response", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1, tail_ms=3000)
            await c.wait_for("conversation.item.input_audio_transcription.completed")
            assert c.of("response.created") == []
            assert sim.truth[1].status == "no_response" and sim.truth[1].fault == "1:no_response"
            await speak_turn(c, bench, 1)  # the engine's retry replays the same audio
            await c.wait_for("response.done")
        assert sim.truth[1].attempt == 2 and sim.truth[1].status == "answered"
        assert [t.status for t in sim.truth_log] == ["no_response", "answered"]


async def test_empty_response_sends_control_token_only(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:empty_response=ctrl46", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1)
            resp = (await c.wait_for("response.done"))[0]["response"]
        assert resp["status"] == "completed" and c.audio_bytes() == 0
        assert c.of("response.output_audio_transcript.done")[0]["transcript"] == "<ctrl46>"
        assert sim.truth[1].status == "empty"


async def test_barge_in_reply_starts_while_user_speaks(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:barge_in=400", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1)
            await c.wait_for("input_audio_buffer.speech_stopped")
            await c.wait_for("response.done")
        types = [e["type"] for e in c.events]
        assert types.index("response.output_audio.delta") < types.index("input_audio_buffer.speech_stopped")
        t = sim.truth[1]
        assert 400 <= t.first_audio_after_start_ms < 420 and t.injected_delay_ms == 400
        assert len(c.of("response.created")) == 1  # no second reply at speech stop


async def test_a_turns_reply_is_made_while_its_user_speaks(bench: Benchmark, monkeypatch) -> None:
    """Made only once due, a reply would hold the session's input for its synthesis time."""
    from runners.simulator import voice as voice_mod

    made: list[tuple[str, float]] = []  # (text, the session's audio time when it was asked for)
    real = voice_mod.synthesize

    def synthesize(text: str, kind: Any) -> Any:
        made.append((text, sim.log[-1].audio_ms))
        return real(text, kind)

    monkeypatch.setattr(voice_mod, "synthesize", synthesize)
    async with SimulatorServer(bench, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            made.clear()  # the greeting's
            await speak_turn(c, bench, 1)
            await c.wait_for("response.done")
    said, t = voice_mod.reply_text(bench, 1), sim.truth[1]
    assert {text for text, _ in made} == {said} and t.status == "answered"
    assert made[0][1] < t.speech_end_ms  # asked while the user still spoke


async def test_truncated_reply_is_incomplete(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:truncated", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1)
            resp = (await c.wait_for("response.done"))[0]["response"]
        assert resp["status"] == "incomplete"
        assert resp["status_details"] == {"type": "incomplete", "reason": "max_output_tokens"}
        t = sim.truth[1]
        assert 0 < t.reply_audio_ms < t.reply_full_ms and t.status == "truncated"
        assert c.audio_bytes() / 2 / RATE * 1000 == pytest.approx(t.reply_audio_ms)


async def test_slow_first_audio_waits_in_audio_time(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:slow_first_audio=1500", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1, tail_ms=2600)
            await c.wait_for("response.done")
        t = sim.truth[1]
        assert 1500 <= t.first_audio_after_stop_ms < 1520 and t.injected_delay_ms == 1500


async def test_disconnect_mid_reply_then_new_session_succeeds(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:disconnect", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1)
            while not c.closed:
                await asyncio.wait_for(c._new.wait(), WALL_LIMIT)
                c._new.clear()
            assert c.of("response.output_audio.delta") and not c.of("response.done")
        await session_closed(sim)
        assert sim.truth[1].status == "disconnected"
        assert sim.sessions[0].close_reason == "fault: disconnect mid-reply"
        async with Client(sim.base_url) as c2:
            await c2.configure()
            await c2.send("conversation.item.create", item={"type": "message", "role": "user",
                                                            "content": [{"type": "input_text", "text": "earlier"}]})
            await speak_turn(c2, bench, 1)
            await c2.wait_for("response.done")
        assert sim.truth[1].session == 2 and sim.truth[1].attempt == 2 and sim.truth[1].status == "answered"
        assert sim.sessions[1].item_texts() == ["earlier"]


async def test_early_late_and_wrong_calls(bench: Benchmark) -> None:
    target = bench.turn(34).expected_calls[0]

    async def run(spec: str, turns: list[int]) -> SimulatorServer:
        async with SimulatorServer(bench, faults=spec, voice="tone") as sim:
            async with Client(sim.base_url) as c:
                await c.configure()
                for i, turn in enumerate(turns):
                    await speak_turn(c, bench, turn, tail_ms=1500)
                    await c.wait_for("response.done", i + 1)
                    # answer any calls, then ask for the spoken reply
                    pending = [e for e in c.of("response.function_call_arguments.done")
                               if e["call_id"] not in sim.sessions[0].tool_outputs]
                    for e in pending:
                        await c.send("conversation.item.create", item={
                            "type": "function_call_output", "call_id": e["call_id"], "output": '{"ok": true}'})
                    if pending:
                        n = len(c.of("response.done"))
                        await c.send("response.create")
                        await c.stream(silence(800))
                        await c.wait_for("response.done", n + 1)
            return sim

    early = await run("33:early_call", [33, 34])
    assert [(k.name, k.for_turn) for k in early.truth[33].calls] == [(target.name, 34)]
    assert early.truth[34].calls == []
    late = await run("34:late_call", [34, 35])
    assert late.truth[34].calls == []
    assert [(k.name, k.for_turn) for k in late.truth[35].calls][0] == (target.name, 34)
    wrong = await run("34:wrong_call", [34])
    call = wrong.truth[34].calls[0]
    assert call.wrong and call.name == target.name and call.args != target.args
    assert call.args["session_id"] == "925302"


async def test_session_expires_after_audio_time(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="expire=2", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await c.stream(silence(2500))
            err = (await c.wait_for("error"))[0]["error"]
            while not c.closed:
                await asyncio.wait_for(c._new.wait(), WALL_LIMIT)
                c._new.clear()
        assert err["code"] == "session_expired" and err["type"] == "invalid_request_error"
        assert err["message"] == "Your session hit the maximum duration of 2 seconds."
        assert c.close_code == 1001
        assert sim.sessions[0].close_code == 1001
        assert sim.sessions[0].audio_ms == pytest.approx(2000, abs=20)


async def test_response_cancel_and_active_response_errors(bench: Benchmark) -> None:
    async with SimulatorServer(bench, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.send("session.update", session={"instructions": "beta shape, no type"})
            assert (await c.wait_for("error"))[0]["error"]["param"] == "session.type"
            c.events.clear()
            await c.configure()
            await c.send("response.cancel")
            err = (await c.wait_for("error"))[0]["error"]
            assert err["code"] == "response_cancel_not_active"
            await c.send("response.create")
            await c.wait_for("response.done")
            await c.send("conversation.item.truncate", item_id="nope", content_index=0, audio_end_ms=10)
            errs = await c.wait_for("error", 2)
            assert errs[1]["error"]["code"] == "item_truncate_invalid_item_id"
            item_id = c.of("response.output_item.done")[0]["item"]["id"]
            await c.send("conversation.item.truncate", item_id=item_id, content_index=0, audio_end_ms=120)
            tr = (await c.wait_for("conversation.item.truncated"))[0]
            assert tr["audio_end_ms"] == 120
        assert sim.sessions[0].truncations[0]["audio_end_ms"] == 120


# ----------------------------------------------------------------------------- real Pipecat service


async def test_pipecat_realtime_service_greeting_and_tool_turn(bench: Benchmark) -> None:
    """Pipecat 1.14's OpenAIRealtimeLLMService, unmodified, against the simulator."""
    from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
    from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
    from pipecat.frames.frames import Frame, InputAudioRawFrame, LLMRunFrame, TTSAudioRawFrame, TTSTextFrame
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.aggregators.llm_context import LLMContext
    from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.services.openai.realtime import events as rt
    from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService
    from pipecat.workers.runner import WorkerRunner

    class Sink(FrameProcessor):
        def __init__(self) -> None:
            super().__init__()
            self.audio = 0
            self.text: list[str] = []

        async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
            await super().process_frame(frame, direction)
            if isinstance(frame, TTSAudioRawFrame):
                self.audio += len(frame.audio)
            elif isinstance(frame, TTSTextFrame):
                self.text.append(frame.text)
            await self.push_frame(frame, direction)

    turn = bench.turn(34)
    expected = turn.expected_calls[0]
    scripted = turn.expected_responses[0]
    calls: list[tuple[str, dict[str, Any]]] = []

    async def handle(params: Any) -> None:
        calls.append((params.function_name, dict(params.arguments)))
        await params.result_callback(scripted)

    async def until(pred, what: str, feed: bool = True) -> None:
        async def _wait() -> None:
            while not pred():
                if feed:  # keep audio flowing, as a live input transport would
                    await worker.queue_frame(InputAudioRawFrame(audio=bytes(CHUNK * 2), sample_rate=RATE,
                                                                num_channels=1))
                await asyncio.sleep(0.005)

        try:
            await asyncio.wait_for(_wait(), WALL_LIMIT)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}") from None

    tools = ToolsSchema(standard_tools=[
        FunctionSchema(name=t.name, description=t.description, properties=t.parameters.get("properties", {}),
                       required=t.parameters.get("required", []))
        for t in bench.tools
    ])
    async with SimulatorServer(bench, voice="auto") as sim:
        llm = OpenAIRealtimeLLMService(
            api_key=SECRET,
            base_url=sim.base_url,
            settings=OpenAIRealtimeLLMService.Settings(
                model="gpt-realtime",
                system_instruction=bench.system_prompt,
                session_properties=rt.SessionProperties(audio=rt.AudioConfiguration(input=rt.AudioInput(
                    transcription=rt.InputAudioTranscription(),
                    turn_detection=rt.TurnDetection(threshold=0.7, prefix_padding_ms=500, silence_duration_ms=800),
                ))),
            ),
        )
        llm.register_function(None, handle, cancel_on_interruption=False)
        pair = LLMContextAggregatorPair(LLMContext([{"role": "user", "content": "Greet the user briefly."}], tools))
        sink = Sink()
        worker = PipelineWorker(
            Pipeline([pair.user(), llm, sink, pair.assistant()]),
            params=PipelineParams(audio_in_sample_rate=RATE, audio_out_sample_rate=RATE),
            idle_timeout_secs=None,
            enable_rtvi=False,
            enable_turn_tracking=False,
        )
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        await worker.queue_frames([LLMRunFrame()])
        task = asyncio.create_task(runner.run())
        try:
            await until(lambda: -1 in sim.truth and sim.truth[-1].status == "answered", "the greeting")
            greeting_audio = sink.audio
            assert greeting_audio > 0 and "Hello" in "".join(sink.text)
            pcm = np.concatenate([silence(200), wav(bench, 34), silence(1200)])
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            for k, i in enumerate(range(0, pcm.size, CHUNK)):  # 5x real time
                await worker.queue_frame(InputAudioRawFrame(audio=pcm[i : i + CHUNK].tobytes(), sample_rate=RATE,
                                                            num_channels=1))
                await asyncio.sleep(max(0.0, t0 + (k + 1) * 0.004 - loop.time()))
            await until(lambda: 34 in sim.truth and sim.truth[34].status == "answered", "turn 34's spoken reply")
            await until(lambda: sink.audio > greeting_audio, "the reply audio through the pipeline", feed=False)
        finally:
            await runner.cancel()
            await asyncio.wait_for(task, WALL_LIMIT)

    assert calls == [(expected.name, expected.args)]
    rec = sim.sessions[0]
    [(call_id, out)] = rec.tool_outputs.items()
    assert out.parsed == scripted and out.name == expected.name and out.turn_index == 34
    assert [c.call_id for c in sim.truth[34].calls] == [call_id]
    assert sim.truth[34].identified_by == "fingerprint"
    assert rec.instructions.startswith(bench.system_prompt)  # Pipecat appends its async-tools note
    assert {t["name"] for t in rec.tools} == {t.name for t in bench.tools}
    assert rec.turn_detection["silence_duration_ms"] == 800 and rec.turn_detection["threshold"] == 0.7
    assert rec.model == "gpt-realtime"
    assert sim.voice in ("espeak", "tone") and sim.truth[34].voice == sim.voice
    assert rec.errors_sent == []
    assert spoken_text(turn.golden_text) in "".join(sink.text)
    assert SECRET not in json.dumps([s.model_dump() for s in sim.sessions]) + json.dumps(
        [r.model_dump() for r in sim.log])


async def test_mid_turn_pause_holds_the_reply_until_the_turn_ends(bench: Benchmark) -> None:
    """conversation_bench turn 18 pauses ~1.2 s mid-sentence: server VAD splits it (as OpenAI's would)."""
    async with SimulatorServer(bench, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 18)
            await c.wait_for("response.done")
        stops = c.of("input_audio_buffer.speech_stopped")
        assert len(stops) == 2 and len(c.of("response.created")) == 1
        types = [e["type"] for e in c.events]
        assert types.index("response.created") > types.index("input_audio_buffer.speech_stopped", types.index(
            "input_audio_buffer.speech_stopped") + 1)
        heard = [e["transcript"] for e in c.of("conversation.item.input_audio_transcription.completed")]
        assert len(heard) == 2 and " ".join(heard) == bench.turn(18).input
        t = sim.truth[18]
        assert t.attempt == 1 and t.status == "answered" and len(sim.truth_log) == 1
        assert t.speech_stopped_ms == stops[1]["audio_end_ms"]
        assert 300 <= t.first_audio_after_stop_ms < 320

    async with SimulatorServer(bench, voice="tone", wait_for_turn_end=False) as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 18)
            await c.wait_for("response.done", 2)
        first = sim.truth_log[0]
        assert first.first_audio_ms < c.of("input_audio_buffer.speech_stopped")[1]["audio_end_ms"]
        assert "continuation" in sim.truth_log[1].notes[0]


# ----------------------------------------------------------------------------- CLI


def test_cli_simulate_serves_and_labels_itself(capsys: pytest.CaptureFixture[str]) -> None:
    from arena_tui.cli import main
    from tests.conftest import shared_root

    folder = shared_root() / "conversation_bench"
    # --nice 0: in this process (the test's), the simulator must not lower its priority for good
    assert main(["simulate", str(folder), "--duration", "0.2", "--voice", "tone", "--faults", "3:no_response",
                 "--nice", "0"]) == 0
    out = capsys.readouterr().out
    assert "SIMULATOR (not a real model) for conversation_bench: ws://127.0.0.1:" in out
    assert "voice: tone; faults: 3:no_response; audio of 75 turns indexed" in out
    assert main(["simulate", str(folder), "--nice", "20"]) == 2
    assert "--nice must be 0..19 (got 20)" in capsys.readouterr().err
    assert main(["simulate", str(folder), "--faults", "3:foo"]) == 2
    assert "--faults: unknown fault 'foo' in '3:foo'" in capsys.readouterr().err
    assert main(["simulate", str(folder / "nope")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_cli_simulate_gives_its_clients_the_cpu_first(tmp_path: Path) -> None:
    """On its own (its usual way), the simulator runs below its clients' priority: it stands in for a
    remote provider, and must not preempt the engine whose timing it is there to measure."""
    import subprocess
    import sys

    from tests.conftest import shared_root

    folder = shared_root() / "conversation_bench"
    base = os.nice(0)
    proc = subprocess.Popen([sys.executable, "-m", "arena_tui.cli", "simulate", str(folder), "--voice", "tone",
                             "--truth", str(tmp_path / "truth.jsonl")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        head = [proc.stdout.readline() for _ in range(2)]
        proc.terminate()  # SIGTERM stops it as cleanly as Ctrl-C: its truth is written, its summary printed
        out = "".join(head) + proc.communicate(timeout=60)[0]
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert f"CPU priority nice {min(19, base + 10)}" in out and "SIMULATOR stopped after 0 session(s)" in out
    assert (tmp_path / "truth.jsonl").read_text() == ""  # no session came: nothing to tell, but told


async def test_turn_recognised_from_a_16khz_wav_decoded_like_the_engine(bench: Benchmark, tmp_path: Path) -> None:
    """Synthesised benchmarks may not be 24 kHz: the simulator decodes WAVs as the engine does."""
    import soxr

    from arena_tui.spine.audio import load_pcm16, write_wav

    for t in (0, 1):
        pcm16k = (soxr.resample(wav(bench, t).astype(np.float32) / 32768, RATE, 16000) * 32767).astype(np.int16)
        write_wav(tmp_path / "audio" / f"turn_{t:03d}.wav", pcm16k, 16000)
    small = bench.model_copy(update={"turns": [bench.turn(0), bench.turn(1)], "root": tmp_path})
    async with SimulatorServer(small, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            streamed = np.asarray(load_pcm16(tmp_path / "audio" / "turn_001.wav", RATE))
            await c.stream(np.concatenate([silence(300), streamed, silence(1500)]))
            await c.wait_for("response.done")
    assert sim.truth[1].identified_by == "fingerprint" and sim.fallbacks == []


async def test_no_response_turn_is_answered_on_an_explicit_response_create(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:no_response", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1, tail_ms=2000)
            await c.wait_for("conversation.item.input_audio_transcription.completed")
            assert c.of("response.created") == []
            await c.send("response.create")
            await c.stream(silence(600))
            await c.wait_for("response.done")
        t = sim.truth[1]
        assert t.attempt == 1 and t.status == "answered" and "explicit response.create" in t.notes[0]


async def test_pending_reply_cancelled_by_client_or_by_new_speech(bench: Benchmark) -> None:
    async with SimulatorServer(bench, faults="1:slow_first_audio=3000,2:slow_first_audio=3000", voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 1, tail_ms=1200)
            await c.wait_for("response.created")
            await c.send("response.cancel")
            done = (await c.wait_for("response.done"))[0]["response"]
            assert done["status"] == "cancelled"
            assert done["status_details"] == {"type": "cancelled", "reason": "client_cancelled"}
            assert sim.truth[1].status == "cancelled"
            await speak_turn(c, bench, 2, tail_ms=1200)  # waits 3 s for its reply...
            await speak_turn(c, bench, 0, tail_ms=2000)  # ...but the user speaks again first
            dones = await c.wait_for("response.done", 3)
        assert dones[1]["response"]["status_details"]["reason"] == "turn_detected"
        assert sim.truth[2].status == "cancelled" and sim.truth[0].status == "answered"
        assert c.audio_bytes(dones[1]["response"]["id"]) == 0


async def test_reply_after_calls_waits_for_all_outputs_but_not_forever(bench: Benchmark) -> None:
    """conversation_bench turn 38 expects two calls; a client may ask for the reply after one."""
    payloads = bench.turn(38).expected_responses
    async with SimulatorServer(bench, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, bench, 38, tail_ms=1500)
            calls = await c.wait_for("response.function_call_arguments.done", 2)
            await c.wait_for("response.done")
            await c.send("conversation.item.create", item={"type": "function_call_output",
                                                           "call_id": calls[0]["call_id"],
                                                           "output": json.dumps(payloads[0])})
            await c.send("response.create")
            await c.stream(silence(500))
            assert c.audio_bytes() == 0  # still waiting for the second output
            await c.send("conversation.item.create", item={"type": "function_call_output",
                                                           "call_id": calls[1]["call_id"],
                                                           "output": json.dumps(payloads[1])})
            await c.stream(silence(600))
            await c.wait_for("response.done", 2)
            assert c.audio_bytes() > 0
            # a turn whose second output never comes is still answered, 2 s of audio later
            await speak_turn(c, bench, 38, tail_ms=1500)
            calls = await c.wait_for("response.function_call_arguments.done", 4)
            await c.wait_for("response.done", 3)
            await c.send("conversation.item.create", item={"type": "function_call_output",
                                                           "call_id": calls[2]["call_id"], "output": "{}"})
            await c.send("response.create")
            await c.stream(silence(2600))
            await c.wait_for("response.done", 4)
        first, retry = [t for t in sim.truth_log if t.turn_index == 38]
        assert first.status == "answered" and not any("without" in n for n in first.notes)
        assert retry.status == "answered" and f"spoke without the outputs for {calls[3]['call_id']}" in retry.notes
        assert [o.parsed for o in sim.sessions[0].tool_outputs.values()][:2] == payloads


async def test_turns_whose_audio_opens_alike_are_told_apart_by_their_audio() -> None:
    """demo_bench's turns 0 and 1 ("Hi! Are you…", "How much…") share their first 64 ms, so the
    50 ms onset hash names both. Spoken first to a fresh simulator (as after a resume), turn 1
    is heard as turn 1 — by more of its audio, not by which turn was answered last (turn 0,
    unanswered, used to win: its words transcribed, the reply held for the rest of its WAV)."""
    from benchmarks.registry import load_benchmark

    demo = load_benchmark("demo_bench")
    async with SimulatorServer(demo, voice="tone") as sim:
        async with Client(sim.base_url) as c:
            await c.configure()
            await speak_turn(c, demo, 1)
            heard = (await c.wait_for("conversation.item.input_audio_transcription.completed"))[0]["transcript"]
            assert heard == demo.turn(1).input
            await c.wait_for("response.done")
            said = c.of("response.output_audio_transcript.done")[0]["transcript"]
    assert said == spoken_text(demo.turn(1).golden_text)
    assert [(t.turn_index, t.identified_by, t.match_offset_ms is not None) for t in sim.truth_log] == [(1, "fingerprint", True)]


def test_sessions_in_step_make_one_reply_voice_between_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulators replying at the same moment (a bench's hosted sessions, a campaign's cells) ask
    for the same reply voice together: one espeak-ng makes it, and all share its audio."""
    import subprocess
    import uuid
    from concurrent.futures import ThreadPoolExecutor

    from runners.simulator import voice

    if voice.resolve_voice("auto") != "espeak":
        pytest.skip("espeak-ng is not installed (.ci/run installs it)")
    made: list[str] = []
    real = subprocess.run

    def counting(cmd, *args, **kwargs):
        made.append(cmd[-1])
        return real(cmd, *args, **kwargs)

    monkeypatch.setattr(voice.subprocess, "run", counting)
    text = f"Your appointment is confirmed, reference {uuid.uuid4().hex[:6]}."
    with ThreadPoolExecutor(6) as pool:
        clips = list(pool.map(lambda _: voice.synthesize(text, "espeak"), range(6)))
    assert made == [text]
    assert all(kind == "espeak" for _, kind in clips) and len({pcm for pcm, _ in clips}) == 1 and clips[0][0]
