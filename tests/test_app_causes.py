"""Why turns failed, on screen: the turn table's causes column where its width has room, the
selected turn's causes under the tables at any width, each cause in the turn detail with who
decided it, the leaderboard's failure mix (`m`), the consistency view's causes of each failing
repeat; and the run's latency over its turns (`l`); the notice when a run ends elsewhere.

Every cause shown is the one rule's (`judge.causes`, as the leaderboard and `arena-tui search`
read it through `StoredRun.causes`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from arena_tui.app import ArenaApp
from arena_tui.compare.stored import load_runs
from arena_tui.judge.causes import causes_text
from arena_tui.messages import RunFinished
from arena_tui.screens.consistency import ConsistencyScreen
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.notices import BELL_ENV
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.screens.turn_detail import TurnDetailScreen
from arena_tui.spine.causes import CAUSES as MEANING
from arena_tui.spine.causes import label
from arena_tui.store import Store
from arena_tui.widgets.latency_chart import TurnLatencyChart
from arena_tui.widgets.transcript import TranscriptView
from arena_tui.widgets.turn_table import TurnTable, causes_cell
from tests.pilot import until
from tests.snapshots.fixture_run import load_fixture_db
from tests.test_app_flows import text_of

from .compare_runs import benchmark_for, record_scenario, write_data


@pytest.fixture
async def demo(tmp_path: Path) -> tuple[Path, str, dict[int, tuple[str, ...]]]:
    """The demo recording, and its causes as the leaderboard counts them."""
    db = tmp_path / "arena.db"
    run_id = await load_fixture_db(db)
    from benchmarks.registry import load_benchmark

    async with await Store.open(db) as store:
        (run,) = await load_runs(store, [run_id], lambda _: load_benchmark("demo_bench"))
    assert run.causes  # its faults failed turns
    return db, run_id, run.causes


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_causes_in_the_turn_table_under_it_and_in_the_detail(demo, size) -> None:
    db, run_id, causes = demo
    turn, why = next(iter(causes.items()))
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        replay = app.screen
        table = replay.query_one(TurnTable)
        await until(pilot, lambda: replay.state.causes() == causes)  # the run screen counts them as the leaderboard
        if size[0] >= 160:  # room for the column: every failed turn's causes (whole, or the first and how many more)
            assert "causes" in table.shown_columns
            width = table.columns["causes"].width
            for t in replay.state.turns:
                cell = str(table.get_cell(str(t), "causes"))
                assert cell == causes_cell(causes.get(t, ()), width).plain, (t, cell)
                assert not causes.get(t) or cell.startswith(label(causes[t][0])[: width - 4])
        else:  # no room: named on the border, said for the selected turn under the tables
            assert "causes" not in table.shown_columns and "causes" in str(table.border_subtitle)
        table.move_cursor(row=table.get_row_index(str(turn)))
        await pilot.pause()
        line = text_of(replay.query_one("#run-filter"))
        assert f"turn {turn}: {label(why[0])}" in line or f"t{turn}: {label(why[0])}" in line, line
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        title = text_of(app.screen.query_one("#detail-title"))
        for cause in why:
            assert f"cause  {MEANING[cause]}" in title, title
        assert "(decided by" in title


async def test_l_shows_the_runs_latency_over_its_turns_in_the_transcripts_place(demo) -> None:
    db, run_id, _ = demo
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        replay = app.screen
        chart, transcript = replay.query_one(TurnLatencyChart), replay.query_one(TranscriptView)
        assert not chart.display and transcript.display
        await pilot.press("l")
        await pilot.pause()
        assert chart.display and not transcript.display
        title = str(chart.border_title)
        assert title.startswith("voice-to-voice per turn, p50 ") and "15×: not comparable" in title, title
        assert "barge-in, no latency: turn 0" in str(chart.border_subtitle)  # the demo's barge-in fault
        await pilot.press("l")
        assert transcript.display and not chart.display


async def test_leaderboard_failure_mix_and_consistency_say_why_turns_failed(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    await record_scenario(db)
    app = ArenaApp(db, write_data(tmp_path / "data"))
    async with app.run_test(size=(200, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        board = app.screen
        figures = [c.key for c in board.columns]
        await pilot.press("m")
        keys = [c.key for c in board.columns]
        assert keys[:3] == ["model", "benchmark", "failed"] and all(k.startswith("cause:") for k in keys[3:])
        row = board.loaded.board.row("gpt-realtime", "mini_bench")
        assert row is not None and row.causes
        table = board.query_one("#board", DataTable)
        for cause, n in row.causes.items():
            assert str(table.get_cell(board.row_key(row), f"cause:{cause}")).startswith(str(n))
        assert "failure mix" in str(board.query_one("#board-status").render())
        await pilot.press("m")
        assert [c.key for c in board.columns] == figures
        board.query_one("#board", DataTable).move_cursor(row=[board.row_key(r) for r in board.shown].index(board.row_key(row)))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConsistencyScreen))
        drill = app.screen.query_one("#drill", DataTable)
        async with await Store.open(db) as store:
            runs = {r.run_id: r for r in await load_runs(store, [f.run.run_id for f in row.runs], benchmark_for)}
        for c in row.consistency:
            want = "; ".join(f"#{f.repeat} {causes_text(runs[f.run.run_id].causes.get(c.turn_index, ()))}"
                             for f, s in zip(row.runs, c.statuses, strict=True) if s == "fail") or "–"
            assert str(drill.get_cell(str(c.turn_index), "why")) == want


async def test_a_run_that_ends_while_another_screen_is_on_top_says_so_with_the_bell_if_asked(demo, monkeypatch) -> None:
    db, run_id, _ = demo
    monkeypatch.setenv(BELL_ENV, "1")
    app = ArenaApp(db)
    rang: list[bool] = []
    monkeypatch.setattr(app, "bell", lambda: rang.append(True))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.post_message(RunFinished("elsewhere-run", "failed", "no turn got an answer"))
        await until(pilot, lambda: any("elsewhere-run" in str(n.message) for n in app._notifications))
        note = next(n for n in app._notifications if "elsewhere-run" in str(n.message))
        assert note.title == "run failed" and note.severity == "error" and "no turn got an answer" in str(note.message)
        assert rang == [True]
        app.open_replay(run_id)  # its own screen on top: nothing to say, it shows
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        app.post_message(RunFinished(run_id, "completed", None))
        await pilot.pause(0.2)
        assert not any(run_id in str(n.message) for n in app._notifications) and rang == [True]
