"""The turn detail of a live run repaints its panels only when its own turn changes."""

from __future__ import annotations

import io

from rich.console import Console

from arena_tui.app import ArenaApp
from arena_tui.messages import LiveUpdate
from arena_tui.run_view import RunState
from arena_tui.screens.turn_detail import TurnDetailScreen
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events


async def test_other_turns_streaming_leave_the_panels_alone_its_own_new_revision_shows(tmp_path) -> None:
    events = fixture_events()
    head = cut_mid_turn(events, 3)  # turns 0-2 done and judged, turn 3 streaming
    rest = [ev for ev in events[len(head):] if ev.turn_index == 3 and ev.kind != "judgement"]
    state = RunState(events[0].run_id)
    state.apply_all(head)
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.pause()
        await app.push_screen(TurnDetailScreen(state, 1))
        await pilot.pause()
        detail = app.screen
        panels = ("#actual", "#detail-tools", "#detail-latency", "#detail-judgement")
        before = {p: detail.query_one(p).content for p in panels}
        header = str(detail.query_one("#run-header").content)

        for ev in rest:  # turn 3 streams on to its end: new content for the run, none for turn 1
            state.apply(ev)
        detail.post_message(LiveUpdate(frozenset({state.run_id}), frozenset(ev.kind for ev in rest)))
        await pilot.pause()
        assert {p: detail.query_one(p).content for p in panels} == before  # the very same renderables
        assert str(detail.query_one("#run-header").content) != header  # the header follows the run

        first = state.turns[1].judgements[-1]
        state.apply(first.model_copy(update={"revision": first.revision + 1}))
        detail.post_message(LiveUpdate(frozenset({state.run_id}), frozenset({"judgement"})))
        await pilot.pause()
        judgement = detail.query_one("#detail-judgement").content
        assert judgement is not before["#detail-judgement"]
        console = Console(width=150, record=True, file=io.StringIO())
        console.print(judgement)
        assert f"rev {first.revision + 1}" in console.export_text()


async def test_a_stored_runs_screens_pick_up_judgements_another_process_wrote(tmp_path) -> None:
    """`arena-tui judge RUN --turn 1` in another terminal while the run is open: the turn detail
    shows its revision when opened (not the stale one until a re-judge), and a re-judge here lists
    every revision in the history, the other process's included; all at the run's time."""
    from arena_tui.judge import HeuristicJudge, rejudge_turn
    from arena_tui.screens.replay import ReplayScreen
    from arena_tui.store import Store
    from arena_tui.widgets.turn_table import TurnTable
    from tests.pilot import until
    from tests.snapshots.fixture_run import load_fixture_db

    db = tmp_path / "arena.db"
    run_id = await load_fixture_db(db)
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        replay = app.screen
        revisions = [j.revision for j in replay.state.turns[1].judgements]
        other = await Store.open(db)  # the other process's connection: the app hears nothing of it
        try:
            cli = await rejudge_turn(other, run_id, 1, HeuristicJudge())
        finally:
            await other.close()
        assert cli.revision == max(revisions) + 1 and cli.t_ms > 0
        table = replay.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("1"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen)
                    and cli.revision in [j.revision for j in app.screen.state.turns[1].judgements])

        def history() -> str:
            console = Console(width=160, record=True, file=io.StringIO())
            console.print(app.screen.query_one("#detail-judgement").content)
            return console.export_text()

        await until(pilot, lambda: f"rev {cli.revision} (" in history())
        await pilot.press("r")  # re-judged here: the next revision, the other process's kept in the history
        await until(pilot, lambda: f"rev {cli.revision + 1} (" in history())
        text = history()
        assert all(f"rev {r} (" in text for r in [*revisions, cli.revision, cli.revision + 1]), text
        await pilot.press("escape")
        assert [j.revision for j in app.screen.state.turns[1].judgements].count(cli.revision) == 1
        assert "re-judged (rev" in " ".join(line.text for line in app.screen.state.log) and not any(
            line.t_ms == 0 and "re-judged" in line.text for line in app.screen.state.log)
