"""A person's verdict given on screen (the turn detail's `v`) changes every figure that counts the
turn, identically on every surface: the turn table and the line under it, the run header, the turn
detail, the runs list, the leaderboard and compare; withdrawn, every one is the judge's again.

The runs are tests/snapshots' real recordings, in the real store, shown by the real app; what each
surface must say is counted from the store by the one rule (`compare.leaderboard.run_tally`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Button, DataTable, Input, OptionList, Static

from arena_tui.app import ArenaApp
from arena_tui.compare.load import stored_tallies
from arena_tui.screens.compare import CompareScreen
from arena_tui.screens.dialogs.review import ReviewDialog
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.screens.turn_detail import TurnDetailScreen
from arena_tui.store import Store
from arena_tui.widgets.turn_table import TurnTable
from tests.pilot import until
from tests.snapshots.fixture_run import fixture_events, load_layout_db
from tests.test_app_flows import text_of

TURN = 2  # passes by the judge's verdict in the demo recording
REASON = "it never said which slot it booked"


@pytest.fixture
async def layout(tmp_path: Path) -> tuple[Path, str, str]:
    db = tmp_path / "arena.db"
    long_id = await load_layout_db(db)
    return db, fixture_events()[0].run_id, long_id


def plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


async def strict_of(db: Path, run_id: str) -> str:
    """`passes/turns` of the run's strict pass, counted from the store by the one rule."""
    async with await Store.open(db) as store:
        tally = (await stored_tallies(store, [run_id], None))[run_id]
    passes, n = tally.strict
    return f"{passes}/{n}"


async def open_turn(pilot, app: ArenaApp, run_id: str, turn: int) -> TurnDetailScreen:
    app.open_replay(run_id)
    await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
    table = app.screen.query_one(TurnTable)
    table.move_cursor(row=table.get_row_index(str(turn)))
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
    return app.screen


async def review_through_the_dialog(pilot, app: ArenaApp, *, withdraw: bool = False) -> None:
    """`v` in the turn detail: knowledge base set to fail (enter cycles the judge's → pass → fail), a reason, record."""
    await pilot.press("v")
    await until(pilot, lambda: isinstance(app.screen, ReviewDialog))
    dialog = app.screen
    if not withdraw:
        dims = dialog.query_one("#review-dims", OptionList)
        assert str(dims.get_option_at_index(0).id) == "kb_grounding"
        await pilot.press("enter", "enter")
    dialog.query_one("#review-reason", Input).value = REASON if not withdraw else "the judge was right"
    if withdraw:
        dialog.query_one("#withdraw", Button).press()
    else:
        dialog.query_one("#review-reason", Input).focus()
        await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, ReviewDialog))


async def surfaces(pilot, app: ArenaApp, db: Path, run_id: str, long_id: str) -> dict[str, str]:
    """What each surface says of the run now: runs list, run line, turn table, leaderboard, compare."""
    seen: dict[str, str] = {}
    detail = app.screen
    assert isinstance(detail, TurnDetailScreen)
    seen["detail"] = text_of(detail.query_one("#detail-title")) + text_of(detail.query_one("#detail-judgement"))
    await pilot.press("escape")
    replay = app.screen
    assert isinstance(replay, ReplayScreen)
    await pilot.pause()
    seen["turn table"] = plain(replay.query_one(TurnTable).get_cell(str(TURN), "verdict"))
    seen["run line"] = text_of(replay.query_one("#run-filter"))
    seen["header"] = str(replay.query_one("#run-header").render())
    await pilot.press("escape")
    runs = app.screen
    assert isinstance(runs, RunsScreen)
    runs.load()
    expected = await strict_of(db, run_id)
    table = runs.query_one("#runs", DataTable)
    await until(pilot, lambda: expected in plain(table.get_cell(run_id, "strict")))
    seen["runs list"] = plain(table.get_cell(run_id, "strict"))
    await pilot.press("L")
    await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
    board = app.screen
    row = next(r for r in board.shown if r.benchmark != "all" and any(f.run.run_id == run_id for f in r.runs))
    seen["leaderboard"] = plain(board.query_one("#board", DataTable).get_cell(board.row_key(row), "strict"))
    seen["leaderboard model"] = plain(board.query_one("#board", DataTable).get_cell(board.row_key(row), "model"))
    seen["leaderboard notes"] = text_of(board.query_one("#board-notes"))
    await pilot.press("escape")
    app.push_screen(CompareScreen(run_ids=(run_id, long_id)))
    await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.turns)
    pair = app.screen
    seen["compare"] = plain(pair.query_one("#pair", DataTable).get_cell(str(TURN), "A"))
    seen["compare title"] = str(pair.query_one("#pair-title", Static).render())
    await pilot.press("escape")
    return seen


async def test_a_persons_verdict_changes_every_figure_that_counts_the_turn_on_every_surface(layout, monkeypatch) -> None:
    db, run_id, long_id = layout
    monkeypatch.setenv("USER", "tester")
    judge_only = await strict_of(db, run_id)
    app = ArenaApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        await open_turn(pilot, app, run_id, TURN)
        await review_through_the_dialog(pilot, app)
        detail = app.screen
        await until(pilot, lambda: detail.state.turns[TURN].human == ("kb_grounding",))
        await pilot.pause()
        reviewed = await strict_of(db, run_id)
        assert reviewed != judge_only  # the turn passed: with a fail it no longer does
        seen = await surfaces(pilot, app, db, run_id, long_id)
        assert f"✗ knowledge base ✎ tester: {REASON}" in seen["detail"], seen["detail"]
        assert "a person's verdict (knowledge base fail) by tester" in seen["detail"], seen["detail"]
        assert "the judge said of knowledge base: pass" in seen["detail"], seen["detail"]
        assert seen["turn table"].startswith("FAIL✎"), seen["turn table"]
        assert f"strict pass {reviewed}" in seen["run line"], seen["run line"]
        assert "1 verdict on 1 turn is a person's, not the judge's" in seen["run line"], seen["run line"]
        assert "✎1" in seen["header"], seen["header"]
        assert reviewed in seen["runs list"] and reviewed in seen["leaderboard"], seen
        assert "✎1" in seen["leaderboard model"], seen["leaderboard model"]
        assert "✎ 1 verdict on 1 turn is a person's" in seen["leaderboard notes"], seen["leaderboard notes"]
        assert seen["compare"].startswith("✗"), seen["compare"]

        await open_turn(pilot, app, run_id, TURN)  # withdrawn from the same place: the judge's figures again
        await review_through_the_dialog(pilot, app, withdraw=True)
        await until(pilot, lambda: app.screen.state.turns[TURN].human == ())
        assert await strict_of(db, run_id) == judge_only
        seen = await surfaces(pilot, app, db, run_id, long_id)
        assert seen["turn table"].startswith("PASS") and "✎" not in seen["turn table"], seen["turn table"]
        assert f"strict pass {judge_only}" in seen["run line"] and "a person's" not in seen["run line"]
        assert judge_only in seen["runs list"] and judge_only in seen["leaderboard"], seen
        assert "✎" not in seen["leaderboard model"] and "✎" not in seen["leaderboard notes"]
        assert seen["compare"].startswith("✓"), seen["compare"]


async def test_the_dialog_refuses_a_verdict_without_a_reason(layout, monkeypatch) -> None:
    db, run_id, _ = layout
    monkeypatch.setenv("USER", "tester")
    app = ArenaApp(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        await open_turn(pilot, app, run_id, TURN)
        await pilot.press("v")
        await until(pilot, lambda: isinstance(app.screen, ReviewDialog))
        dialog = app.screen
        assert dialog.query_one("#review-by", Input).value == "tester"  # $USER unless changed
        await pilot.press("enter", "enter")
        dialog.query_one("#review-reason", Input).focus()
        await pilot.press("enter")  # no reason: said in the dialog, nothing recorded
        assert isinstance(app.screen, ReviewDialog)
        assert "say why" in str(dialog.query_one("#review-error", Static).render())
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        assert app.screen.state.turns[TURN].human == ()
        async with await Store.open(db) as store:
            assert not [j for j in await store.judgements(run_id, TURN) if j.review is not None]
