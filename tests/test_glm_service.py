"""GLMRealtimeLLMService (ours) in a real Pipecat pipeline against the local GLM-Realtime fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

from runners.fakes.script import Script, ScriptedReply, ToolCallSpec
from runners.providers.glm_realtime.fake import GLMRealtimeFake
from runners.providers.glm_realtime.events import GLMEventError, ResponseAudioDelta, ResponseDone, parse_server_event
from tests.provider_harness import GREETING, ServiceRig, read_wav_pcm16, scripted_tool_handler, tools_schema
from runners.providers.glm_realtime.service import GLMRealtimeLLMService
from runners.providers.glm_realtime.wire import MAX_INSTRUCTION_CHARS, GLMConfigError, glm_tools, wav_bytes



@pytest.fixture
def arena(shared_data: Path) -> Path:
    return shared_data


def first_call_turn(bench: Path) -> dict:
    for line in (bench / "turns.jsonl").read_text().splitlines():
        t = json.loads(line)
        if isinstance(t["required_function_call"], dict):
            return t
    raise AssertionError("no turn with a single expected call")


def test_instruction_cap_is_refused_with_its_size(arena: Path) -> None:
    prompt = (arena / "conversation_bench" / "system_prompt.txt").read_text()
    with pytest.raises(GLMConfigError, match=f"{len(prompt):,} characters; the limit is 12,000"):
        GLMRealtimeLLMService(api_key="k", system_instruction=prompt)
    ok = "x" * MAX_INSTRUCTION_CHARS
    assert GLMRealtimeLLMService(api_key="k", system_instruction=ok)._settings.system_instruction == ok


def test_tool_schema_problems_are_named() -> None:
    bad = ToolsSchema(
        standard_tools=[
            FunctionSchema(name="look up", description="", properties={"q": {"type": "string"}}, required=["q", "n"]),
            FunctionSchema(name="ok_tool", description="fine", properties={}, required=[]),
        ]
    )
    with pytest.raises(GLMConfigError) as e:
        glm_tools(bad)
    msg = str(e.value)
    assert "'look up': name must match" in msg and "'look up': description is empty" in msg
    assert "required ['n'] not among its properties" in msg and "ok_tool" not in msg


def test_wav_chunk_is_a_complete_wav_file() -> None:
    import io
    import wave

    with wave.open(io.BytesIO(wav_bytes(b"\x01\x00" * 1600, 16000))) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()) == (16000, 1, 2, 1600)


async def test_glm_reply_tool_call_text_without_audio_and_reconnect_replay(arena: Path) -> None:
    bench = arena / "grocery_bench"
    t = first_call_turn(bench)
    call = t["required_function_call"]
    prompt = (bench / "system_prompt.txt").read_text()
    script = Script(
        replies=[
            ScriptedReply(text="Hi! What can I get you today?"),
            ScriptedReply(user_transcript=t["input"], tool_calls=[ToolCallSpec(name=call["name"], args=call["args"], call_id="call_1")],
                          text="We have all-purpose flour for six ninety-nine."),
            ScriptedReply(text="Anything else on your list?", audio=False),  # the air model's failure mode
            ScriptedReply(text="Okay, noted.", then="disconnect"),
            ScriptedReply(text="Sorry, I lost you for a second."),
        ]
    )
    audio = arena / "conversation_bench" / "audio"
    async with GLMRealtimeFake(script) as fake:
        llm = GLMRealtimeLLMService(
            api_key="test-key-not-secret", base_url=fake.base_url, system_instruction=prompt,
            tools=tools_schema(json.loads((bench / "tools.json").read_text())),
        )
        replays: list = []

        @llm.event_handler("on_history_replayed")
        async def _replayed(_svc, report):
            replays.append(report)

        seen: list = []
        llm.register_function(None, scripted_tool_handler({call["name"]: t["function_call_response"]}, seen))
        async with ServiceRig(llm, sample_rate=24000, speed=2.0) as rig:
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="greeting")
            first = fake.connections[0]
            assert first.auth_present
            assert first.system_instruction == prompt
            assert first.setup["input_audio_format"] == "wav" and first.setup["turn_detection"] == {"type": "client_vad"}
            assert first.setup["beta_fields"]["chat_mode"] == "audio"
            assert call["name"] in {tool["name"] for tool in first.tools}
            assert first.history == [{"role": "user", "text": GREETING}]
            assert rig.collector.audio_rate == 24000 and "What can I get you" in rig.collector.text

            # Client VAD turn: commit + response.create; the tool result reaches the server.
            rig.feeder.play(read_wav_pcm16(audio / "turn_000.wav", 24000), mark_turn=True)
            await fake.wait_until(lambda: first.tool_results, what="function_call_output")
            assert first.tool_results[0] == {"call_id": "call_1", "name": call["name"], "result": t["function_call_response"]}
            assert seen == [(call["name"], call["args"])]
            await rig.wait_until(lambda: "six ninety-nine" in rig.collector.text, what="spoken answer after the tool")
            assert first.user_turns == 1 and first.audio_in_rate == 16000
            # 50 QPS limit: audio goes out in ≥ 250 ms WAV chunks, except the flush before a commit.
            short = [ms for ms in first.audio_chunk_ms if ms < 250]
            assert len(short) <= first.user_turns and len(first.audio_chunk_ms) >= 4

            # A transcript with no audio is surfaced, not swallowed.
            rig.feeder.play(read_wav_pcm16(audio / "turn_001.wav", 24000), mark_turn=True)
            await rig.wait_until(lambda: llm.text_without_audio == 1, what="text-without-audio flag")
            await rig.wait_until(lambda: any("text but no audio" in e for e in rig.errors), what="the ErrorFrame")

            # Forced close: the service reconnects and replays history within GLM's budget.
            rig.feeder.play(read_wav_pcm16(audio / "turn_002.wav", 24000), mark_turn=True)
            # the report is the client's (sent); the items reach the fake a moment later
            await fake.wait_until(lambda: len(fake.connections) >= 2 and replays
                                  and len(fake.connections[1].history) >= replays[0].messages, what="reconnect + replay")
            second = fake.connections[1]
            assert first.closed == "server:1011"
            assert second.system_instruction == prompt and second.tools == first.tools
            report = replays[0]
            assert report.budget_chars == MAX_INSTRUCTION_CHARS - len(prompt) - 200
            assert report.messages == len(second.history) > 0
            assert sum(len(h["text"]) for h in second.history) == report.chars <= report.budget_chars
            assert second.history[-1] == {"role": "assistant", "text": "Okay, noted."}
            assert llm.reconnects == 1 and llm.replays == [report]

            rig.feeder.play(read_wav_pcm16(audio / "turn_003.wav", 24000), mark_turn=True)
            await rig.wait_until(lambda: "lost you" in rig.collector.text, what="reply on the new session")
            assert second.user_turns == 1 and second.replies == [4]
            assert first.errors == [] and second.errors == []  # e.g. no empty commit was ever sent


async def test_seeded_history_is_replayed_before_the_kickoff_within_the_budget() -> None:
    """A session that continues an earlier one gets its history first, newest that fits, and
    says what the budget dropped; the prompt goes out verbatim."""
    from runners.providers.glm_realtime.wire import ReplayReport

    budget = 100
    prompt = "You are terse. " * 2000
    prompt = prompt[: MAX_INSTRUCTION_CHARS - 200 - budget]
    history = [
        ("user", "first question " * 3),  # 45 chars: falls out of the budget
        ("assistant", "first answer " * 3),  # 39
        ("user", "second question"),  # 15
        ("assistant", "[tool lookup({\"q\":\"x\"}) returned {\"ok\":true}]"),  # 45
        ("assistant", "Here it is."),  # 11
    ]
    script = Script(replies=[ScriptedReply(text="Welcome back.")])
    async with GLMRealtimeFake(script) as fake:
        llm = GLMRealtimeLLMService(api_key="k", base_url=fake.base_url, system_instruction=prompt, history=history)
        llm.register_function(None, scripted_tool_handler({}, []))  # synchronous, as the engine registers it
        reports: list[ReplayReport] = []

        @llm.event_handler("on_history_replayed")
        async def _replayed(_svc, report):
            reports.append(report)

        async with ServiceRig(llm, sample_rate=24000, speed=2.0) as rig:
            await rig.wait_until(lambda: rig.collector.responses_ended >= 1, what="kickoff reply")
    conn = fake.connections[0]
    assert conn.system_instruction == prompt  # exactly as given: no async-tool add-on
    assert [(h["role"], h["text"]) for h in conn.history] == history[2:] + [("user", GREETING)]
    (report,) = reports
    assert (report.kind, report.messages, report.chars, report.dropped_messages, report.budget_chars) == ("seed", 3, 71, 2, budget)
    assert llm.transcript[:5] == history and llm.transcript[-1] == ("assistant", "Welcome back.")
    assert conn.errors == []


def test_server_events_parse_by_type_and_bad_ones_are_refused_in_one_line():
    evt = parse_server_event('{"type": "response.audio.delta", "response_id": "r1", "delta": "AAA="}')
    assert isinstance(evt, ResponseAudioDelta) and evt.delta == "AAA="
    assert parse_server_event('{"type": "input_audio_buffer.committed", "item_id": "i"}') is None
    done = parse_server_event('{"type": "response.done", "response": {"usage": {}}, "usage": {"input_tokens": 7}}')
    assert isinstance(done, ResponseDone) and done.token_usage().input_tokens == 7
    for raw, words in (
        ('{"type": "response.audio.delta", "delta": 5}', ["response.audio.delta", "delta"]),
        ("not json", ["non-JSON", "not json"]),
        ("[1, 2]", ["not a JSON object"]),
    ):
        with pytest.raises(GLMEventError) as e:
            parse_server_event(raw)
        assert all(w in str(e.value) for w in words) and "\n" not in str(e.value), str(e.value)
