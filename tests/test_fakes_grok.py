"""GrokRealtimeLLMService (real) against the local xAI-dialect realtime fake."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest
from pipecat.services.xai.realtime import events as xai_events
from pipecat.services.xai.realtime.llm import GrokRealtimeLLMService

from runners.fakes.script import Script, ScriptedReply, ToolCallSpec
from tests.provider_harness import GREETING, ServiceRig, read_wav_pcm16, scripted_tool_handler, tools_schema
from runners.providers.grok.fake import XaiRealtimeFake



@pytest.fixture
def bench(shared_data: Path) -> Path:
    return shared_data / "conversation_bench"


async def test_grok_reply_tool_call_disconnect_and_reset(bench: Path) -> None:
    t10 = json.loads((bench / "turns.jsonl").read_text().splitlines()[10])
    call = t10["required_function_call"]
    script = Script(
        replies=[
            ScriptedReply(text="Hey, welcome to the fair."),
            ScriptedReply(user_transcript=t10["input"], tool_calls=[ToolCallSpec(name=call["name"], args=call["args"], call_id="call_x1")],
                          text="Suggestion submitted."),
            ScriptedReply(text="Anything else?", then="disconnect"),
            ScriptedReply(text="I'm back."),
            ScriptedReply(text="With the history now."),
        ]
    )
    prompt = (bench / "system_prompt.txt").read_text()
    async with XaiRealtimeFake(script) as fake:
        llm = GrokRealtimeLLMService(
            api_key="test-key-not-secret",
            base_url=fake.base_url,
            settings=GrokRealtimeLLMService.Settings(session_properties=xai_events.SessionProperties(
                instructions=prompt,
                tools=tools_schema(json.loads((bench / "tools.json").read_text())),
            )),
        )
        seen: list = []
        llm.register_function(None, scripted_tool_handler({call["name"]: t10["function_call_response"]}, seen))
        async with ServiceRig(llm, sample_rate=24000, speed=2.0) as rig:
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1 and "welcome" in rig.collector.text, what="greeting")
            first = fake.connections[0]
            assert first.query.get("model") and first.auth_present
            assert first.system_instruction == prompt
            assert first.setup["turn_detection"]["type"] == "server_vad"
            assert first.setup["audio"]["input"]["format"]["rate"] == 24000
            assert call["name"] in {t["name"] for t in first.tools}
            assert {"role": "user", "text": GREETING} in first.history

            wav = read_wav_pcm16(bench / t10["audio_file"], 24000)
            rig.feeder.play(wav)
            await fake.wait_until(lambda: first.tool_results, what="function_call_output")
            assert first.tool_results[0]["call_id"] == "call_x1"
            assert first.tool_results[0]["result"] == t10["function_call_response"]
            assert seen == [(call["name"], call["args"])]
            await rig.wait_until(lambda: "Suggestion submitted" in rig.collector.text, what="reply after tool")
            assert first.audio_in_ms >= len(wav) / 48 and first.user_turns == 1

            # Forced close: Pipecat's Grok service does not reconnect by itself (gotcha 7) ...
            rig.feeder.play(read_wav_pcm16(bench / "audio/turn_011.wav", 24000))
            await fake.wait_until(lambda: first.closed == "server:1011", what="forced close")
            await asyncio.sleep(0.5)
            assert len(fake.connections) == 1
            # ... so the engine resets it. The new session gets instructions and tools at once ...
            await llm.reset_conversation()
            await fake.wait_until(lambda: len(fake.connections) == 2 and fake.connections[1].setup, what="second session")
            second = fake.connections[1]
            assert second.system_instruction == prompt and second.tools == first.tools
            rig.feeder.play(read_wav_pcm16(bench / "audio/turn_012.wav", 24000))
            await rig.wait_until(lambda: "I'm back" in rig.collector.text, what="reply on the new session")
            # ... but no history: Pipecat re-seeds the context only on a client-created response,
            # and with server VAD the server answers on its own first (history silently lost).
            assert second.history == [] and second.replies == [3]
            await llm._create_response()  # what the engine must do to re-seed after a reset
            await fake.wait_until(lambda: second.history, what="replayed history")
            # Pipecat's xAI adapter packs the whole context into ONE user message of JSON,
            # tool calls and results included.
            assert len(second.history) == 1 and second.history[0]["role"] == "user"
            packed = second.history[0]["text"]
            assert "previously saved conversation" in packed
            body, _ = json.JSONDecoder().raw_decode(packed[packed.index("["):])
            assert body[0] == {"role": "user", "content": GREETING}
            assert any(m.get("tool_calls", [{}])[0].get("id") == "call_x1" for m in body if m["role"] == "assistant")
            assert any(m["role"] == "tool" and json.loads(m["content"]) == t10["function_call_response"] for m in body)
            assert any(m["role"] == "assistant" and "Suggestion submitted" in (m.get("content") or "") for m in body)
            await rig.wait_until(lambda: "With the history now" in rig.collector.text, what="seeded reply")


async def test_fake_checks_replayed_items_and_uses_the_session_silence() -> None:
    """The fake as a raw client sees it: a function_call_output must answer a call the
    conversation knows (else an `error` event, as the API refuses it); replayed calls and
    outputs are recorded in order; server VAD ends speech after the session's silence_duration_ms."""
    import aiohttp
    import numpy as np

    async with XaiRealtimeFake(Script(replies=[ScriptedReply(text="Okay.")])) as fake, aiohttp.ClientSession() as http:
        async with http.ws_connect(fake.base_url + "?model=grok-voice-latest", headers={"Authorization": "Bearer k"}) as ws:

            async def recv(kind: str) -> dict:
                while True:
                    evt = json.loads((await ws.receive(timeout=5)).data)
                    if evt["type"] == kind:
                        return evt

            async def send(evt: dict) -> None:
                await ws.send_str(json.dumps(evt))

            await recv("conversation.created")
            await send({"type": "session.update", "session": {"turn_detection": {"type": "server_vad", "silence_duration_ms": 800},
                                                              "audio": {"input": {"format": {"type": "audio/pcm", "rate": 16000}}}}})
            await recv("session.updated")
            await send({"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "nope", "output": "{}"}})
            err = await recv("error")
            assert "unknown call_id 'nope'" in err["error"]["message"]
            await send({"type": "conversation.item.create", "item": {"type": "function_call", "call_id": "c1", "name": "f", "arguments": '{"a": 1}'}})
            await recv("conversation.item.added")
            await send({"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "c1", "output": '{"ok": true}'}})
            await recv("conversation.item.added")
            rec = fake.connections[0]
            assert rec.history == [
                {"role": "function_call", "call_id": "c1", "name": "f", "args": {"a": 1}},
                {"role": "function_call_output", "call_id": "c1", "output": {"ok": True}},
            ]
            assert rec.tool_results == [] and rec.errors == ["function_call_output for unknown call_id 'nope'"]

            def pcm(ms: int, loud: bool) -> str:
                t = np.arange(16 * ms) / 16000
                x = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767 if loud else np.zeros_like(t)).astype("<i2")
                return base64.b64encode(x.tobytes()).decode()

            await send({"type": "input_audio_buffer.append", "audio": pcm(1000, True)})
            await recv("input_audio_buffer.speech_started")
            for _ in range(7):  # 700 ms of silence: not yet the end of the utterance
                await send({"type": "input_audio_buffer.append", "audio": pcm(100, False)})
            await fake.wait_until(lambda: rec.audio_in_ms >= 1700, what="audio received")
            assert rec.user_turns == 0
            await send({"type": "input_audio_buffer.append", "audio": pcm(100, False)})
            await recv("input_audio_buffer.speech_stopped")
            assert rec.user_turns == 1
            done = await recv("response.done")
            assert done["response"]["status"] == "completed" and rec.replies == [0]
