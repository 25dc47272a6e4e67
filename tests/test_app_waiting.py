"""Waiting is never silent (issue 12): a turn the simulator never answers (its `no_response`
fault) shows, while the engine waits, what it waits on and the watchdog's countdown in the header
and the log, elapsed keeps ticking, and the meters fall to silence. Real engine, simulator, store
and Textual; every wait is for a condition, never a timing assertion."""

from __future__ import annotations

import re
from pathlib import Path

from arena_tui.app import ArenaApp
from arena_tui.commands.demo import DEMO_WATCHDOG
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.screens.run import RunScreen
from arena_tui.widgets.event_log import EventLog
from arena_tui.widgets.meters import LevelMeters, meter_lines
from arena_tui.spine.settings import RunSettings
from tests.pilot import until
from tests.test_app_flows import SIZE, quit_app, text_of

COUNTDOWN = re.compile(r"waiting for a reply to turn 1 — watchdog in (\d+) s")
ELAPSED = re.compile(r"elapsed (\d\d):(\d\d)")


def header(screen) -> str:
    return str(screen.query_one("#run-header").render())


def seconds(pattern: re.Pattern, text: str) -> int | None:
    m = pattern.search(text)
    return None if m is None else sum(int(g) * 60 ** i for i, g in enumerate(reversed(m.groups())))


def drawn(screen, who: str) -> str:
    meters = screen.query_one(LevelMeters)
    line = meter_lines(meters.state, meters.size.width)[0 if who == "user" else 1]
    return "".join(text for text, _ in line)


async def test_a_no_response_turn_shows_the_wait_counts_down_and_the_meters_fall(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        config = RunSettings(model="sim", speed=1.0, turns=[1], faults="1:no_response", watchdog=DEMO_WATCHDOG)
        run_id = app.start_run("demo_bench", config, judge="none")
        app.open_run(run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(LevelMeters))
        screen, state = app.screen, app.live[run_id]
        loud: list[float] = []

        def bot_was_heard() -> bool:
            loud.append(state.meters["bot"].rms_dbfs)
            return state.waiting is not None

        await until(pilot, bot_was_heard)  # the greeting spoke, turn 1 played, nothing came back
        await until(pilot, lambda: seconds(COUNTDOWN, header(screen)) is not None)
        first = seconds(COUNTDOWN, header(screen))
        elapsed = seconds(ELAPSED, header(screen))
        assert "WAIT" in text_of(screen.query_one(EventLog)) and "waiting for a reply to turn 1" in text_of(
            screen.query_one(EventLog))
        # no event comes while the engine waits, and still the countdown and elapsed move
        await until(pilot, lambda: (seconds(COUNTDOWN, header(screen)) or first) < first)
        await until(pilot, lambda: (seconds(ELAPSED, header(screen)) or 0) > elapsed)
        # the bot was loud during the greeting; with no audio since, its meter reads silence
        assert max(loud) > -40
        await until(pilot, lambda: "-∞ dBFS" in drawn(screen, "bot") and "-∞ dBFS" in drawn(screen, "user"))
        # then the watchdog acts: a retry ends the wait (each attempt's wait is announced once)
        await until(pilot, lambda: "RETRY" in text_of(screen.query_one(EventLog)))
        await until(pilot, lambda: not app.running(run_id))
        waits = [ln for ln in state.log if ln.kind == "waiting"]
        # one wait for the silent attempt; the retry, in a fresh session, is answered
        assert len(waits) == 1 and state.turns[1].attempts == 2 and "waiting" not in header(screen)
        await quit_app(app, pilot)
