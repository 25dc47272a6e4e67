"""How RunState folds the engine's `waiting` event, and what time does between events.

A run followed live gets a clock (wall seconds): elapsed ticks on it, the watchdog counts down
on it, and a meter whose levels stopped falls to silence on it. A replay has no clock and shows
where the timeline got. The clock here is one the test moves, so nothing depends on timing.
"""

from __future__ import annotations

from arena_tui.run_view import SILENT_DBFS, RunState, wait_text
from arena_tui.spine.events import (
    Level,
    RunEnded,
    RunStarted,
    TranscriptDelta,
    TurnStarted,
    Waiting,
    parse_event,
)
from arena_tui.widgets.run_header import header_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def started(state: RunState, speed: float = 1.0) -> None:
    state.apply(RunStarted(run_id="r", t_ms=0, benchmark="demo_bench", model="sim", provider="sim",
                           turn_indices=[0, 1], config={"speed": speed}))
    state.apply(TurnStarted(run_id="r", t_ms=100, turn_index=1))


def test_waiting_round_trips_as_a_typed_event() -> None:
    ev = Waiting(run_id="r", t_ms=5000, turn_index=1, what="a reply to turn 1", deadline_t_ms=35000)
    assert parse_event(ev.model_dump_json()) == ev and ev.kind == "waiting"


def test_a_wait_counts_down_on_the_wall_clock_and_ends_with_the_reply() -> None:
    clock = Clock()
    state = RunState("r", clock=clock)
    started(state, speed=2.0)  # audio at 2x: 30 s of timeline is 15 s of wall clock
    state.apply(Waiting(run_id="r", t_ms=5000, turn_index=1, what="a reply to turn 1", deadline_t_ms=35000))
    assert state.wait_line() == wait_text("a reply to turn 1", 15000) == "waiting for a reply to turn 1 — watchdog in 15 s"
    assert [ln.kind for ln in state.log][-1] == "waiting" and "watchdog in 15 s" in state.log[-1].text
    clock.now += 6
    assert state.wait_line().endswith("watchdog in 9 s")
    assert "waiting for a reply to turn 1 — watchdog in 9 s" in header_text(state, width=200).plain
    clock.now += 60
    assert state.wait_left_ms() == 0  # never negative, the watchdog is just about to act
    state.apply(TranscriptDelta(run_id="r", t_ms=6000, turn_index=1, role="user", text="hello"))
    assert state.waiting is not None  # the user's own words are no reply
    state.apply(TranscriptDelta(run_id="r", t_ms=6100, turn_index=1, role="assistant", text="Hi"))
    assert state.waiting is None and state.wait_line() is None
    assert "waiting" not in header_text(state, width=200).plain


def test_a_wait_in_a_run_whose_speed_was_not_recorded_reads_as_the_wait_line_does() -> None:
    """An older stream without a speed: the log's line and the countdown convert the same way
    (`spine.times.wall_ms`), where the log once divided by None and raised."""
    state = RunState("r", clock=Clock())
    state.apply(RunStarted(run_id="r", t_ms=0, benchmark="demo_bench", model="sim", provider="sim", turn_indices=[0]))
    assert state.speed is None
    state.apply(Waiting(run_id="r", t_ms=5000, turn_index=0, what="a reply to turn 0", deadline_t_ms=35000))
    assert state.log[-1].text.endswith("watchdog in 30 s") and state.wait_line().endswith("watchdog in 30 s")


def test_an_audible_bot_ends_a_wait_and_a_new_attempt_does_too() -> None:
    state = RunState("r", clock=Clock())
    started(state)
    state.apply(Waiting(run_id="r", t_ms=5000, turn_index=1, what="the reply after check_availability", deadline_t_ms=9000))
    state.apply(Level(run_id="r", t_ms=5100, turn_index=1, source="bot", rms_dbfs=-80, peak_dbfs=-80))
    assert state.waiting is not None  # silence is not a reply
    state.apply(Level(run_id="r", t_ms=5150, turn_index=1, source="bot", rms_dbfs=-20, peak_dbfs=-10))
    assert state.waiting is None
    state.apply(Waiting(run_id="r", t_ms=9000, turn_index=1, what="a reply to turn 1", deadline_t_ms=20000))
    state.apply(TurnStarted(run_id="r", t_ms=11000, turn_index=1, attempt=1))
    assert state.waiting is None


def test_elapsed_ticks_on_the_wall_clock_live_and_stops_at_the_end() -> None:
    clock = Clock()
    state = RunState("r", clock=clock)
    started(state, speed=10.0)
    clock.now += 14.5
    assert state.elapsed_ms() == 14500  # wall clock, not the timeline's 100 ms nor 10x of it
    assert "elapsed 00:14" in header_text(state, width=200).plain
    clock.now += 3
    assert "elapsed 00:17" in header_text(state, width=200).plain
    state.apply(RunEnded(run_id="r", t_ms=500, status="completed"))
    clock.now += 30
    assert state.elapsed_ms() == 17500
    replay = RunState("r")  # no clock: where the recorded timeline got
    started(replay)
    assert replay.elapsed_ms() == replay.last_ms == 100


def test_meters_fall_to_silence_when_levels_stop() -> None:
    clock = Clock()
    state = RunState("r", clock=clock)
    started(state)
    state.apply(Level(run_id="r", t_ms=5000, turn_index=1, source="bot", rms_dbfs=-12, peak_dbfs=-3))
    assert state.shown_meter("bot").rms_dbfs == -12  # fresh: as measured
    clock.now += 0.5
    falling = state.shown_meter("bot").rms_dbfs
    assert SILENT_DBFS < falling < -12
    clock.now += 5
    shown = state.shown_meter("bot")
    assert shown.rms_dbfs == shown.peak_dbfs == SILENT_DBFS
    assert state.meters["bot"].rms_dbfs == -12  # what was measured is kept; only the reading falls
    replay = RunState("r")
    started(replay)
    replay.apply(Level(run_id="r", t_ms=5000, turn_index=1, source="bot", rms_dbfs=-12, peak_dbfs=-3))
    assert replay.shown_meter("bot").rms_dbfs == -12  # a replay shows the level at its step
