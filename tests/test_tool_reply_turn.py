"""A reply after a tool call stays with its turn (issue 11, "the right turn, the right calls").

Grok `--fake` runs started from the TUI filed turn 3's spoken answer (the one after its
check_availability call) under turn 4. The end-of-turn rule now holds a turn open, up to its
watchdog, while the reply to a tool answer is still due. Real engine, real Pipecat services, the
local protocol fakes on 127.0.0.1, the real store; appointment_bench from the shared data with
its audio synthesised (espeak-ng) into the test's private overlay.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from benchmarks.synthesize import EspeakBackend, synthesize_benchmark
from arena_tui.spine.settings import RunSettings
from runners.engine import run_benchmark

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng for the turn audio")

TURNS = [2, 3, 4]  # turn 3 expects check_availability, then speaks; 2 and 4 only speak


@pytest.fixture
def appointments(shared_data: Path):
    bench = load_benchmark("appointment_bench", shared_data)
    synthesize_benchmark(bench, EspeakBackend(), turns=TURNS)  # into the private overlay (conftest)
    return load_benchmark("appointment_bench", shared_data)


def tui_config(**extra) -> RunSettings:
    """The config the new-run dialog builds for "appointment_bench, grok, against the fake,
    turns 2-4, speed 10" (NewRunDialog._form: model, fake, turns, speed; nothing else)."""
    return RunSettings(**{"model": "grok", "fake": True, "turns": TURNS, "speed": 10.0, **extra})


async def _run(bench, config: RunSettings, db: Path):
    store = await Store.open(db)
    bus = EventBus()
    store.start_recording(bus)
    sub = bus.subscribe()
    try:
        run_id = await run_benchmark(bench, config, bus)
        await store.flush()
        return {r.turn_index: r for r in await store.turn_results(run_id)}, sub.drain()
    finally:
        await store.close()


def _words(text: str) -> set[str]:
    return {w.strip(".,!?—:").lower() for w in text.split()} - {""}


def assert_each_turn_has_its_own_reply(bench, results) -> None:
    golden = {t.turn_index: t.golden_text for t in bench.turns}
    three, four = results[3], results[4]
    assert [c.name for c in three.tool_calls] == ["check_availability"]
    assert three.status == "ok" and three.assistant_text, "turn 3 made its call and never spoke"
    assert three.bot_speech, "turn 3's reply has no audio in turn 3"
    for i in TURNS:  # the fakes speak the golden answer of the turn they answer
        said = _words(results[i].assistant_text)
        assert len(said & _words(golden[i])) >= 0.8 * len(said), (i, results[i].assistant_text)
    assert not four.tool_calls and four.assistant_text != three.assistant_text


async def test_the_tui_config_against_the_grok_fake_keeps_each_reply_with_its_turn(appointments, tmp_path):
    results, _ = await _run(appointments, tui_config(), tmp_path / "arena.db")
    assert_each_turn_has_its_own_reply(appointments, results)


@pytest.mark.parametrize("model", ["grok", "sim"])
async def test_a_turn_waits_for_the_reply_after_its_tool_answer(appointments, tmp_path, model):
    """With (almost) no quiet window, the turn used to end the moment the tool was answered (before
    the model could say anything); the reply is still due, so the turn waits for it. (Not zero:
    the reply's first audio needs a pipeline hop to reach the speaker after its text; a window
    shorter than that hop is not one the engine guards.)"""
    extra = {"end_of_turn": {"quiet_ms": 200.0, "drain_ms": 0.0}}
    if model == "sim":
        extra = {**extra, "model": "sim", "fake": False}
    results, events = await _run(appointments, tui_config(**extra), tmp_path / "arena.db")
    assert_each_turn_has_its_own_reply(appointments, results)
    said_after_call = [e for e in events if e.turn_index == 3 and e.kind == "transcript_delta" and e.role == "assistant"]
    call = next(e for e in events if e.kind == "tool_result" and e.turn_index == 3)
    assert said_after_call and said_after_call[-1].t_ms >= call.t_ms


async def test_the_same_run_started_from_the_new_run_dialog(appointments, shared_data: Path, tmp_path: Path) -> None:
    """The TUI path itself: the dialog's fields, its start, the app's worker, the store."""
    from arena_tui.app import ArenaApp  # deferred: the app (Textual) loads only for this test
    from arena_tui.orchestration.launch import EngineLauncher  # deferred: the app (Textual) loads only for this test
    from tests.pilot import until
    from tests.test_app_new_run import open_dialog

    app = ArenaApp(tmp_path / "arena.db", shared_data, launcher=EngineLauncher())
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        dialog.query_one("#benchmark").value = "appointment_bench"
        dialog.query_one("#model").value = "grok"
        await pilot.pause()
        dialog.query_one("#against").value = "fake"
        dialog.query_one("#turns").value = "2-4"
        dialog.query_one("#speed").value = "10"
        dialog.query_one("#judge").value = "none"
        await pilot.pause()
        await pilot.click("#start")  # the dialog's preflight passes and it starts the run
        await until(pilot, lambda: len(app.live) == 1)
        (run_id, state), = app.live.items()
        await until(pilot, lambda: not app.running(run_id), 240)
        assert state.started.config["fake"] and state.started.config["turns"] == TURNS
        results = {i: state.turns[i].result for i in TURNS}
        assert all(r is not None for r in results.values()), state.log[-5:]
        assert_each_turn_has_its_own_reply(appointments, results)
