"""Our failures are never the model's: a turn lost to an infrastructure failure (nothing listens
at the endpoint, the credentials refused, the provider's 5xx, its session setup refused) is
recorded `infra_error` naming the failure and the endpoint, never `no_response`; a run in which
no turn got an answer fails with the run-outcome rule's reason ("no turn got an answer: …").

Every loop: text (`local:<model>` at ARENA_TUI_LOCAL_LLM_URL), audio (the simulator, OpenAI
Realtime's fake, refusing the websocket upgrade), a cascade (its LLM failing) and a rehydrated
run; the peers are real servers on 127.0.0.1 (a port nothing listens on, the text fake answering
401/500, the simulator answering the upgrade with 401/500), and what they received is asserted.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena_tui.spine.events import FINISHED, INFRA_ERROR, unfinished
from runners.base import get_runner
from runners.engine import RunError
from runners.fakes.script import script_for_benchmark
from runners.providers.text_chat.fake import ChatFault, OpenAIChatFake
from arena_tui.spine.local_llm import LOCAL_LLM_URL_ENV
from arena_tui.spine.settings import RunSettings
from runners.simulator import SimulatorServer
from tests.provider_runs import quiet_loguru, record_run

#: small waits: a failed request is retried after 10 ms; an unanswered audio turn ends after 2 s of audio
QUICK = {"backoff_ms": 10.0, "extra_ms": 2000.0, "min_wall_ms": 1000.0}
NO_ANSWER = "no turn got an answer: "


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("CRITICAL")


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (connections to it are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def run_lost(demo, tmp_path: Path, config: RunSettings, runner=None):
    """Run `config`; (its recorded run, the RunError's message). The run must fail."""
    runner = runner or get_runner(config.model)
    error = None

    async def go():
        nonlocal error
        try:
            return await record_run(demo, config, runner, tmp_path / "infra.db")
        except RunError as e:
            error = str(e)
            raise

    with pytest.raises(RunError):
        await go()
    with sqlite3.connect(tmp_path / "infra.db") as con:
        (status, reason), = con.execute("SELECT status, reason FROM runs").fetchall()
        turns = con.execute("SELECT turn_index, status, error FROM turns WHERE turn_index >= 0 ORDER BY turn_index").fetchall()
    return status, reason, turns, error


def assert_lost(status, reason, turns, error, kind: str, where: str) -> None:
    """Every played turn infra_error naming `kind` at `where`; the run failed by the outcome rule."""
    assert turns and all(s == INFRA_ERROR for _, s, _ in turns), turns
    assert all(kind in e and where in e for _, _, e in turns), turns
    assert status == "failed" and reason == error, (status, reason, error)
    assert reason.startswith(NO_ANSWER) and f"ended {INFRA_ERROR} {len(turns)}" in reason, reason
    assert kind in reason and where in reason, reason


# ------------------------------------------------------------------------------------ text


async def test_text_nothing_listening_is_infra_error_not_no_response(demo, tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv(LOCAL_LLM_URL_ENV, url)
    config = RunSettings(model="local:llama3.2", turns=[0, 1, 2], watchdog=QUICK)
    got = await run_lost(demo, tmp_path, config)
    assert_lost(*got, "endpoint unreachable", url)
    assert [t for t, _, _ in got[2]] == [0, 1]  # the run gave up after 5 reconnects in a row, at turn 1


@pytest.mark.parametrize("status,kind", [(401, "auth refused"), (500, "provider error")])
async def test_text_refused_or_failing_server_is_infra_error(demo, tmp_path, monkeypatch, status, kind):
    async with OpenAIChatFake(script_for_benchmark(demo)) as fake:
        fake.faults = [ChatFault(kind="status", status=status) for _ in range(50)]
        monkeypatch.setenv(LOCAL_LLM_URL_ENV, fake.base_url)
        config = RunSettings(model="local:llama3.2", turns=[0, 1], watchdog=QUICK)
        got = await run_lost(demo, tmp_path, config)
    assert_lost(*got, kind, fake.base_url)
    assert f"HTTP {status}" in got[1]
    assert fake.requests and {r.status for r in fake.requests} == {status}  # each request answered so
    assert {r.model for r in fake.requests} == {"llama3.2"}
    if status == 401:  # no retry can fix it: one request, the run stops there
        assert len(fake.requests) == 1


async def test_text_rehydrated_turns_each_lost_are_infra_error(demo, tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv(LOCAL_LLM_URL_ENV, url)
    config = RunSettings(model="local:llama3.2", turns=[0, 1], watchdog={**QUICK, "max_retries": 1}, mode="rehydrated")
    got = await run_lost(demo, tmp_path, config)
    assert_lost(*got, "endpoint unreachable", url)
    assert [t for t, _, _ in got[2]] == [0, 1]


async def test_a_turn_answered_once_is_the_models_whatever_failed_after(demo, tmp_path):
    """The line between the two: the first request reaches the model, which answers nothing
    within the window (the model's no_response); the retry's request gets a 500. The model got
    to answer, so the turn is its no_response, not infra_error."""
    runner = get_runner("gpt-4.1")
    config = RunSettings(model="gpt-4.1", fake=True, turns=[0], watchdog={**QUICK, "max_retries": 1})

    async def start(config, benchmark):
        await type(runner).start(runner, config, benchmark)
        runner.fake.faults = [ChatFault(kind="stall", delay_s=30.0), ChatFault(kind="status", status=500)]

    runner.start = start  # type: ignore[method-assign]
    status, reason, turns, error = await run_lost(demo, tmp_path, config, runner)
    assert [(t, s) for t, s, _ in turns] == [(0, "no_response")]
    assert reason.startswith(NO_ANSWER + "turn 0 ended no_response 1"), reason


# ------------------------------------------------------------------------------------ audio


@pytest.mark.parametrize("status,kind", [(401, "auth refused"), (500, "provider error")])
async def test_audio_fake_refusing_the_upgrade_is_infra_error(demo, tmp_path, status, kind):
    async with SimulatorServer(demo) as sim:
        sim.refuse = (status, "refused by the test\n")
        config = RunSettings(model="sim", base_url=sim.base_url, turns=[0, 1], speed=8.0, watchdog=QUICK)
        got = await run_lost(demo, tmp_path, config)
        rejected = list(sim.rejected)
    assert_lost(*got, kind, sim.base_url)
    assert f"HTTP {status}" in got[1]
    assert len(rejected) >= 6 and {r["reason"] for r in rejected} == {f"refused with HTTP {status}"}
    assert not sim.sessions  # no session was ever opened: the model heard nothing


async def test_audio_nothing_listening_is_infra_error_greeting_included(demo, tmp_path):
    url = f"ws://127.0.0.1:{closed_port()}/v1/realtime"
    config = RunSettings(model="sim", base_url=url, turns=[0, 1], speed=8.0, watchdog=QUICK)
    got = await run_lost(demo, tmp_path, config)
    assert_lost(*got, "endpoint unreachable", url)
    with sqlite3.connect(tmp_path / "infra.db") as con:
        (greeting,), = con.execute("SELECT status FROM turns WHERE turn_index = -1").fetchall()
    assert greeting == INFRA_ERROR


async def test_gemini_session_setup_refused_is_infra_error(demo, tmp_path):
    """The Gemini Live fake closes every session at its setup with 1008, as the real service does
    a key it does not accept: google-genai's client raises, the session never opens."""
    runner = get_runner("gemini-native-audio")
    config = RunSettings(model="gemini-native-audio", fake=True, speed=8.0, turns=[0, 1], watchdog=QUICK)

    async def start(config, benchmark):
        await type(runner).start(runner, config, benchmark)
        runner.fake.refuse_setup = (1008, "API key not valid. Please pass a valid API key.")

    runner.start = start  # type: ignore[method-assign]
    got = await run_lost(demo, tmp_path, config, runner)
    assert_lost(*got, "session setup refused", runner.fake.base_url)
    assert "API key not valid" in got[1] and "(1008)" in got[1]
    assert len(runner.fake.connections) == 6 and {c.closed for c in runner.fake.connections} == {"server:1008"}
    assert all(c.setup for c in runner.fake.connections)  # each asked to set up, each refused there


async def test_cascade_whose_llm_fails_is_infra_error(demo, tmp_path):
    alias = "cascade:openai-stt+gpt-4.1-mini+openai-tts"
    runner = get_runner(alias)
    config = RunSettings(model=alias, fake=True, speed=3.0, turns=[0, 1], watchdog=QUICK)

    async def start(config, benchmark):
        await type(runner).start(runner, config, benchmark)
        runner.fakes.llm.faults = [ChatFault(kind="status", status=503) for _ in range(50)]

    runner.start = start  # type: ignore[method-assign]
    got = await run_lost(demo, tmp_path, config, runner)
    assert_lost(*got, "provider error", runner.fakes.llm.base_url)
    assert {r.status for r in runner.fakes.llm.requests} == {503}


# ------------------------------------------------------------------------------------ resume, CLI


def test_infra_error_turns_are_played_again_by_a_resume():
    assert INFRA_ERROR not in FINISHED
    from arena_tui.spine.events import TurnResult

    rows = {0: TurnResult(turn_index=0, status="ok", user_text=""),
            1: TurnResult(turn_index=1, status=INFRA_ERROR, user_text="", error="endpoint unreachable: x")}
    assert unfinished([0, 1, 2], rows) == [1, 2]


def test_cli_headless_run_against_nothing_says_the_reason_once(tmp_path):
    """`arena-tui run demo_bench --model local:llama3.2` with no server: exit 2, the one stderr line
    is the outcome rule's reason naming the failure, every played turn recorded infra_error."""
    url = f"http://127.0.0.1:{closed_port()}/v1"
    exe = Path(sys.executable).with_name("arena-tui")
    cli = [str(exe)] if exe.is_file() else [sys.executable, "-m", "arena_tui.cli"]
    env = {**os.environ, LOCAL_LLM_URL_ENV: url, "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    db = tmp_path / "cli.db"
    p = subprocess.run([*cli, "--db", str(db), "run", "demo_bench", "--model", "local:llama3.2", "--turns", "0-2",
                        "--judge", "none", "--headless"], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=180, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr)
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena-tui: " + NO_ANSWER), p.stderr
    assert "endpoint unreachable" in err[0] and url in err[0] and "Traceback" not in p.stderr
    with sqlite3.connect(db) as con:
        turns = con.execute("SELECT status FROM turns WHERE turn_index >= 0").fetchall()
        (reason,), = con.execute("SELECT reason FROM runs").fetchall()
    assert turns and {s for s, in turns} == {INFRA_ERROR}
    assert reason == err[0].removeprefix("arena-tui: ")


def test_infra_error_turns_are_never_judged():
    from arena_tui.verdicts import counts

    assert not counts(INFRA_ERROR)


def test_cli_an_audio_run_against_nothing_says_the_reason_in_one_line(tmp_path):
    """The Gemini Live runner with nothing listening at its endpoint: the one stderr line and
    nothing after it (the failed sessions' soxr resamplers used to print nanobind's 20-line leak
    report at exit, `cli._free_failed_runs`)."""
    url = f"https://127.0.0.1:{closed_port()}"
    exe = Path(sys.executable).with_name("arena-tui")
    cli = [str(exe)] if exe.is_file() else [sys.executable, "-m", "arena_tui.cli"]
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    p = subprocess.run([*cli, "--db", str(tmp_path / "g.db"), "run", "demo_bench", "--model", "gemini-native-audio",
                        "--fake", "--base-url", url, "--turns", "0-1", "--speed", "4", "--judge", "none", "--headless"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, (p.returncode, p.stdout[-2000:], p.stderr)
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("arena-tui: " + NO_ANSWER) and f"endpoint unreachable: {url}" in err[0], \
        p.stderr
