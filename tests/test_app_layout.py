"""The run screen fits the terminal it is in, the retry count shows, and the event log follows live.

Driven through the real app on the frozen demo recording (tests/snapshots/demo_run.jsonl).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.widgets.event_log import EventLog
from arena_tui.widgets.fit import fit_columns
from arena_tui.run_view import RunState, specs_from_benchmark
from arena_tui.widgets.turn_table import TurnTable
from benchmarks.registry import load_benchmark
from tests.snapshots.fixture_run import fixture_events, load_fixture_db, load_layout_db, long_events
from tests.pilot import until

SIZES = [(80, 24), (120, 40), (160, 48)]


def test_fit_keeps_the_required_columns_and_cuts_only_the_stretching_one() -> None:
    need = [1, 11, 9, 2, 5, 58]
    shown = fit_columns(40, need, [0, 1, 2, 3, 4], 3, stretch=5, min_stretch=8)
    assert list(shown) == [0, 1, 2, 3, 4]  # 3+13+11+4+7 = 38: no room left for the categories
    wide = fit_columns(80, need, [0, 1, 2, 3, 4], 3, stretch=5)
    assert wide[5] == 80 - 38 - 2  # the categories take what is left, cut to it
    narrow = fit_columns(10, need, [0, 1, 2, 3, 4], 3, stretch=5)
    assert list(narrow) == [0, 1, 2]  # the required ones even when they do not fit


def test_a_runs_list_row_says_how_the_runs_input_differed_and_never_cuts_what_tells_it_apart() -> None:
    """Two runs of one campaign under two conditions are two different lines: the variants follow
    the model (as the run screen heads it) by the one rule of row labels (`spine.labels`): a part
    goes whole (named) before the model is cut, a condition or effort never goes; `/` finds them."""
    from arena_tui.screens.runs import model_text, run_labels, run_matches

    r = {"model": "sim", "provider": "openai", "source": "simulator", "variants": ("telephony", "effort=high")}
    assert model_text(r).plain == "sim / openai [SIM] (telephony, effort=high)"
    assert model_text(r, 34).plain == "sim [SIM] (telephony, effort=high)"  # the provider goes first
    assert model_text(r, 20).plain == "sim [SIM] (telephony, effort=high)"  # never cut (the layout gives it room)
    faulty = {**r, "model": "gpt-realtime", "variants": ("telephony", "faults: 1:no_response")}
    assert model_text(faulty, 41).plain == "gpt-realtime [SIM] (telephony) +1: faults"  # a whole part goes, named
    assert model_text(faulty, 34).plain == "gpt-realtime [SIM] (telephony) +1"  # then its kind
    assert model_text(faulty, 30).plain == "gpt-…time [SIM] (telephony) +1"  # then the model is cut (its middle)
    assert model_text({**r, "variants": ()}).plain == "sim / openai [SIM]"
    names = run_labels([{**r, "variants": ("telephony", "effort=high", "faults: 1:x")},
                        {**r, "variants": ("effort=low", "faults: 1:x")}])
    assert names.header(noun="runs") == "all runs: faults: 1:x"  # what every run listed shares: said once
    assert [n.parts_text() for n in names.rows] == ["(telephony, effort=high)", "(effort=low)"]
    assert run_matches(r, "Telephony") and not run_matches(r, "noise")


@pytest.fixture
def fixture_db(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "arena.db"
    return db, asyncio.run(load_fixture_db(db))


@pytest.fixture
def layout_db(tmp_path: Path) -> tuple[Path, str]:
    """The demo recording and the long-named run (a long model id, `empty_response (3 retries)`)."""
    db = tmp_path / "arena.db"
    return db, asyncio.run(load_layout_db(db))


def cell_text(table, row: str, key: str) -> str:
    return str(table.get_cell(row, key))


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_turn_table_shows_turn_status_verdict_and_every_score_at_every_size(layout_db, size) -> None:
    db, run_id = layout_db
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.2)
        table = app.screen.query_one(TurnTable)
        shown = table.shown_columns
        assert shown[:4] == ["idx", "status", "verdict", "dims"]
        codes = str(table.columns["dims"].label).split()
        assert codes == ["KB", "IF", "TU", "ST", "AH", "TT"], codes  # every dimension its turns are due, TT too
        assert "v2v" in shown, shown  # voice-to-voice, the headline figure, at every width (80: the table is full width)
        if size[0] >= 120:  # a long status never pushes the latency and tools off
            assert {"v2v", "tools"} <= set(shown), shown
        # every column shown is whole inside the table: nothing runs off its right edge
        total = sum(c.get_render_width(table) for c in table.columns.values())
        assert total <= table.size.width, (total, table.size.width)
        # a cell's content is never cut but the causes' and the categories' (status, verdict, numbers stay whole)
        for col in table.columns.values():
            if col.key.value not in ("causes", "cats"):
                assert col.content_width >= max((len(str(table.get_cell(r, col.key))) for r in table.rows), default=0)
        # the long status takes its short form in the table, whole in the turn detail
        status = cell_text(table, "1", "status").removesuffix(" ↯")  # ↯: a fault injected on the turn
        assert status in ("empty_response (3 retries)", "empty_response ↻3", "empty ↻3"), status
        assert "retr" not in cell_text(table, "0", "status") and "↻" not in cell_text(table, "0", "status")
        hidden = [label for key, label in (("v2v", "v2v ms"), ("tools", "tools e/m"), ("causes", "causes"),
                                           ("cats", "categories")) if key not in shown]  # fmt: skip
        for label in hidden:  # never silently off-screen: the table's border names what this width leaves out
            assert label in str(table.border_subtitle), (label, table.border_subtitle)
        header = str(app.screen.query_one("#run-header").render())
        assert "COMPLETED" in header and " demo_bench " in header and "gemini-" in header
        table.move_cursor(row=table.get_row_index("1"))
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "TurnDetailScreen")
        title = str(app.screen.query_one("#detail-title").render())
        assert "status empty_response" in title and "attempts 4" in title


async def test_a_live_runs_columns_stay_as_its_turns_come_in(tmp_path: Path) -> None:
    """Columns are decided by the width: not by a long status arriving, nor by the first judgement
    (turn-taking's column is there from the start), nor by the categories a turn brings."""
    events = long_events()
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        run_id = events[0].run_id
        state = app.live[run_id] = RunState(run_id, specs_from_benchmark(load_benchmark("demo_bench")))
        app.push_screen(RunScreen(state, live=True))
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable))
        table = app.screen.query_one(TurnTable)
        seen = set()
        for i, ev in enumerate(events):
            app.bus.publish(ev)
            if ev.kind in ("turn_ended", "judgement") or i == 0:
                app.pump()
                await pilot.pause()
                seen.add((tuple(table.shown_columns), str(table.columns["dims"].label)))
        assert len(seen) == 1, seen
        assert "↻3" in cell_text(table, "1", "status")


async def test_turn_table_refits_when_the_terminal_is_resized(fixture_db) -> None:
    db, run_id = fixture_db
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops)
        await pilot.pause(0.2)
        table = app.screen.query_one(TurnTable)
        wide = table.shown_columns
        assert "causes" in wide and "v2v" in wide  # why a turn failed before its categories (named on the border)
        assert "categories: enter" in str(table.border_subtitle)
        assert str(table.get_cell("1", "status")) == "ok (1 retry) ↯"  # ↯: the run's fault on turn 1
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: table.shown_columns != wide)
        narrow = table.shown_columns
        assert narrow[:4] == ["idx", "status", "verdict", "dims"] and "causes" not in narrow and "v2v" in narrow
        await pilot.resize_terminal(64, 24)
        await until(pilot, lambda: str(table.get_cell("1", "status")) == "ok ↻1 ↯")  # the narrow budget's form
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: table.shown_columns == wide)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_runs_list_keeps_model_benchmark_and_pass_rates_in_view(layout_db, size) -> None:
    db, long_id = layout_db
    app = ArenaApp(db)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.query_one("#runs").row_count == 2)
        await pilot.pause(0.2)
        table = app.screen.query_one("#runs")
        keys = [str(c.key.value) for c in table.columns.values()]
        assert {"id", "model", "status", "rates"} <= set(keys), keys
        assert str(table.columns["rates"].label).split() == ["KB", "IF", "TU", "ST", "TT"]
        for run in (long_id, "demo-fixture"):
            rates, *strict = table.get_cell(run, "rates").plain.split("\n")  # narrow: the strict pass below
            assert "…" not in rates and rates.endswith(" h") and len(rates.split()) == 6, rates  # five figures, h
            shown = strict[0] if strict else str(table.get_cell(run, "strict"))
            assert re.search(r"\d+% \d+/\d+$", shown), shown  # the strict pass, whole
            model = table.get_cell(run, "model").plain
            bench = str(table.get_cell(run, "bench")) if "bench" in keys else model.split("\n")[-1]
            assert bench == "demo_bench" and "[SIM]" in model, (model, bench)
        long_model = table.get_cell(long_id, "model").plain.split("\n")[0]
        assert long_model.startswith("gemini-2") and "-2025 [SIM]" in long_model, long_model  # cut in its middle
        assert str(table.get_cell(long_id, "id")).startswith(long_id[:8])  # its shortest unique prefix
        legend = str(app.screen.query_one("#runs-legend").render())
        assert "KB knowledge base" in legend and "TT turn-taking" in legend and "h heuristic judge" in legend
        total = sum(c.get_render_width(table) for c in table.columns.values())
        assert total <= table.size.width


async def test_event_log_follows_the_live_run_with_wrapped_lines_indented(tmp_path: Path) -> None:
    events = fixture_events()
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        run_id = events[0].run_id
        state = app.live[run_id] = RunState(run_id)
        app.push_screen(RunScreen(state, live=True))
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(EventLog))
        log = app.screen.query_one(EventLog)
        fed = 0
        for ev in events:  # the whole run streams in, a screenful of log lines many times over
            app.bus.publish(ev)
            fed += 1
            if fed % 200 == 0:
                app.pump()
                await pilot.pause(0.05)
        app.pump()
        await until(pilot, lambda: "run completed" in str(log.blocks[-1].content))
        # followed to the end: the newest line is on screen, not only the first page
        await until(pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y)
        # a long line wraps under its text, not under the time stamp: render what a block shows
        from rich.console import Console

        console = Console(width=log.size.width, record=True, file=open(os.devnull, "w"))
        block = next(b.content for b in log.blocks if "run started" in str(b.content))
        console.print(block)
        drawn = console.export_text().splitlines()
        assert drawn[0].lstrip().startswith("0.00s run started") and len(drawn) > 1, drawn
        stamp = drawn[0].index("run started")
        wrapped = [ln for ln in drawn[1:] if ln.strip() and not ln.strip()[0].isdigit()]
        assert wrapped, drawn
        assert all(ln[:stamp].strip() == "" for ln in wrapped), drawn


async def test_runs_list_refits_when_the_terminal_is_resized(fixture_db) -> None:
    db, _ = fixture_db
    app = ArenaApp(db)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.query_one("#runs").row_count)
        await pilot.pause(0.2)
        table = app.screen.query_one("#runs")

        def keys() -> list[str]:
            return [str(c.key.value) for c in table.columns.values()]

        assert "started" in keys()
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: "started" not in keys())
        assert {"id", "status", "rates"} <= set(keys())  # two lines a run: the turns under the status
        assert sum(c.get_render_width(table) for c in table.columns.values()) <= table.size.width
        await pilot.resize_terminal(160, 48)
        await until(pilot, lambda: "started" in keys())
