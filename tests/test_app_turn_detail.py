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
