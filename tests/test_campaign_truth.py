"""One truth about a campaign: `campaign show` tells the report's pass rate for the same run, and
a cell is complete exactly when neither `campaign resume` nor `arena-tui resume` would replay it.

The runs are real engine runs against the simulator (with its faults) or real event streams
written through the real store; the numbers are read from the real CLI's output.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import get_args

import pytest

from arena_tui.campaign import records
from arena_tui.orchestration.orchestrator import continue_cell
from arena_tui.campaign.spec import Cell, build_spec
from arena_tui.cli import main
from arena_tui.orchestration.resume import ResumeError, plan_resume
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import FINISHED, RunEnded, RunStarted, TurnEnded, TurnResult, TurnStatus
from arena_tui.store import Store
from benchmarks.registry import load_benchmark

CAMPAIGN = "truth01"
CELL = Cell("demo_bench", "sim", 1)


async def record_fault_run(db: Path, run_id: str, faults: str) -> None:
    """demo_bench turns 0-1 against the simulator with `faults`, recorded, judged by nobody, and
    recorded as the only cell of campaign CAMPAIGN (what the orchestrator writes)."""
    from arena_tui.spine.settings import RunSettings
    from runners.engine import run_benchmark

    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "speed": 20.0, "turns": "0-1",
                           "greeting": False})
    async with await Store.open(db) as store:
        await records.create(store, CAMPAIGN, spec)
        bus = EventBus()
        recording = store.start_recording(bus)
        config = RunSettings(model="sim", speed=20.0, turns=[0, 1], faults=faults, greeting={"enabled": False})
        await run_benchmark(load_benchmark("demo_bench"), config, bus, run_id)
        bus.close()
        await recording
        await records.set_cell(store, CAMPAIGN, CELL, status="done", run_id=run_id)


def shown_strict(db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, int]:
    """(passed, due) from `campaign show`'s strict pass column."""
    assert main(["--db", str(db), "campaign", "show", CAMPAIGN]) == 0
    out = capsys.readouterr().out
    [row] = [line for line in out.splitlines() if line.startswith(CELL.label)]
    m = re.search(r"\d+% (\d+)/(\d+)", row)
    assert m, out
    return int(m[1]), int(m[2])


def reported_strict(db: Path, run_id: str, dest: Path, capsys: pytest.CaptureFixture[str],
                    target: str | None = None) -> tuple[int, int]:
    """(passed, due) from the run's row of `report`'s summary.md ("50.0% [9–91] (1/2)"); `target`:
    what the report is asked for (default the run id)."""
    assert main(["--db", str(db), "report", target or run_id, str(dest)]) == 0
    capsys.readouterr()
    [row] = [line for line in (dest / "summary.md").read_text().splitlines() if f"| {run_id} |" in line]
    m = re.search(r"\((\d+)/(\d+)\)", row)
    assert m, row
    return int(m[1]), int(m[2])


def test_campaign_show_tells_the_reports_pass_rate_for_a_fault_run(tmp_path: Path, capsys) -> None:
    """A disconnect cuts turn 1's first reply (it is retried in a new session). Only turn 0 is
    judged: the report and `campaign show` count the judged turn (x/1) and say the unjudged turn 1
    apart ("1 not judged"), never as a failure. Then a later take of turn 1 loses pace: neither
    that row nor turn 1's earlier judgement counts anywhere (x/1, "1 lost pace")."""
    db, run_id = tmp_path / "arena.db", "truth-run"
    asyncio.run(record_fault_run(db, run_id, "1:disconnect"))
    assert main(["--db", str(db), "judge", run_id, "--turn", "0", "--judge", "heuristic", "--no-phase2"]) == 0
    capsys.readouterr()

    shown = shown_strict(db, capsys)
    assert shown == reported_strict(db, run_id, tmp_path / "report1", capsys)
    assert shown[1] == 1  # the judged turn; the unjudged one is said apart
    assert "1 not judged" in (tmp_path / "report1" / "summary.md").read_text()

    # turn 1 judged, then played again and lost pace: its judgement is stale, the turn counts nowhere
    assert main(["--db", str(db), "judge", run_id, "--turn", "1", "--judge", "heuristic", "--no-phase2"]) == 0
    capsys.readouterr()

    async def lose_pace_on_turn_1() -> None:
        async with await Store.open(db) as store:
            [take] = [r for r in await store.turn_results(run_id) if r.turn_index == 1]
            store.submit(TurnEnded(run_id=run_id, t_ms=1e7, turn_index=1,
                                   result=take.model_copy(update={"status": "lost_pace"})))
            await store.flush()
            assert [r.status for r in await store.turn_results(run_id) if r.turn_index == 1] == ["lost_pace"]
            [view] = (await records.campaign_view(store, CAMPAIGN)).cells
            assert 1 not in view.tally.rows and view.state == "interrupted"

    asyncio.run(lose_pace_on_turn_1())
    shown = shown_strict(db, capsys)
    assert shown == reported_strict(db, run_id, tmp_path / "report2", capsys)
    assert shown[1] == 1 and "1 lost pace" in (tmp_path / "report2" / "summary.md").read_text()
    # a campaign is the unit people report: its id (or a prefix) names its runs; `show` says so
    assert shown == reported_strict(db, run_id, tmp_path / "report3", capsys, target=CAMPAIGN[:6])  # "truth0": no run begins so
    assert main(["--db", str(db), "campaign", "show", CAMPAIGN]) == 0
    assert f"its report: arena-tui report {CAMPAIGN} DIR" in capsys.readouterr().out


async def _decisions(tmp_path: Path, status: str) -> tuple[str, int | None, int | None]:
    """For a run whose turn 0 is ok and turn 1 ended `status`: the campaign's view of the cell
    (`cell_state`), where `campaign resume` goes on (None: the cell is skipped as complete) and
    where `arena-tui resume` goes on (None: it refuses, the run is complete)."""
    bench = load_benchmark("demo_bench")
    run_id = f"run-{status}"
    async with await Store.open(tmp_path / f"{status}.db") as store:
        store.submit(RunStarted(run_id=run_id, t_ms=0.0, benchmark="demo_bench", model="sim", provider="sim",
                                simulator=True, turn_indices=[0, 1], config={"model": "sim"}))
        for i, st in ((0, "ok"), (1, status)):
            store.submit(TurnEnded(run_id=run_id, t_ms=100.0 * (i + 1), turn_index=i,
                                   result=TurnResult(turn_index=i, status=st, user_text=bench.turns[i].input)))
        store.submit(RunEnded(run_id=run_id, t_ms=300.0, status="interrupted"))
        await store.flush()
        state, _, _ = await records.cell_state(store, run_id)
        campaign_from = None
        if state != "complete":  # what run_campaign does with a cell that is not complete
            again, resume, _ = await continue_cell(store, bench, run_id)
            assert again == run_id and resume is not None
            campaign_from = resume["from_turn"]
        try:
            cli_from: int | None = (await plan_resume(store, run_id, bench)).from_turn
        except ResumeError as e:
            assert "complete" in str(e)
            cli_from = None
        return state, campaign_from, cli_from


@pytest.mark.parametrize("status", get_args(TurnStatus))
def test_campaign_and_resume_agree_on_what_is_finished(tmp_path: Path, status: str) -> None:
    """Every recorded turn status: a cell `campaign resume` skips is one `arena-tui resume`
    calls complete, and both replay the same turn otherwise (an `error` turn is played again)."""
    state, campaign_from, cli_from = asyncio.run(_decisions(tmp_path, status))
    assert campaign_from == cli_from
    assert (state == "complete") == (status in FINISHED) == (cli_from is None)
    if status in ("error", "interrupted", "lost_pace"):
        assert cli_from == 1
