"""`--effort`: the reasoning effort / thinking level reaches each provider's own field on the wire
(checked at its fake, through the real Pipecat service), is stored with the run and names its
leaderboard row; a model whose protocol has none, or a value it does not take, is refused by name
before anything starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from arena_tui.cli import main
from arena_tui.compare.stored import StoredRun
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from runners import catalog
from runners.base import get_runner
from runners.fakes.wire import pick
from runners.simulator import SimulatorServer
from tests.provider_runs import quiet_loguru, record_run

SPEED = 15.0


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


def realtime_reasoning(fake: SimulatorServer) -> list[Any]:
    """`session.reasoning` of every session.update the simulator received."""
    return [(u.get("reasoning") or {}).get("effort") for s in fake.sessions for u in s.session_updates]


def gemini_live_thinking(fake: Any) -> list[Any]:
    """The thinking config of every setup the Gemini Live fake received (google-genai sends either spelling)."""
    return [pick(pick(c.setup, "generationConfig") or {}, "thinkingConfig") or pick(c.setup, "thinkingConfig")
            for c in fake.connections]


def request_bodies(fake: Any) -> list[dict]:
    return [r.body for r in getattr(fake, "requests", None) or fake.exchanges]


#: alias, effort, what its fake received (read from the fake), what it must be
CASES = {
    "sim": ("sim", "high", realtime_reasoning, lambda got: got and all(e == "high" for e in got)),
    "gpt-realtime-2": ("gpt-realtime-2", "low", realtime_reasoning, lambda got: got and all(e == "low" for e in got)),
    "gpt-realtime-2.1": ("gpt-realtime-2.1", "xhigh", realtime_reasoning, lambda got: got and all(e == "xhigh" for e in got)),
    "vertex-gemini-live": ("vertex-gemini-live", "1024", gemini_live_thinking,
                           lambda got: got and all(pick(t, "thinkingBudget") == 1024 for t in got)),
    "gemini-3.1-flash": ("gemini-3.1-flash", "medium", gemini_live_thinking,
                         lambda got: got and all(pick(t, "thinkingLevel") == "MEDIUM" for t in got)),
    "gemini-native-audio": ("gemini-native-audio", "2048", gemini_live_thinking,
                            lambda got: got and all(pick(t, "thinkingBudget") == 2048 for t in got)),
    "gpt-5-mini": ("gpt-5-mini", "minimal", request_bodies,
                   lambda got: got and all(b.get("reasoning_effort") == "minimal" for b in got)),
    "claude-sonnet-4-6": ("claude-sonnet-4-6", "high", request_bodies,
                          lambda got: got and all((b.get("output_config") or {}).get("effort") == "high" for b in got)),
    "claude-haiku-4-5": ("claude-haiku-4-5", "2048", request_bodies,
                         lambda got: got and all(b.get("thinking") == {"type": "enabled", "budget_tokens": 2048}
                                                 and b.get("max_tokens", 0) > 2048 for b in got)),
    "gemini-2.5-flash": ("gemini-2.5-flash", "512", request_bodies,
                         lambda got: got and all(pick(pick(b.get("generationConfig"), "thinkingConfig"), "thinkingBudget")
                                                 == 512 for b in got)),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_effort_reaches_the_providers_own_field(case: str, demo, tmp_path: Path) -> None:
    alias, effort, read, ok = CASES[case]
    runner = get_runner(alias)
    config = RunSettings(model=alias, fake=alias != "sim", fake_timing="instant", speed=SPEED, turns=[1], effort=effort,
                         greeting={"enabled": False})
    assert runner.preflight(config) == []
    store = await Store.open(tmp_path / "arena.db")
    try:
        run = await record_run(demo, config, runner, store)
        got = read(runner.fake)
        assert ok(got), (alias, got)
        assert run.result(1).status == "ok", run.result(1)
        stored = await store.get_run(run.run_id)
        assert stored.config["effort"] == effort
        assert f"effort={effort}" in StoredRun(stored, {}, ()).group
    finally:
        await store.close()


async def test_without_effort_no_field_is_sent(demo, tmp_path: Path) -> None:
    runner = get_runner("sim")
    config = RunSettings(model="sim", speed=SPEED, turns=[1], greeting={"enabled": False})
    await record_run(demo, config, runner, tmp_path / "arena.db")
    assert realtime_reasoning(runner.fake) and not any(realtime_reasoning(runner.fake))


def test_every_model_with_an_effort_has_its_wire_checked_here() -> None:
    """A provider given efforts in the catalog gets a case above (its field at its fake)."""
    providers = {catalog.find(alias).name for alias, *_ in CASES.values()}
    assert {p.name for p in catalog.PROVIDERS if p.efforts} <= providers


@pytest.mark.parametrize(("argv", "says"), [
    (["--model", "grok", "--fake", "--effort", "high"],
     "grok: --effort high: grok takes no reasoning effort (models that do: "),
    (["--model", "sim", "--effort", "max"], "sim: --effort max: sim takes minimal|low|medium|high|xhigh (its session.reasoning.effort)"),
    (["--model", "claude-haiku-4-5", "--fake", "--effort", "high"],
     "anthropic: --effort high: claude-haiku-4-5 takes a budget of 1024-32000 tokens (its thinking.budget_tokens)"),
    (["--model", "sim", "--effort", "very high"], "--effort: 'very high' is not an effort"),
])
def test_an_effort_the_model_does_not_take_is_refused_by_name(argv: list[str], says: str, tmp_path: Path, capsys) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--headless", "--judge", "none", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and says in err[0], err
