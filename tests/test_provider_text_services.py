"""Claude (Anthropic Messages), Gemini text (generateContent) and Bedrock (Converse) through
Pipecat's own services, each against its local fake speaking the real wire protocol on
127.0.0.1, driven by the real SDK client (anthropic, google-genai, aiobotocore).

Asserted at the fake: the model id, the benchmark's prompt as the system instruction, every
tool declared, the user's words, and the tool results the engine answered with (turn 5's two
`check_part_stock` payloads, by call id) in the request that followed the calls. Through the
engine: every turn ok, every expected call matched.
"""

from __future__ import annotations

import pytest

from arena_tui.cli import main
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from runners.base import get_runner
from runners.engine import run_benchmark
from tests.provider_runs import quiet_loguru

TURNS = [0, 1, 2, 3, 4, 5]
ALIASES = ["claude-sonnet-4-6", "gemini-2.5-flash", "bedrock-nova-lite"]


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


@pytest.mark.parametrize("alias", ALIASES)
async def test_text_service_against_its_fake(alias, demo, monkeypatch) -> None:
    for env in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(env, "real-key-must-not-be-used-0123456789")
    runner = get_runner(alias)
    assert runner.mode == "text"
    bus = EventBus()
    sub = bus.subscribe()
    await run_benchmark(demo, RunSettings(model=alias, fake=True, turns=TURNS), bus, provider=runner)
    events = sub.drain()
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"], [
        e for e in events if e.kind in ("error", "run_ended")]
    results = {e.result.turn_index: e.result for e in events if e.kind == "turn_ended"}
    assert [results[i].status for i in TURNS] == ["ok"] * len(TURNS)
    for i in TURNS:
        expected = demo.turn(i).expected_calls
        assert sorted(c.name for c in results[i].tool_calls) == sorted(c.name for c in expected), i
        assert all(c.status == "matched" for c in results[i].tool_calls), results[i].tool_calls
    fake = runner.fake
    assert fake is not None and fake.exchanges
    model = runner.resolve_model(alias)
    for ex in fake.exchanges:
        assert ex.status == 200 and ex.auth_present and ex.model == model, ex
        assert ex.system == demo.system_prompt
        assert set(ex.tools) == {t.name for t in demo.tools}
    # turn 5: both calls answered with their own scripted payloads, in the request after the calls
    t5 = demo.turn(5)
    after = [ex for ex in fake.exchanges if ex.phase == "tool" and ex.user_texts()[-1] == t5.input][-1]
    results5 = [r for r in after.tool_results() if r["name"] == "check_part_stock"][-2:]
    by_call = {c.call_id: c.response for c in results[5].tool_calls}
    assert len(results5) == 2 and all(r["result"] == by_call[r["call_id"]] for r in results5), (results5, by_call)
    assert sorted(map(str, (r["result"] for r in results5))) == sorted(map(str, t5.expected_responses))
    # the conversation so far went with every request: turn 4's words are in turn 5's
    assert demo.turn(4).input in after.user_texts()
    if alias.startswith("claude"):  # calls asked one at a time: Pipecat runs only a message's last tool_use
        assert all(ex.body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True} for ex in fake.exchanges)
    key_sent = "real-key-must-not-be-used"
    assert all(key_sent not in str(ex.body) for ex in fake.exchanges)


@pytest.mark.parametrize("alias", ALIASES)
def test_cli_fake_run_of_each_text_service(alias, tmp_path, capsys) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", alias, "--fake", "--headless",
                 "--turns", "0-1", "--judge", "none"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"model {alias} [PROTOCOL FAKE]" in out


@pytest.mark.parametrize(("alias", "key"), [("claude-haiku-4-5", "ANTHROPIC_API_KEY"), ("gemini-2.5-pro", "GOOGLE_API_KEY"),
                                            ("bedrock-nova-pro", "AWS_ACCESS_KEY_ID")])
def test_preflight_names_the_key(alias, key, monkeypatch) -> None:
    for env in ("ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(env, raising=False)
    problems = get_runner(alias).preflight(RunSettings(model=alias))
    assert any(key in p for p in problems), problems
    assert get_runner(alias).preflight(RunSettings(model=alias, fake=True)) == []


@pytest.mark.parametrize(("fake_class", "path", "key", "refused", "invalid"), [
    ("runners.providers.anthropic_text.fake:AnthropicFake", "/v1/messages", {"x-api-key": "k"},
     (401, "authentication_error"), "invalid_request_error"),
    ("runners.providers.google_text.fake:GeminiTextFake", "/v1beta/models/gemini-2.5-flash:generateContent",
     {"x-goog-api-key": "k"}, (403, "PERMISSION_DENIED"), "INVALID_ARGUMENT"),
    ("runners.providers.bedrock_text.fake:BedrockConverseFake", "/model/m/converse",
     {"authorization": "AWS4-HMAC-SHA256 Credential=AKIA/20260101/us-east-1/bedrock/aws4_request"},
     (403, "UnrecognizedClientException"), "ValidationException"),
])
async def test_each_text_fake_refuses_as_its_api_does(fake_class, path, key, refused, invalid) -> None:
    """No key: the protocol's auth refusal; a body that is not JSON: its 400 kind, in its own
    envelope; each refusal's status kept in the exchange it records."""
    import aiohttp

    from runners.catalog import load

    def kind(status: int, headers, body: dict) -> str:  # where each protocol puts the error's kind
        return (headers.get("x-amzn-ErrorType") or (body.get("error") or {}).get("type")
                or (body.get("error") or {}).get("status") or "")

    async with load(fake_class)() as fake, aiohttp.ClientSession() as http:
        seen = []
        for headers in ({}, key):
            async with http.post(fake.base_url + path, data=b"not json", headers=headers) as r:
                seen.append((r.status, kind(r.status, r.headers, await r.json())))
        assert seen == [refused, (400, invalid)]
        assert [ex.status for ex in fake.exchanges] == [refused[0], 400]
