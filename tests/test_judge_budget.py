"""A long run judged whole-run, through each backend's real client against its fake, where the fake
enforces its model's limits as the real API does (`tests/fakes/`): the output budget is sized from
the turns asked, a reply cut at it is one attempt and a clear error, a run whose reply cannot fit
the model is judged in consecutive parts that each see the turns before them, and the local judge
sets Ollama's context window from the prompt instead of losing the rules off its start."""

from __future__ import annotations

import re
from pathlib import Path

import anthropic
import boto3
import botocore.exceptions
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors

from arena_tui.judge import make_backend
from arena_tui.judge.backends import RetryPolicy
from arena_tui.judge.phase2 import apply_rules
from arena_tui.judge.rubric import RUBRIC
from arena_tui.judge.whole_run import judge_run
from arena_tui.judge.worker import judge_turn
from arena_tui.orchestration.live import verdict_line
from arena_tui.spine.benchmark import Benchmark
from arena_tui.verdicts import standing
from benchmarks.registry import load_benchmark

from .fakes.anthropic_messages import FakeAnthropic
from .fakes.bedrock_converse import FakeBedrock
from .fakes.google_generate import FakeGemini
from .fakes.judge_answers import wordy
from .fakes.ollama_api import FakeOllama
from .fakes.openai_chat import FakeOpenAI
from .test_judge_backends import golden_result

FAST = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.02, deadline_s=120.0, what="whole-run")
TYPICAL = 150  # tokens of commentary a turn: ~250 tokens an entry (the fakes count ~4 characters a token)
WORDY = 1000  # more than any budget allows: the reply is cut


@pytest.fixture(scope="module")
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark(shared_data / "conversation_bench")


@pytest.fixture
def bedrock_fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """FakeBedrock, boto3 given fake credentials and no AWS files (as tests/test_judge_backends.py)."""
    for k, v in {"AWS_ACCESS_KEY_ID": "AKIDFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret", "AWS_REGION": "us-west-2",
                 "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": str(tmp_path / "none"),
                 "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = FakeBedrock().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def run75(conv):
    return [golden_result(conv, t.turn_index) for t in conv.turns]


def budget_in(error: str) -> int:
    m = re.search(r"output budget of ([\d,]+) tokens", error)
    assert m, error
    return int(m.group(1).replace(",", ""))


async def judged(conv, results, kind: str, model: str, fake, **where) -> list:
    backend = make_backend(kind, model, **(where or {"base_url": fake.base_url, "api_key": "not-a-key"}))
    try:
        return await judge_run(conv, results, backend, run_id="r", audio=False, policy=FAST)
    finally:
        await backend.aclose()


def split(out: list) -> tuple[dict, object]:
    return {j.turn_index: j for j in out if j.turn_index is not None}, next(j for j in out if j.turn_index is None)


# --- Bedrock: maxTokens was 4,096 for every request; a cut reply was retried 4 times ---------------


async def test_bedrock_sizes_max_tokens_from_the_turns_and_never_retries_a_cut_reply(conv, run75, bedrock_fake):
    bedrock_fake.answer = wordy(TYPICAL)  # a 75-turn reply of ~19k tokens: main's 4,096 cut it
    out = await judged(conv, run75, "bedrock", None, bedrock_fake, endpoint_url=bedrock_fake.endpoint_url)
    turns, run = split(out)
    (_, body), = bedrock_fake.converse_requests
    assert body["inferenceConfig"]["maxTokens"] >= 75 * 250 and bedrock_fake.cuts == 0
    assert len(turns) == 75 and all(j.error is None for j in turns.values()) and run.error is None

    wordy_fake = FakeBedrock(wordy(WORDY)).start()
    try:
        out = await judged(conv, run75, "bedrock", None, wordy_fake, endpoint_url=wordy_fake.endpoint_url)
    finally:
        wordy_fake.stop()
    turns, run = split(out)
    (_, body), = wordy_fake.converse_requests  # cut: one attempt, never retried
    error = turns[40].error or ""
    assert error.startswith("judge_error: bedrock:us.anthropic.claude-sonnet-4-5") and "stopReason max_tokens" in error
    assert budget_in(error) == body["inferenceConfig"]["maxTokens"] and "turns 0-74, 75 turns" in error
    assert all(j.error == error for j in turns.values()) and run.error == error


# --- OpenAI: finish_reason "length" was not checked ------------------------------------------------


async def test_openai_asks_a_budget_and_a_reply_cut_at_it_is_one_attempt(conv, run75):
    server = FakeOpenAI(wordy(WORDY)).start()
    try:
        out = await judged(conv, run75, "openai", "gpt-5.2", server)
    finally:
        server.stop()
    turns, run = split(out)
    (req,) = server.chat_requests  # main sent no budget, and would have retried a cut reply 4 times
    error = turns[0].error or ""
    assert "openai:gpt-5.2 cut its reply off" in error and "finish_reason length" in error, error
    assert budget_in(error) == req["max_completion_tokens"] and server.cuts == 1
    assert "max_tokens" not in req  # refused by OpenAI's reasoning models


async def test_a_budget_over_the_models_cap_is_refused_by_the_fake_as_by_openai_and_not_retried(conv, run75):
    server = FakeOpenAI(max_output=16_384).start()  # the model is not what the table says: its cap is lower
    try:
        out = await judged(conv, run75, "openai", "gpt-5.2", server)
    finally:
        server.stop()
    turns, run = split(out)
    assert len(server.chat_requests) == 1 and server.chat_requests[0]["max_completion_tokens"] > 16_384
    assert "HTTP 400" in (run.error or "") and "max_completion_tokens is too large" in (run.error or ""), run.error


# --- Anthropic: a fixed max_tokens of 16,000 -------------------------------------------------------


async def test_anthropic_asks_what_the_turns_need_over_the_old_16000(conv, run75):
    server = FakeAnthropic(wordy(TYPICAL)).start()  # ~19k tokens for 75 turns: over main's 16,000
    try:
        out = await judged(conv, run75, "anthropic", "claude-opus-4-5", server)
    finally:
        server.stop()
    turns, run = split(out)
    (req,) = server.message_requests
    assert req["max_tokens"] > 16_000 and server.cuts == 0
    assert all(j.error is None for j in turns.values()) and run.error is None


async def test_a_run_over_the_models_output_cap_is_judged_in_parts_that_see_the_turns_before_them(conv, run75, bedrock_fake):
    """Claude 3.5 Haiku writes at most 8,192 tokens: main asked Bedrock for 4,096 and the reply was
    cut (the whole run lost). Now: consecutive parts, each under the cap, each seeing the turns
    before it as the conversation so far and asking verdicts for its own turns only; merged, every
    turn is judged and the code rules run over the merged verdicts."""
    bedrock_fake.answer, bedrock_fake.max_output = wordy(TYPICAL), 8_192
    model = "anthropic.claude-3-5-haiku-20241022-v1:0"
    out = await judged(conv, run75, "bedrock", model, bedrock_fake, endpoint_url=bedrock_fake.endpoint_url)
    turns, run = split(out)
    reqs = [body for _, body in bedrock_fake.converse_requests]
    assert len(reqs) >= 3 and all(r["inferenceConfig"]["maxTokens"] <= 8_192 for r in reqs) and bedrock_fake.cuts == 0
    assert sorted(turns) == list(range(75)) and all(j.error is None and j.scope == "run" for j in turns.values())
    asked, first = [], 0
    for k, req in enumerate(reqs):
        history, target = (b["text"] for b in req["messages"][0]["content"] if "text" in b)
        ids = [int(n) for n in re.findall(r"^## Turn (\d+)$", target, re.M)]
        assert ids == list(range(first, first + len(ids))) and f"Judge exactly these turns, one entry each: [{ids[0]}, " in target
        assert f"this is request {k + 1}: turns {ids[0]}-{ids[-1]}" in history
        seen = [int(n) for n in re.findall(r"^\[turn (\d+)\]$", history, re.M)]
        assert seen == list(range(first)), seen  # every turn before the part, none of its own
        asked += ids
        first = ids[-1] + 1
    assert asked == list(range(75))
    assert run.notes and run.notes.startswith(f"judged in {len(reqs)} requests (turns 0-") and "part 2 of" in run.notes
    assert verdict_line(run).startswith(f"whole run r1 bedrock:{model}: judged in {len(reqs)} requests (")
    new, _ = apply_rules(conv, run75, [j for j in out if j.turn_index is not None])  # phase 2 over the merge
    now = standing([*out, *new])
    assert sorted(t for t in now if t is not None) == list(range(75)) and all(now[t].scores for t in range(75))


# --- Google: its output cap was never asked for ---------------------------------------------------


async def test_google_asks_max_output_tokens_and_a_cut_reply_names_the_budget_and_the_turns(conv, run75):
    server = FakeGemini(wordy(WORDY)).start()
    try:
        out = await judged(conv, run75, "google", "gemini-2.5-pro", server)
    finally:
        server.stop()
    turns, run = split(out)
    ((_, body),) = server.generate_requests
    asked = body["generationConfig"]["maxOutputTokens"]
    error = turns[74].error or ""
    assert "google:gemini-2.5-pro cut its reply off" in error and "finishReason MAX_TOKENS" in error, error
    assert budget_in(error) == asked and "turns 0-74" in error and server.cuts == 1


# --- the local judge: no context size; Ollama cut the prompt's start (the rules) --------------------


async def test_the_local_judge_on_ollama_sets_the_window_from_the_prompt_and_keeps_the_rules(conv, run75):
    server = FakeOllama(wordy(TYPICAL)).start()  # Ollama's default window: 4,096 tokens
    backend = make_backend("local", "llama3.2", base_url=server.base_url)
    try:
        one = await judge_turn(conv, run75[40], run75[:40], backend, run_id="r", policy=FAST)
        out = await judge_run(conv, run75, backend, run_id="r", audio=False, policy=FAST)
    finally:
        await backend.aclose()
        server.stop()
    assert one.error is None and all(j.error is None for j in out)
    assert not server.compat_requests and len(server.chat_requests) == 2  # Ollama's own API, never /v1
    for req, seen in zip(server.chat_requests, server.seen):
        system = req["messages"][0]["content"]
        assert req["options"]["num_ctx"] * 4 >= sum(len(m["content"]) for m in req["messages"])  # the prompt fits
        assert req["options"]["num_ctx"] % 8_192 == 0 and req["options"]["num_predict"] >= 4_096
        assert system.startswith(RUBRIC[:200]) and RUBRIC[:200] in seen  # the model saw the rules
    whole = server.chat_requests[1]["options"]
    assert whole["num_predict"] >= 75 * 250 and whole["num_ctx"] <= 131_072
    assert [g.path for g in server.gets] == ["/api/version"]  # asked once what the server is


async def test_the_local_judge_refuses_a_prompt_over_the_models_window_instead_of_losing_the_rules(conv, run75):
    server = FakeOllama(trained_ctx=8_192).start()  # /api/show: the model's window is 8,192 tokens
    backend = make_backend("local", "llama3.2", base_url=server.base_url)
    try:
        j = await judge_turn(conv, run75[40], run75[:40], backend, run_id="r", policy=FAST)
        out = await judge_run(conv, run75, backend, run_id="r", audio=False, policy=FAST)
    finally:
        await backend.aclose()
        server.stop()
    assert not server.chat_requests and not server.compat_requests  # nothing sent, nothing cut
    assert j.error and "over its server's 8,192-token window" in j.error and "turn 40" in j.error, j.error
    _, run = split(out)
    assert run.error and "not even one turn a request fits" in run.error and "8,192-token window" in run.error, run.error


async def test_an_openai_compatible_server_that_is_not_ollama_gets_max_tokens(conv, run75):
    server = FakeOpenAI(wordy(TYPICAL), keyless=True, max_output=32_768, context_window=131_072).start()  # vLLM-like
    try:
        out = await judged(conv, run75, "local", "llama3.2", server)
    finally:
        server.stop()
    assert all(j.error is None for j in out)
    (req,) = server.chat_requests
    assert req["max_tokens"] >= 75 * 250 and "max_completion_tokens" not in req
    assert [g.path for g in server.gets] == ["/api/version"]  # 404: not Ollama, the OpenAI-compatible route


# --- each fake refuses what its API refuses --------------------------------------------------------


def test_each_fake_refuses_an_output_over_its_cap_and_a_prompt_over_its_window(bedrock_fake):
    big = "word " * 100_000  # ~125k tokens as the fakes count
    server = FakeOpenAI(context_window=100_000).start()
    try:
        client = openai.OpenAI(api_key="sk-test", base_url=server.base_url, max_retries=0)
        fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], response_format=fmt,
                                           max_completion_tokens=200_000)
        assert e.value.code == "invalid_value" and "supports at most 128000 completion tokens" in e.value.message
        with pytest.raises(openai.BadRequestError) as e:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": big}], response_format=fmt)
        assert e.value.code == "context_length_exceeded" and "maximum context length is 100000 tokens" in e.value.message
    finally:
        server.stop()

    server = FakeAnthropic().start()
    try:
        client = anthropic.Anthropic(api_key="k", base_url=server.base_url, max_retries=0)
        tool = {"name": "t", "input_schema": {"type": "object", "properties": {}, "additionalProperties": False}}
        with pytest.raises(anthropic.BadRequestError, match="maximum allowed number of output tokens"):
            client.messages.create(model="m", max_tokens=100_000, messages=[{"role": "user", "content": "hi"}],
                                   tools=[tool], tool_choice={"type": "tool", "name": "t"}, timeout=30)
        with pytest.raises(anthropic.BadRequestError, match=r"prompt is too long: 125\d{4} tokens > 200000 maximum"):
            client.messages.create(model="m", max_tokens=1_000, messages=[{"role": "user", "content": big * 10}],
                                   tools=[tool], tool_choice={"type": "tool", "name": "t"}, timeout=30)
    finally:
        server.stop()

    runtime = boto3.client("bedrock-runtime", endpoint_url=bedrock_fake.endpoint_url, region_name="us-west-2")
    tools = {"tools": [{"toolSpec": {"name": "t", "inputSchema": {"json": {"type": "object"}}}}]}
    with pytest.raises(botocore.exceptions.ClientError, match="exceeds the model limit of 64000"):
        runtime.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hi"}]}], toolConfig=tools,
                         inferenceConfig={"maxTokens": 100_000})
    with pytest.raises(botocore.exceptions.ClientError, match="exceed context limit: 250000 \\+ 1000 > 200000"):
        runtime.converse(modelId="m", messages=[{"role": "user", "content": [{"text": big * 2}]}], toolConfig=tools,
                         inferenceConfig={"maxTokens": 1_000})

    server = FakeGemini(context_window=100_000).start()
    try:
        client = genai.Client(api_key="k", vertexai=False, http_options={"base_url": server.base_url})
        config = {"response_mime_type": "application/json", "response_schema": {"type": "OBJECT"}}
        with pytest.raises(genai_errors.ClientError, match="supported range is from 1 \\(inclusive\\) to 65537"):
            client.models.generate_content(model="m", contents="hi", config={**config, "max_output_tokens": 100_000})
        with pytest.raises(genai_errors.ClientError, match="exceeds the maximum number of tokens allowed \\(100000\\)"):
            client.models.generate_content(model="m", contents=big, config=config)
    finally:
        server.stop()
