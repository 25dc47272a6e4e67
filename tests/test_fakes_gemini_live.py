"""GeminiLiveLLMService (real, via google-genai over TLS) against the local Gemini Live fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.genai.types import HttpOptions
from pipecat.services.google.gemini_live.llm import GeminiLiveLLMService

from runners.fakes.script import Script, ScriptedReply, ToolCallSpec
from runners.providers.gemini_live.fake import GeminiLiveFake
from tests.provider_harness import (
    ServiceRig,
    read_wav_pcm16,
    scripted_tool_handler,
    tools_schema,
)


@pytest.fixture
def bench(shared_data: Path) -> Path:
    return shared_data / "conversation_bench"


def turn(bench: Path, i: int) -> dict:
    return json.loads((bench / "turns.jsonl").read_text().splitlines()[i])


async def test_gemini_live_reply_tool_call_and_go_away_resumption(bench: Path) -> None:
    t10 = turn(bench, 10)
    call = t10["required_function_call"]
    script = Script(
        replies=[
            ScriptedReply(text="Hi, welcome to the conference help line."),  # greeting
            ScriptedReply(
                user_transcript=t10["input"],
                tool_calls=[ToolCallSpec(name=call["name"], args=call["args"], call_id="fc-1")],
                text="Your suggestion has been submitted.",
            ),
            ScriptedReply(text="Sure, anything else?", then="go_away"),
            ScriptedReply(text="Welcome back, still here."),
        ]
    )
    system_prompt = (bench / "system_prompt.txt").read_text()
    tools = json.loads((bench / "tools.json").read_text())
    async with GeminiLiveFake(script) as fake:
        llm = GeminiLiveLLMService(
            api_key="test-key-not-secret",
            system_instruction=system_prompt,
            tools=tools_schema(tools),
            http_options=HttpOptions(base_url=fake.base_url, async_client_args={"ssl": fake.tls.client}),
        )
        seen: list = []
        llm.register_function(None, scripted_tool_handler({call["name"]: t10["function_call_response"]}, seen))
        async with ServiceRig(llm, sample_rate=16000, speed=2.0) as rig:
            # Greeting: the seeded context completes a turn on connect.
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="greeting")
            first = fake.connections[0]
            assert first.path.endswith("GenerativeService.BidiGenerateContent")
            assert first.auth_present
            assert first.system_instruction == system_prompt
            assert {t["name"] for t in first.tools} == {t["name"] for t in tools}
            assert "sessionResumption" in first.setup or "session_resumption" in first.setup
            assert first.setup["model"].startswith("models/")

            # Turn with a tool call: the scripted payload is what reaches the server.
            rig.feeder.play(read_wav_pcm16(bench / t10["audio_file"], 16000))
            await fake.wait_until(lambda: first.tool_results, what="tool response")
            tr = first.tool_results[0]
            assert tr["call_id"] == "fc-1" and tr["name"] == call["name"]
            assert tr["result"] == t10["function_call_response"]
            assert seen == [(call["name"], call["args"])]
            await rig.wait_until(lambda: "submitted" in rig.collector.text, what="spoken reply after tool")
            assert first.user_turns == 1
            assert first.audio_in_rate == 16000
            wav_ms = len(read_wav_pcm16(bench / t10["audio_file"], 16000)) / 32
            assert first.audio_in_ms >= wav_ms

            # goAway then close: Pipecat reconnects by itself with the resumption handle.
            rig.feeder.play(read_wav_pcm16(bench / "audio/turn_011.wav", 16000))
            await fake.wait_until(lambda: len(fake.connections) >= 2, what="reconnect")
            second = fake.connections[1]
            await fake.wait_until(lambda: second.setup, what="second setup")
            assert first.closed == "server:go_away"
            assert second.resumed_from is not None
            assert second.system_instruction == system_prompt
            rig.feeder.play(read_wav_pcm16(bench / "audio/turn_012.wav", 16000))
            await rig.wait_until(lambda: "Welcome back" in rig.collector.text, what="reply on resumed session")
            assert second.audio_in_bytes > 0 and second.replies == [3]
            assert rig.collector.audio_rate == 24000 and rig.collector.audio_ms > 1000
            # The fake keeps that a key was sent, never the key itself.
            assert all("test-key-not-secret" not in c.model_dump_json() for c in fake.connections)


async def test_gemini_live_disconnect_without_resumption_replays_history(bench: Path) -> None:
    """No resumption handle granted: after a 1011 close Pipecat re-seeds the history as clientContent."""
    script = Script(
        replies=[
            ScriptedReply(text="Hello, how can I help?"),
            ScriptedReply(user_transcript="When are the workshops?", text="Workshops are on June third.", then="disconnect"),
            ScriptedReply(text="Back again."),
        ]
    )
    async with GeminiLiveFake(script, grant_resumption=False) as fake:
        llm = GeminiLiveLLMService(
            api_key="test-key-not-secret",
            system_instruction="You are the fair's assistant.",
            http_options=HttpOptions(base_url=fake.base_url, async_client_args={"ssl": fake.tls.client}),
        )
        async with ServiceRig(llm, sample_rate=16000, speed=2.0) as rig:
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="greeting")
            rig.feeder.play(read_wav_pcm16(bench / "audio/turn_000.wav", 16000))
            await fake.wait_until(lambda: len(fake.connections) >= 2 and fake.connections[1].history, what="re-seed")
            first, second = fake.connections
            assert first.closed == "server:1011"
            assert second.resumed_from is None
            replayed = [(h["role"], h["text"]) for h in second.history]
            assert ("user", "Greet the user briefly.") in replayed
            assert any(role == "model" and "June third" in text for role, text in replayed)
            assert second.system_instruction == "You are the fair's assistant."


async def test_gemini_live_client_turns_with_server_vad_disabled(bench: Path) -> None:
    """VAD disabled: audio flows only inside activityStart/activityEnd windows, which end turns."""
    from pipecat.services.google.gemini_live.llm import GeminiVADParams

    script = Script(replies=[ScriptedReply(text="Hello."), ScriptedReply(user_transcript="Workshops?", text="June third.")])
    async with GeminiLiveFake(script) as fake:
        llm = GeminiLiveLLMService(
            api_key="test-key-not-secret",
            system_instruction="You are the fair's assistant.",
            settings=GeminiLiveLLMService.Settings(vad=GeminiVADParams(disabled=True)),
            http_options=HttpOptions(base_url=fake.base_url, async_client_args={"ssl": fake.tls.client}),
        )
        async with ServiceRig(llm, sample_rate=16000, speed=2.0) as rig:
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="greeting")
            first = fake.connections[0]
            ric = first.setup.get("realtimeInputConfig") or first.setup["realtime_input_config"]
            aad = ric.get("automaticActivityDetection") or ric["automatic_activity_detection"]
            assert aad["disabled"] is True
            before = first.audio_in_bytes
            wav = read_wav_pcm16(bench / "audio/turn_000.wav", 16000)
            rig.feeder.play(wav, mark_turn=True)
            await rig.wait_until(lambda: "June third" in rig.collector.text, what="reply to the client-ended turn")
            kinds = [next(iter(m["realtime_input"])) for m in first.messages if "realtime_input" in m]
            assert "activity_start" in kinds or "activityStart" in kinds
            assert "activity_end" in kinds or "activityEnd" in kinds
            assert first.user_turns == 1
            # Only the turn's audio (plus the pre-roll before activityStart) was streamed.
            assert len(wav) <= first.audio_in_bytes - before <= len(wav) + 16000 * 2


async def test_fake_rejects_seeded_function_parts_and_stalls_after_tool_until_realtime_text() -> None:
    """Straight through google-genai (no Pipecat): what the fake does with the two Gemini quirks
    the runner works around — 1007 on seeded functionCall parts, and no answer after a tool
    response until some realtime input arrives."""
    import asyncio

    from google import genai
    from google.genai import types

    script = Script(replies=[ScriptedReply(tool_calls=[ToolCallSpec(name="f", args={"x": 1}, call_id="c1")], text="Done.")])
    async with GeminiLiveFake(script, stall_after_tool=True) as fake:
        client = genai.Client(
            api_key="test-key-not-secret",
            http_options=HttpOptions(base_url=fake.base_url, async_client_args={"ssl": fake.tls.client}),
        )
        config = types.LiveConnectConfig(response_modalities=[types.Modality.AUDIO])
        async with client.aio.live.connect(model="models/gemini-test", config=config) as session:
            await session.send_client_content(turns=[types.Content(role="user", parts=[types.Part(text="Hi")])], turn_complete=True)
            got: list = []

            async def read() -> None:
                async for msg in session.receive():
                    got.append(msg)
                    if msg.tool_call:
                        await session.send_tool_response(
                            function_responses=types.FunctionResponse(id="c1", name="f", response={"ok": True})
                        )

            reader = asyncio.create_task(read())
            first = fake.connections[0]
            await fake.wait_until(lambda: first.tool_results, what="tool response")
            await asyncio.sleep(0.3)
            assert not any(m.server_content and m.server_content.output_transcription for m in got)  # stalled
            await session.send_realtime_input(text=" ")
            await fake.wait_until(
                lambda: any(m.server_content and m.server_content.turn_complete for m in got), what="answer after nudge"
            )
            assert "".join(m.server_content.output_transcription.text for m in got
                           if m.server_content and m.server_content.output_transcription) == "Done."
            assert first.user_turns == 0  # a blank nudge is not a user utterance
            reader.cancel()

        async with client.aio.live.connect(model="models/gemini-test", config=config) as session:
            call = types.Part(function_call=types.FunctionCall(id="c0", name="f", args={"x": 1}))
            await session.send_client_content(turns=[types.Content(role="model", parts=[call])], turn_complete=False)
            second = fake.connections[1]
            await fake.wait_until(lambda: second.closed, what="close on seeded functionCall")
        assert second.closed == "server:1007"
        assert "not accepted in client_content" in second.errors[0]
