"""Rows a user can tell apart, and the leaderboard's rows first, at 80x24, 120x40 and 160x48 (issue 43
items 1 and 4). A campaign `--condition clean,telephony,noise=10 --effort low,high` against the
simulator (`tests/snapshots/fixture_variants.py`: real recordings, the real store, the real app):
its six leaderboard rows, runs and chart lanes read pairwise different, whole (never `…`), what they
all share said once above the table; with twelve rows, at least ten are in view at 120x40, and at
80x24 voice-to-voice is.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Static

from arena_tui.app import ArenaApp
from arena_tui.screens.dialogs.gap import GapDialog
from arena_tui.screens.leaderboard import LeaderboardScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.widgets.board_plots import LatencyPlot
from tests.pilot import until
from tests.snapshots.fixture_variants import CONDITIONS, EFFORTS, MANY_CONDITIONS, load_variant_campaign_db

SIZES = [(80, 24), (120, 40), (160, 48)]
sizes = pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])


@pytest.fixture
def campaign_db(tmp_path: Path) -> Path:
    db = tmp_path / "arena.db"
    asyncio.run(load_variant_campaign_db(db))
    return db


def drawn(screen) -> list[str]:
    """The screen's lines as the user sees them."""
    return [strip.text for strip in screen._compositor.render_strips()]


def plain(cell) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def variants(condition: str, effort: str) -> list[str]:
    return ([] if condition == "clean" else [condition]) + [f"effort={effort}"]


async def open_board(pilot, rows: int) -> LeaderboardScreen:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == rows, timeout=30)
    await pilot.press("L")
    await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen) and app.screen.loaded is not None, timeout=30)
    await pilot.pause(0.3)
    return app.screen


def model_cells(board: LeaderboardScreen) -> list[str]:
    """Each row's model cell as drawn in its column (both lines)."""
    table = board.query_one("#board", DataTable)
    return [plain(table.get_row_at(i)[0]) for i in range(table.row_count)]


@sizes
async def test_a_variant_campaigns_leaderboard_rows_are_told_apart(campaign_db: Path, size) -> None:
    """Six rows, each naming its condition (none: clean) and effort whole, pairwise different; what
    they share (the simulator, the heuristic judge, the injected faults) said once above the table;
    after `f telephony` the two rows left are still told apart."""
    app = ArenaApp(campaign_db)
    async with app.run_test(size=size) as pilot:
        board = await open_board(pilot, 6)
        labels = model_cells(board)
        assert len(labels) == 6 and len(set(labels)) == 6, labels
        assert all("…" not in label for label in labels), labels
        for condition in CONDITIONS:
            for effort in EFFORTS:
                want = ", ".join(variants(condition, effort))
                assert sum(label.split("\n")[-1] == f"[{want}]" for label in labels) == 1, (want, labels)
        screen = "\n".join(drawn(board))
        assert all(label.split("\n")[-1] in screen for label in labels), screen  # drawn, no markup ate `[…]`
        shared = str(board.query_one("#board-shared", Static).render())
        assert "all rows:" in shared and "simulator" in shared and "heuristic judge" in shared, shared
        await pilot.press("space", "down", "G")  # the gap between two rows: one key from the marked one
        await until(pilot, lambda: isinstance(app.screen, GapDialog))
        gap = str(app.screen.query_one("#gap", Static).render()).splitlines()
        sides = [line.split("  ")[0] for line in gap if line.startswith(("A: ", "B: "))]
        assert [s.removeprefix("A: ").removeprefix("B: ") for s in sides] == \
            [f"sim {label.split(chr(10))[-1]}" for label in labels[:2]], gap  # each side by its label
        assert gap[0].startswith("both: simulator · heuristic judge"), gap
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is board)
        await pilot.press("f", *"telephony", "enter")
        await pilot.pause(0.3)
        narrowed = model_cells(board)
        assert len(narrowed) == 2 and len(set(narrowed)) == 2 and all("…" not in c for c in narrowed), narrowed
        assert {c.split("\n")[-1] for c in narrowed} == {"[effort=low]", "[effort=high]"}, narrowed
        assert "telephony" in str(board.query_one("#board-shared", Static).render())


@sizes
async def test_a_variant_campaigns_runs_and_chart_lanes_are_told_apart(campaign_db: Path, size) -> None:
    """The runs list: six runs, each line (or lines) naming its condition and effort whole. The
    leaderboard's chart (`v` where the rows leave it no room): six lanes, six different names."""
    app = ArenaApp(campaign_db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and len(app.screen.rows) == 6, timeout=30)
        await pilot.pause(0.3)
        table = app.screen.query_one("#runs", DataTable)
        models = [plain(table.get_cell(str(key.value), "model")) for key in table.rows]
        assert len(set(models)) == 6 and all("…" not in m for m in models), models
        for condition in CONDITIONS:
            for effort in EFFORTS:
                want = f"({', '.join(variants(condition, effort))})"
                assert sum(want in m for m in models) == 1, (want, models)
        board = await open_board(pilot, 6)
        if not board.query_one("#board-plots").display:
            await pilot.press("v")
            await pilot.pause(0.3)
        chart = plain(board.query_one(LatencyPlot).render())  # (its lanes scroll in a short plot area)
        lanes = [line.split("│", 1)[0].strip() for line in chart.splitlines() if line.count("│") >= 2]
        assert len(lanes) == 6 and len(set(lanes)) == 6 and all("…" not in name for name in lanes), lanes
        assert any(line.strip().startswith(lanes[0]) for line in drawn(board)), chart  # drawn as it says


@sizes
async def test_the_leaderboard_shows_its_rows_first(tmp_path: Path, size) -> None:
    """Twelve rows (six conditions × two efforts): at 120x40 ten or more in view, the notes and the
    plots making room (`n`, `v` bring them); at 80x24 the key columns, voice-to-voice among them."""
    db = tmp_path / "arena.db"
    await load_variant_campaign_db(db, MANY_CONDITIONS)
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        board = await open_board(pilot, 12)
        table = board.query_one("#board", DataTable)
        head = [str(c.label) for c in table.columns.values()]
        assert head[0] == "model" and "strict pass ↓" in head and "v2v p50" in head, head
        least = {80: 7, 120: 10, 160: 12}[size[0]]
        in_view = min(table.row_count, (table.scrollable_content_region.height - table.header_height) // 2)
        assert in_view >= least, (in_view, table.size)  # each row two lines: the table's height holds them
        screen = "\n".join(drawn(board))
        seen = [label for label in (c.split("\n")[-1] for c in model_cells(board)) if label in screen]
        assert len(set(seen)) >= least, (seen, screen)  # and they are drawn, each told apart
        notes = str(board.query_one("#board-notes", Static).render())
        assert notes.strip(), notes  # said (one line when the rows need the room: how many, and `n`)
        if "n shows them" in notes:
            await pilot.press("n")
            await pilot.pause(0.3)
            assert "latency from speed-1 runs only" in str(board.query_one("#board-notes", Static).render())
