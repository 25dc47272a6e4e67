"""The judges people use, each through its real client library against a local fake of its wire
protocol: Anthropic (`anthropic`), Google (`google-genai`), a keyless OpenAI-compatible server
(`openai`), and every backend with a request shape other than one turn's."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from arena_tui.cli import main
from arena_tui.judge.rubric import JUDGE_VERSION
from arena_tui.judge import HeuristicJudge, make_backend
from arena_tui.judge.anthropic_judge import AnthropicJudge
from arena_tui.judge.backends import JudgeRequest, PermanentError, RetryPolicy
from arena_tui.judge.choice import AUTO_FALLBACK_WHY, Pick, pick_judge
from arena_tui.judge.factory import resolve_kind
from arena_tui.judge.google_judge import GoogleJudge
from arena_tui.judge.openai_judge import LocalJudge
from arena_tui.judge.provider_schema import for_anthropic, for_gemini
from arena_tui.judge.schema import JUDGE_SCHEMA, SCHEMA_NAME
from arena_tui.judge.worker import judge_turn
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.judges import AUTO_ORDER, BACKENDS
from benchmarks.registry import load_benchmark

from .fakes.anthropic_messages import FakeAnthropic, strict_problem
from .fakes.bedrock_converse import FakeBedrock
from .fakes.google_generate import FakeGemini, schema_problem
from .fakes.http_base import Fault
from .fakes.openai_chat import FakeOpenAI
from .test_judge_backends import FAST, SECRET, attempts_in, closed_port, golden_result
from .test_judge_worker import RUN, record_run

KEY_ENVS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_PROFILE")


@pytest.fixture(scope="module")
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark(shared_data / "conversation_bench")


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for k in KEY_ENVS:
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


@pytest.fixture
def anthropic_fake() -> Iterator[FakeAnthropic]:
    server = FakeAnthropic().start()
    yield server
    server.stop()


@pytest.fixture
def gemini_fake() -> Iterator[FakeGemini]:
    server = FakeGemini().start()
    yield server
    server.stop()


def objects(schema: Any) -> Iterator[dict[str, Any]]:
    """Every object schema in a schema, nested ones included."""
    if isinstance(schema, dict):
        if "properties" in schema:
            yield schema
        for v in schema.values():
            yield from objects(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from objects(v)


async def judge_three(conv: Benchmark, backend) -> list:
    results = [golden_result(conv, i) for i in (0, 1, 2)]
    return [await judge_turn(conv, r, results, backend, run_id="r1", policy=FAST) for r in results]


# --- Anthropic ---------------------------------------------------------------------------------


async def test_anthropic_forces_a_strict_tool_with_cache_breakpoints(conv, anthropic_fake):
    backend = AnthropicJudge("claude-test", base_url=anthropic_fake.base_url, api_key=SECRET)
    js = await judge_three(conv, backend)
    reqs = anthropic_fake.message_requests
    assert len(reqs) == 3
    for rec in anthropic_fake.requests:
        assert rec.path == "/v1/messages" and rec.headers["x-api-key"] == SECRET and rec.headers["anthropic-version"]
        assert rec.headers["x-stainless-retry-count"] == "0"  # the SDK's own retries are off
    for req in reqs:
        assert req["model"] == "claude-test" and req["max_tokens"] >= 4096
        tool = req["tools"][0]
        assert tool["name"] == SCHEMA_NAME and tool["strict"] is True
        assert tool["input_schema"] == for_anthropic(JUDGE_SCHEMA)
        assert all(o["additionalProperties"] is False for o in objects(tool["input_schema"]))
        assert req["tool_choice"] == {"type": "tool", "name": SCHEMA_NAME}
        assert req["system"][0]["cache_control"] == {"type": "ephemeral"}
        history, target = req["messages"][0]["content"]
        assert history["cache_control"] == {"type": "ephemeral"} and "cache_control" not in target
    assert len({r["system"][0]["text"] for r in reqs}) == 1  # byte-identical prefix every turn
    assert "# Target turn 2" in reqs[2]["messages"][0]["content"][1]["text"]
    assert all(j.error is None and j.judge == "anthropic:claude-test" and not j.heuristic for j in js)
    assert js[0].scores["kb_grounding"].verdict == "pass" and js[0].scores["tool_use_correct"].verdict == "na"
    assert js[0].usage.cached_input_tokens == 0 and js[2].usage.cached_input_tokens > 10000  # tool + prefix read
    # the same turn again (a repeat, a re-judge): its history breakpoint is read too
    again = await judge_turn(conv, golden_result(conv, 2), [golden_result(conv, i) for i in (0, 1)], backend,
                             run_id="r1", policy=FAST)
    assert again.usage.cached_input_tokens > js[2].usage.cached_input_tokens
    assert again.usage.input_tokens - again.usage.cached_input_tokens < 1000  # only the target is paid in full
    assert all(SECRET not in j.model_dump_json() for j in [*js, again])
    await backend.aclose()


async def test_anthropic_retries_rate_limits_overload_timeouts_and_bad_replies(conv, anthropic_fake):
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    anthropic_fake.faults.extend([
        Fault(status=429, headers={"retry-after-ms": "1500", "retry-after": "2"}), Fault(status=529), Fault(status=500),
        Fault(delay_s=1.5), Fault(content="I would say it passes."), Fault(answer={"scores": {}, "root_cause": "none"}),
    ])  # fmt: skip
    backend = AnthropicJudge("claude-test", base_url=anthropic_fake.base_url, api_key=SECRET, timeout_s=0.5)
    policy = RetryPolicy(attempts=7, base_delay_s=0.01, max_delay_s=0.02, sleep=sleep)
    j = await judge_turn(conv, golden_result(conv, 3), [], backend, run_id="r1", policy=policy)
    assert len(anthropic_fake.message_requests) == 7
    assert slept[0] == 1.5  # retry-after-ms, the more precise
    assert j.error is None and j.scores["instruction_following"].verdict == "pass"
    anthropic_fake.faults.extend([Fault(content="no tool")] * 4)
    j = await judge_turn(conv, golden_result(conv, 3), [], backend, run_id="r1", policy=FAST)
    assert j.error and attempts_in(j.error) == 4 and "no turn_judgement tool use in the reply (stop_reason=end_turn)" in j.error
    await backend.aclose()


async def test_anthropic_refusals_are_permanent_and_errors_name_the_endpoint(conv, anthropic_fake):
    backend = AnthropicJudge("claude-test", base_url=anthropic_fake.base_url, api_key=SECRET)
    anthropic_fake.faults.append(Fault(status=401))
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert len(anthropic_fake.message_requests) == 1 and j.error and "HTTP 401" in j.error, j.error
    anthropic_fake.faults.append(Fault(status=200, body=b"<html>portal</html>", headers={"Content-Type": "text/html"}))
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error is None and len(anthropic_fake.message_requests) == 3  # an HTML page is retried
    await backend.aclose()
    port = closed_port()
    backend = AnthropicJudge("claude-test", base_url=f"http://u:pw@127.0.0.1:{port}", api_key=SECRET)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and f"cannot reach http://127.0.0.1:{port}:" in j.error and attempts_in(j.error) == 4, j.error
    assert SECRET not in j.model_dump_json() and "pw" not in j.error
    await backend.aclose()


def test_the_anthropic_fake_refuses_what_strict_mode_refuses():
    assert strict_problem(for_anthropic(JUDGE_SCHEMA)) is None
    assert "additionalProperties" in (strict_problem({"type": "object", "properties": {"a": {"type": "object", "properties": {}}}}) or "")
    assert "minimum" in (strict_problem({"type": "object", "additionalProperties": False,
                                         "properties": {"n": {"type": "integer", "minimum": 1}}}) or "")


# --- Google ------------------------------------------------------------------------------------


async def test_google_asks_for_json_by_a_gemini_schema(conv, gemini_fake):
    backend = GoogleJudge("gemini-test", base_url=gemini_fake.base_url, api_key=SECRET)
    js = await judge_three(conv, backend)
    calls = gemini_fake.generate_requests
    assert [m for m, _ in calls] == ["gemini-test"] * 3
    assert all(r.headers["x-goog-api-key"] == SECRET and r.path == "/v1beta/models/gemini-test:generateContent"
               for r in gemini_fake.requests)
    for _, body in calls:
        config = body["generationConfig"]
        assert config["responseMimeType"] == "application/json"
        schema = config["responseSchema"]
        assert schema_problem(schema) is None and "additionalProperties" not in json.dumps(schema)
        assert schema["properties"]["root_cause"]["enum"][0] == "none" and schema["properties"]["root_cause"]["type"] == "STRING"
        assert schema["property_ordering"] == list(JUDGE_SCHEMA["properties"])  # our order, not alphabetical
        assert set(schema["required"]) == set(JUDGE_SCHEMA["required"])
        assert body["contents"][0]["role"] == "user" and len(body["contents"][0]["parts"]) == 2
    assert len({json.dumps(b["systemInstruction"]) for _, b in calls}) == 1  # byte-identical prefix
    assert all(j.error is None and j.judge == "google:gemini-test" for j in js)
    assert js[1].scores["kb_grounding"].verdict == "pass"
    assert js[0].usage.cached_input_tokens == 0 and js[2].usage.cached_input_tokens > 10000  # implicit caching
    await backend.aclose()


async def test_google_retries_with_its_retry_delay_and_gives_up_over_the_cap(conv, gemini_fake):
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    gemini_fake.faults.extend([
        Fault(status=429, headers={"retry-delay": "7s"}), Fault(status=503), Fault(delay_s=1.5), Fault(content="{not json"),
        Fault(status=200, body=b"<html>moved</html>", headers={"Content-Type": "text/html"}),
    ])  # fmt: skip
    backend = GoogleJudge("gemini-test", base_url=gemini_fake.base_url, api_key=SECRET, timeout_s=0.5)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1",
                         policy=RetryPolicy(attempts=6, base_delay_s=0.01, max_delay_s=0.02, sleep=sleep))
    assert len(gemini_fake.generate_requests) == 6 and slept[0] == 7.0
    assert j.error is None and j.scores["kb_grounding"].verdict == "pass"
    gemini_fake.faults.append(Fault(status=429, headers={"retry-delay": "600s"}))
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1",
                         policy=RetryPolicy(base_delay_s=0.01, retry_after_cap_s=30, sleep=sleep))
    assert j.error and "RESOURCE_EXHAUSTED" in j.error and "retry after 600 s, over the Retry-After cap of 30 s" in j.error
    gemini_fake.faults.append(Fault(status=403))
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and "HTTP 403 PERMISSION_DENIED" in j.error and len(gemini_fake.generate_requests) == 8  # not retried
    assert SECRET not in j.model_dump_json()
    await backend.aclose()
    port = closed_port()
    backend = GoogleJudge("gemini-test", base_url=f"http://127.0.0.1:{port}", api_key=SECRET)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and f"cannot reach http://127.0.0.1:{port}" in j.error and attempts_in(j.error) == 4, j.error
    await backend.aclose()


def test_the_gemini_fake_refuses_what_the_api_refuses():
    assert "Unknown name \"additionalProperties\"" in (schema_problem(JUDGE_SCHEMA) or "")
    assert schema_problem(for_gemini(JUDGE_SCHEMA)) is None


# --- a local OpenAI-compatible server, no key ----------------------------------------------------


async def test_local_judge_sends_no_key_and_no_openai_only_options(conv, no_keys):
    no_keys.setenv("OPENAI_API_KEY", SECRET)  # set for other things: must never reach a local server
    server = FakeOpenAI(keyless=True).start()
    try:
        no_keys.setenv("ARENA_TUI_LOCAL_LLM_URL", server.base_url)
        backend = make_backend("local")  # the default URL is the environment's, as for `local:` models
        assert isinstance(backend, LocalJudge) and backend.name == "local:llama3.2" and backend.endpoint == server.base_url
        js = await judge_three(conv, backend)
        assert all(j.error is None and j.judge == "local:llama3.2" for j in js)
        for rec in server.requests:
            assert SECRET not in rec.headers.get("authorization", "") and SECRET.encode() not in rec.body
        for req in server.chat_requests:
            assert req["model"] == "llama3.2" and "prompt_cache_key" not in req
            assert req["response_format"]["json_schema"]["schema"] == JUDGE_SCHEMA
        await backend.aclose()
        other = make_backend("local", "qwen2.5:7b", base_url=server.base_url)  # --judge-base-url wins
        assert other.name == "local:qwen2.5:7b" and other.endpoint == server.base_url
        await other.aclose()
    finally:
        server.stop()
    port = closed_port()
    backend = LocalJudge("llama3.2", base_url=f"http://127.0.0.1:{port}/v1")
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and f"cannot reach http://127.0.0.1:{port}/v1:" in j.error, j.error
    await backend.aclose()


# --- every backend, any request shape ------------------------------------------------------------


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TurnVerdict(_Closed):
    turn: int
    verdict: Literal["pass", "fail", "na"]
    notes: list[str]


class RunVerdicts(_Closed):
    turns: list[TurnVerdict]
    summary: str


NESTED = {
    "type": "object", "additionalProperties": False, "required": ["turns", "summary"],
    "properties": {
        "turns": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["turn", "verdict", "notes"],
            "properties": {"turn": {"type": "integer"}, "verdict": {"type": "string", "enum": ["pass", "fail", "na"]},
                           "notes": {"type": "array", "items": {"type": "string"}}}}},
        "summary": {"type": "string"},
    },
}  # fmt: skip
ANSWER = {"turns": [{"turn": 0, "verdict": "pass", "notes": []}, {"turn": 1, "verdict": "fail", "notes": ["late call"]}],
          "summary": "one of two"}


def _schema_sent(kind: str, server: Any) -> Any:
    body = server.requests[-1].json
    return {"openai": lambda: body["response_format"]["json_schema"]["schema"],
            "local": lambda: body["response_format"]["json_schema"]["schema"],
            "anthropic": lambda: body["tools"][0]["input_schema"],
            "google": lambda: body["generationConfig"]["responseSchema"],
            "bedrock": lambda: body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]}[kind]()


@pytest.fixture
def any_backend(request: pytest.FixtureRequest, no_keys: pytest.MonkeyPatch, tmp_path: Path):
    """(kind, backend, server) for each LLM kind, its fake answering ANSWER."""
    kind: str = request.param
    answer: Callable[[str], dict[str, Any]] = lambda text: ANSWER  # noqa: E731
    if kind == "bedrock":
        for k, v in {"AWS_ACCESS_KEY_ID": "AKIDFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret", "AWS_REGION": "us-west-2",
                     "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": str(tmp_path / "none"),
                     "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}.items():  # fmt: skip
            no_keys.setenv(k, v)
        server: Any = FakeBedrock(answer).start()
        backend = make_backend(kind, "m", endpoint_url=server.endpoint_url)
    else:
        server = {"openai": FakeOpenAI, "local": lambda a: FakeOpenAI(a, keyless=True), "anthropic": FakeAnthropic,
                  "google": FakeGemini}[kind](answer).start()  # fmt: skip
        backend = make_backend(kind, "m", base_url=server.base_url, api_key=SECRET)
    yield kind, backend, server
    server.stop()


@pytest.mark.parametrize("any_backend", [k for k in BACKENDS if k != "heuristic"], indirect=True)
async def test_every_backend_sends_any_request_shape(any_backend, conv):
    """A whole-run-like request (no history, a nested array schema, its own output model) goes
    through every backend unchanged: each sends its dialect of the request's schema, no other."""
    kind, backend, server = any_backend
    request = JudgeRequest(prefix="# Rules\n" * 50, history="", target="# The whole run\n", turn=conv.turn(0),
                           result=golden_result(conv, 0), benchmark=conv, dimensions=[], schema=NESTED,
                           schema_name="run_judgement", output=RunVerdicts)
    reply = await backend.complete(request)
    assert isinstance(reply.output, RunVerdicts) and reply.output.turns[1].notes == ["late call"]
    sent = _schema_sent(kind, server)
    expected = {"anthropic": for_anthropic(NESTED)}.get(kind, NESTED)
    if kind == "google":
        assert sent["properties"]["turns"]["items"]["properties"]["verdict"]["enum"] == ["pass", "fail", "na"]
        assert schema_problem(sent) is None
    else:
        assert sent == expected
    assert "run_judgement" in json.dumps(server.requests[-1].json) or kind in ("google",)
    await backend.aclose()


# --- which judge `auto` picks -------------------------------------------------------------------


def test_auto_keeps_its_order_adds_the_new_keys_and_never_picks_local(no_keys):
    assert [k for k, _ in AUTO_ORDER] == ["openai", "bedrock", "anthropic", "google"]
    assert resolve_kind("auto") == "heuristic" and pick_judge("auto").why == AUTO_FALLBACK_WHY
    no_keys.setenv("ARENA_TUI_LOCAL_LLM_URL", "http://127.0.0.1:11434/v1")
    assert resolve_kind("auto") == "heuristic"  # a local server is never chosen by itself
    no_keys.setenv("GEMINI_API_KEY", "g")
    assert pick_judge("auto") == Pick("google", why="auto: GOOGLE_API_KEY or GEMINI_API_KEY is set")
    no_keys.setenv("ANTHROPIC_API_KEY", "a")
    assert resolve_kind("auto") == "anthropic"
    no_keys.setenv("AWS_PROFILE", "p")
    assert resolve_kind("auto") == "bedrock"
    no_keys.setenv("OPENAI_API_KEY", "o")
    assert resolve_kind("auto") == "openai"


def test_each_keyed_judge_names_its_missing_key(no_keys):
    with pytest.raises(PermanentError, match="ANTHROPIC_API_KEY is not set"):
        make_backend("anthropic")
    with pytest.raises(PermanentError, match="GOOGLE_API_KEY or GEMINI_API_KEY is not set"):
        make_backend("google")
    assert make_backend("local").name == "local:llama3.2"  # no key needed
    assert make_backend("anthropic", api_key="k").name == "anthropic:claude-opus-4-5"  # the reference's judge
    assert make_backend("openai", api_key="k").name == "openai:gpt-5.2"
    assert make_backend("google", api_key="k").name == "google:gemini-2.5-pro"


# --- `arena-tui judge` with each new judge ------------------------------------------------------


@pytest.mark.parametrize("kind", ["anthropic", "google", "local"])
def test_judge_command_with_each_new_judge(kind, conv, tmp_path, shared_data, capsys, no_keys):
    db = tmp_path / f"{kind}.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    server: Any = {"anthropic": FakeAnthropic, "google": FakeGemini, "local": lambda: FakeOpenAI(keyless=True)}[kind]()
    server.start()
    if kind != "local":
        no_keys.setenv({"anthropic": "ANTHROPIC_API_KEY", "google": "GEMINI_API_KEY"}[kind], SECRET)
    try:
        code = main(["--db", str(db), "--data", str(shared_data), "judge", RUN, "--judge", kind,
                     "--judge-base-url", server.base_url, "--judge-model", "m1"])
        out = capsys.readouterr().out
    finally:
        server.stop()
    assert code == 0, out
    assert len(server.requests) == 1 and f"{kind}:m1: kb_grounding=pass" in out  # turns 8-11 in one request
    assert f"conversation_bench judged by {kind}:m1 ({JUDGE_VERSION})" in out and SECRET not in out


def test_judge_help_names_every_kind_and_the_repeat(capsys):
    with pytest.raises(SystemExit):
        main(["judge", "--help"])
    out = "".join(capsys.readouterr().out.split())  # argparse wraps lines anywhere, even in model ids
    assert "{auto,openai,anthropic,google,bedrock,local,heuristic}" in out
    assert "local=alocalOpenAI-compatibleserver,nokey" in out and "(neverlocal)" in out
    assert "anthropicclaude-opus-4-5" in out and "openaigpt-5.2" in out
    assert "--repeatN" in out and "majorityverdict" in out
