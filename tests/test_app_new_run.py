"""The new-run dialog checks a run as `arena-tui run` does, before anything starts or is recorded.

Real runners, real benchmark loader, real app: a missing key, missing audio or faults for a model
that is not the simulator are shown inline, and no run (no `? / ? failed` row) is made.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena_tui.orchestration import launch as run_checks
from arena_tui.app import ArenaApp
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.screens.dialogs.new_run import NewRunDialog
from arena_tui.screens.runs import RunsScreen
from runners.base import get_runner
from tests.pilot import until

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo"
REAL = "gpt-realtime"


def text_of(widget) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, file=open(os.devnull, "w"))
    console.print(widget.render())
    return console.export_text()


@pytest.fixture
def no_keys(monkeypatch) -> tuple[str, ...]:
    keys = get_runner(REAL).key_env
    for env in keys:
        monkeypatch.delenv(env, raising=False)
    return keys


@pytest.fixture
def data_without_audio(tmp_path: Path) -> Path:
    """A --data folder holding a copy of the demo benchmark whose audio was never downloaded."""
    data = tmp_path / "data"
    shutil.copytree(DEMO, data / "noaudio_bench", ignore=shutil.ignore_patterns("audio"))
    return data


async def open_dialog(app: ArenaApp, pilot) -> NewRunDialog:
    await until(pilot, lambda: isinstance(app.screen, RunsScreen))
    await pilot.press("n")
    await until(pilot, lambda: isinstance(app.screen, NewRunDialog) and app.screen.choices)
    return app.screen


async def start_and_read(dialog: NewRunDialog, pilot) -> str:
    await pilot.click("#start")
    await until(pilot, lambda: "cannot start" in text_of(dialog.query_one("#new-run-error"))
                or not dialog.is_attached)
    return text_of(dialog.query_one("#new-run-error"))


async def test_a_missing_key_is_shown_in_the_model_list_and_stops_the_start(tmp_path: Path, no_keys) -> None:
    app = ArenaApp(tmp_path / "arena.db", tmp_path, launcher=EngineLauncher())
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert dialog.focused is dialog.query_one("#benchmark")
        labels = {alias: str(label) for label, alias in dialog.query_one("#model")._options if alias}
        assert "ready" in labels["sim"]
        assert all(k in labels[REAL] for k in no_keys), labels[REAL]
        assert dialog.query_one("#field-faults").display  # the simulator takes faults ...
        assert "needs" not in text_of(dialog.query_one("#new-run-error"))  # the simulator needs nothing
        dialog.query_one("#model").value = REAL
        await pilot.pause()
        assert not dialog.query_one("#field-faults").display  # ... no other model does
        said = text_of(dialog.query_one("#new-run-error"))  # what it needs, as soon as it is chosen
        assert f"{REAL} needs" in said and all(k in said for k in no_keys) and "local protocol fake" in said, said
        err = await start_and_read(dialog, pilot)
        assert isinstance(app.screen, NewRunDialog) and all(k in err for k in no_keys), err
        assert app.live == {} and not app.run_workers  # nothing was started, nothing recorded
        dialog.query_one("#against").value = "fake"  # against its local fake no key is needed
        await pilot.pause()
        labels = {alias: str(label) for label, alias in dialog.query_one("#model")._options if alias}
        assert "ready" in labels[REAL], labels[REAL]
        assert "needs" not in text_of(dialog.query_one("#new-run-error"))  # nothing missing any more


async def test_enter_in_a_text_field_starts_as_start_does(tmp_path: Path, data_without_audio: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db", data_without_audio, launcher=EngineLauncher())
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        dialog.query_one("#benchmark").value = "noaudio_bench"
        turns = dialog.query_one("#turns")
        turns.focus()
        await pilot.press("0", "enter")  # the same preflight as Start: this benchmark has no audio
        await until(pilot, lambda: "cannot start" in text_of(dialog.query_one("#new-run-error")))
        assert "noaudio_bench: no audio for turn(s) 0" in text_of(dialog.query_one("#new-run-error"))
        assert isinstance(app.screen, NewRunDialog) and app.live == {}


async def test_missing_audio_is_shown_before_the_run_starts(tmp_path: Path, data_without_audio: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db", data_without_audio, launcher=EngineLauncher())
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = await open_dialog(app, pilot)
        dialog.query_one("#benchmark").value = "noaudio_bench"
        dialog.query_one("#turns").value = "0-1"
        err = await start_and_read(dialog, pilot)
        assert "noaudio_bench: no audio for turn(s) 0, 1" in err, err
        assert isinstance(app.screen, NewRunDialog) and app.live == {}


def test_preflight_is_the_clis_checks(tmp_path: Path, data_without_audio: Path, no_keys) -> None:
    """Every rule `arena-tui run` applies before a run, one line each."""
    assert run_checks.preflight("demo_bench", {"model": "sim", "turns": [0]}, None) == []
    faults = run_checks.preflight("demo_bench", {"model": REAL, "fake": True, "faults": "1:no_response"}, None)
    assert faults == ["--faults only applies to --model sim"]
    assert "unknown fault 'explode'" in " ".join(run_checks.preflight("demo_bench", {"model": "sim", "faults": "1:explode"}, None))
    keys = run_checks.preflight("demo_bench", {"model": REAL}, None)
    assert all(any(k in p for p in keys) for k in no_keys), keys
    assert run_checks.preflight("demo_bench", {"model": "nope"}, None)[0].startswith("unknown model 'nope'")
    assert "turn" in run_checks.preflight("demo_bench", {"model": "sim", "turns": [99]}, None)[0]
    assert "not found" in run_checks.preflight("no_such_bench", {"model": "sim"}, tmp_path)[0]
    audio = run_checks.preflight("noaudio_bench", {"model": "sim"}, data_without_audio)
    assert len(audio) == 1 and "no audio for turn(s) 0, 1, 2" in audio[0]
