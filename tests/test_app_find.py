"""`/` finds rows on every screen that lists them (runs list, a run's turns, the leaderboard, compare),
`]` and `[` step between the matches; `f` narrows the runs list and the leaderboard as you type,
saying how many rows are shown of how many. A run's turns are found by search's own texts: `/` on
the run screen finds the turns `arena-tui search --run` finds. A run a re-run superseded says so.
"""

from __future__ import annotations


from textual.widgets import DataTable

from arena_tui.app import ArenaApp
from arena_tui.compare.search import search
from arena_tui.screens.compare import CompareScreen
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.spine.events import RunSuperseded
from arena_tui.store import Store
from arena_tui.widgets.query_line import QueryLine
from arena_tui.widgets.turn_table import TurnTable
from tests.pilot import until
from tests.snapshots.fixture_run import LONG_MODEL
from tests.test_app_flows import text_of
from tests.test_app_review import layout as review_layout


layout = review_layout  # the demo recording and the long-named run: (database, demo run id, long run id)


def cursor_key(table: DataTable) -> str:
    return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)


async def find(pilot, text: str) -> None:
    await pilot.press("slash")
    await pilot.press(*text)
    await pilot.press("enter")
    await pilot.pause()


async def test_slash_finds_a_runs_turns_by_search_own_texts_and_steps_between_them(layout) -> None:
    db, run_id, _ = layout
    async with await Store.open(db) as store:
        expected = [str(h.turn_index) for h in await search(store, "road bike", run_ids=[run_id])]
    assert len(expected) >= 2  # said, answered or reasoned on more than one turn: there is a next match
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        replay = app.screen
        table = replay.query_one(TurnTable)
        await find(pilot, "road bike")
        assert replay.found("road bike") == expected
        assert cursor_key(table) == expected[0]
        line = replay.query_one("#find", QueryLine)
        assert f"1/{len(expected)}" in text_of(line.query(".query-said").first())
        await pilot.press("right_square_bracket")
        assert cursor_key(table) == expected[1]
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert cursor_key(table) == expected[-1]  # round the end
        await pilot.press("slash")
        await pilot.press(*"nothing says this")
        await pilot.press("enter")
        await pilot.pause()
        assert "no match" in text_of(line.query(".query-said").first())


async def test_typing_in_the_find_line_of_a_replay_being_stepped_is_text_not_steps(layout) -> None:
    db, run_id, _ = layout
    app = ArenaApp(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.open_replay(run_id, stepping=True)
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        replay = app.screen
        await pilot.press("slash")
        await pilot.press(*"tune n", "left", "right")  # n, ← and → step a replay: in the line they are its text
        assert replay.pos == 0
        assert replay.query_one("#find", QueryLine).value == "tune n"


async def test_runs_list_finds_and_filters_and_says_a_superseded_run(layout) -> None:
    db, run_id, long_id = layout
    async with await Store.open(db) as store:
        store.submit(RunSuperseded(run_id=long_id, t_ms=0.0, by=run_id, reason="re-run"))
        await store.flush()
    app = ArenaApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 2)
        runs = app.screen
        table = runs.query_one("#runs", DataTable)
        await until(pilot, lambda: "superseded" in str(table.get_cell(long_id, "status")))
        assert "superseded" not in str(table.get_cell(run_id, "status"))
        assert "superseded: a campaign's re-run replaced it" in text_of(runs.query_one("#runs-legend"))
        table.move_cursor(row=table.get_row_index(run_id))
        await find(pilot, LONG_MODEL[:12])
        assert cursor_key(table) == long_id
        await pilot.press("escape")  # closes the find line
        await pilot.press("f")
        await pilot.press(*"gemini")
        await until(pilot, lambda: table.row_count == 1)
        assert cursor_key(table) == long_id
        assert "1 of 2 runs" in text_of(runs.query_one("#filter", QueryLine).query(".query-said").first())
        await pilot.press("escape")  # the filter goes with its line
        await until(pilot, lambda: table.row_count == 2)


async def test_leaderboard_filter_narrows_its_rows_and_says_how_many(layout) -> None:
    db, _, _ = layout
    app = ArenaApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None)
        board = app.screen
        everything = len(board.shown)
        await pilot.press("f")
        await pilot.press(*"gemini", "left", "left")  # ← → move in the text, not the columns
        assert board.first == 0
        await until(pilot, lambda: len(board.shown) < everything)
        assert all("gemini" in r.model for r in board.shown)
        said = f"{len(board.shown)} of {everything} rows"
        assert said in text_of(board.query_one("#filter", QueryLine).query(".query-said").first())
        await pilot.press("escape")
        await until(pilot, lambda: len(board.shown) == everything)


async def test_compare_finds_turns_by_either_sides_answer(layout) -> None:
    db, run_id, long_id = layout
    app = ArenaApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.push_screen(CompareScreen(run_ids=(run_id, long_id)))
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.turns)
        pair = app.screen
        said = {t.turn_index: (t.a.answer + t.b.answer + t.user_text).casefold() for t in pair.turns}
        expected = [str(t) for t, text in sorted(said.items()) if "brake pads" in text]
        assert expected
        await find(pilot, "brake pads")
        found = pair.found("brake pads")
        assert set(expected) <= set(found), (expected, found)  # said by either side (or the user), in turn order
        assert cursor_key(pair.query_one("#pair", DataTable)) == found[0]
