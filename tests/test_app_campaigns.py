"""The campaign screens: a campaign progressing beside the open app, and the recorded one of the snapshots.

The live test writes what the orchestrator writes (cell rows through `campaign.records`, a real
engine run against the simulator with the heuristic judge) through a second store into the
database the app has open, as `arena-tui campaign run` in another terminal would: the screen must
follow it by polling, without a key pressed, and open the run it recorded.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from arena_tui.app import ArenaApp
from arena_tui.campaign import records
from arena_tui.campaign.spec import Cell, build_spec
from arena_tui.cli import main
from arena_tui.screens.campaigns import CampaignScreen, CampaignsScreen, short_label
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.store import Store
from tests.snapshots.fixture_run import record_demo_run
from tests.snapshots.fixture_campaign import CAMPAIGN_ID, load_campaign_db, run_id_of
from tests.pilot import until


def row_text(screen, table_id: str, key: str) -> list[str]:
    return [c.plain if isinstance(c, Text) else str(c) for c in screen.query_one(table_id, DataTable).get_row(key)]


def headers(screen, table_id: str) -> list[str]:
    return [str(c.label) for c in screen.query_one(table_id, DataTable).columns.values()]


def states(screen: CampaignScreen) -> list[str]:
    return [c.state for c in screen.cells]


async def open_campaign(pilot, campaign_id: str) -> CampaignScreen:
    """runs list → C → the campaign's row → enter."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, RunsScreen))
    await pilot.press("C")
    await until(pilot, lambda: isinstance(app.screen, CampaignsScreen) and app.screen.views is not None)
    table = app.screen.query_one("#campaigns", DataTable)
    table.move_cursor(row=table.get_row_index(campaign_id))
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and app.screen.view is not None)
    return app.screen


async def test_a_campaign_running_elsewhere_fills_the_matrix_and_its_cells_open_their_runs(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "repeats": 2, "speed": 20.0, "turns": "0-1",
                           "greeting": False, "workers": 1, "concurrency": 2})
    async with await Store.open(db) as store:  # recorded, not started yet (as a blocked or stopped campaign is)
        await records.create(store, "camp01", spec)
    app = ArenaApp(db)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("C")
        await until(pilot, lambda: isinstance(app.screen, CampaignsScreen) and app.screen.views is not None)
        listing = app.screen
        assert headers(listing, "#campaigns")[:3] == ["campaign", "matrix", "complete"]
        assert row_text(listing, "#campaigns", "camp01")[:3] == ["camp01", "demo_bench × sim × 2", "0/2"]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and app.screen.view is not None)
        screen = app.screen
        assert states(screen) == ["pending", "pending"]

        # the orchestrator's part, through a second store: queue cell 1, record its run with the
        # real engine (simulator, heuristic judge), mark it done; no key pressed, the screen polls
        first = Cell("demo_bench", "sim", 1)
        async with await Store.open(db) as store:
            await records.claim(store, "camp01")  # the coordinator (this process) names itself first
            await records.set_cell(store, "camp01", first, status="queued", run_id="camp01-r1")
            await records.set_pace(store, "camp01", "pace: 1 session/worker, machine busy")  # admission control's word
        await until(pilot, lambda: states(screen) == ["queued", "pending"])
        await until(pilot, lambda: "pace: 1 session/worker, machine busy" in str(screen.query_one("#campaign-title", Static).render()))
        await record_demo_run(db, turns=[0, 1], faults=None, speed=10.0, run_id="camp01-r1")  # 10x: at 20x a busy CI machine lost pace on a turn (then never complete)
        async with await Store.open(db) as store:
            await records.set_cell(store, "camp01", first, status="done")
        await until(pilot, lambda: states(screen) == ["complete", "pending"])

        assert headers(screen, "#cells")[:4] == ["cell", "status", "turns", "strict pass"]
        row = row_text(screen, "#cells", "demo_bench\x1fsim\x1f1")
        assert row[:3] == ["demo_bench × sim #1", "complete", "2/2"] and "camp01-r1" in row
        assert row[3].endswith("/2 h")  # strict pass over both turns, marked as judged offline
        assert row_text(screen, "#cells", "demo_bench\x1fsim\x1f2")[1:4] == ["pending", "–", "–"]
        title = str(screen.query_one("#campaign-title", Static).render())
        assert "1/2 complete" in title and "1 pending" in title
        async with await Store.open(db) as store:
            await records.release(store, "camp01")  # the coordinator is done: no pace to report
        await until(pilot, lambda: "pace:" not in str(screen.query_one("#campaign-title", Static).render()))

        screen.query_one("#cells", DataTable).move_cursor(row=0)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and bool(app.screen.stops))
        assert app.screen.state.run_id == "camp01-r1"
        assert [t.index for t in app.screen.state.turns.values() if t.index >= 0 and t.result] == [0, 1]
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, CampaignScreen))


@pytest.fixture
def campaign_db(tmp_path: Path) -> Path:
    db = tmp_path / "arena.db"
    asyncio.run(load_campaign_db(db))
    return db


async def test_every_cell_state_at_80_columns_and_what_enter_does(campaign_db: Path) -> None:
    app = ArenaApp(campaign_db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_campaign(pilot, CAMPAIGN_ID)
        assert headers(screen, "#cells")[:4] == ["cell", "status", "turns", "strict pass"]
        sim = [row_text(screen, "#cells", f"demo_bench\x1fsim\x1f{r}")[:4] for r in (1, 2, 3, 4)]
        assert [r[1:3] for r in sim] == [["complete", "6/6"], ["interrupted", "2/6"], ["running", "3/6"], ["queued", "–"]]
        assert all(" h" in r[3] for r in sim[:3]) and sim[3][3] == "–"  # heuristic verdicts say so
        # the interrupted run's unplayed turns are counted apart, never failed; a running run's are still to come
        assert sim[1][3].endswith("h · 4 not played") and "not played" not in sim[2][3], sim
        assert "h heuristic judge" in str(screen.query_one("#cells-legend", Static).render())
        skipped = row_text(screen, "#cells", "demo_bench\x1fgpt-realtime\x1f1")
        assert skipped[1] == "skipped"

        table = screen.query_one("#cells", DataTable)
        table.move_cursor(row=table.get_row_index("demo_bench\x1fgpt-realtime\x1f1"))
        await pilot.pause(0.1)
        detail = str(screen.query_one("#cell-detail", Static).render())
        assert "skipped" in detail and "OPENAI_API_KEY is not set" in detail  # the reason in full, never cut
        await pilot.press("enter")  # nothing to open: it says why and stays
        await pilot.pause(0.1)
        assert isinstance(app.screen, CampaignScreen)
        assert any("no recorded run" in n.message for n in app._notifications)

        table.move_cursor(row=table.get_row_index("demo_bench\x1fsim\x1f3"))  # running (recorded by this process)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and bool(app.screen.stops))
        assert app.screen.state.run_id == run_id_of("sim", 3)


def test_campaign_show_and_list_print_the_same_cells(campaign_db: Path, capsys) -> None:
    assert main(["--db", str(campaign_db), "campaign", "show", CAMPAIGN_ID]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("2/12 complete")
    rows = {line.split("  ")[0]: line.split() for line in out[2:]}
    assert rows["demo_bench × sim #1"][5:7] == ["complete", "6/6"]
    assert rows["demo_bench × sim #2"][5:7] == ["interrupted", "2/6"]
    assert rows["demo_bench × sim #4"][5:7] == ["queued", "–"]
    assert "OPENAI_API_KEY" in " ".join(rows["demo_bench × gpt-realtime #1"])
    assert main(["--db", str(campaign_db), "campaign", "list"]) == 0
    assert "2/12 complete, 2 queued or running" in capsys.readouterr().out


def test_a_long_cell_label_keeps_its_repeat() -> None:
    cell = Cell("conversation_bench", "gemini-native-audio", 10)
    assert short_label(cell, 60) == cell.label
    cut = short_label(cell, 24)
    assert len(cut) <= 24 and cut.endswith(" #10") and " × " in cut and "…" in cut
    assert short_label(Cell("conversation_bench", "sim", 2), 20) == "conversati… × sim #2"  # 20 cells: the short model keeps its name


VARIANT_SPEC = {"benchmarks": "demo_bench", "models": "sim", "conditions": "clean,telephony,noise=10",
                "efforts": "low,high"}


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (160, 48)], ids=["80x24", "120x40", "160x48"])
async def test_a_campaign_over_conditions_and_efforts_shows_six_cells_told_apart(tmp_path: Path, size) -> None:
    """`--condition clean,telephony,noise=10 --effort low,high`: six cells, each naming its condition
    (none: clean) and effort whole at every width (`[telephony]` is no markup to lose), what they all
    share (the benchmark, the one repeat) left to the title when the column is narrow."""
    db = tmp_path / "arena.db"
    spec = build_spec({}, VARIANT_SPEC)
    async with await Store.open(db) as store:
        await records.create(store, "camp6", spec)
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        screen = await open_campaign(pilot, "camp6")
        labels = [row_text(screen, "#cells", key)[0] for key in
                  (str(k.value) for k in screen.query_one("#cells", DataTable).rows)]
        assert len(labels) == 6 and len(set(labels)) == 6, labels
        for condition in ("telephony", "noise=10"):
            for effort in ("low", "high"):
                assert sum(f"({condition}, effort={effort})" in label for label in labels) == 1, labels
        assert sum("(effort=" in label for label in labels) == 2, labels  # clean: the default, not named
        assert all("…" not in label for label in labels), labels
        drawn = "\n".join(strip.text for strip in screen._compositor.render_strips())  # what the user sees: no markup ate it
        assert all(label in drawn for label in labels), drawn
        title = str(screen.query_one("#campaign-title", Static).render())
        assert "demo_bench" in title and "clean, telephony, noise=10" in title


def test_campaign_list_says_the_shape_of_a_campaign_over_its_axes(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"

    async def create() -> None:
        async with await Store.open(db) as store:
            await records.create(store, "camp6", build_spec({}, VARIANT_SPEC))

    asyncio.run(create())
    assert main(["--db", str(db), "campaign", "list"]) == 0
    out = capsys.readouterr().out
    assert "1 bench × 1 model × 3 conditions × 2 efforts × 1  0/6 complete" in out, out
