"""Pilot tests of the monitor's flows against the real engine, simulator, judge and store."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from arena_tui.app import QUIT_DIALOG, ArenaApp
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.spine.paths import exports_dir
from arena_tui.playback import output_device
from arena_tui.screens.dialogs.export import ExportDialog
from arena_tui.screens.dialogs.new_run import NewRunDialog
from arena_tui.screens.dialogs.play import PlayDialog
from arena_tui.screens.help import HelpScreen
from arena_tui.screens.replay import ReplayScreen
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.screens.turn_detail import TurnDetailScreen
from arena_tui.store import Store
from arena_tui.widgets.event_log import EventLog
from arena_tui.widgets.meters import LevelMeters
from arena_tui.widgets.turn_table import TurnTable
from arena_tui.spine.settings import RunSettings
from tests.snapshots.fixture_run import copy_db, record_demo_run
from tests.pilot import until

SIZE = (150, 45)
FAULTS = "0:barge_in=500,1:no_response"
SPEED = 5.0  # audio time / wall time: fast, but slack enough for a busy 2-core machine


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One real two-turn demo run (overlap on turn 0, retry on turn 1), recorded with audio."""
    db = tmp_path_factory.mktemp("recorded") / "arena.db"
    run_id = asyncio.run(record_demo_run(db, turns=[0, 1], faults=FAULTS, speed=SPEED, run_id="rec-1"))
    return db, run_id


async def quit_app(app: ArenaApp, pilot) -> None:
    """Press q (and, with runs still streaming, q again to the question it asks) and wait for the
    stop-and-save worker (the app exits when it is done)."""
    running = any(app.running(r) for r in app.run_workers)
    await pilot.press("q")
    if running:
        await until(pilot, lambda: app.screen.id == QUIT_DIALOG, 10)
        await pilot.press("q")
    for _ in range(600):
        if app._shutdown_task is not None and app._shutdown_task.done():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("quit did not finish")


def text_of(widget) -> str:
    """What a Static/VerticalScroll-with-Static shows, as plain text."""
    from textual.widgets import Static

    from rich.console import Console

    statics = [widget] if isinstance(widget, Static) else list(widget.query(Static))
    console = Console(width=200, record=True, file=open(os.devnull, "w"))
    for s in statics:
        console.print(s.content)
    return console.export_text()


# ------------------------------------------------------------------------------ live run


async def test_live_run_fills_table_meters_log_and_is_stored(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
    loud: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        run_id = app.start_run("demo_bench", RunSettings(model="sim", speed=SPEED, turns=[0, 1], faults=FAULTS),
                               judge="heuristic")
        app.open_run(run_id)
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(LevelMeters))
        screen = app.screen
        meters = screen.query_one(LevelMeters)

        def sample() -> bool:
            loud.append(max(m.rms_dbfs for m in meters.state.meters.values()))
            return not app.running(run_id)

        await until(pilot, sample)
        state = app.live[run_id]
        await until(pilot, lambda: all(state.turns[i].latest is not None for i in (0, 1)), 30)
        await pilot.pause(0.3)

        assert state.status == "completed"
        assert [state.turns[i].status for i in (0, 1)] == ["ok", "ok"]
        table = screen.query_one(TurnTable)
        assert table.row_count == 3  # greeting + two turns
        assert {"0", "1"} <= {k.value for k in table.rows}
        log = text_of(screen.query_one(EventLog))
        assert "OVERLAP" in log and "RETRY" in log and "run completed" in log
        assert max(loud) > -40, "the meters never showed audio while the run played"
        # the verdict column filled in from the heuristic judge, labelled as such
        verdicts = [str(table.get_cell(str(i), "verdict")) for i in (0, 1)]
        assert all(v.startswith(("PASS", "FAIL", "n/a")) for v in verdicts), verdicts
        assert "(h)" in "".join(verdicts) or "n/a" in "".join(verdicts)
        assert "judge: heuristic" in str(screen.query_one("#run-header").render())
        await quit_app(app, pilot)
    async with await Store.open(tmp_path / "arena.db") as store:
        run = await store.get_run(run_id)
        assert run is not None and run.status == "completed" and run.turns_done == 2
        assert len(await store.latest_judgements(run_id)) >= 2


async def test_quit_mid_run_keeps_it_as_interrupted(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        run_id = app.start_run("demo_bench", RunSettings(model="sim", speed=1, turns=[0, 1, 2]), judge="none")
        app.open_run(run_id)
        state = app.live[run_id]
        await until(pilot, lambda: state.current_turn == 0 and state.meters["user"].rms_dbfs > -60, 60)
        await pilot.press("q")  # a run is streaming: asked first, and "keep running" keeps it
        await until(pilot, lambda: app.screen.id == QUIT_DIALOG, 10)
        question = text_of(app.screen.query_one("#question"))
        assert "1 run is still running" in question and run_id in question and "0/3 turns" in question
        await pilot.press("escape")
        await pilot.pause(0.3)
        assert app.running(run_id) and app._shutdown_task is None
        await quit_app(app, pilot)
    assert state.status == "interrupted" and app.left_interrupted == [state]
    async with await Store.open(tmp_path / "arena.db") as store:
        run = await store.get_run(run_id)
        assert run is not None and run.status == "interrupted"
        ended = await store.events(run_id, kinds=["run_ended"])
        assert [ev.status for _, ev in ended] == ["interrupted"]
        started = await store.events(run_id, kinds=["turn_started"])
        assert any(ev.turn_index == 0 for _, ev in started), "the turn under way was not kept"


# ------------------------------------------------------------------------------ stored runs


async def test_runs_list_opens_a_stored_run_finished_and_steps_only_on_request(recorded, tmp_path: Path) -> None:
    db = copy_db(recorded[0], tmp_path)
    run_id = recorded[1]
    app = ArenaApp(db)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows
                       and app.screen.query_one("#runs").row_count, 10)
        runs = app.screen
        assert run_id in runs.rows and runs.rows[run_id]["source"] == "simulator"
        assert runs.rows[run_id]["status"] == "completed"
        assert runs.rows[run_id]["heuristic"] is True
        await pilot.press("enter")  # open: the finished run, not a replay at step 1
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        stored = app.screen
        assert not stored.stepping and stored.state.status == "completed" and stored.state.turns_done == 2
        header = str(stored.query_one("#run-header").render())
        assert "COMPLETED" in header and "[stored]" in header
        assert not any(r.status == "pending" for r in stored.state.turns.values())
        # keys that do not apply are not offered: no stopping a stored run, no stepping before `t`
        enabled = {b.binding.action for b in stored.active_bindings.values() if b.enabled}
        for action in ("stop_run", "follow", "step(1)", "step(-1)", "jump(-1)"):
            assert action not in enabled, action
        assert "toggle_stepping" in enabled
        titles = [c.title for c in app.get_system_commands(stored)]
        assert "Replay step by step" in titles and "Stop this run" not in titles

        await pilot.press("t")  # stepping is its own action
        replay = app.screen
        first = replay.state.turns_done
        assert replay.stepping and replay.state.status == "running"  # step 1: the run had not ended yet
        assert "[replay]" in str(replay.query_one("#run-header").render())
        await pilot.press("n")
        assert replay.state.turns_done == first + 1
        await pilot.press("b")
        assert replay.state.turns_done == first
        await pilot.press("end")
        assert replay.state.status == "completed" and replay.state.turns_done == 2
        assert "RETRY" in text_of(replay.query_one(EventLog))
        await pilot.press("t")
        assert not replay.stepping and replay.state.status == "completed"
        await pilot.press("escape")
        await pilot.press("t")  # from the runs list: straight into stepping
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        assert app.screen.stepping and app.screen.pos == 0


async def test_turn_detail_play_without_device_exports_wav(recorded, tmp_path: Path) -> None:
    db = copy_db(recorded[0], tmp_path)
    app = ArenaApp(db, open_run=recorded[1])
    device, reason = output_device()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        await pilot.press("end")
        table = app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("0"))
        await pilot.press("enter")
        assert isinstance(app.screen, TurnDetailScreen)
        detail = app.screen
        golden = text_of(detail.query_one("#golden"))
        assert "9 AM to 4 PM" in golden  # demo_bench turn 0's golden text, from the benchmark
        assert "voice-to-voice" in text_of(detail.query_one("#detail-latency"))
        assert "HEURISTIC" in text_of(detail.query_one("#detail-judgement"))
        assert "overlap" in text_of(detail.query_one("#detail-flags"))

        await pilot.press("p")
        assert isinstance(app.screen, PlayDialog)
        dialog = app.screen
        if device is None:  # this machine: PortAudio has no output device; the UI says why
            assert reason in text_of(dialog.query_one("#no-device"))
            assert not dialog.query("#play-btn")
        out = tmp_path / "both.wav"
        dialog.query_one("#wav-path").value = str(out)
        await pilot.click("#export-btn")
        await until(pilot, lambda: out.exists(), 10)
        assert "wrote" in text_of(dialog.query_one("#play-status"))
        data, rate = sf.read(out, dtype="int16")
        assert rate == 24000 and data.ndim == 2 and data.shape[1] == 2
        left, right = data[:, 0].astype(float), data[:, 1].astype(float)
        assert np.sqrt(np.mean(left**2)) > 100 and np.sqrt(np.mean(right**2)) > 100  # user and bot both there

        from textual.widgets import Select

        dialog.query_one("#which", Select).value = "user"
        user_out = tmp_path / "user.wav"
        dialog.query_one("#wav-path").value = str(user_out)
        await pilot.pause(0.2)
        await pilot.click("#export-btn")
        status = lambda: text_of(dialog.query_one("#play-status"))  # noqa: E731
        await until(pilot, lambda: user_out.exists() or "no user audio" in status(), 10)
        if user_out.exists():
            info = sf.info(user_out)
            assert info.channels == 1 and info.frames > 0.5 * info.samplerate
        else:  # the engine stored no per-turn user track: the dialog says so, naming the turn
            assert "no user audio stored for turn 0" in status()

        await pilot.press("escape")
        assert isinstance(app.screen, TurnDetailScreen)


async def test_rejudge_adds_a_revision_shown_in_history(recorded, tmp_path: Path) -> None:
    db = copy_db(recorded[0], tmp_path)
    run_id = recorded[1]
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        await pilot.press("end")
        table = app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("1"))
        await pilot.press("enter")
        detail = app.screen
        before = len(detail.state.turns[1].judgements)
        await pilot.press("r")
        await until(pilot, lambda: len(detail.state.turns[1].judgements) > before, 30)
        await pilot.pause(0.2)
        assert "history" in text_of(detail.query_one("#detail-judgement"))
        await pilot.press("escape")
        await pilot.press("t", "t")  # rebuilt from the stored run's own event list: it got the new revision too
        assert len(app.screen.state.turns[1].judgements) > before
    async with await Store.open(db) as store:
        revs = [j.revision for j in await store.judgements(run_id, 1)]
        assert max(revs) >= 2


async def test_filters_help_and_palette(recorded, tmp_path: Path) -> None:
    db = copy_db(recorded[0], tmp_path)
    app = ArenaApp(db, open_run=recorded[1])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        await pilot.press("t", "end")
        table = app.screen.query_one(TurnTable)
        all_rows = table.row_count
        await pilot.press("x")  # failures only
        failing = {k.value for k in table.rows}
        state = app.screen.state
        from arena_tui.widgets.turn_table import is_failure

        assert failing == {str(r.index) for r in state.turns.values() if is_failure(r)}
        await pilot.press("x")
        assert table.row_count == all_rows
        table.category = "basic_qa"
        app.screen.paint(force=True)
        assert {k.value for k in table.rows} == {"0", "1"}
        assert "category: basic_qa" in text_of(app.screen.query_one("#run-filter"))

        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_text = text_of(app.screen.query_one("#help"))
        for key_desc in ("Re-judge", "Follow", "Failures", "Play", "Next turn", "Command palette"):
            assert key_desc in help_text
        await pilot.press("escape")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for t in ("Re-judge turn", "Play turn audio", "Toggle follow live", "Replay: next turn", "Help: keys"):
            assert t in titles


async def test_new_run_dialog_rejects_bad_faults_and_starts_a_run(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
    async with app.run_test(size=(80, 24)) as pilot:  # the smallest terminal the dialog is made for
        await pilot.pause()
        await pilot.press("n")
        assert isinstance(app.screen, NewRunDialog)
        assert app.screen.focused is app.screen.query_one("#benchmark")  # the first field has focus
        app.screen.query_one("#faults").value = "2:explode"
        await pilot.click("#start")
        await until(pilot, lambda: "explode" in text_of(app.screen.query_one("#new-run-error")), 60)
        assert isinstance(app.screen, NewRunDialog)
        assert "unknown fault 'explode'" in text_of(app.screen.query_one("#new-run-error"))
        app.screen.query_one("#faults").value = ""
        app.screen.query_one("#turns").value = "0"
        app.screen.query_one("#speed").value = str(SPEED)
        app.screen.query_one("#judge").value = "none"
        await pilot.click("#start")
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable), 10)
        run_id = app.screen.state.run_id
        await until(pilot, lambda: not app.running(run_id))
        assert app.live[run_id].status == "completed"
        assert app.live[run_id].started.turn_indices == [0]
        await pilot.pause(0.2)
        header = text_of(app.screen.query_one("#run-header")).splitlines()[0]
        assert "COMPLETED" in header and len(header.rstrip()) <= 80  # the status fits at 80 columns
        enabled = {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}
        assert "stop_run" not in enabled and "play" in enabled  # a finished run offers no `k Stop run`


async def test_new_run_against_a_provider_fake_from_the_dialog(tmp_path: Path) -> None:
    """Another provider than the simulator, started from the TUI: Grok against its local fake."""
    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("n")
        dialog = app.screen
        assert isinstance(dialog, NewRunDialog)
        await until(pilot, lambda: dialog.choices, 60)
        dialog.query_one("#model").value = "grok-realtime"
        dialog.query_one("#against").value = "fake"
        dialog.query_one("#turns").value = "0"
        dialog.query_one("#speed").value = "3"
        dialog.query_one("#judge").value = "none"
        await pilot.click("#start")
        await until(pilot, lambda: isinstance(app.screen, RunScreen) and app.screen.query(TurnTable), 10)
        run_id = app.screen.state.run_id
        await until(pilot, lambda: not app.running(run_id), 90)
        state = app.live[run_id]
        assert state.status == "completed", state.log
        assert state.started.provider == "grok" and state.started.simulator  # labelled: scripted answers
        assert state.started.config["fake"] is True
        assert state.turns[0].result is not None and state.turns[0].result.status == "ok"


async def test_unreadable_database_is_a_message_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "arena.db"
    bad.write_bytes(b"this is not a database" * 100)
    app = ArenaApp(bad)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        assert app.store is None and "cannot open database arena.db" in app.store_error
        assert "store unavailable" in text_of(app.screen.query_one("#runs-status"))
        await pilot.press("t")  # replay with no store: a notice
        assert isinstance(app.screen, RunsScreen)


# ------------------------------------------------------------------------------ fixes of issue #4


class GatedApp(ArenaApp):
    """The real app, with the benchmark lookup of a replay held until the test lets it go."""

    CSS_PATH = str(Path(sys.modules[ArenaApp.__module__].__file__).with_name("app.tcss"))  # not tests/

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.specs_asked = asyncio.Event()
        self.specs_release = asyncio.Event()

    async def load_benchmark(self, run_id: str):
        self.specs_asked.set()
        await self.specs_release.wait()
        return await super().load_benchmark(run_id)


async def test_replay_is_not_reset_by_its_own_late_load(recorded, tmp_path: Path) -> None:
    """The cause of the old flaky re-judge test: the replay said it was loaded (`stops`) while it still
    awaited the benchmark, so a key pressed then was undone by the load's final show(0)."""
    db = copy_db(recorded[0], tmp_path)
    app = GatedApp(db, open_run=recorded[1])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.specs_asked.is_set(), 10)
        replay = app.screen
        assert not replay.stops, "the replay claims to be loaded before its benchmark specs are"
        await pilot.press("t")  # step through, asked for while loading: kept by the load
        app.specs_release.set()
        await until(pilot, lambda: replay.stops, 10)
        assert replay.stepping and replay.pos == 0
        await pilot.press("end")
        await pilot.pause(0.2)
        assert replay.pos == len(replay.stops) - 1
        assert replay.state.turns[1].result is not None and replay.state.status == "completed"
        assert replay.state.turns[0].spec is not None  # the specs arrived with the events


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
async def test_new_run_dialog_fits_small_terminals(tmp_path: Path, size: tuple[int, int]) -> None:
    from textual.geometry import Region

    app = ArenaApp(tmp_path / "arena.db", launcher=EngineLauncher())
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause(0.3)
        dialog = app.screen
        assert isinstance(dialog, NewRunDialog)
        screen = Region(0, 0, *size)
        box = dialog.query_one("#new-run").region
        assert screen.contains_region(box), (box, size)
        for field in dialog.query("#new-run-form Input, #new-run-form Select"):
            if not field.parent.display:  # offered only where it applies (faults: the simulator)
                continue
            content = field.content_region
            assert content.height >= 1, f"{field.id} is clipped to {content}"
            assert box.contains_region(field.region), (field.id, field.region, box)
            assert dialog.query_one("#new-run-form").region.contains_region(field.region), field.id
        start = dialog.query_one("#start")
        assert screen.contains_region(start.region) and box.contains_region(start.region)
        # and it works at this size: a bad value is reported on screen, a good form starts the run
        dialog.query_one("#faults").value = "2:explode"
        await pilot.click("#start")
        await until(pilot, lambda: "explode" in text_of(dialog.query_one("#new-run-error")), 60)
        assert isinstance(app.screen, NewRunDialog)
        assert "unknown fault 'explode'" in text_of(dialog.query_one("#new-run-error"))
        assert screen.contains_region(dialog.query_one("#start").region)
        # (a run started from the dialog at the smallest size: test_new_run_dialog_rejects_bad_faults...)


def reference_run_dir(root: Path) -> Path:
    """A run folder as the reference harness writes it (no arena_tui keys), judged by gpt-4o."""
    import json

    run = root / "runs" / "demo_bench" / "20250505T090000_gpt-realtime_abcd1234"
    run.mkdir(parents=True)
    rows = [
        {"ts": "2025-05-05T09:00:05Z", "turn": 0, "model_name": "gpt-realtime",
         "user_text": "Are you open on Saturdays?", "assistant_text": "Yes, 9 AM to 4 PM on Saturdays.",
         "tool_calls": [], "tool_results": [], "tokens": {}, "ttfb_ms": 700, "latency_ms": 900},
        {"ts": "2025-05-05T09:00:15Z", "turn": 1, "model_name": "gpt-realtime",
         "user_text": "How much is a basic tune-up?", "assistant_text": "A basic tune-up is 45 dollars.",
         "tool_calls": [], "tool_results": [], "tokens": {}, "ttfb_ms": 650, "latency_ms": 880},
    ]
    (run / "transcript.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    judged = [{**r, "scores": {"kb_grounding": True, "instruction_following": True}, "judge_reasoning": "ok"}
              for r in rows]
    (run / "gpt-4o_judged.jsonl").write_text("".join(json.dumps(r) + "\n" for r in judged))
    (run / "gpt-4o_summary.json").write_text(json.dumps({"judge_model": "gpt-4o", "heuristic": False}))
    return run


async def test_rejudge_of_an_imported_reference_run_falls_back_to_auto(tmp_path: Path, monkeypatch) -> None:
    from arena_tui.interop import import_run

    for var in ("OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)  # auto therefore means the offline heuristic
    db = tmp_path / "arena.db"
    async with await Store.open(db) as store:
        run_id = await import_run(store, reference_run_dir(tmp_path))
    app = ArenaApp(db, open_run=run_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        await pilot.press("end")
        assert app.screen.state.judges == {"reference:gpt-4o"}
        backend, label = app.judge_for(app.screen.state)
        assert backend.heuristic and "reference:gpt-4o cannot be re-run here" in label and "heuristic" in label
        table = app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("1"))
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, TurnDetailScreen)
        before = len(detail.state.turns[1].judgements)
        await pilot.press("r")
        await until(pilot, lambda: len(detail.state.turns[1].judgements) > before, 30)
        new = detail.state.turns[1].judgements[-1]
        assert new.judge == "heuristic" and new.heuristic and new.error is None and new.revision == 2
        notes = [str(n.message) for n in app._notifications]
        assert any("reference:gpt-4o cannot be re-run here" in n for n in notes), notes
        assert not any("re-judge failed" in n for n in notes), notes
    async with await Store.open(db) as store:
        revs = {(j.judge, j.revision) for j in await store.judgements(run_id, 1)}
        assert revs == {("reference:gpt-4o", 1), ("heuristic", 2)}


async def test_export_from_the_runs_list(recorded, tmp_path: Path) -> None:
    import json

    db = copy_db(recorded[0], tmp_path)
    run_id = recorded[1]
    app = ArenaApp(db)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and app.screen.rows
                       and app.screen.query_one("#runs").row_count, 10)
        await pilot.press("e")
        assert isinstance(app.screen, ExportDialog)
        dialog = app.screen
        default = Path(dialog.query_one("#export-dir").value)
        assert default == exports_dir()  # not the current checkout, not the benchmark data
        # a file where a folder should be: an error in the dialog, which stays open
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("x")
        dialog.query_one("#export-dir").value = str(blocker)
        await pilot.click("#export-go")
        await until(pilot, lambda: "export failed" in text_of(dialog.query_one("#export-status")), 10)
        assert "is a file, not a folder" in text_of(dialog.query_one("#export-status"))
        assert app.screen is dialog
        out = tmp_path / "exports"
        dialog.query_one("#export-dir").value = str(out)
        await pilot.click("#export-go")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen), 20)
        written = dialog.written
        assert written is not None and written.is_relative_to(out / "runs" / "demo_bench")
        notes = [str(n.message) for n in app._notifications]
        assert any(str(written) in n and run_id in n for n in notes), notes
    rows = [json.loads(line) for line in (written / "transcript.jsonl").read_text().splitlines()]
    assert [r["turn"] for r in rows] == [0, 1]
    assert json.loads((written / "runtime.json").read_text())["arena_tui"]["run_id"] == run_id
    assert (written / "heuristic_judged.jsonl").is_file() and (written / "conversation.wav").is_file()


async def test_runs_list_and_run_screen_agree_after_a_failed_rejudge(tmp_path: Path) -> None:
    """A passing judgement, then an errored re-judge: the runs list used to show nothing for the
    turn while the run screen showed 1/1. Both count the verdict that stands and show the error."""
    from tests.judge_helpers import EXPECTED, HTTP_500, RUN, record_rejudge_failed

    db = tmp_path / "arena.db"
    await record_rejudge_failed(db)
    app = ArenaApp(db)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RunsScreen) and RUN in app.screen.rows, 10)
        listed = app.screen.rows[RUN]["rates"]
        assert listed == EXPECTED
        assert "judge err 1" in app.screen.query_one("#runs").get_cell(RUN, "rates").plain
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ReplayScreen) and app.screen.stops, 10)
        await pilot.press("end")
        assert app.screen.state.pass_rates() == listed == EXPECTED
        table = app.screen.query_one(TurnTable)
        table.move_cursor(row=table.get_row_index("0"))
        await pilot.press("enter")
        await pilot.pause(0.2)
        shown = text_of(app.screen.query_one("#detail-judgement"))
        assert f"re-judge failed: {HTTP_500}" in shown and "error: " + HTTP_500 in shown  # header and history

