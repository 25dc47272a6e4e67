"""The run-outcome rule (`runners.run.outcome.unanswered_run`): a run in which no turn got an answer
failed, whichever loop played it (audio, text, rehydrated, resumed); a run with one answered turn,
or one the model ended with a call, completed. Runs: the real simulator on 127.0.0.1, the real
store; the text loop's CLI path is in tests/test_provider_text.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_tui.run_view import RunState
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import TurnResult
from arena_tui.store import Store
from arena_tui.spine.settings import RunSettings
from runners.engine import RunError, Seed, history_from_results, run_benchmark
from runners.run.outcome import unanswered_run
from tests.provider_runs import quiet_loguru

#: one attempt; an unanswered turn ends after 4 s of wall time (a reply on a busy machine comes well before)
QUICK = {"extra_ms": 2000.0, "min_wall_ms": 4000.0, "max_retries": 0, "backoff_ms": 10.0}


@pytest.fixture(autouse=True, scope="module")
def _quiet_pipecat():
    yield from quiet_loguru("WARNING")


def result(turn: int, status: str, error: str | None = None) -> TurnResult:
    return TurnResult(turn_index=turn, status=status, user_text=f"turn {turn}", error=error)


def test_the_rule() -> None:
    why = unanswered_run([result(0, "no_response", "Connection error."), result(1, "empty_response")])
    assert why == "no turn got an answer: turns 0-1 ended empty_response 1, no_response 1 (last error: Connection error.)"
    assert unanswered_run([result(0, "no_response"), result(1, "ok")]) is None  # one answer: completed
    assert unanswered_run([result(0, "ended_session"), result(1, "ended_early")]) is None  # the model ended it
    assert unanswered_run([result(-1, "ok"), result(0, "no_response")]) is not None  # the greeting is no turn
    assert unanswered_run([]) is None


async def run(db: Path, bench, config: RunSettings) -> tuple[list, object, str | None]:
    """Run and record; (events, the stored run, the RunError's message or None)."""
    async with await Store.open(db) as store:
        bus = EventBus()
        rec = store.start_recording(bus)
        sub = bus.subscribe()
        error = None
        try:
            await run_benchmark(bench, config, bus, "outcome")
        except RunError as e:
            error = str(e)
        await store.flush()
        bus.close()
        await rec
        return sub.drain(), await store.get_run("outcome"), error


@pytest.mark.parametrize("mode", ["sequential", "rehydrated"])
async def test_an_audio_run_no_turn_of_which_got_an_answer_failed(demo, tmp_path, mode):
    config = RunSettings(model="sim", speed=8.0, turns=[0, 1], faults="0:no_response*,1:no_response*",
                       watchdog=QUICK, mode=mode)
    events, stored, error = await run(tmp_path / "a.db", demo, config)
    assert error is not None and error.startswith("no turn got an answer: turns 0-1 ended no_response 2"), error
    ended = [e for e in events if e.kind == "run_ended"]
    assert [(e.status, e.reason) for e in ended] == [("failed", error)]
    assert [e.message for e in events if e.kind == "error" and e.fatal] == [error]
    assert (stored.status, stored.reason, stored.turns_done) == ("failed", error, 2)
    state = RunState("outcome")  # what the monitor shows of it
    state.apply_all(events)
    assert state.status == "failed" and state.ended.reason == error


async def test_an_audio_run_with_one_answered_turn_completed(demo, tmp_path):
    config = RunSettings(model="sim", speed=8.0, turns=[0, 1], faults="0:no_response*", watchdog=QUICK)
    events, stored, error = await run(tmp_path / "b.db", demo, config)
    assert error is None and stored.status == "completed"
    statuses = {e.turn_index: e.result.status for e in events if e.kind == "turn_ended" and e.turn_index >= 0}
    assert statuses == {0: "no_response", 1: "ok"}


@pytest.mark.parametrize("before,status", [("ok", "completed"), ("no_response", "failed")])
async def test_a_resumed_run_counts_the_turns_answered_before_it(demo, tmp_path, before, status):
    """Resumed at turn 1, which gets no answer: the run had one if turn 0 (before the cut) had one."""
    t0 = demo.turn(0)
    done = [TurnResult(turn_index=0, status=before, user_text=t0.input,
                       assistant_text=t0.golden_text if before == "ok" else "")]
    seed = Seed(history=history_from_results(done), done=done, start_ms=1.0, resumed_from=1, detail="resumed at turn 1")
    config = RunSettings(model="sim", speed=8.0, turns=[0, 1], faults="1:no_response*", watchdog=QUICK)
    bus = EventBus()  # (no store: the run it resumes was never recorded)
    sub = bus.subscribe()
    error = None
    try:
        await run_benchmark(demo, config, bus, "resumed", resume=seed)
    except RunError as e:
        error = str(e)
    events = sub.drain()
    assert [e.kind for e in events][0] == "run_resumed"
    assert [e.status for e in events if e.kind == "run_ended"] == [status]
    assert (error is None) == (status == "completed"), error
    if error is not None:
        assert error.startswith("no turn got an answer: turns 0-1 ended no_response 2"), error
