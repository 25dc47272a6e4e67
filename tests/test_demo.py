"""The first five minutes: `arena-tui demo` shows what the tool is for in under a minute of audio
(clean turns first, one labelled fault after), says on screen why the faulted turn failed, and
says what to do next when it ends. Real engine, simulator, heuristic judge, store and Textual."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena_tui.app import ArenaApp
from arena_tui.commands.demo import DEMO_BENCHMARK, DEMO_FAULTS, DEMO_TURNS, add_arguments, next_steps, settings_of
from arena_tui.launcher import RunRequest
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.screens.run import RunScreen
from arena_tui.screens.turn_detail import TurnDetailScreen
from arena_tui.spine import paths
from arena_tui.widgets.turn_table import FAULT, TurnTable
from textual.widgets._toast import Toast
from tests.pilot import until
from tests.test_app_flows import SIZE, quit_app, text_of

SPEED = 5.0  # audio time / wall time: the demo's own pace is 1 (real time); a test need not wait it


def demo_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(list(argv))


def test_the_demo_plays_clean_turns_then_one_fault_in_real_time() -> None:
    config = settings_of(demo_args())
    assert (DEMO_TURNS, DEMO_FAULTS) == ("0-2", "2:wrong_call")
    assert config.turns == [0, 1, 2] and str(config.faults) == "2:wrong_call" and config.speed == 1.0
    assert config.end_of_turn.quiet_ms < 1000  # the simulator stops at once: no long quiet to wait out
    every = settings_of(demo_args("--turns", "0-9", "--faults", "1:no_response"))
    assert every.turns == list(range(10)) and str(every.faults) == "1:no_response"


def test_the_next_steps_are_three_commands_that_name_a_throw_away_database() -> None:
    default = next_steps(paths.db_path(None))
    steps = default.removeprefix("next: ").split(" · ")
    assert len(steps) == 3 and all(step.startswith("`arena-tui") for step in steps) and "--db" not in default
    temp = next_steps(Path("/tmp/arena-tui-demo-x/demo.db"))
    assert temp.count("--db /tmp/arena-tui-demo-x/demo.db") == 2  # the runs list and the report: that database


async def test_the_demo_run_marks_its_fault_says_why_the_turn_failed_and_what_next(tmp_path: Path) -> None:
    settings = settings_of(demo_args("--speed", str(SPEED), "--judge", "heuristic"))
    launch = RunRequest(DEMO_BENCHMARK, settings, "heuristic", then=next_steps(tmp_path / "arena.db"))
    app = ArenaApp(tmp_path / "arena.db", launch=launch, launcher=EngineLauncher())
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        screen = app.screen
        first = str(screen.query_one("#run-header").render())
        assert "demo_bench" in first and "?" not in first.split("demo_bench", 1)[1].split("  ")[1], first
        run_id = screen.state.run_id
        await until(pilot, lambda: not app.running(run_id), timeout=240)
        state = screen.state
        await until(pilot, lambda: state.turns[2].latest is not None and not state.turns[2].provisional)
        assert [state.turns[i].fault is not None for i in range(3)] == [False, False, True]
        assert [state.turns[i].verdict for i in range(3)] == ["pass", "pass", "fail"]
        table = screen.query_one(TurnTable)
        assert str(table.get_cell("2", "status")).endswith(FAULT) and FAULT not in str(table.get_cell("1", "status"))
        assert f"{FAULT} fault injected" in str(table.border_subtitle)
        # the end says what to do next, in a line of its own: no toast over the answer it points at
        bar = screen.query_one("#next-steps")
        await until(pilot, lambda: bar.display)
        assert "q quits and prints the commands to run next" in text_of(bar)
        assert not list(screen.query(Toast)), [str(t.render()) for t in screen.query(Toast)]
        await pilot.press("escape")  # escape hides it, and only that
        await pilot.pause()
        assert not bar.display and app.screen is screen
        table.move_cursor(row=table.get_row_index("2"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, TurnDetailScreen))
        why = text_of(app.screen.query_one("#detail-title"))
        assert "fault injected by design: wrong_call: a call is made with one argument changed" in why, why
        assert "✗ tool use: " in why, why
        await pilot.press("escape")
        await quit_app(app, pilot)


async def test_the_demos_end_covers_nothing_and_any_key_hides_it(tmp_path: Path) -> None:
    """At 80x24 the end's next steps take two lines of their own (the turn table keeps the faulted
    turn's row, the transcript its answer), no toast sits over them, and the next key hides them
    while doing what it does (x: the failed turns only)."""
    settings = settings_of(demo_args("--speed", "10", "--turns", "0-1", "--faults", "1:wrong_call", "--judge", "none"))
    launch = RunRequest(DEMO_BENCHMARK, settings, "none", then=next_steps(tmp_path / "arena.db"))
    app = ArenaApp(tmp_path / "arena.db", launch=launch, launcher=EngineLauncher())
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunScreen))
        screen = app.screen
        run_id = screen.state.run_id
        await until(pilot, lambda: screen.state.ended is not None and not app.running(run_id), timeout=240)
        await pilot.pause(0.5)
        assert not list(screen.query(Toast)) and not app._notifications, [n.message for n in app._notifications]
        bar = screen.query_one("#next-steps")
        await until(pilot, lambda: bar.display)
        assert bar.size.height <= 2, bar.size
        table = screen.query_one(TurnTable)
        assert table.region.height >= 5 and screen.query_one("#transcript").region.height >= 3
        await pilot.press("x")  # failures only: the key does what it does, and the line goes
        await pilot.pause()
        assert not bar.display and app.screen is screen
        assert {str(k.value) for k in table.rows} == {"1"}
