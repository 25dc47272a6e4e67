"""The live meters and the run screen's coalesced repaints, driven through the real app and bus.

Level events are published on the app's bus at the engine's rate (one per source every 50 ms);
the app's `REFRESH_HZ` (30 Hz) pump folds them into the run state and the screen repaints. What
is checked is what the meter widget actually draws (its rendered lines, which Textual caches
until the widget asks for a repaint), so a missed repaint shows up as a stale picture.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.geometry import Region

from arena_tui.app import ArenaApp
from arena_tui.spine.events import Level, Overlap, RunStarted, SpeechBoundary, TranscriptDelta
from arena_tui.screens.run import RunScreen
from arena_tui.widgets.event_log import EventLog
from arena_tui.widgets.meters import LevelMeters
from arena_tui.run_view import RunState
from arena_tui.widgets.turn_table import TurnTable
from tests.pilot import until

RUN = "meters-run"
SIZE = (150, 42)


def drawn(meters: LevelMeters) -> list[str]:
    """The meter's lines as Textual would composite them now (cached lines unless refreshed)."""
    w, h = meters.outer_size
    return [strip.text for strip in meters.render_lines(Region(0, 0, w, h))]


async def open_live(app: ArenaApp, pilot) -> tuple[RunState, RunScreen, LevelMeters]:
    state = app.live[RUN] = RunState(RUN)
    app.bus.publish(RunStarted(run_id=RUN, t_ms=0, benchmark="demo_bench", model="sim", provider="sim",
                               simulator=True, turn_indices=[0, 1]))
    app.push_screen(RunScreen(state, live=True))
    await until(pilot, lambda: isinstance(app.screen, RunScreen) and state.started is not None)
    await pilot.pause(0.1)
    screen = app.screen
    assert isinstance(screen, RunScreen)
    return state, screen, screen.query_one(LevelMeters)


def level(t: float, source: str, rms: float, peak: float | None = None) -> Level:
    return Level(run_id=RUN, t_ms=t, turn_index=0, source=source, rms_dbfs=rms,
                 peak_dbfs=rms + 6 if peak is None else peak)


def boundary(t: float, kind: str) -> SpeechBoundary:
    return SpeechBoundary(run_id=RUN, t_ms=t, turn_index=0, kind=kind, origin="vad")


async def test_meters_follow_levels_at_the_engine_rate(tmp_path: Path) -> None:
    """Two seconds of levels at 20/s per source: the meters show values as they stream (not only
    at the end), end on the latest level and speaking state, and repaint less often than levels
    arrive (coalesced by the pump, never once per event)."""
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        state, _, meters = await open_live(app, pilot)
        before = meters.repaints
        app.bus.publish(boundary(0, "user_speech_started"))
        seen: set[str] = set()
        published = 0
        for k in range(40):
            t = 50.0 * k
            app.bus.publish(level(t, "user", -50 + k))  # -50 .. -11 dBFS
            app.bus.publish(level(t, "bot", -90.0, -90.0))
            published += 2
            await asyncio.sleep(0.05)
            seen.add(drawn(meters)[1])
        await until(pilot, lambda: state.meters["user"].rms_dbfs == -11)
        await pilot.pause(0.15)
        lines = drawn(meters)
        assert "● user" in lines[1] and "-11 dBFS" in lines[1], lines
        assert "○ bot" in lines[2] and "-∞ dBFS" in lines[2], lines
        assert len(seen) >= 3, f"the meter did not move while levels streamed: {seen}"
        repaints = meters.repaints - before
        assert 2 <= repaints < published, (repaints, published)


async def test_a_burst_of_levels_is_one_repaint_of_the_latest(tmp_path: Path) -> None:
    """Levels that pile up between two pump ticks (a busy loop) become one repaint showing the
    newest level; nothing in between is drawn."""
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        state, _, meters = await open_live(app, pilot)
        await pilot.pause(0.2)
        before = meters.repaints
        for k in range(50):  # no await in between: the pump cannot run until all are queued
            app.bus.publish(level(1000 + 50.0 * k, "bot", -60 + k * 0.5))
        await until(pilot, lambda: state.meters["bot"].updated_ms == 1000 + 50.0 * 49)
        await pilot.pause(0.15)
        assert meters.repaints - before == 1
        assert "-36 dBFS" in drawn(meters)[2]


async def test_overlap_and_speaking_indicators(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        state, _, meters = await open_live(app, pilot)
        app.bus.publish(boundary(100, "user_speech_started"))
        app.bus.publish(boundary(200, "bot_speech_started"))
        app.bus.publish(level(250, "user", -20))
        app.bus.publish(level(250, "bot", -18))
        await until(pilot, lambda: state.meters["bot"].speaking)
        await pilot.pause(0.15)
        lines = drawn(meters)
        assert "● user" in lines[1] and "● bot" in lines[2]
        assert "OVERLAP: both speaking" in lines[3]

        # the user stops: no overlap drawn any more
        app.bus.publish(boundary(300, "user_speech_stopped"))
        app.bus.publish(level(5000, "bot", -18))
        await until(pilot, lambda: not state.meters["user"].speaking)
        await pilot.pause(0.15)
        lines = drawn(meters)
        assert "○ user" in lines[1] and "● bot" in lines[2]
        assert "OVERLAP" not in lines[3]

        # a measured overlap flags the meters for a second of run time after it arrives
        app.bus.publish(Overlap(run_id=RUN, t_ms=5100, turn_index=0, start_ms=4000, end_ms=5100))
        await until(pilot, lambda: state.levels.overlap_until_ms > 5100)
        await pilot.pause(0.15)
        assert "OVERLAP" in drawn(meters)[3]
        app.bus.publish(level(7000, "bot", -18))
        await until(pilot, lambda: state.last_ms == 7000)
        await pilot.pause(0.15)
        assert "OVERLAP" not in drawn(meters)[3]


async def test_levels_alone_do_not_rebuild_table_transcript_or_log(tmp_path: Path) -> None:
    """Levels only move the meters; a transcript delta or a log line brings the rest up to date."""
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        state, screen, meters = await open_live(app, pilot)
        table = screen.query_one(TurnTable)
        calls: list[str] = []
        original = table.refresh_from

        def spy(*a, **kw):
            calls.append("table")
            return original(*a, **kw)

        table.refresh_from = spy  # type: ignore[method-assign]
        log_blocks = list(screen.query_one(EventLog).blocks)
        for k in range(10):
            app.bus.publish(level(100 + 50.0 * k, "user", -30 + k))
            await asyncio.sleep(0.05)
        await until(pilot, lambda: state.meters["user"].rms_dbfs == -21)
        await pilot.pause(0.15)
        assert calls == []
        assert "-21 dBFS" in drawn(meters)[1]
        assert list(screen.query_one(EventLog).blocks) == log_blocks

        app.bus.publish(TranscriptDelta(run_id=RUN, t_ms=700, turn_index=0, role="assistant", text="Hello", final=False))
        await until(pilot, lambda: bool(state.transcript))
        await pilot.pause(0.15)
        assert calls == ["table"]


async def test_event_log_rerenders_only_the_block_a_line_lands_in(tmp_path: Path) -> None:
    """Many log lines: every line is shown in order; a new line changes only the last block, and the
    oldest lines go a whole block at a time past the limit."""
    app = ArenaApp(tmp_path / "arena.db")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        state, screen, _ = await open_live(app, pilot)
        log = screen.query_one(EventLog)
        for k in range(40):
            state.log_local(f"note {k:03d}", "retry")
        screen.paint()
        await pilot.pause(0.1)

        def shown() -> str:
            return "\n".join(str(b.content) for b in log.blocks)

        text = shown()
        lines = [ln for ln in text.splitlines() if "note" in ln]
        assert [ln.split("note ")[1] for ln in lines] == [f"{k:03d}" for k in range(40)]
        assert "RETRY" in lines[0] and "run started" in text
        blocks = list(log.blocks)
        contents = [str(b.content) for b in blocks]
        state.log_local("note 040", "retry")
        screen.paint()
        await pilot.pause(0.1)
        after = list(log.blocks)
        assert after[: len(blocks) - 1] == blocks[:-1]
        assert [str(b.content) for b in after[:-1]] == contents[:-1]
        assert "note 040" in str(after[-1].content)

        log.max_lines = 20
        screen.paint(force=True)
        await pilot.pause(0.1)
        kept = [ln for ln in shown().splitlines() if "note" in ln]
        assert kept[-1].endswith("note 040")
        assert 20 <= len(kept) < 20 + log.BLOCK  # whole blocks dropped, never a line inside one
        # 42 lines (run started + 41 notes): the first block (lines 0-15) went; line 16 is note 015
        assert kept[0].endswith(f"note {log.BLOCK - 1:03d}")

        # a replay step rebuilds the state: the log starts over from it
        fresh = RunState(RUN)
        fresh.log_local("only line", "error")
        screen.state = fresh
        screen.paint(force=True)
        await pilot.pause(0.1)
        assert "only line" in shown() and "note" not in shown()
