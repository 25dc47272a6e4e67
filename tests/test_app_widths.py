"""Every screen fits 80×24, 120×40 and 160×48 and says what it leaves out: the live run keeps
voice-to-voice and labels its header, a border's legend is never cut mid-word, the leaderboard
keeps its header short and its figures whole, compare names the columns a width drops, and the
turn detail keeps a call's arguments.

Driven through the real app: the frozen demo recording (tests/snapshots/demo_run.jsonl) and the
constructed runs of tests/compare_runs.py in a real SQLite store.
"""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Static

from arena_tui.app import ArenaApp
from arena_tui.run_view import RunState, specs_from_benchmark
from arena_tui.screens.compare import CompareScreen
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.screens.turn_detail import TurnDetailScreen
from arena_tui.widgets.board_plots import CategoryBars, bars_layout
from arena_tui.widgets.turn_table import MORE_CODES, TurnTable
from benchmarks.registry import load_benchmark
from tests.pilot import until
from tests.snapshots.fixture_run import cut_mid_turn, fixture_events, load_fixture_db, load_layout_db

from .compare_runs import LONG_MODEL, long_model_run, record_scenario, unjudged_run, write_data
from .test_app_leaderboard import open_board

SIZES = [(80, 24), (120, 40), (160, 48)]
sizes = pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])


def rendered(widget: Static) -> str:
    console = Console(width=widget.size.width or 200, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()


@sizes
async def test_the_live_run_keeps_voice_to_voice_and_labels_its_header(tmp_path: Path, size) -> None:
    """Mid-run: the headline latency column, the header's figures each with its label, the
    table's border legend whole (codes that do not fit are left to `?`, never cut)."""
    events = fixture_events()
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        run_id = events[0].run_id
        state = app.live[run_id] = RunState(run_id, specs_from_benchmark(load_benchmark("demo_bench")))
        shown = cut_mid_turn(events, 3)
        for ev in shown:
            app.bus.publish(ev)
        app.pump()
        app.push_screen(RunScreen(state, live=True))
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable))
        table = app.screen.query_one(TurnTable)
        await until(pilot, lambda: table.row_count > 0 and "v2v" in table.shown_columns)
        await pilot.pause(0.2)
        header = str(app.screen.query_one("#run-header").render())
        assert re.search(r"elapsed \d\d:\d\d", header) and re.search(r"\d+/\d+ done", header), header
        legend = str(table.border_subtitle)
        assert "…" not in legend and len(legend) <= table.size.width - 4, legend
        assert legend.endswith(MORE_CODES) or legend.endswith("turn-taking"), legend
        bar = str(app.screen.query_one("#run-filter").render())
        assert len(bar.splitlines()) <= 3 and bar.rstrip().endswith(("0:barge_in,1:no_response,3:disconnect,4:truncated",
                                                                      "faults injected (turn detail)")), bar


async def test_the_first_frame_of_a_run_says_what_starts(tmp_path: Path) -> None:
    """Before the engine says `run_started`: the benchmark and the model asked for, never `? model ?`."""
    state = RunState("r", planned=("demo_bench", "sim"))
    from arena_tui.widgets.run_header import header_text

    line = header_text(state, "live", 80).plain
    assert "demo_bench" in line and "sim (starting)" in line and "?" not in line, line


@sizes
async def test_the_runs_list_at_120_shows_the_runs_duration(tmp_path: Path, size) -> None:
    db = tmp_path / "arena.db"
    await load_layout_db(db)
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.query_one("#runs").row_count == 2)
        await pilot.pause(0.2)
        table = app.screen.query_one("#runs", DataTable)
        keys = [str(c.key.value) for c in table.columns.values()]
        legend = str(app.screen.query_one("#runs-legend", Static).render())
        if size[0] >= 120:
            assert "dur" in keys, keys
        elif "dur" not in keys:  # two lines a run: the duration under the id
            assert re.fullmatch(r"\S+\n\d\d:\d\d", table.get_row_at(0)[0].plain), table.get_row_at(0)[0]
            keys.append("dur")
        for key, label in (("started", "started"), ("dur", "duration")):
            assert key in keys or label in legend.split("hidden at this width:")[-1], (keys, legend)


@pytest.fixture
def board_db(tmp_path: Path) -> tuple[Path, Path]:
    db = tmp_path / "arena.db"
    asyncio.run(record_scenario(db, extra=[unjudged_run(), long_model_run()]))
    return db, write_data(tmp_path / "data")


@sizes
async def test_the_leaderboard_keeps_its_header_short_and_every_figure_whole(board_db, size) -> None:
    """Above the table: one status line and at most two naming the columns out of view. Under it:
    notes that end whole (a list says how many more, never stops on a comma), a row never judged
    not listed with nothing counted apart; the category plot's figures whole."""
    app = ArenaApp(*board_db)
    async with app.run_test(size=size) as pilot:
        board = await open_board(pilot)
        status = rendered(board.query_one("#board-status"))
        columns = rendered(board.query_one("#board-columns"))
        assert len(status.strip().splitlines()) == 1, status
        assert len([ln for ln in columns.splitlines() if ln.strip()]) <= 2, columns
        notes = str(board.query_one("#board-notes", Static).render())
        for line in notes.splitlines():
            assert not line.rstrip().endswith((",", ":", ";")), notes
        assert "[not judged] on mini_bench:" not in notes
        if board.query_one("#board-plots").display:
            keys = [board.row_key(r) for r in board.shown]
            board.query_one("#board", DataTable).move_cursor(row=keys.index(f"{LONG_MODEL}\x1fmini_bench"))
            await pilot.pause(0.2)
            bars = board.query_one(CategoryBars)
            text = rendered(bars)
            rows = [ln for ln in text.splitlines() if ln.startswith(("basic_qa", "long_range", "tool_use"))]
            assert rows and all("…" not in ln for ln in rows), text
            judged = [r for r in board.rows if r.benchmark == "mini_bench" and r.judged and r.categories]
            for ln in rows:
                figures = re.findall(r"(?<![\w-])(\d{1,3})(?![\w%])", ln)
                assert len(figures) + ln.count("–") >= min(len(judged), 1), ln


def test_category_bars_give_up_the_bars_before_a_figure() -> None:
    """However narrow: the figures fit (the bars shrink, then go, then names are cut, then models go)."""
    for width in (24, 30, 40, 60, 80, 120):
        for models in (1, 3, 5, 8, 12):
            cat_w, cells, shown = bars_layout(width, 18, models)
            used = cat_w + 1 + shown * ((cells + 4 if cells else 4) + 1)
            assert used <= width or shown == 1, (width, models, cat_w, cells, shown)
            assert shown == models or cells == 0


@sizes
async def test_compare_names_the_columns_its_width_leaves_out(board_db, size) -> None:
    app = ArenaApp(*board_db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows)
        app.push_screen(CompareScreen(run_ids=("r1", "r2")))
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.turns)
        await pilot.pause(0.2)
        table = app.screen.query_one("#pair", DataTable)
        keys = [str(c.key.value) for c in table.columns.values()]
        assert {"turn", "differs", "A", "B"} <= set(keys), keys
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= table.size.width
        title = str(app.screen.query_one("#pair-title", Static).render())
        for label in ("A calls", "B calls", "A v2v", "B v2v", "Δ v2v", "user said"):
            assert label in keys or label in title.split("hidden at this width:")[-1], (label, keys, title)
        if size[0] >= 120:
            assert {"A v2v", "B v2v"} <= set(keys)


async def test_the_turn_detail_at_80_keeps_every_argument_of_a_call(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    run_id = await load_fixture_db(db)
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        state = app.screen.state
        table = app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("3"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        await pilot.pause(0.2)
        console = Console(width=78, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#detail-tools").content)
        text = console.export_text()
        assert "…" not in text, text  # folded at the column's edge, never cut
        words = set(re.findall(r"[\w:-]+", text))
        expected = state.turns[3].spec.expected_calls[0]["args"]
        for value in expected.values():
            assert set(re.findall(r"[\w:-]+", str(value))) <= words, (value, text)
        why = str(app.screen.query_one("#detail-title").render())
        assert "fault injected by design: disconnect" in why and "✗ turn-taking" in why


@sizes
async def test_the_run_header_keeps_a_runs_condition_and_effort_at_every_width(tmp_path: Path, size) -> None:
    """A telephony run at high effort never reads as a clean default one: its header keeps the
    variants whole at 80 columns too (figures go whole first, then the model's name is cut), on the
    simulator run and on one with the catalog's longest model id."""
    from arena_tui.spine.events import RunEnded

    from .counting_runs import ended, judged, record, started

    db = tmp_path / "arena.db"
    variant = {"condition": "telephony", "effort": "high"}
    runs = [[started(rid, [0, 1], model=model, simulator=True, config=variant), ended(rid, 0), judged(rid, 0),
             ended(rid, 1), judged(rid, 1), RunEnded(run_id=rid, t_ms=3000.0, status="completed")]
            for rid, model in (("tel1", "sim"), ("tel2", LONG_MODEL))]
    await record(db, *runs)
    for run_id in ("tel1", "tel2"):
        app = ArenaApp(db, open_run=run_id)
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, timeout=30)
            await until(pilot, lambda: "COMPLETED" in str(app.screen.query_one("#run-header").render()), timeout=30)
            header = str(app.screen.query_one("#run-header").render())
            assert "(telephony, effort=high)" in header and "[SIM" in header, header  # [SIM] or [SIMULATOR]
            assert "demo_bench" in header and "COMPLETED" in header, header
            assert ("gemini-2.5" if run_id == "tel2" else " sim ") in header, header
