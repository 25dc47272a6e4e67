"""Campaigns end to end: the matrix, preflight, a real run through the local executor, show/list.

The runs are real engine runs (simulator and the gpt-realtime protocol fake on 127.0.0.1) in
spawned worker processes, recorded by the real store; completion is read from turn rows.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from arena_tui.campaign import records
from arena_tui.orchestration.orchestrator import preflight, run_campaign
from arena_tui.campaign.spec import WORKERS_PER_CORE, CampaignSpec, SpecError, build_spec, load_toml
from arena_tui.cli import main
from arena_tui.judge import HeuristicJudge
from arena_tui.spine.bus import EventBus
from arena_tui.store import Store

FAKE_MODEL = "gpt-realtime"


def test_matrix_from_flags_and_toml(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('bench = ["demo_bench"]\nmodel = ["sim", "gpt-realtime"]\nrepeats = 3\nspeed = 10.0\nturns = "0-1"\n')
    spec = build_spec(load_toml(f), {"repeats": 2, "models": None})
    assert [(c.benchmark, c.model, c.repeat) for c in spec.cells()] == [
        ("demo_bench", "sim", 1), ("demo_bench", "sim", 2), ("demo_bench", "gpt-realtime", 1),
        ("demo_bench", "gpt-realtime", 2)]
    assert spec.run_settings("sim").turns == [0, 1]
    flags = build_spec({}, {"benchmarks": "a,b", "models": "x", "repeats": 1})
    assert [c.label for c in flags.cells()] == ["a × x #1", "b × x #1"]
    f.write_text('bench = ["demo_bench"]\nmodel = ["sim"]\nrepeat = 2\n')
    with pytest.raises(SpecError, match="unknown key 'repeat'"):
        load_toml(f)


def test_sessions_per_worker_follow_the_speed_unless_given() -> None:
    def spec(**kw):
        return build_spec({}, {"benchmarks": "demo_bench", "models": "sim", **kw})

    assert [spec(speed=s).per_worker for s in (1.0, 4.0, 5.0, 8.0, 10.0, 20.0)] == [2, 2, 2, 2, 1, 1]
    assert spec(speed=1.0).pace_warning is None and spec(speed=16.0).pace_warning is None
    # processes: at 1x up to WORKERS_PER_CORE per core, at high speed one per core; never more than the cells need
    cores = os.cpu_count() or 1
    many = {"repeats": 40}
    assert spec(speed=1.0, **many).local_workers == cores * WORKERS_PER_CORE
    assert spec(speed=20.0, **many).local_workers == cores
    assert spec(speed=1.0, repeats=3).local_workers == 2  # 3 cells, 2 sessions per worker
    assert spec(speed=1.0, workers=3, **many).local_workers == 3  # as given
    assert spec(speed=1.0, workers=cores * WORKERS_PER_CORE).local_workers == 1  # ... but one cell needs one
    assert "1 worker process(es), not the" in spec(workers=2).workers_note and spec(workers=1).workers_note is None
    with pytest.raises(SpecError, match=f"--workers 10000 is more worker processes .* at most {cores * WORKERS_PER_CORE}"):
        spec(workers=10000)
    over = spec(speed=20.0, concurrency=4)
    assert over.per_worker == 4
    assert "4 sessions per worker at speed 20 is 80× real time" in over.pace_warning
    assert "leave --concurrency unset to start at 1" in over.pace_warning
    # one session at 20x is already past what one process keeps pace with: said, too
    for one in (spec(speed=20.0), spec(speed=20.0, concurrency=1)):
        assert "speed 20 is more than one process keeps pace with" in one.pace_warning
        assert not one.pace_warning.startswith("campaign")  # the campaign's output prefixes its lines once
    assert CampaignSpec.from_json(spec(speed=8.0).to_json()).per_worker == 2  # a resumed campaign derives the same


def test_a_campaigns_shape_reads_as_english() -> None:
    from arena_tui.campaign.records import CampaignView

    def shape(models: str) -> str:
        return CampaignView("c", "", build_spec({}, {"benchmarks": "demo_bench", "models": models}), []).shape

    assert shape("sim") == "1 bench × 1 model × 1" and shape("sim,gpt-realtime") == "1 bench × 2 models × 1"


def test_preflight_reports_every_problem_and_blocks(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = tmp_path / "data"
    (data / "noaudio").mkdir(parents=True)
    spec = build_spec({}, {"benchmarks": "demo_bench", "models": f"sim,{FAKE_MODEL}", "speed": 1.0})
    problems = preflight(spec, None).problems
    assert list(problems) == [("demo_bench", FAKE_MODEL)]
    assert any("OPENAI_API_KEY" in p and p.startswith(f"demo_bench × {FAKE_MODEL}: ") for p in problems[("demo_bench", FAKE_MODEL)])
    db = tmp_path / "arena.db"
    code = main(["--db", str(db), "campaign", "run", "--bench", "demo_bench", "--model", f"sim,{FAKE_MODEL}"])
    err = capsys.readouterr().err
    assert code == 2 and "OPENAI_API_KEY" in err and "campaign not started" in err

    async def nothing_recorded() -> None:
        async with await Store.open(db) as store:
            assert await store.list_runs() == [] and await records.list_campaigns(store) == []

    asyncio.run(nothing_recorded())


def test_preflight_glm_prompt_cap_and_missing_audio(tmp_path: Path) -> None:
    import shutil

    from benchmarks.registry import open_benchmark

    src = open_benchmark("demo_bench")
    bench = tmp_path / "long_bench"
    shutil.copytree(src.root, bench)
    (bench / "system_prompt.txt").write_text("x" * 13_000)  # over GLM's 12,000-character cap
    (bench / "audio" / "turn_000.wav").unlink()
    spec = build_spec({}, {"benchmarks": str(bench), "models": "glm-realtime-flash", "fake": True, "speed": 10.0})
    lines = [p for ps in preflight(spec, None).problems.values() for p in ps]
    assert any("12,000" in p and "system prompt" in p for p in lines), lines
    assert any("no audio for turn" in p for p in lines), lines


async def test_small_campaign_local_then_resume(tmp_path: Path) -> None:
    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "repeats": 2, "speed": 10.0,
                           "turns": "0-1", "fake": True, "greeting": False, "workers": 1, "concurrency": 4})
    store = await Store.open(tmp_path / "arena.db")
    bus = EventBus()
    recording = store.start_recording(bus)
    lines: list[str] = []
    result = await run_campaign(store, bus, spec, notice=lines.append)
    assert len(result.complete) == 2 and not result.incomplete
    cid = result.campaign_id
    cells = await records.cells(store, cid)
    for row in cells:
        assert row.status == "done"
        assert await records.cell_state(store, row.run_id) == ("complete", 2, 2)
        run = await store.get_run(row.run_id)
        assert run is not None and run.model == row.cell.model  # an ordinary run
    # interrupt one run by hand: drop its last turn row's completeness by re-pointing the cell at
    # a run recorded with only one turn (a cut run), then resume: only that cell runs again
    victim = cells[1]
    await store.write_rows("UPDATE campaign_cells SET run_id='nosuchrun' WHERE campaign_id=? AND repeat=? AND model=?",
                           [(cid, victim.cell.repeat, victim.cell.model)])
    again = await run_campaign(store, bus, spec, notice=lines.append)  # same spec -> same campaign
    assert again.campaign_id == cid and again.already == 1 and len(again.complete) == 1
    after = {(c.cell.model, c.cell.repeat): c for c in await records.cells(store, cid)}
    assert after[(victim.cell.model, victim.cell.repeat)].run_id not in ("nosuchrun", victim.run_id)
    bus.close()
    await recording
    await store.close()


async def test_quit_campaign_resumes_its_runs_in_place(tmp_path: Path) -> None:
    """Quit mid-campaign (the task cancelled, as Ctrl-C does): re-running the spec resumes each
    unfinished run under its own id at its first unfinished turn, never a second run."""
    from arena_tui.spine.events import TurnEnded

    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "repeats": 2, "speed": 10.0,
                           "turns": "0-2", "fake": True, "greeting": False, "workers": 1, "concurrency": 2})
    store = await Store.open(tmp_path / "arena.db")
    bus = EventBus()
    recording = store.start_recording(bus)
    first_turn = bus.subscribe(lambda e: isinstance(e, TurnEnded) and e.turn_index >= 0)
    lines: list[str] = []
    task = asyncio.create_task(run_campaign(store, bus, spec, notice=lines.append, judge=HeuristicJudge))
    async for _ in first_turn:
        break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await store.flush()
    [cid] = [c[0] for c in await records.list_campaigns(store)]
    before = {(c.cell.repeat): c.run_id for c in await records.cells(store, cid)}
    cut = [r for r in before.values() if (await records.cell_state(store, r))[0] != "complete"]
    assert cut, "the quit left no run unfinished"

    again = await run_campaign(store, bus, spec, notice=lines.append, judge=HeuristicJudge)
    assert again.campaign_id == cid and not again.incomplete
    after = {(c.cell.repeat): c.run_id for c in await records.cells(store, cid)}
    assert after == before  # the same runs, continued
    for run_id in cut:
        assert await records.cell_state(store, run_id) == ("complete", 3, 3)
        kinds = [ev.kind for _, ev in await store.events(run_id, kinds=("run_started", "run_resumed", "run_ended"))]
        # one resumption for the quit, plus one per re-run of turns a busy machine lost pace on
        paced = [line for line in lines if f"run {run_id} " in line and "machine lost pace" in line]
        assert kinds[0] == "run_started" and kinds.count("run_resumed") == 1 + len(paced) and kinds[-1] == "run_ended"
        rows = [r.turn_index for r in await store.turn_results(run_id) if r.turn_index >= 0]
        assert sorted(rows) == [0, 1, 2]
        assert any(f"run {run_id} resumed at turn" in line for line in lines), lines
    for run_id in after.values():  # judged live in the coordinator, the resumed turns too
        judged = await store.latest_judgements(run_id)
        assert {t for t in judged if t >= 0} == {0, 1, 2} and all(not j.error for j in judged.values())
    bus.close()
    await recording
    await store.close()


async def test_a_run_whose_worker_died_ends_on_its_own_timeline_and_goes_on_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed mid-run (as a lost Ray node's are): the coordinator ends the run
    `interrupted` where the run's own timeline stood (audio time: before, the coordinator's wall
    ms since the campaign began, which at 10x put the end before the run's last turns), and the
    run is resumed in place after it, its events in order on one timeline."""
    from arena_tui.orchestration.local import LocalExecutor

    from .campaign_runners import DIE_ONCE_MARK

    monkeypatch.setenv(DIE_ONCE_MARK, str(tmp_path / "died"))

    def factory(spec, bus, on_lost, on_done):
        return LocalExecutor(bus, on_lost=on_lost, on_done=on_done, workers=1, per_worker=1, speed=spec.speed,
                             runner="tests.campaign_runners:dies_once_after_a_turn")

    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "speed": 10.0, "turns": "0-2",
                           "greeting": False, "judge": "none"})
    store = await Store.open(tmp_path / "arena.db")
    bus = EventBus()
    recording = store.start_recording(bus)
    lines: list[str] = []
    try:
        result = await run_campaign(store, bus, spec, notice=lines.append, executor_factory=factory)
        assert len(result.complete) == 1, lines
        [run_id] = result.complete
        assert (tmp_path / "died").exists() and any(f"run {run_id} interrupted, worker lost" in ln for ln in lines), lines
        timeline = await store.events(run_id, kinds=("run_started", "run_resumed", "run_ended", "turn_started", "turn_ended"))
        kinds = [ev.kind for _, ev in timeline if ev.kind.startswith("run_")]
        assert kinds[:4] == ["run_started", "run_ended", "run_resumed", "run_ended"], kinds
        t_ms = [ev.t_ms for _, ev in timeline]
        assert t_ms == sorted(t_ms), [(ev.kind, ev.turn_index, ev.t_ms) for _, ev in timeline]
        assert await records.cell_state(store, run_id) == ("complete", 3, 3)
    finally:
        bus.close()
        await recording
        await store.close()


def test_the_documented_toml_spec_is_valid(tmp_path: Path) -> None:
    """docs/campaigns.md's example spec loads and every cell's run settings validate."""
    doc = (Path(__file__).parent.parent / "docs" / "campaigns.md").read_text(encoding="utf-8")
    toml = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "spec.toml").write_text(toml, encoding="utf-8")
    spec = build_spec(load_toml(tmp_path / "spec.toml"), {})
    assert spec.repeats == 10 and spec.judge == "openai" and len(spec.cells()) == 2 * 2 * 10
    for model in spec.models:
        assert spec.run_settings(model).rotation.max_age_s == 600
