"""The realtime services added with Pipecat 1.14's list (issue 44): Azure OpenAI Realtime, Azure Voice
Live, Inworld Realtime and Gemini Live on Vertex AI. Each runs end to end through its real Pipecat
service against its local fake, and the fake received what the real service requires of a session
(the handshake's path, query and auth kind; the session's fields); what the real service refuses,
the fake refuses, and the refusal is recorded. (The contract tests, tests/test_provider_contract.py,
cover the same aliases with every other: loopback, every expected call, rotation.)"""

from __future__ import annotations

import base64
import ipaddress
import json
import socket
import ssl
import urllib.error
import urllib.request
from typing import Any

import aiohttp
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from arena_tui.spine.settings import RunSettings
from runners.base import get_runner
from runners.fakes.script import Script
from tests.provider_runs import quiet_loguru, record_run

SPEED = 15.0


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


async def run_fake(alias: str, demo: Any, tmp_path: Any, monkeypatch: Any, **settings: Any) -> tuple[Any, Any]:
    """A --fake run of demo_bench turns 0 and 5 (two calls in one turn); (its runner, the recorded run).
    Every socket it connects (the service's, an OAuth client's) goes to 127.0.0.1."""
    runner = get_runner(alias)
    config = RunSettings(model=alias, fake=True, fake_timing="instant", speed=SPEED, turns=[0, 5], **settings)
    assert runner.preflight(config) == []
    dialled: list[Any] = []
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> Any:
        dialled.append(address)
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    run = await record_run(demo, config, runner, tmp_path / "arena.db")
    monkeypatch.undo()
    assert dialled and all(ipaddress.ip_address(a[0]).is_loopback for a in dialled if isinstance(a, tuple)), dialled
    for t in (0, 5):
        assert run.result(t).status == "ok", run.result(t)
    assert sorted((c.name, c.status) for c in run.result(5).tool_calls) == [("check_part_stock", "matched")] * 2
    return runner, run


async def refused(url: str, headers: dict[str, str] | None = None) -> int:
    """The HTTP status a websocket upgrade to `url` is refused with."""
    with pytest.raises(InvalidStatus) as err:
        async with websockets.connect(url, additional_headers=headers or {}):
            pass
    return err.value.response.status_code


# -- Azure OpenAI Realtime


async def test_azure_realtime_speaks_openai_at_azures_v1_surface(demo, tmp_path, monkeypatch) -> None:
    runner, _ = await run_fake("azure-gpt-realtime", demo, tmp_path, monkeypatch)
    sim = runner.fake
    assert sim.sessions and sim.rejected == []  # (a dated api-version, no deployment, a key as a bearer: refused)
    for s in sim.sessions:
        assert s.path == "/openai/v1/realtime" and s.model == "gpt-realtime"  # the deployment
        names = {k.lower() for k in s.headers}
        assert "api-key" in names and "authorization" not in names and s.headers["api-key"] == "<redacted>"


async def test_azure_realtime_handshake_refusals(demo) -> None:
    from runners.providers.azure_realtime.fake import AzureRealtimeFake

    async with AzureRealtimeFake(demo, voice="tone") as fake:
        url = fake.base_url
        assert await refused(url + "?model=gpt-realtime") == 401  # no key
        assert await refused(url + "?model=gpt-realtime", {"Authorization": "Bearer sk-a-key"}) == 401  # a key as a bearer
        assert await refused(url, {"api-key": "k"}) == 400  # no deployment
        assert await refused(url + "?model=gpt-realtime&api-version=2025-04-01-preview", {"api-key": "k"}) == 400
        assert await refused(url.replace("/openai/v1/realtime", "/v1/realtime") + "?model=x", {"api-key": "k"}) == 404
        assert [r["reason"] for r in fake.rejected] == [
            "missing api-key header", "a bearer that is no Entra token: an API key goes in the api-key header",
            "missing deployment (?model=<deployment>)",
            "api-version=2025-04-01-preview selects the preview protocol (the v1 surface takes none)", "not found"]
        async with websockets.connect(url + "?model=gpt-realtime", additional_headers={"api-key": "k"}) as ws:
            assert json.loads(await ws.recv())["type"] == "session.created"


def test_azure_realtime_endpoint_is_the_resources_v1_url(monkeypatch) -> None:
    from runners.providers.azure_realtime.runner import v1_url

    assert v1_url("https://my-res.openai.azure.com/") == "wss://my-res.openai.azure.com/openai/v1/realtime"
    assert v1_url("wss://my-res.openai.azure.com/openai/v1/realtime") == "wss://my-res.openai.azure.com/openai/v1/realtime"
    monkeypatch.delenv("AZURE_REALTIME_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_REALTIME_ENDPOINT", raising=False)
    problems = get_runner("azure-gpt-realtime").preflight(RunSettings(model="azure-gpt-realtime"))
    assert problems == [
        "azure-realtime: environment variable AZURE_REALTIME_API_KEY is not set (the API key)",
        "azure-realtime: environment variable AZURE_REALTIME_ENDPOINT is not set (the Azure OpenAI resource, "
        "https://<resource>.openai.azure.com)"]
    monkeypatch.setenv("AZURE_REALTIME_ENDPOINT", "https://my-res.openai.azure.com")
    assert get_runner("azure-gpt-realtime").endpoint(RunSettings(model="azure-gpt-realtime")) == \
        "wss://my-res.openai.azure.com/openai/v1/realtime"


# -- Azure Voice Live


async def test_voice_fake_session_is_voice_lives_own(demo, tmp_path, monkeypatch) -> None:
    runner, run = await run_fake("azure-voice-live", demo, tmp_path, monkeypatch)
    fake = runner.fake
    assert fake.rejected == [] and fake.connections
    for c in fake.connections:
        assert c.path == "/voice-live/realtime" and c.query == {"api-version": "2026-07-15", "model": "gpt-4o-mini"}
        assert c.auth_present and c.errors == []
        updates = [m["session"] for m in c.messages if m["type"] == "session.update"]
        assert updates and all("model" not in u for u in updates)  # the URL names it
        s = c.setup
        assert s["voice"] == {"type": "azure-standard", "name": "en-US-Ava:DragonHDLatestNeural"}
        assert s["turn_detection"]["type"] == "azure_semantic_vad" and s["input_audio_transcription"]["model"] == "azure-speech"
        assert s["input_audio_sampling_rate"] == 24000 and s["output_audio_format"] == "pcm16"
        assert s["instructions"] == demo.system_prompt and [t["name"] for t in s["tools"]] == [t.name for t in demo.tools]
    # its quirk: the item before, reported again with an empty transcript, takes no turn's transcript away
    assert [run.result(t).user_transcript for t in (0, 5)] == [demo.turn(0).input, demo.turn(5).input]


async def test_voice_live_manual_commit(demo, tmp_path, monkeypatch) -> None:
    runner, _ = await run_fake("azure-voice-live", demo, tmp_path, monkeypatch, disable_vad=True)
    for c in runner.fake.connections:
        assert c.setup["turn_detection"] is None
        kinds = [m["type"] for m in c.messages]
        assert kinds.count("input_audio_buffer.commit") == c.user_turns and c.errors == []
    assert sum(c.user_turns for c in runner.fake.connections) == 2


async def test_voice_live_refusals(demo) -> None:
    from runners.providers.azure_voice_live.fake import AzureVoiceLiveFake

    async with AzureVoiceLiveFake(Script()) as fake:
        url = fake.base_url + "/voice-live/realtime"
        assert await refused(url + "?model=gpt-4o-mini", {"api-key": "k"}) == 400  # no api-version
        assert await refused(url + "?api-version=2026-07-15&model=gpt-4o-mini", {"Authorization": "Bearer k"}) == 401
        assert len(fake.rejected) == 2
        async with websockets.connect(url + "?api-version=2026-07-15&model=gpt-4o-mini", additional_headers={"api-key": "k"}) as ws:
            assert json.loads(await ws.recv())["type"] == "session.created"
            for session in ({"model": "gpt-4o-mini"}, {"turn_detection": {"type": "semantic_vad"}},
                            {"voice": {"type": "openai", "name": "alloy"}}, {"input_audio_sampling_rate": 44100},
                            {"modalities": ["text"], "voice": {"type": "azure-standard", "name": "x"}}, {"audio": {}}):
                await ws.send(json.dumps({"type": "session.update", "session": session}))
                assert json.loads(await ws.recv())["type"] == "error", session
        assert fake.last.errors == [
            "Unknown parameter: 'session.model' (the connection URL names the model)",
            "semantic_vad needs a native-audio model; gpt-4o-mini takes azure_semantic_vad",
            "voice type 'openai' needs a native-audio model, not gpt-4o-mini",
            "Invalid value: 44100. input_audio_sampling_rate must be 16000 or 24000",
            "Text to speech synthesizer is not configured",
            "Unknown parameter: 'session.audio'"]


# -- Inworld Realtime


async def test_inworld_session_and_tools_as_inworld_takes_them(demo, tmp_path, monkeypatch) -> None:
    runner, _ = await run_fake("inworld-realtime", demo, tmp_path, monkeypatch)
    fake = runner.fake
    assert fake.rejected == [] and fake.connections
    for c in fake.connections:
        assert c.path == "/api/v1/realtime/session" and c.query == {"protocol": "realtime"}  # the session key is not kept
        assert c.auth_present and c.errors == []
        s = c.setup
        assert s["type"] == "realtime" and s["model"] == "openai/gpt-4.1-mini"
        assert s["providerData"]["auto_tool_response"] is False
        assert s["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}
        assert s["audio"]["output"]["voice"] and s["audio"]["output"]["model"]
        assert s["audio"]["input"]["turn_detection"]["type"] == "semantic_vad"
        # Pipecat's 60 ms batches
        assert c.audio_chunk_ms and all(abs(ms - 60.0) < 0.5 for ms in c.audio_chunk_ms[:-1])
    # the done events carried no name: the calls were matched by their items
    assert len(fake.tool_results()) == 2


async def test_inworld_manual_commit(demo, tmp_path, monkeypatch) -> None:
    runner, _ = await run_fake("inworld-realtime", demo, tmp_path, monkeypatch, disable_vad=True)
    for c in runner.fake.connections:
        assert c.setup["audio"]["input"]["turn_detection"] is None
        assert [m["type"] for m in c.messages].count("input_audio_buffer.commit") == c.user_turns
    assert sum(c.user_turns for c in runner.fake.connections) == 2


async def test_inworld_refusals() -> None:
    from runners.providers.inworld_realtime.fake import InworldRealtimeFake

    async with InworldRealtimeFake(Script()) as fake:
        basic = {"Authorization": "Basic " + base64.b64encode(b"k").decode()}
        assert await refused(fake.base_url + "?protocol=realtime", basic) == 400  # no session key
        assert await refused(fake.base_url + "?key=s1&protocol=realtime", {"Authorization": "Bearer sk-key"}) == 401
        assert [r["reason"] for r in fake.rejected] == [
            "missing session key (?key=)", "a bearer must be a JWT: an API key goes as Authorization: Basic <key>"]
        async with websockets.connect(fake.base_url + "?key=s1&protocol=realtime", additional_headers=basic) as ws:
            assert [json.loads(await ws.recv())["type"] for _ in range(2)] == ["ping", "session.created"]
            await ws.send(json.dumps({"type": "session.update", "session": {"model": "gpt-4.1-mini"}}))
            assert json.loads(await ws.recv())["type"] == "error"
            await ws.send(json.dumps({"type": "session.update", "session": {"model": "openai/gpt-4.1-mini"}}))
            assert json.loads(await ws.recv())["type"] == "session.updated"
        session = fake.last
        assert session.errors[0].startswith("Invalid value for session.model: 'gpt-4.1-mini'")


# -- Gemini Live on Vertex AI


async def test_vertex_gemini_live_takes_a_service_accounts_token_and_vertex_paths(demo, tmp_path, monkeypatch) -> None:
    runner, _ = await run_fake("vertex-gemini-live", demo, tmp_path, monkeypatch)
    fake = runner.fake
    asked = fake.tokens.requests
    assert asked and all(r.get("error") is None for r in asked)
    assert {(r["grant_type"], r["iss"], r["scope"]) for r in asked} == {
        ("urn:ietf:params:oauth:grant-type:jwt-bearer", fake.account.email, "https://www.googleapis.com/auth/cloud-platform")}
    assert fake.rejected == [] and fake.connections
    for c in fake.connections:
        assert c.path == "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent" and c.auth_present
        assert c.setup["model"] == "projects/arena-fake-project/locations/us-central1/publishers/google/models/" \
                                   "gemini-live-2.5-flash-native-audio"
        assert "historyConfig" not in c.setup and c.errors == []
        assert all("behavior" not in fd for fd in c.tools)


def test_vertex_run_refuses_a_token_it_cannot_get_by_name(demo) -> None:
    """A service account the token endpoint refuses: the runner's RunError names it (no traceback)."""
    import asyncio

    from runners.base import RunError, SessionSpec

    async def go() -> str:
        runner = get_runner("vertex-gemini-live")
        config = RunSettings(model="vertex-gemini-live", fake=True, fake_timing="instant", turns=[0])
        await runner.start(config, demo)
        try:
            runner.fake.tokens.account.email = "someone-else@x.iam.gserviceaccount.com"  # the assertion's iss no longer matches
            spec = SessionSpec(model=runner.resolve_model("vertex-gemini-live"), system_prompt="p", tools=[], config=config)
            with pytest.raises(RunError) as err:
                await asyncio.to_thread(runner.build_service, spec)
            return str(err.value)
        finally:
            await runner.stop()

    said = asyncio.run(go())
    assert said.startswith("gemini-vertex: the service account gets no token: invalid_grant: iss "), said


async def test_vertex_refusals() -> None:
    from runners.providers.gemini_vertex.fake import GeminiVertexFake

    async with GeminiVertexFake(Script()) as fake:
        bad = urllib.request.Request(fake.tokens.uri, data=b"grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"
                                     b"&assertion=a.b.c", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(bad, timeout=5)
        assert err.value.code == 400 and json.loads(err.value.read())["error"] == "invalid_grant"
        ws_url = fake.base_url.replace("https://", "wss://") + "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"
        ctx: ssl.SSLContext = fake.tls.client
        async with aiohttp.ClientSession() as http:
            with pytest.raises(aiohttp.WSServerHandshakeError) as hs:
                await http.ws_connect(ws_url, ssl=ctx, headers={"Authorization": "Bearer an-api-key"})
            assert hs.value.status == 401
            fake.tokens.issued.add("ya29.test")
            for model, code in (("projects/other/locations/us-central1/publishers/google/models/m", 1008),
                                ("models/gemini-live-2.5-flash-native-audio", 1007)):
                ws = await http.ws_connect(ws_url, ssl=ctx, headers={"Authorization": "Bearer ya29.test"})
                await ws.send_json({"setup": {"model": model}})
                msg = await ws.receive()
                assert msg.type == aiohttp.WSMsgType.CLOSE and msg.data == code, (model, msg)
                await ws.close()
    assert fake.rejected == [{"path": "/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent",
                              "reason": "no bearer token this project's token endpoint issued"}]
    assert fake.connections[0].errors == ["Permission denied on project other (the service account's is arena-fake-project)"]
