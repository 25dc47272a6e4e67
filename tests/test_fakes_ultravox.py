"""UltravoxRealtimeLLMService (real) joined to the local Ultravox fake's call websocket."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest
from pipecat.services.ultravox.llm import JoinUrlInputParams, UltravoxRealtimeLLMService

from runners.fakes.script import Script, ScriptedReply, ToolCallSpec
from tests.provider_harness import ServiceRig, read_wav_pcm16, scripted_tool_handler
from runners.providers.ultravox.fake import UltravoxFake


@pytest.fixture
def bench(shared_data: Path) -> Path:
    return shared_data / "conversation_bench"


def turn(bench: Path, i: int) -> dict:
    return json.loads((bench / "turns.jsonl").read_text().splitlines()[i])


async def create_call(api_url: str, body: dict, prior: str | None = None) -> dict:
    """What the engine does instead of Pipecat's hard-coded REST call."""
    params = {"priorCallId": prior} if prior else {}
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{api_url}/calls", json=body, params=params, headers={"X-Api-Key": "k"}) as resp,
    ):
        assert resp.status == 201, await resp.text()
        return await resp.json()


async def test_ultravox_reply_tool_call_disconnect_and_prior_call(bench: Path) -> None:
    t10 = turn(bench, 10)
    call = t10["required_function_call"]
    script = Script(
        replies=[
            ScriptedReply(text="Hi there, welcome to the fair."),
            ScriptedReply(
                user_transcript=t10["input"],
                tool_calls=[ToolCallSpec(name=call["name"], args=call["args"], call_id="inv-1")],
                text="Your suggestion is in.",
                then="disconnect",
            ),
            ScriptedReply(text="Picking up where we left off."),
        ]
    )
    system_prompt = (bench / "system_prompt.txt").read_text()
    body = {
        "systemPrompt": system_prompt,
        "selectedTools": [
            {"temporaryTool": {"modelToolName": t["name"], "description": t["description"], "client": {}}}
            for t in json.loads((bench / "tools.json").read_text())
        ],
        "medium": {"serverWebSocket": {"inputSampleRate": 48000, "outputSampleRate": 48000}},
    }
    async with UltravoxFake(script) as fake:
        created = await create_call(fake.base_url, body)
        llm = UltravoxRealtimeLLMService(params=JoinUrlInputParams(join_url=created["joinUrl"]))
        seen: list = []
        llm.register_function(None, scripted_tool_handler({call["name"]: t10["function_call_response"]}, seen))
        async with ServiceRig(llm, sample_rate=24000, speed=2.0, send_context=False) as rig:
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="greeting")
            first = fake.connections[0]
            assert first.system_instruction == system_prompt
            assert "submit_session_suggestion" in {t["modelToolName"] for t in first.tools}
            assert "welcome to the fair" in rig.collector.text
            assert rig.collector.audio_rate == 48000

            wav = read_wav_pcm16(bench / t10["audio_file"], 24000)
            rig.feeder.play(wav)
            await fake.wait_until(lambda: first.tool_results, what="client_tool_result")
            assert first.tool_results[0]["call_id"] == "inv-1"
            assert json.loads(first.tool_results[0]["result"]) == t10["function_call_response"]
            assert seen == [(call["name"], call["args"])]
            # Pipecat resamples our 24 kHz frames to 48 kHz; the fake counts in audio time.
            assert first.audio_in_rate == 48000
            assert first.audio_in_ms >= len(wav) / 48
            await fake.wait_until(lambda: first.closed == "server:1011", what="forced close")
            await rig.wait_until(lambda: "suggestion is in" in rig.collector.text, what="reply after tool")
            await asyncio.sleep(1.0)
            assert len(fake.connections) == 1  # Pipecat's Ultravox service never rejoins by itself

        # The engine's way back: a new call continuing the old one (history kept server-side,
        # tool call and result included); the agent speaks first again, continuing.
        again = await create_call(fake.base_url, body, prior=created["callId"])
        llm2 = UltravoxRealtimeLLMService(params=JoinUrlInputParams(join_url=again["joinUrl"]))
        async with ServiceRig(llm2, sample_rate=24000, speed=2.0, send_context=False) as rig2:
            await rig2.wait_until(lambda: "where we left off" in rig2.collector.text, what="continuation on the new call")
            second = fake.connections[1]
            assert second.resumed_from == created["callId"]
            assert second.replies[0] == 2
            assert [h["role"] for h in second.history] == ["agent", "user", "tool_call", "tool_result", "agent"]
            assert second.history[1]["text"] == t10["input"]
            assert second.history[2]["toolName"] == call["name"] and json.loads(second.history[2]["text"]) == call["args"]
            assert second.history[3]["invocationId"] == "inv-1"
            assert json.loads(second.history[3]["text"]) == t10["function_call_response"]
            rig2.feeder.play(read_wav_pcm16(bench / "audio/turn_011.wav", 24000))
            await fake.wait_until(lambda: second.user_turns == 1 and len(second.replies) == 2, what="reply to turn 11")


async def test_ultravox_call_creation_rules() -> None:
    """initialMessages seed a new call; with priorCallId they are refused, as the API documents."""
    msgs = [
        {"role": "MESSAGE_ROLE_USER", "text": "Hi"},
        {"role": "MESSAGE_ROLE_TOOL_CALL", "text": "{}", "toolName": "t", "invocationId": "c1"},
        {"role": "MESSAGE_ROLE_TOOL_RESULT", "text": "{\"ok\": true}", "toolName": "t", "invocationId": "c1"},
        {"role": "MESSAGE_ROLE_AGENT", "text": "Done."},
    ]
    async with UltravoxFake(Script()) as fake:
        first = await create_call(fake.base_url, {"systemPrompt": "p", "initialMessages": msgs})
        assert [h["role"] for h in fake.calls[first["callId"]]["history"]] == ["user", "tool_call", "tool_result", "agent"]
        async with aiohttp.ClientSession() as http:
            url = f"{fake.base_url}/calls"
            async with http.post(url, json={"initialMessages": msgs}, params={"priorCallId": first["callId"]},
                                 headers={"X-Api-Key": "k"}) as resp:
                assert resp.status == 400 and "priorCallId" in (await resp.json())["detail"]
            async with http.post(url, json={"initialMessages": [{"role": "MESSAGE_ROLE_BOSS", "text": "x"}]},
                                 headers={"X-Api-Key": "k"}) as resp:
                assert resp.status == 400 and "MESSAGE_ROLE_BOSS" in str(await resp.json())
            async with http.post(url, json={}) as resp:
                assert resp.status == 403
            fake.create_failures.append((503, "upstream unavailable"))
            async with http.post(url, json={}, headers={"X-Api-Key": "k"}) as resp:
                assert resp.status == 503 and await resp.text() == "upstream unavailable"
        assert [c["status"] for c in fake.creations] == [201, 400, 400, 403, 503]
