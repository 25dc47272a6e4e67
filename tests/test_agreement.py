"""One truth on every surface: one constructed set of runs, its figures read from each place a user
compares them, and they must be equal (and equal to the counts worked out by hand).

The runs (tests/compare_runs.py): gpt-realtime on mini_bench three times, recorded as one campaign
— r1 completed, its turn 0 re-judged with an error (the first verdict stands); r2 interrupted after
three turns, its turn 2's judge failed and turn 3 never ran; r3 at speed 20 (its latency is not
comparable). By hand, strict turn pass: r1 3/4 (turn 2 fails state tracking), r2 1/2 (wrong call;
its judge error and the turn it never played are counted apart), r3 3/4; kb_grounding r1 4/4,
r2 2/2, r3 4/4.

Surfaces: the report's files (run_results.csv, model_summary.csv, consistency by model), the
leaderboard, `campaign show`, the campaign screen, the runs list (screen and `arena-tui runs`),
the consistency screen, the run header, and the summary a headless run or `judge` prints.
"""

from __future__ import annotations

import asyncio
import csv
import re
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable

from arena_tui.app import ArenaApp
from arena_tui.campaign import records
from arena_tui.campaign.spec import Cell, build_spec
from arena_tui.cli import main
from arena_tui.compare.stored import load_runs, run_tally
from arena_tui.judge.summary import summarize
from arena_tui.run_view import RunState
from arena_tui.screens.campaigns import CampaignScreen
from arena_tui.screens.consistency import ConsistencyScreen
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.runs import RunsScreen, apart_of
from arena_tui.spine.times import duration_text
from arena_tui.store import Store
from arena_tui.widgets.run_header import describe, figures_text
from tests.compare_runs import MINI, benchmark_for, record_scenario, write_data
from tests.pilot import until

CAMPAIGN = "agree01"
RUNS = ["r1", "r2", "r3"]
HAND_STRICT = {"r1": (3, 4), "r2": (1, 2), "r3": (3, 4)}
HAND_KB = {"r1": (4, 4), "r2": (2, 2), "r3": (4, 4)}
HAND_APART = {"r1": "", "r2": "1 not played · 1 judge error", "r3": ""}
KB = "kb_grounding"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("agree")
    db, data = root / "arena.db", write_data(root / "data")

    async def go() -> None:
        await record_scenario(db)
        spec = build_spec({}, {"benchmarks": "mini_bench", "models": "gpt-realtime", "repeats": 3})
        async with await Store.open(db) as store:
            await records.create(store, CAMPAIGN, spec)
            for repeat, run_id in enumerate(RUNS, 1):
                await records.set_cell(store, CAMPAIGN, Cell("mini_bench", "gpt-realtime", repeat), status="done",
                                       run_id=run_id)

    asyncio.run(go())
    return db, data


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def report(recorded: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`arena-tui report CAMPAIGN DIR`: the unit people report."""
    db, data = recorded
    out = tmp_path_factory.mktemp("report")
    assert main(["--db", str(db), "--data", str(data), "report", CAMPAIGN, str(out)]) == 0
    return out


def test_the_hand_counts_hold_in_the_one_tally(recorded) -> None:
    async def go() -> dict[str, tuple[tuple[int, int], tuple[int, int]]]:
        async with await Store.open(recorded[0]) as store:
            runs = await load_runs(store, RUNS, benchmark_for)
        return {r.row.run_id: (run_tally(r).strict, run_tally(r).dimensions[KB]) for r in runs}

    assert asyncio.run(go()) == {r: (HAND_STRICT[r], HAND_KB[r]) for r in RUNS}


def test_report_files_say_the_hand_counts(report: Path) -> None:
    rows = {r["run_id"]: r for r in read_csv(report / "run_results.csv")}
    assert set(rows) == set(RUNS)  # the campaign's runs, each once
    for r in RUNS:
        strict = (int(rows[r]["turn_pass_strict_passes"]), int(rows[r]["turn_pass_strict_applicable"]))
        assert strict == HAND_STRICT[r], r
    (model,) = read_csv(report / "model_summary.csv")
    assert (int(model["turn_pass_strict_passes"]), int(model["turn_pass_strict_applicable"])) == (7, 10)
    assert (int(model["turns_not_played_total"]), int(model["turns_judge_error_total"])) == (1, 1)
    # latency at speed 20 is not comparable: only r1's four and r2's two replies are in the figure
    assert int(model["voice_to_voice_n"]) == 6


def test_campaign_show_says_the_reports_counts(recorded, capsys) -> None:
    assert main(["--db", str(recorded[0]), "--data", str(recorded[1]), "campaign", "show", CAMPAIGN]) == 0
    out = capsys.readouterr().out
    for repeat, r in enumerate(RUNS, 1):
        (row,) = [ln for ln in out.splitlines() if ln.startswith(f"mini_bench × gpt-realtime #{repeat} ")]
        m = re.search(r"\d+% (\d+)/(\d+)", row)  # as the campaign screen says it: `75% 3/4`
        assert m and (int(m[1]), int(m[2])) == HAND_STRICT[r], row
        assert HAND_APART[r] in row, row


def test_the_judges_own_summary_says_the_reports_counts(recorded) -> None:
    """What a headless run (and `judge`, and the export's summary) prints at its end."""
    async def go() -> dict[str, tuple[int, int]]:
        out = {}
        async with await Store.open(recorded[0]) as store:
            for r in RUNS:
                run = await store.get_run(r)
                s = summarize(MINI, await store.turn_results(r), await store.judgements(r), run.turn_indices)
                out[r] = (s.strict.passes, s.strict.denominator)
                assert (s.dimensions[KB].passes, s.dimensions[KB].denominator) == HAND_KB[r], r
        return out

    assert asyncio.run(go()) == HAND_STRICT


def test_runs_list_and_run_header_say_one_duration_and_progress(recorded, capsys) -> None:
    assert main(["--db", str(recorded[0]), "runs"]) == 0
    listed = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()[1:]}

    async def events(r: str) -> list:
        async with await Store.open(recorded[0]) as store:
            return [ev for _, ev in await store.events(r)]

    for r in RUNS:
        state = RunState(r)
        state.apply_all(asyncio.run(events(r)))
        header = describe(state, mode="stored").plain
        done = f"{state.turns_done}/{state.turns_total}"
        assert done in listed[r] and done in header, (listed[r], header)
        figures = figures_text(state).plain  # the run screen's line under its tables
        assert HAND_APART[r] in listed[r] and HAND_APART[r] in figures, (listed[r], figures)
        strict = f"{HAND_STRICT[r][0]}/{HAND_STRICT[r][1]}"
        assert strict in listed[r] and f"strict pass {strict}" in figures, (listed[r], figures)
        elapsed = duration_text(state.elapsed_ms())
        assert f"elapsed {elapsed}" in header and f"  {elapsed}" in listed[r], (listed[r], header)


def _plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


async def test_screens_say_the_reports_counts(recorded, report: Path) -> None:
    """The runs list, the campaign screen, the leaderboard and its consistency drill-down."""
    rows = {r["run_id"]: r for r in read_csv(report / "run_results.csv")}
    by_turn = {int(c["turn"]): c for c in read_csv(report / "consistency_turn_summary_by_model.csv")
               if c["model_name"] == "gpt-realtime"}
    assert sorted(by_turn) == [0, 1, 2, 3]
    app = ArenaApp(recorded[0], recorded[1])
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        for r in RUNS:  # the runs list's pass rates: the report's per-dimension counts
            rates = app.screen.rows[r]["rates"]
            assert rates[KB] == (int(rows[r][f"{KB}_passes"]), int(rows[r][f"{KB}_applicable"])) == HAND_KB[r]
            assert app.screen.rows[r]["tally"].strict == HAND_STRICT[r]
            assert apart_of(app.screen.rows[r]) == HAND_APART[r]

        app.push_screen(CampaignScreen(CAMPAIGN))
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and app.screen.view is not None)
        table = app.screen.query_one(DataTable)
        shown = [" ".join(_plain(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        for repeat, r in enumerate(RUNS, 1):
            (line,) = [s for s in shown if s.startswith(f"mini_bench × gpt-realtime #{repeat}")]
            assert f" {HAND_STRICT[r][0]}/{HAND_STRICT[r][1]}" in line and HAND_APART[r] in line, line

        app.pop_screen()
        await pilot.pause()
        app.push_screen(LeaderboardScreen(benchmark="mini_bench"))
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        board = app.screen.loaded.board
        row = board.row("gpt-realtime", "mini_bench")
        assert (row.strict.passes, row.strict.n) == (7, 10)  # r6 (heuristic judge) is its own row
        assert row.v2v.n == 6
        # consistency: per turn, the repeats' verdicts as the report's consistency files say them
        turns = {c.turn_index: c for c in row.consistency}
        for t, c in by_turn.items():
            assert turns[t].pass_runs == int(c["pass_runs"]), t
            assert turns[t].flips == int(c["status_changes"]), t
        board_screen = app.screen
        table = board_screen.query_one("#board", DataTable)
        table.move_cursor(row=[board_screen.row_key(x) for x in board_screen.shown].index("gpt-realtime\x1fmini_bench"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConsistencyScreen))
        drill = app.screen.query_one("#drill", DataTable)
        for t, c in by_turn.items():
            flips = _plain(drill.get_row(str(t))[3])
            assert flips == c["status_changes"], (t, flips)


async def test_the_campaign_screen_writes_the_campaigns_report(recorded, report: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """`R` on a campaign: the same report `arena-tui report CAMPAIGN DIR` writes, in the exports folder."""
    monkeypatch.setenv("ARENA_TUI_EXPORTS", str(tmp_path))
    app = ArenaApp(recorded[0], recorded[1])
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.push_screen(CampaignScreen(CAMPAIGN))
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and app.screen.view is not None)
        await pilot.press("R")
        written = tmp_path / f"campaign-{CAMPAIGN}-report" / "run_results.csv"
        await until(pilot, lambda: written.is_file() and (written.parent / "report.html").is_file())
    assert read_csv(written) == read_csv(report / "run_results.csv")
