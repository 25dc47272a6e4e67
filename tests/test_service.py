"""`--service package.module:Class`: a Pipecat service class of the user's, run through the engine.

The classes are defined here, as a user would write them: `LocalChat` is Pipecat's
`OpenAILLMService` with constructor arguments of its own (no defaults), pointed at our local
OpenAI-compatible chat fake on 127.0.0.1; `LocalRealtime` is `OpenAIRealtimeLLMService` pointed
at the simulator. The preflight says what a class needs; the run goes through the same engine,
tools and store, and the fake records what arrived.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

from arena_tui.cli import main
from arena_tui.spine.bus import EventBus
from arena_tui.store import Store
from arena_tui.spine.settings import RunSettings
from runners.engine import run_benchmark, runner_for
from runners.fakes.script import script_for_benchmark
from runners.providers.text_chat.fake import OpenAIChatFake
from runners.simulator import SimulatorServer
from tests.provider_runs import quiet_loguru

SERVICE = "tests.test_service:LocalChat"
KEY_ENV = "LOCAL_CHAT_TEST_KEY"


class LocalChat(OpenAILLMService):
    """A user's service: OpenAI's chat client on an endpoint and key given by name, and a tag."""

    def __init__(self, *, endpoint: str, api_key: str, tag: str = "plain", retries: int = 2, **kwargs: Any) -> None:
        self.tag, self.retries = tag, retries
        super().__init__(api_key=api_key, base_url=endpoint, **kwargs)


class LocalRealtime(OpenAIRealtimeLLMService):
    """A user's realtime class: OpenAI Realtime against a server they name."""

    def __init__(self, *, server: str, **kwargs: Any) -> None:
        super().__init__(api_key="sk-simulator-not-a-secret", base_url=server, **kwargs)


class Narrow(OpenAILLMService):
    def __init__(self, api_key: str = "", base_url: str = "http://127.0.0.1:9/v1", settings: Any = None) -> None:
        super().__init__(api_key=api_key, base_url=base_url, settings=settings)


class NotAService:
    pass


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


@pytest.fixture
def chat_fake(demo) -> Iterator[OpenAIChatFake]:
    """The chat fake on its own loop in a thread, so the CLI (which runs its own loop) can call it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    fake = OpenAIChatFake(script_for_benchmark(demo, [0, 1, 2, 3, 4, 5]))
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result(10)
    try:
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_preflight_says_what_the_class_needs(monkeypatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    runner = runner_for("gpt-test", SERVICE)
    assert runner.mode == "text" and runner.name == "service"
    bare = runner.preflight(RunSettings(model="gpt-test", service=SERVICE))
    assert bare == [f"--service {SERVICE}: LocalChat needs endpoint, api_key (no default): pass "
                    "--service-arg endpoint=… --service-arg api_key=… (a key as env:VARIABLE)"]
    cfg = RunSettings(model="gpt-test", service=SERVICE, service_args={"endpoint": "http://127.0.0.1:9/v1",
                                                                       "api_key": f"env:{KEY_ENV}"})
    assert runner.preflight(cfg) == [f"--service {SERVICE}: environment variable {KEY_ENV} is not set"]
    # a realtime class runs the audio loop; at a speed other than 1 only against this machine
    rt = runner_for("x", "tests.test_service:LocalRealtime")
    assert rt.mode == "audio"
    far = RunSettings(model="x", service="tests.test_service:LocalRealtime", speed=5.0,
                    service_args={"server": "wss://realtime.example.com/v1"})
    assert rt.preflight(far) == ["--service tests.test_service:LocalRealtime: --speed must be 1 against a real service "
                                 "(got 5.0): every URL its class is given must be on this machine"]
    # a class without **kwargs says what it takes
    narrow = runner_for("x", "tests.test_service:Narrow")
    cfg = RunSettings(model="x", service="tests.test_service:Narrow", service_args={"nope": "1"})
    assert narrow.preflight(cfg) == ["--service tests.test_service:Narrow: Narrow takes no argument nope (it takes: "
                                     "api_key, base_url, settings)"]


@pytest.mark.parametrize(("path", "message"), [
    ("tests.no_such_module:X", "--service tests.no_such_module:X: cannot import tests.no_such_module: No module named"),
    ("tests.test_service:Nope", "tests.test_service has no class Nope"),
    ("tests.test_service:NotAService", "NotAService is not a Pipecat LLM service"),
])
def test_a_class_that_cannot_run_is_one_line(path, message, tmp_path, capsys) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "m", "--service", path, "--headless"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_key_is_only_given_by_its_variable(tmp_path, capsys) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "m", "--service", SERVICE,
                 "--service-arg", "api_key=sk-literal-secret", "--headless"])
    err = capsys.readouterr().err
    assert code == 2 and "--service-arg api_key: give a key as env:VARIABLE" in err and "sk-literal-secret" not in err
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "m", "--service", SERVICE,
                 "--service-arg", "endpoint", "--headless"])
    assert code == 2 and "expected KEY=VALUE" in capsys.readouterr().err


def test_cli_run_with_a_class_defined_in_the_test(chat_fake, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-local-test-key")
    db = tmp_path / "arena.db"
    code = main(["--db", str(db), "run", "demo_bench", "--model", "gpt-test", "--service", SERVICE,
                 "--service-arg", f"endpoint={chat_fake.base_url}", "--service-arg", f"api_key=env:{KEY_ENV}",
                 "--service-arg", "tag=mine", "--service-arg", "retries=0",
                 "--turns", "0-5", "--headless", "--judge", "none"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "model gpt-test (service: LocalChat)" in out
    # at the fake: the model id, the benchmark's prompt and tools, the key (by fingerprint only),
    # and turn 5's two tool results as the engine answered them
    reqs = chat_fake.chat_requests
    assert reqs and {r.model for r in reqs} == {"gpt-test"}
    assert all(r.auth_sha256 == hashlib.sha256(b"sk-local-test-key").hexdigest() for r in reqs)
    assert reqs[0].messages[0]["role"] == "system" and "Spoke & Chain" in reqs[0].messages[0]["content"]
    assert {t["function"]["name"] for t in reqs[0].tools} >= {"check_part_stock", "book_repair"}
    results = [res for r in reqs for res in r.tool_results()]
    stock = [res["content"] for res in results if isinstance(res["content"], dict) and "in_stock" in str(res["content"])]
    assert len(stock) >= 2, results

    async def stored() -> None:
        async with await Store.open(db) as store:
            (run,) = await store.list_runs()
            assert run.status == "completed" and run.provider == "service" and run.model == "gpt-test"
            assert run.config["service"] == SERVICE
            assert run.config["service_args"]["api_key"] == f"env:{KEY_ENV}"  # the variable's name, never its value
            assert "sk-local-test-key" not in str(run.config)
            rows = {r.turn_index: r for r in await store.turn_results(run.run_id)}
            assert all(rows[i].status == "ok" for i in range(6)), rows
            assert sorted((c.name, c.status) for c in rows[5].tool_calls) == [("check_part_stock", "matched")] * 2

    asyncio.run(stored())


async def test_a_realtime_class_runs_the_audio_loop_against_the_simulator(demo) -> None:
    sim = SimulatorServer(demo)
    await sim.start()
    try:
        path = "tests.test_service:LocalRealtime"
        config = RunSettings(model="gpt-realtime", service=path, service_args={"server": sim.base_url}, speed=10.0, turns=[0, 1])
        runner = runner_for(config.model, path)
        assert runner.preflight(config) == []  # speed > 1 is fine: the URL it is given is on this machine
        bus = EventBus()
        sub = bus.subscribe()
        await run_benchmark(demo, config, bus, provider=runner)
        events = sub.drain()
    finally:
        await sim.stop()
    assert [e.status for e in events if e.kind == "run_ended"] == ["completed"]
    assert sim.sessions and sim.sessions[0].instructions == demo.system_prompt
    ended = {e.result.turn_index: e.result for e in events if e.kind == "turn_ended" and e.turn_index >= 0}
    assert [ended[i].status for i in (0, 1)] == ["ok", "ok"]
    assert ended[1].latencies.voice_to_voice_ms is not None  # our timeline, as for every audio run
