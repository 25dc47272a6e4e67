"""Provider caps: a campaign never holds more sessions open against one provider than its cap allows.

The rules first (which providers a model's run holds a session of, the spec's `--provider-cap`,
the coordinator's count), then the real thing: a campaign of six gpt-realtime cells (`--fake`)
in real worker processes, all pointed at one simulator (`--base-url`) that records when each of
its connections opened and closed, with a cap of 2 and room for 8 runs at once. What is checked
is what the simulator held, not what the coordinator thinks it admitted.
"""

from __future__ import annotations

import asyncio
from collections import deque
from pathlib import Path

import pytest
from textual.widgets import Static

from arena_tui.app import ArenaApp
from arena_tui.campaign import records
from arena_tui.campaign.snapshot import BenchmarkSnapshot, snapshot
from arena_tui.campaign.spec import CampaignSpec, SpecError, build_spec, load_toml
from arena_tui.cli import main
from arena_tui.orchestration.executor import Executor, Job
from arena_tui.orchestration.orchestrator import CampaignBlocked, CampaignResult, _workers_for_caps, preflight, run_campaign
from arena_tui.orchestration.provider_caps import ProviderCaps, caps_text, resolve, runs_at_once, sessions
from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings
from arena_tui.store import Store
from benchmarks.registry import open_benchmark
from runners import catalog
from runners.simulator import SimulatorServer

from .test_app_campaigns import open_campaign
from .test_campaign_executors import ray_cluster  # noqa: F401  # the two-node Ray cluster on 127.0.0.1

CELLS = 6


@pytest.fixture(scope="module")
def demo_snapshot() -> BenchmarkSnapshot:
    return snapshot(open_benchmark("demo_bench"))


def test_a_run_holds_a_session_of_each_provider_its_model_uses() -> None:
    assert catalog.uses("gpt-realtime") == ("openai",)
    assert catalog.uses("gpt-live-1") == ("openai-live",)  # (its backend is OpenAI-hosted, on the same session)
    assert catalog.uses("gpt-live-1+claude-haiku-4-5") == ("openai-live", "anthropic")
    assert catalog.uses("cascade:deepgram+claude-haiku-4-5+cartesia") == ("deepgram", "anthropic", "cartesia")
    assert catalog.uses("cascade:whisper+local:llama3.2+piper") == ("local",)  # its stages run on this machine
    assert catalog.uses("no-such-model") == ()
    assert sessions(RunSettings(model="gpt-realtime")) == {"openai": 1}
    assert sessions(RunSettings(model="gpt-realtime", mode="rehydrated", parallel=3)) == {"openai": 3}
    # a cap names a provider, a speech stage or one of a provider's aliases
    assert [catalog.account(n) for n in ("openai", "gpt-realtime", "deepgram")] == ["openai", "openai", "deepgram"]
    with pytest.raises(ValueError, match="unknown provider 'opena1'"):
        catalog.account("opena1")
    # no alias names another provider: a cap's name means one provider
    names = {p.name for p in catalog.PROVIDERS}
    assert all(catalog.BY_ALIAS[a].name == a for a in catalog.BY_ALIAS if a in names)


def test_caps_from_flags_and_toml_one_line_each_refusal(tmp_path: Path) -> None:
    def spec(**flags: object) -> CampaignSpec:
        return build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime", **flags})

    assert spec(provider_caps=["openai=2"]).provider_caps == {"openai": 2}
    assert spec(provider_caps=["openai=2,gemini=3", "openai=4"]).provider_caps == {"openai": 4, "gemini": 3}
    assert "provider_caps" not in spec().to_json()  # a spec without caps keeps the JSON (and the campaign) it had
    assert CampaignSpec.from_json(spec(provider_caps=["openai=2"]).to_json()).provider_caps == {"openai": 2}
    for bad in ("openai", "openai=0", "openai=two", "=2"):
        with pytest.raises(SpecError, match=r"--provider-cap .*expected NAME=N") as e:
            spec(provider_caps=[bad])
        assert "\n" not in str(e.value)
    f = tmp_path / "c.toml"
    f.write_text('bench = "demo_bench"\nmodel = "gpt-realtime"\n[provider_cap]\nopenai = 3\n')
    assert build_spec(load_toml(f), {}).provider_caps == {"openai": 3}
    assert build_spec(load_toml(f), {"provider_caps": ["openai=1"]}).provider_caps == {"openai": 1}  # the flag wins
    f.write_text('bench = "demo_bench"\nmodel = "gpt-realtime"\n[provider_cap]\nopenai = 0\n')
    with pytest.raises(SpecError, match="provider_cap openai: sessions at once must be a whole number 1 or more"):
        build_spec(load_toml(f), {})
    f.write_text('bench = "demo_bench"\nmodel = "gpt-realtime"\nprovider_cap = 2\n')
    with pytest.raises(SpecError, match="provider_cap must be a table"):
        load_toml(f)


def test_the_catalogs_limit_applies_and_a_given_cap_goes_over_it() -> None:
    caps, notes = resolve(["vertex-gemini-live", "gpt-realtime"], {})
    assert {n: (c.most, c.given) for n, c in caps.items()} == {"gemini-vertex": (1000, False)}
    assert caps_text(caps) == "at most 1000 gemini-vertex (its documented limit) sessions at once" and not notes
    caps, notes = resolve(["vertex-gemini-live", "gpt-realtime"], {"gpt-realtime": 2, "vertex-gemini-live": 1500, "grok": 1})
    assert {n: (c.most, c.given) for n, c in caps.items()} == {"gemini-vertex": (1500, True), "openai": (2, True)}
    assert caps_text(caps) == "at most 1500 gemini-vertex, 2 openai sessions at once"
    assert notes == ["--provider-cap grok=1: no model of this campaign uses grok; it caps nothing"]
    with pytest.raises(ValueError, match=r"^--provider-cap opena1=2: unknown provider 'opena1'"):
        resolve(["gpt-realtime"], {"opena1": 2})
    # no more workers than the caps let runs run at once: while every model is capped
    caps, _ = resolve(["gpt-realtime", "gpt-realtime-mini", "vertex-gemini-live"], {"openai": 2})
    assert runs_at_once(caps, ["gpt-realtime", "gpt-realtime-mini", "vertex-gemini-live"]) == 1002
    assert runs_at_once(caps, ["gpt-realtime", "sim"]) is None
    said: list[str] = []
    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime", "repeats": 8, "provider_caps": ["openai=2"]})
    assert spec.local_workers > 2
    assert _workers_for_caps(spec, resolve(spec.models, spec.provider_caps)[0], said.append).local_workers == 2
    assert said == [f"2 worker process(es), not {spec.local_workers}: the provider caps let no more runs run at once"]


def test_a_run_that_alone_holds_more_than_its_cap_is_refused_by_preflight() -> None:
    spec = build_spec({"extra": {"mode": "rehydrated", "parallel": 3}},
                      {"benchmarks": "demo_bench", "models": "gpt-realtime", "fake": True, "provider_caps": ["openai=2"]})
    problems = preflight(spec, None).problems[("demo_bench", "gpt-realtime")]
    assert any("--parallel 3 holds 3 openai sessions at once, more than its cap of 2" in p for p in problems), problems


def test_the_coordinator_admits_in_order_what_has_room_and_frees_it_when_a_run_ends(demo_snapshot: BenchmarkSnapshot) -> None:
    caps = ProviderCaps({"openai": 2})
    job = {n: Job(n, demo_snapshot, RunSettings(model=m, fake=True))
           for n, m in (("a", "gpt-realtime"), ("b", "gpt-realtime"), ("c", "gpt-realtime"), ("s", "sim"))}
    queue = deque(job[n] for n in "abcs")
    assert [caps.take_next(queue).run_id for _ in range(3)] == ["a", "b", "s"]  # c waits; the simulator has no cap
    assert caps.take_next(queue) is None and list(queue) == [job["c"]] and caps.held_back(queue) == 1
    caps.release("s")  # (one holding no capped session frees nothing)
    assert caps.take_next(queue) is None
    caps.release("a")
    assert caps.take_next(queue) is job["c"] and caps.open["openai"] == 2 and caps.peak["openai"] == 2
    caps.release("c")
    caps.release("c")  # (a second end of the same run frees nothing more)
    assert caps.open["openai"] == 1


def test_campaign_show_says_its_caps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "arena.db"

    async def record() -> None:
        async with await Store.open(db) as store:
            await records.create(store, "camp01", build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime",
                                                                  "provider_caps": ["gpt-realtime=2"]}))

    asyncio.run(record())
    assert main(["--db", str(db), "campaign", "show", "camp01"]) == 0
    assert ", executor local, at most 2 openai sessions at once: 0/1 complete" in capsys.readouterr().out.splitlines()[0]
    code = main(["--db", str(db), "campaign", "run", "--bench", "demo_bench", "--model", "gpt-realtime", "--fake",
                 "--provider-cap", "opena1=2"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--provider-cap opena1=2: unknown provider 'opena1'" in err, err


async def capped_campaign(tmp_path: Path, cap: int | None, **spec: object) -> tuple[int, CampaignResult, list[str], Executor]:
    """Six gpt-realtime cells (`--fake`) on two worker processes of 4 sessions each, every run
    pointed at one simulator: (the most sessions it held open at once, the result, the notices, the executor)."""
    seen: list[Executor] = []
    lines: list[str] = []
    async with SimulatorServer(open_benchmark("demo_bench")) as sim:
        campaign = build_spec({"extra": {"base_url": sim.base_url}}, {
            "benchmarks": "demo_bench", "models": "gpt-realtime", "fake": True, "repeats": CELLS, "speed": 20.0,
            "turns": "0-1", "greeting": False, "judge": "none", "concurrency": 4, "workers": 2,
            "provider_caps": [f"openai={cap}"] if cap else None, **spec})
        store = await Store.open(tmp_path / "arena.db")
        bus = EventBus()
        recording = store.start_recording(bus)
        try:
            result = await run_campaign(store, bus, campaign, notice=lines.append, on_executor=seen.append)
            for run_id in result.complete:
                assert await records.cell_state(store, run_id) == ("complete", 2, 2)
        finally:
            bus.close()
            await recording
            await store.close()
    assert len(sim.sessions) >= CELLS and all(s.closed_s is not None for s in sim.sessions)
    return sim.most_open(), result, lines, seen[0]


async def test_a_campaign_capped_at_2_never_holds_more_than_2_sessions_of_the_provider_at_the_fake(tmp_path: Path) -> None:
    most, result, lines, executor = await capped_campaign(tmp_path, 2)
    print(f"\nthe simulator held at most {most} session(s) at once (cap 2, room for 8)")
    assert len(result.complete) == CELLS and not result.incomplete, lines
    assert most == 2  # what the fake saw: the cap reached, never passed
    assert executor.caps.peak["openai"] == 2 and executor.caps.open["openai"] == 0
    assert "at most 2 openai sessions at once" in lines


def test_a_campaign_refuses_a_cap_on_an_unknown_provider_before_anything_runs(tmp_path: Path) -> None:
    async def go() -> None:
        spec = build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime", "fake": True,
                               "provider_caps": ["opena1=2"]})
        async with await Store.open(tmp_path / "arena.db") as store:
            with pytest.raises(CampaignBlocked) as e:
                await run_campaign(store, EventBus(), spec, notice=lambda line: None)
            assert len(e.value.problems) == 1 and "unknown provider 'opena1'" in e.value.problems[0]
            assert await records.list_campaigns(store) == []

    asyncio.run(go())


async def test_a_ray_campaign_on_two_nodes_capped_at_2_never_holds_more_than_2_sessions_at_the_fake(
        tmp_path: Path, ray_cluster) -> None:  # noqa: F811
    """The same over Ray: two worker actors, one per node, four sessions each; the cap is the coordinator's."""
    most, result, lines, executor = await capped_campaign(tmp_path, 2, executor="ray", ray_address=ray_cluster.address)
    print(f"\nover Ray the simulator held at most {most} session(s) at once (cap 2, room for 8)")
    assert len(result.complete) == CELLS and not result.incomplete, lines
    assert most == 2 and executor.caps.peak["openai"] == 2


async def test_the_campaign_screen_header_says_the_caps_it_was_given(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    async with await Store.open(db) as store:
        await records.create(store, "capped", build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime",
                                                              "provider_caps": ["openai=2"]}))
    async with ArenaApp(db).run_test(size=(160, 48)) as pilot:
        screen = await open_campaign(pilot, "capped")
        assert "at most 2 openai sessions at once" in str(screen.query_one("#campaign-title", Static).render())
