"""AWSNovaSonicLLMService (real; only create_client() swapped) against the Nova Sonic fake stream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipecat.services.aws.nova_sonic.session_continuation import SessionContinuationParams

from runners.fakes.script import Script, ScriptedReply, ToolCallSpec
from tests.provider_harness import GREETING, ServiceRig, read_wav_pcm16, scripted_tool_handler, tools_schema
from runners.providers.nova_sonic.fake import LocalNovaSonicLLMService, NovaSonicFake



@pytest.fixture
def bench(shared_data: Path) -> Path:
    return shared_data / "conversation_bench"


def turn(bench: Path, i: int) -> dict:
    return json.loads((bench / "turns.jsonl").read_text().splitlines()[i])


def make_service(fake: NovaSonicFake, bench: Path, **kwargs) -> LocalNovaSonicLLMService:
    return LocalNovaSonicLLMService(
        fake=fake,
        settings=LocalNovaSonicLLMService.Settings(system_instruction=(bench / "system_prompt.txt").read_text()),
        tools=tools_schema(json.loads((bench / "tools.json").read_text())),
        **kwargs,
    )


async def test_nova_sonic_tool_call_and_session_continuation(bench: Path) -> None:
    t10 = turn(bench, 10)
    call = t10["required_function_call"]
    script = Script(
        replies=[
            ScriptedReply(text="Hello, welcome to the fair."),
            ScriptedReply(
                user_transcript=t10["input"],
                tool_calls=[ToolCallSpec(name=call["name"], args=call["args"], call_id="tool-use-1")],
                text="I submitted your suggestion.",
            ),
            ScriptedReply(user_transcript="One more thing.", text="Of course, go ahead."),
        ]
    )
    fake = NovaSonicFake(script)
    # Rotate after 1 s instead of 360 s so Pipecat's own continuation runs within the test.
    llm = make_service(fake, bench, session_continuation=SessionContinuationParams(transition_threshold_seconds=1.0))
    seen: list = []
    llm.register_function(None, scripted_tool_handler({call["name"]: t10["function_call_response"]}, seen))
    async with ServiceRig(llm, sample_rate=16000, speed=2.0) as rig:
        await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="greeting")
        first = fake.connections[0]
        assert first.system_instruction == (bench / "system_prompt.txt").read_text()
        assert first.history == [{"role": "USER", "text": GREETING, "interactive": True}]
        assert "submit_session_suggestion" in {t["name"] for t in first.tools}
        assert first.audio_in_rate == 16000
        assert rig.collector.audio_rate == 24000

        rig.feeder.play(read_wav_pcm16(bench / t10["audio_file"], 16000))
        await fake.wait_until(lambda: first.tool_results, what="toolResult")
        assert first.tool_results[0]["call_id"] == "tool-use-1"
        assert first.tool_results[0]["result"] == t10["function_call_response"]
        assert seen == [(call["name"], call["args"])]
        await rig.wait_until(lambda: "submitted your suggestion" in rig.collector.text, what="reply after tool")

        # Session continuation: the next session was pre-created and handed the text history.
        await fake.wait_until(lambda: len(fake.connections) >= 2 and fake.connections[1].audio_in_rate, what="handoff")
        second = fake.connections[1]
        assert second.system_instruction == first.system_instruction
        assert {t["name"] for t in second.tools} == {t["name"] for t in first.tools}
        replayed = [(h["role"], h["text"]) for h in second.history]
        assert replayed == [
            ("USER", GREETING),
            ("ASSISTANT", "Hello, welcome to the fair."),
            ("USER", t10["input"]),
            ("ASSISTANT", "I submitted your suggestion."),
        ]
        # Tool calls are not replayed: nothing of the call or its result reaches the new session.
        wire = json.dumps(second.messages)
        assert "tool-use-1" not in wire and "toolResult" not in wire and '"TOOL"' not in wire

        rig.feeder.play(read_wav_pcm16(bench / "audio/turn_011.wav", 16000))
        await rig.wait_until(lambda: "go ahead" in rig.collector.text, what="reply on the new session")
        assert second.replies == [2] and second.audio_in_bytes > 0
        await fake.wait_until(lambda: first.closed == "client", what="old session closed")


async def test_nova_sonic_stream_end_reconnects_with_context_history(bench: Path) -> None:
    script = Script(
        replies=[
            ScriptedReply(text="Hello there."),
            ScriptedReply(
                user_transcript="When are the workshops?",
                tool_calls=[ToolCallSpec(name="check_schedule_conflict", args={"session_id_1": "1", "session_id_2": "2"}, call_id="tool-use-9")],
                text="On June third.",
                then="expire",
            ),
            ScriptedReply(text="Anything else?"),
        ]
    )
    fake = NovaSonicFake(script)
    llm = make_service(fake, bench)
    llm.register_function(None, scripted_tool_handler({"check_schedule_conflict": {"conflict": False}}, []))
    async with ServiceRig(llm, sample_rate=16000, speed=2.0) as rig:
        await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="greeting")
        rig.feeder.play(read_wav_pcm16(bench / "audio/turn_000.wav", 16000))
        await fake.wait_until(lambda: len(fake.connections) >= 2 and fake.connections[1].audio_in_rate, what="reconnect")
        first, second = fake.connections[:2]
        assert first.closed == "server:expire"
        assert any("AWS Bedrock ended the response stream" in e for e in rig.errors)
        replayed = [(h["role"], h["text"]) for h in second.history]
        assert ("ASSISTANT", "Hello there.") in replayed
        assert ("USER", "When are the workshops?") in replayed
        assert second.system_instruction == first.system_instruction
        assert first.tool_results[0]["result"] == {"conflict": False}
        # The reconnect replays the LLMContext as text; its tool call and result are dropped.
        wire = json.dumps(second.messages)
        assert "tool-use-9" not in wire and '"TOOL"' not in wire and "toolResult" not in wire
        assert not any("conflict" in h["text"] for h in second.history)
