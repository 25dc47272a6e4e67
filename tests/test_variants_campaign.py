"""A campaign over acoustic conditions and reasoning efforts: `--condition clean,telephony,noise=10
--effort low,high` against the simulator makes one cell per (condition, effort), each run stores
its condition and effort, and the leaderboard and the report have one row per (model, condition,
effort). Real worker processes, the real store, the offline judge."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest

from arena_tui.campaign import records
from arena_tui.campaign.spec import build_spec, cell_condition, load_toml, model_parts
from arena_tui.cli import main
from arena_tui.compare.leaderboard import POOLED, build_leaderboard
from arena_tui.compare.stored import load_runs
from arena_tui.spine.audio import load_pcm16_bytes
from arena_tui.spine.conditions import babble_voices, heard, parse_condition
from arena_tui.store import Store
from benchmarks.registry import load_benchmark

CONDITIONS = ("clean", "telephony", "noise=10")
EFFORTS = ("low", "high")


def test_a_condition_by_effort_campaign_gives_one_row_each(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    code = main(["--db", str(db), "campaign", "run", "--bench", "demo_bench", "--model", "sim", "--speed", "15",
                 "--turns", "1", "--no-greeting", "--judge", "heuristic", "--workers", "1",
                 "--condition", ",".join(CONDITIONS), "--effort", ",".join(EFFORTS)])
    out = capsys.readouterr().out
    assert code == 0, out
    demo = load_benchmark("demo_bench")

    async def check() -> str:
        async with await Store.open(db) as store:
            ((cid, _, spec),) = await records.list_campaigns(store)
            assert (spec.conditions, spec.efforts) == (CONDITIONS, EFFORTS)
            rows = await records.cells(store, cid)
            assert len(rows) == 6
            seen = set()
            for row in rows:
                run = await store.get_run(row.run_id)
                condition, effort = run.config["condition"], run.config["effort"]
                assert (condition, effort) == (cell_condition(row.cell.benchmark), model_parts(row.cell.model)[1])
                seen.add((condition, effort))
                # the user track stored is the turn as the condition made it (what the model heard)
                played = await store.audio(run.run_id, 1, "user")
                want = heard(load_pcm16_bytes(demo.audio_path(demo.turn(1)), 24000), 24000, parse_condition(condition),
                             run.config["seed"], 1, babble=lambda: babble_voices(demo, 1, 24000))
                assert played is not None and bytes(played.pcm).find(want) >= 0, condition
            assert seen == {(c, e) for c in CONDITIONS for e in EFFORTS}
            runs = await load_runs(store, [r.run_id for r in rows], lambda name: load_benchmark(name))
            board = build_leaderboard(runs)
            groups = sorted(r.model for r in board.rows if r.benchmark == "demo_bench")
            assert groups == sorted(f"sim [simulator, heuristic judge, {'' if c == 'clean' else c + ', '}effort={e}]"
                                    for c in CONDITIONS for e in EFFORTS), groups
            assert not [r for r in board.rows if r.benchmark == POOLED]  # (one benchmark: no pooled rows)
            return cid

    cid = asyncio.run(check())
    assert main(["--db", str(db), "campaign", "show", cid]) == 0
    shown = capsys.readouterr().out
    assert "demo_bench × clean, telephony, noise=10 × sim × effort low, high × 1" in shown
    assert "demo_bench [telephony] × sim [effort=high] #1" in shown
    assert main(["--db", str(db), "runs"]) == 0  # each run's line says its condition and effort
    listed = capsys.readouterr().out
    for c in CONDITIONS:
        for e in EFFORTS:
            assert f"sim [simulator] ({'' if c == 'clean' else c + ', '}effort={e})" in listed, listed
    report = tmp_path / "report"
    assert main(["--db", str(db), "report", cid, str(report)]) == 0
    with (report / "model_summary.csv").open(newline="") as f:
        summary = [r for r in csv.DictReader(f) if r["benchmark_name"] == "demo_bench"]
    assert sorted((r["condition"], r["effort"]) for r in summary) == sorted((c, e) for c in CONDITIONS for e in EFFORTS)
    with (report / "run_results.csv").open(newline="") as f:
        assert sorted((r["condition"], r["effort"]) for r in csv.DictReader(f)) == \
            sorted((c, e) for c in CONDITIONS for e in EFFORTS)


def test_campaign_spec_axes_from_toml_and_flags(tmp_path: Path) -> None:
    toml = tmp_path / "spec.toml"
    toml.write_text('bench = ["demo_bench"]\nmodel = ["sim"]\ncondition = ["clean", "Noise=10:pink", "noise=10"]\n'
                    'effort = "low,high"\n[config]\nseed = 9\n')
    spec = build_spec(load_toml(toml), {})
    assert spec.conditions == ("clean", "noise=10") and spec.efforts == ("low", "high")  # one cell per condition as stored
    assert [c.label for c in spec.cells()][:2] == ["demo_bench × sim [effort=low] #1", "demo_bench × sim [effort=high] #1"]
    settings = spec.cell_settings("demo_bench [noise=10]", "sim [effort=high]")
    assert (settings.condition.label, settings.effort, settings.seed) == ("noise=10", "high", 9)
    flags = build_spec(load_toml(toml), {"conditions": "telephony"})
    assert flags.conditions == ("telephony",)
    plain = build_spec({}, {"benchmarks": "demo_bench", "models": "sim"})
    assert "conditions" not in plain.to_json() and "efforts" not in plain.to_json()  # the JSON it always was
    (tmp_path / "own.toml").write_text('bench = ["demo_bench"]\nmodel = ["sim"]\n[config]\ncondition = "telephony"\n')
    with pytest.raises(Exception, match=r"\[config\] condition: a campaign key"):
        load_toml(tmp_path / "own.toml")
