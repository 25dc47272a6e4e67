"""The real `openai` and `boto3` clients against loopback servers speaking their HTTP APIs."""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.spine.events import Latencies, TurnResult
from arena_tui.judge import HeuristicJudge, make_backend
from arena_tui.judge.backends import PermanentError, RetryPolicy
from arena_tui.judge.bedrock_judge import BedrockJudge
from arena_tui.judge.openai_judge import OpenAIJudge
from arena_tui.judge.schema import JUDGE_SCHEMA, SCHEMA_NAME
from arena_tui.judge.summary import summarize
from arena_tui.judge.worker import judge_turn
from benchmarks.registry import load_benchmark
from arena_tui.spine.benchmark import Benchmark

from .fakes.bedrock_converse import FakeBedrock
from .fakes.http_base import Fault
from .fakes.judge_answers import scripted
from .fakes.openai_chat import FakeOpenAI
from .test_judge_worker import RUN, record_run

FAST = RetryPolicy(attempts=4, base_delay_s=0.01, max_delay_s=0.02)
SECRET = "sk-test-DO-NOT-LEAK-1234"


@pytest.fixture(scope="module")
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark(shared_data / "conversation_bench")


def golden_result(b: Benchmark, i: int) -> TurnResult:
    t = b.turn(i)
    return TurnResult(turn_index=i, status="ok", user_text=t.input, assistant_text=t.golden_text,
                      latencies=Latencies(pipeline_ttfb_ms=900.0, voice_to_voice_ms=1100.0))


@pytest.fixture
def openai_fake():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def bedrock_fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    for k, v in {
        "AWS_ACCESS_KEY_ID": "AKIDFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret", "AWS_REGION": "us-west-2",
        "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": str(tmp_path / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = FakeBedrock().start()
    yield server
    server.stop()


async def judge_three(b: Benchmark, backend) -> list:
    out = []
    results = [golden_result(b, i) for i in (0, 1, 2)]
    for r in results:
        out.append(await judge_turn(b, r, results, backend, run_id="r1", policy=FAST))
    return out


async def test_openai_requests_carry_schema_and_a_stable_prefix(conv, openai_fake):
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    js = await judge_three(conv, backend)
    reqs = openai_fake.chat_requests
    assert len(reqs) == 3
    for req in reqs:
        assert req["model"] == "gpt-test"
        rf = req["response_format"]
        assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
        assert rf["json_schema"]["name"] == SCHEMA_NAME and rf["json_schema"]["schema"] == JUDGE_SCHEMA
        assert [m["role"] for m in req["messages"]] == ["system", "user", "user"]
    assert len({r["prompt_cache_key"] for r in reqs}) == 1
    systems = {r["messages"][0]["content"] for r in reqs}
    assert len(systems) == 1  # byte-identical prefix every turn
    prefix = systems.pop()
    assert conv.knowledge_base.strip()[:200] in prefix and "register_for_session" in prefix
    hist = [r["messages"][1]["content"] for r in reqs]
    assert hist[0] == "# Conversation so far\n\n(this is the first turn)\n"
    assert hist[1].startswith("# Conversation so far\n\n[turn 0]\n") and hist[2].startswith(hist[1])  # append-only
    assert "# Target turn 2" in reqs[2]["messages"][2]["content"]
    assert "[turn 1]" in hist[2] and "[turn 2]" not in hist[2]  # only the conversation so far
    assert all(j.error is None for j in js)
    assert js[0].scores["kb_grounding"].verdict == "pass" and js[0].scores["tool_use_correct"].verdict == "na"
    assert js[0].judge == "openai:gpt-test" and not js[0].heuristic
    assert all(j.usage.input_tokens > 10000 for j in js)
    assert js[2].usage.cached_input_tokens > 10000  # the stable prefix is what the provider cached
    assert all(SECRET not in j.model_dump_json() for j in js)
    await backend.aclose()


async def test_openai_retries_429_500_timeout_malformed_and_schema_violations(conv, openai_fake):
    bad_schema = {"scores": {"kb_grounding": {"verdict": "maybe", "reasoning": ""}}}
    openai_fake.faults.extend([
        Fault(status=429), Fault(status=500), Fault(delay_s=1.5, answer=None, content=None, status=503),
        Fault(content="{not json"), Fault(answer=bad_schema),
    ])
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET, timeout_s=0.5)
    policy = RetryPolicy(attempts=6, base_delay_s=0.01, max_delay_s=0.02)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=policy)
    assert len(openai_fake.chat_requests) == 6
    assert j.error is None and j.scores["kb_grounding"].verdict == "pass"
    await backend.aclose()


async def test_openai_honours_retry_after_within_the_cap_and_gives_up_above_it(conv, openai_fake):
    slept: list[float] = []

    async def fake_sleep(s: float) -> None:  # record the back-off instead of waiting it
        slept.append(s)

    openai_fake.faults.extend([Fault(status=429, headers={"retry-after": "7"}), Fault(status=429, headers={"retry-after": "600"})])
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    policy = RetryPolicy(attempts=4, base_delay_s=0.01, retry_after_cap_s=30, sleep=fake_sleep)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=policy)
    assert slept == [7.0] and len(openai_fake.chat_requests) == 2  # 600 s asked: no third attempt
    assert j.error and j.error.startswith("judge_error after 2 attempts")
    assert "retry after 600 s, over the Retry-After cap of 30 s" in j.error
    await backend.aclose()


def attempts_in(error: str) -> int:
    m = re.match(r"judge_error after (\d+) attempts? in ", error)
    assert m, error
    return int(m.group(1))


async def test_openai_server_that_hangs_costs_one_turn_deadline(conv, openai_fake):
    """Reported: 4 x 120 s per turn. The request timeout stays 120 s; the turn deadline ends it."""
    openai_fake.faults.extend([Fault(delay_s=3600)] * 4)
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    r = golden_result(conv, 0).model_copy(update={"overlap_ms": 400.0})
    j = await judge_turn(conv, r, [], backend, run_id="r1", policy=RetryPolicy(base_delay_s=0.01, deadline_s=0.5))
    assert j.error and "the turn deadline of 0.5 s passed" in j.error, j.error
    assert f"no reply from {openai_fake.base_url} yet" in j.error
    assert attempts_in(j.error) == 1 == len(openai_fake.chat_requests)
    assert j.scores["turn_taking"].verdict == "fail"  # what was measured in code is kept
    await backend.aclose()


async def test_openai_request_timeouts_then_the_deadline(conv, openai_fake):
    openai_fake.faults.extend([Fault(delay_s=3600)] * 100)
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET, timeout_s=0.1)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1",
                         policy=RetryPolicy(attempts=100, base_delay_s=0.01, max_delay_s=0.01, deadline_s=2.0))
    assert j.error and "turn deadline of 2 s" in j.error, j.error
    n = attempts_in(j.error)
    assert 1 < n < 100 and n - 1 <= len(openai_fake.chat_requests) <= n  # the last may be cut before it arrived
    assert f"APITimeoutError: no reply from {openai_fake.base_url} within 0.1 s" in j.error
    await backend.aclose()


async def test_openai_retry_after_3600_ends_the_turn_at_once(conv, openai_fake):
    """Reported: with Retry-After: 3600, 10 turns took 302 s. Now each gives up after one attempt."""
    openai_fake.faults.extend([Fault(status=429, headers={"retry-after": "3600"})] * 10)
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    policy = RetryPolicy(base_delay_s=0.01, retry_after_cap_s=0.5)
    results = [golden_result(conv, i) for i in range(10)]
    js = [await judge_turn(conv, r, results, backend, run_id="r1", policy=policy) for r in results]
    assert len(openai_fake.chat_requests) == 10
    for j in js:
        assert j.error and attempts_in(j.error) == 1 and "HTTP 429" in j.error
        assert "the server asked to retry after 3600 s, over the Retry-After cap of 0.5 s" in j.error
    await backend.aclose()


async def test_openai_html_page_with_200_is_a_retried_readable_error(conv, openai_fake):
    page = b"<html><body><h1>Welcome to the captive portal</h1></body></html>"
    html = Fault(status=200, body=page, headers={"Content-Type": "text/html; charset=utf-8"})
    openai_fake.faults.append(html)
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error is None and len(openai_fake.chat_requests) == 2  # retried, then judged
    openai_fake.faults.extend([html] * 4)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and attempts_in(j.error) == 4, j.error
    assert f"judge reply from {openai_fake.base_url} was not JSON (text/html, {len(page)} bytes)" in j.error
    assert "AttributeError" not in j.error and "usage" not in j.error
    openai_fake.faults.extend([Fault(status=200, body=b'{"id": "x", "object": "nothing like a completion"}')] * 4)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and "is not a chat completion" in j.error, j.error
    await backend.aclose()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_openai_connection_error_names_the_endpoint_without_secrets(conv):
    port = closed_port()
    url = f"http://judge-user:hunter2@127.0.0.1:{port}/v1?api_key={SECRET}"
    backend = OpenAIJudge("gpt-test", base_url=url, api_key=SECRET)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and f"cannot reach http://127.0.0.1:{port}/v1:" in j.error, j.error
    assert attempts_in(j.error) == 4
    for secret in (SECRET, "hunter2", "judge-user", "api_key"):
        assert secret not in j.model_dump_json()
    await backend.aclose()


async def test_openai_turn_that_keeps_failing_becomes_judge_error_not_a_pass(conv, openai_fake):
    openai_fake.faults.extend([Fault(status=500)] * 3 + [Fault(content="[]")])
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    r = golden_result(conv, 0)
    j = await judge_turn(conv, r, [], backend, run_id="r1", policy=FAST)
    assert len(openai_fake.chat_requests) == 4
    assert j.error and j.error.startswith("judge_error after 4 attempts") and "schema" in j.error
    assert set(j.scores) == {"turn_taking"}  # computed in code, not by the LLM
    s = summarize(conv, [r], [j])
    # no verdict, neither a pass nor the model's failure: counted apart as a judge error
    assert s.judge_errors == [0] and s.strict.denominator == 0 and "kb_grounding" not in s.dimensions
    assert s.apart == {"judge_error": [0]}
    await backend.aclose()


async def test_openai_auth_error_is_not_retried_and_leaks_no_key(conv, openai_fake):
    openai_fake.faults.append(Fault(status=401))
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert len(openai_fake.chat_requests) == 1 and "401" in (j.error or "")
    assert SECRET not in j.model_dump_json()
    await backend.aclose()


async def test_bedrock_converse_request_shape_and_stable_prefix(conv, bedrock_fake):
    backend = BedrockJudge("anthropic.claude-test-v1:0", endpoint_url=bedrock_fake.endpoint_url)
    js = await judge_three(conv, backend)
    calls = bedrock_fake.converse_requests
    assert [m for m, _ in calls] == ["anthropic.claude-test-v1:0"] * 3
    assert all(r.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDFAKE/")
               for r in bedrock_fake.requests)
    assert "/us-west-2/bedrock/aws4_request" in bedrock_fake.requests[0].headers["authorization"]
    bodies = [b for _, b in calls]
    for body in bodies:
        tool = body["toolConfig"]["tools"][0]["toolSpec"]
        assert tool["name"] == SCHEMA_NAME and tool["inputSchema"]["json"] == JUDGE_SCHEMA
        assert body["toolConfig"]["toolChoice"] == {"tool": {"name": SCHEMA_NAME}}
        assert body["system"][1] == {"cachePoint": {"type": "default"}}
    assert len({b["system"][0]["text"] for b in bodies}) == 1
    assert all(j.error is None and j.judge == "bedrock:anthropic.claude-test-v1:0" for j in js)
    assert js[2].usage.cached_input_tokens > 10000
    assert js[2].usage.input_tokens >= js[2].usage.cached_input_tokens


async def test_bedrock_retries_throttling_5xx_timeout_and_bad_output(conv, bedrock_fake):
    bad = {"scores": {}, "root_cause": "none"}
    bedrock_fake.faults.extend([
        Fault(status=429), Fault(status=503), Fault(status=500, delay_s=1.5), Fault(content="I think it passes"),
        Fault(answer=bad),
    ])
    backend = BedrockJudge("m", endpoint_url=bedrock_fake.endpoint_url, timeout_s=0.5)
    policy = RetryPolicy(attempts=6, base_delay_s=0.01, max_delay_s=0.02)
    j = await judge_turn(conv, golden_result(conv, 3), [], backend, run_id="r1", policy=policy)
    assert len(bedrock_fake.converse_requests) == 6
    assert j.error is None and j.scores["instruction_following"].verdict == "pass"


async def test_bedrock_exhausted_retries_and_access_denied(conv, bedrock_fake):
    backend = BedrockJudge("m", endpoint_url=bedrock_fake.endpoint_url)
    bedrock_fake.faults.extend([Fault(status=429)] * 4)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and "ThrottlingException" in j.error and len(bedrock_fake.converse_requests) == 4
    bedrock_fake.faults.append(Fault(status=403))
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert "AccessDeniedException" in (j.error or "") and len(bedrock_fake.converse_requests) == 5


async def test_bedrock_hang_retry_after_and_html_page_end_in_clear_bounded_errors(conv, bedrock_fake, monkeypatch):
    # the request timeout never outlasts the configured turn deadline: a thread left hanging ends with it
    monkeypatch.setenv("ARENA_TUI_JUDGE_DEADLINE_S", "0.5")
    backend = make_backend("bedrock", "m", endpoint_url=bedrock_fake.endpoint_url)
    assert backend.timeout_s == 0.5
    endpoint = bedrock_fake.endpoint_url
    bedrock_fake.faults.extend([Fault(delay_s=3600)] * 4)
    policy = RetryPolicy(base_delay_s=0.01, deadline_s=0.5, retry_after_cap_s=0.5)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=policy)
    assert j.error and "turn deadline of 0.5 s" in j.error and endpoint in j.error, j.error
    assert attempts_in(j.error) - 1 <= len(bedrock_fake.converse_requests) <= attempts_in(j.error)
    bedrock_fake.faults.clear()

    bedrock_fake.requests.clear()
    bedrock_fake.faults.extend([Fault(status=429, headers={"Retry-After": "3600"})] * 4)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=policy)
    assert j.error and attempts_in(j.error) == 1 == len(bedrock_fake.converse_requests), j.error
    assert "ThrottlingException" in j.error and "retry after 3600 s, over the Retry-After cap of 0.5 s" in j.error
    bedrock_fake.faults.clear()

    page = b"<html><body>Service temporarily moved</body></html>"
    html = Fault(status=200, body=page, headers={"Content-Type": "text/html"})
    bedrock_fake.faults.append(html)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error is None  # retried, then judged
    bedrock_fake.faults.extend([html] * 4)
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and attempts_in(j.error) == 4, j.error
    assert f"judge reply from {endpoint} was not JSON (text/html, {len(page)} bytes)" in j.error


async def test_bedrock_connection_error_names_the_endpoint(conv, bedrock_fake):
    port = closed_port()
    backend = BedrockJudge("m", endpoint_url=f"http://127.0.0.1:{port}")
    j = await judge_turn(conv, golden_result(conv, 0), [], backend, run_id="r1", policy=FAST)
    assert j.error and f"EndpointConnectionError: cannot reach http://127.0.0.1:{port}" in j.error, j.error
    assert attempts_in(j.error) == 4 and "fake-secret" not in j.error


async def test_judge_sees_calls_with_payloads_and_returns_call_verdicts(conv, openai_fake):
    from arena_tui.spine.events import ToolCallRecord

    t = next(t for t in conv.turns if t.expected_calls and not isinstance(t.required_function_call, list))
    exp = t.expected_calls[0]
    call = ToolCallRecord(call_id="call_1", name=exp.name, args=exp.args, status="matched",
                          response={"status": "success", "confirmation": "ABC123"})
    r = golden_result(conv, t.turn_index).model_copy(update={"tool_calls": [call]})
    verdict = {"call_id": "call_1", "expected_turn": t.turn_index, "expected_index": 0, "equivalent": True,
               "reasoning": "same"}
    openai_fake.answer = scripted({t.turn_index: {"call_verdicts": [verdict], "root_cause": "none"}})
    backend = OpenAIJudge("gpt-test", base_url=openai_fake.base_url, api_key=SECRET)
    j = await judge_turn(conv, r, [], backend, run_id="r1", policy=FAST)
    target = openai_fake.chat_requests[0]["messages"][2]["content"]
    assert "ABC123" in target and exp.name in target and t.golden_text[:40] in target
    assert j.call_verdicts[0].call_id == "call_1" and j.call_verdicts[0].equivalent
    await backend.aclose()


def test_make_backend_needs_a_key_and_names_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(PermanentError, match="OPENAI_API_KEY"):
        make_backend("openai")
    with pytest.raises(PermanentError, match="unknown judge"):
        make_backend("gpt")
    assert make_backend("heuristic").heuristic


def test_judge_command_flags_set_the_deadline_and_the_retry_after_cap(conv, tmp_path, shared_data, capsys, monkeypatch):
    """`arena-tui judge` against a hanging server and a Retry-After: 3600 server, limits from flags and env."""
    db = tmp_path / "j.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    server = FakeOpenAI().start()
    try:
        base = ["--db", str(db), "--data", str(shared_data), "judge", RUN, "--judge", "openai",
                "--judge-base-url", server.base_url, "--no-phase2"]
        server.faults.extend([Fault(delay_s=3600)] * 8)
        main(base + ["--judge-deadline", "0.3"])
        out = capsys.readouterr().out
        # the whole run in one request: its deadline is the flag's; its own line and turns 8-11 each say so
        assert out.count("the whole-run deadline of 0.3 s passed") == 5, out
        assert len(server.chat_requests) == 1
        main(base + ["--judge-deadline", "0.3", "--turn", "9"])  # one turn: the turn deadline
        out = capsys.readouterr().out
        assert out.count("the turn deadline of 0.3 s passed") == 1, out
        server.faults.clear()
        server.faults.extend([Fault(status=429, headers={"retry-after": "3600"})] * 8)
        monkeypatch.setenv("ARENA_TUI_JUDGE_RETRY_AFTER_CAP_S", "2")
        main(base)
        out = capsys.readouterr().out
        assert out.count("over the Retry-After cap of 2 s") == 5, out
        monkeypatch.setenv("ARENA_TUI_JUDGE_RETRY_AFTER_CAP_S", "soon")
        assert main(base) == 2
        assert "ARENA_TUI_JUDGE_RETRY_AFTER_CAP_S: 'soon' is not a number of seconds" in capsys.readouterr().err
        with pytest.raises(SystemExit):
            main(base + ["--judge-deadline", "-1"])
        assert "not a positive, finite number of seconds" in capsys.readouterr().err
    finally:
        server.stop()
    assert SECRET not in out


def test_retry_after_forms_and_endpoint_labels():
    from datetime import UTC, datetime

    from arena_tui.judge.backends import retry_after_seconds
    from arena_tui.store.scrub import endpoint_label, has_secret

    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("3600") == 3600.0 and retry_after_seconds(" 1.5 ") == 1.5
    assert retry_after_seconds("Thu, 01 Jan 2026 13:00:00 GMT", now=now) == 3600.0  # an HTTP date
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0  # already passed
    assert retry_after_seconds("soon") is None and retry_after_seconds("nan") is None and retry_after_seconds(None) is None
    url = "https://u:pw@api.example.com:8443/v1/?api_key=k#frag"
    assert has_secret(url) and endpoint_label(url) == "https://api.example.com:8443/v1"  # one rule: what is masked is dropped
    assert endpoint_label("http://[::1]:9000/v1") == "http://[::1]:9000/v1"
    assert endpoint_label("http://host:notaport/v1") == "(unparsable endpoint URL)"
