"""The provider contract, over EVERY registered alias: a `--fake` run never leaves 127.0.0.1.

The endpoint is read from the real Pipecat service object each runner builds (its runner's
`service_endpoint`: the service's own URL or client, not the run's settings), so an alias whose
runner declares no fake, or a fake the service does not actually use, fails here. Every fake is
read through the same accessors (`tool_results`, `kickoff_replies`). The OpenAI Realtime aliases are also run end to end against their
fake (the simulator), which must receive the connection."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from runners.base import SessionSpec, get_runner, known_models
from runners.engine import RunError, run_benchmark
from runners import catalog
from runners.catalog import CASCADE_EXAMPLES
from runners.simulator import SimulatorServer
from tests.provider_runs import quiet_loguru

FAST = 15.0  # AUDIO time / wall time for the end-to-end run (fakes pace in audio time)
#: every environment variable a provider or a cascade part reads for a real run (keys, endpoints, projects)
REAL_SETTINGS = sorted({e for p in catalog.PROVIDERS for e in (*p.key_env, *p.setting_env)}
                       | {e for c in (*catalog.STT.values(), *catalog.TTS.values()) for e in c.key_env})


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


def loopback(url: str) -> bool:
    host = urlsplit(url).hostname
    return url.startswith("inproc://") or host in ("127.0.0.1", "::1", "localhost")


@pytest.mark.parametrize("alias", [*known_models(), *CASCADE_EXAMPLES])
async def test_every_alias_with_fake_builds_a_service_on_loopback(alias, demo, monkeypatch):
    """No key set, `--fake`: the service the runner builds points at 127.0.0.1 (or in-process)."""
    for env in REAL_SETTINGS:  # every key and setting the catalog names, as if the real ones were set
        monkeypatch.setenv(env, "sk-real-key-must-not-be-used")
    runner = get_runner(alias)
    config = RunSettings(model=alias, fake=True, fake_timing="instant", turns=[0])
    assert runner.preflight(config) == []
    await runner.start(config, demo)
    try:
        spec = SessionSpec(
            model=runner.resolve_model(alias), system_prompt=demo.system_prompt, tools=demo.tools,
            kickoff="Greet the user briefly.", config=config,
        )
        service = runner.build_service(spec)
        endpoint = runner.service_endpoint(service)
        assert loopback(endpoint), f"{alias}: a --fake service would connect to {endpoint}"
        # a session whose first connect has not run yet is not a dead one: the pipeline starts
        # playing input before the socket is up, and the engine must not rotate it for "disconnect"
        assert runner.is_alive(service), f"{alias}: a session still connecting reads as dead"
        # the declared contract agrees with the built service (imported here: the check above runs on older code too)
        from runners.base import is_local

        assert runner.fake is not None, f"{alias}: --fake started no local fake"
        assert is_local(runner.endpoint(config)), runner.endpoint(config)
        assert runner.api_key(config) != "sk-real-key-must-not-be-used"
    finally:
        await runner.stop()


@pytest.mark.parametrize("alias", ["gpt-realtime", "gpt-4o-mini-realtime"])
async def test_openai_realtime_alias_with_fake_runs_against_the_simulator(alias, demo):
    """End to end at high speed: the simulator receives the session, the run completes, and
    turn 5's two expected calls are both made and answered."""
    runner = get_runner(alias)
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model=alias, fake=True, fake_timing="instant", speed=FAST, turns=[0, 5])
    await run_benchmark(demo, config, bus, provider=runner)
    events = sub.drain()
    sim = runner.fake
    assert isinstance(sim, SimulatorServer)
    assert sim.sessions, "the simulator received no connection"
    for session in sim.sessions:  # (a retry under load may rotate to a second session: also the simulator's)
        assert session.model == runner.resolve_model(alias) and session.auth_present
        assert urlsplit("ws://" + session.headers["Host"]).hostname == "127.0.0.1"
    started = next(e for e in events if e.kind == "run_started")
    assert started.simulator is True
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    t5 = next(e.result for e in events if e.kind == "turn_ended" and e.turn_index == 5)
    assert sorted((c.name, c.status) for c in t5.tool_calls) == [("check_part_stock", "matched")] * 2


async def test_fake_run_to_a_remote_endpoint_is_refused_before_connecting(demo):
    """`--fake --base-url <remote>` would leave the machine while recorded as simulated: refused."""
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model="gpt-realtime", fake=True, fake_timing="instant", base_url="wss://api.openai.com/v1/realtime", turns=[0])
    with pytest.raises(RunError, match="must stay on 127.0.0.1"):
        await run_benchmark(demo, config, bus)
    kinds = [e.kind for e in sub.drain()]
    assert "session_opened" not in kinds and kinds[-1] == "run_ended"


def _one_alias_per_provider() -> list[str]:
    seen: dict[str, str] = {}
    for alias in known_models():
        seen.setdefault(type(get_runner(alias)).__name__, alias)
    return sorted(seen.values())


@pytest.mark.parametrize("alias", [*_one_alias_per_provider(), *CASCADE_EXAMPLES])
async def test_every_fake_makes_every_expected_call_of_a_turn(alias, demo):
    """demo_bench turn 5 expects two calls: every provider's fake makes both, each is matched
    and answered with its own scripted result, the fake received both results, and nothing was
    warned about."""
    from loguru import logger

    runner = get_runner(alias)
    bus = EventBus()
    sub = bus.subscribe()
    warnings: list[str] = []
    sink = logger.add(lambda m: warnings.append(m.record["message"]), level="WARNING")
    try:
        await run_benchmark(demo, RunSettings(model=alias, fake=True, fake_timing="instant", speed=8.0, turns=[5]), bus, provider=runner)
    finally:
        logger.remove(sink)
    # a clean run puts nothing on the user's terminal (headless runs show Pipecat's warnings)
    assert not warnings, warnings
    events = sub.drain()
    t5 = next(e.result for e in events if e.kind == "turn_ended" and e.turn_index == 5)
    scripted = demo.turns[5].function_call_response
    made = sorted((c.args.get("part", ""), c.status) for c in t5.tool_calls)
    assert made == [("brake pads", "matched"), ("inner tube", "matched")], t5.tool_calls
    assert sorted(c.response["price"] for c in t5.tool_calls) == sorted(r["price"] for r in scripted)
    received = runner.fake.tool_results()
    assert len(received) == 2, received
    wire = json.dumps(received, default=str)
    assert re.search(r"price\W+8\b", wire) and re.search(r"price\W+22\b", wire), wire


@pytest.mark.parametrize("alias", ["sim", "grok-realtime"])
async def test_a_socket_closed_under_the_service_costs_no_error_per_audio_chunk(alias, demo):
    """After the server closed the socket, sends are dropped (the session reads as dead and the
    engine rotates): Pipecat would otherwise push one error per 20 ms audio chunk, and its event
    task bookkeeping made a sped-up run's loop stall for minutes under that storm."""
    import websockets

    async def handler(ws):
        await ws.close(code=1011)

    async with websockets.serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        runner = get_runner(alias)
        config = RunSettings(model=alias, fake=True, fake_timing="instant", turns=[0])
        spec = SessionSpec(model=runner.resolve_model(alias), system_prompt=demo.system_prompt, tools=demo.tools,
                           kickoff="hi", config=config)
        await runner.start(config, demo)
        try:
            service = runner.build_service(spec)
        finally:
            await runner.stop()
        ws = await websockets.connect(f"ws://127.0.0.1:{port}")
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
        service._websocket, service.connecting = ws, False
        errors: list[str] = []

        async def push_error(error_msg: str = "", **_: Any) -> None:
            errors.append(error_msg)

        service.push_error = push_error
        for _ in range(50):
            await service._ws_send({"type": "input_audio_buffer.append", "audio": ""})
        assert errors == []
        assert not runner.is_alive(service)


def _audio_aliases() -> list[str]:
    """One alias per audio provider, and Gemini 2.5 besides 3.x (its seed asks for a reply)."""
    audio = [a for a in _one_alias_per_provider() if get_runner(a).mode == "audio"]
    return sorted({*audio, "gemini-native-audio"})


@pytest.mark.parametrize("alias", _audio_aliases())
async def test_a_rotated_session_gets_the_history_and_is_asked_nothing(alias, demo):
    """Rotated before every turn (age), each new session is given the history and no kickoff:
    the provider's fake makes no reply that no user turn asked for, and every turn's record
    holds its own golden reply only. A provider that takes history in only when asked to answer
    it (`history_needs_reply`: Gemini 2.5) gets `CONTINUE_PROMPT`, and that reply is the
    session's handshake: on no turn, in no turn's text."""
    runner = get_runner(alias)
    bus = EventBus()
    sub = bus.subscribe()
    config = RunSettings(model=alias, fake=True, speed=8.0, turns=[0, 1], rotation={"max_age_s": 1})
    await run_benchmark(demo, config, bus, provider=runner)
    events = sub.drain()
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    rotated = [e for e in events if e.kind == "session_rotated"]
    assert [e.turn_index for e in rotated][-1] == 1 and rotated[-1].replayed.messages == 2, rotated
    for t in (0, 1):
        r = next(e.result for e in events if e.kind == "turn_ended" and e.turn_index == t)
        assert r.status == "ok", (t, r.status, r.error)
        assert " ".join(r.assistant_text.split()) == " ".join(demo.turn(t).golden_text.split()), (t, r.assistant_text)
    asks = runner.history_needs_reply(config)
    # a kickoff reply only where the provider must be asked: once per session given history
    kickoffs = runner.fake.kickoff_replies()
    assert kickoffs == (sum(1 for e in rotated if e.replayed.messages) if asks else 0), (alias, kickoffs)
    if asks:
        handshake = [e for e in events if e.kind == "transcript_delta" and e.role == "assistant"
                     and e.t_ms > rotated[-1].t_ms and e.turn_index is None]
        assert handshake, "the reply asked for after the history is the session's, on no turn"
