"""The new-run dialog checks a run as `arena-tui run` does, before anything starts or is recorded.

Real runners, real benchmark loader, real app: a missing key, missing audio or faults for a model
that is not the simulator are shown inline, and no run (no `? / ? failed` row) is made.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena_tui.app import ArenaApp
from arena_tui.orchestration.launch import EngineLauncher
from arena_tui.orchestration.preflight import preflight
from arena_tui.run_view import RunState
from arena_tui.screens.dialogs.new_run import NewRunDialog
from arena_tui.screens.run import RunScreen
from arena_tui.screens.runs import RunsScreen
from arena_tui.spine.settings import SettingsError, build_settings
from runners.base import get_runner
from tests.pilot import until
from tests.spoken import LEAD_MS, make_spoken, tts_ms

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
    """Every rule `arena-tui run` applies before a run, one line each: the settings' own bounds
    where they are built, the rest in the one preflight."""
    def problems(bench: str, data: Path | None = None, **settings) -> list[str]:
        return preflight(bench, build_settings(**settings), data).problems

    assert problems("demo_bench", model="sim", turns=[0]) == []
    with pytest.raises(SettingsError, match=r"^--faults only applies to --model sim$"):
        build_settings(REAL, fake=True, faults="1:no_response")
    with pytest.raises(SettingsError, match="unknown fault 'explode'"):
        build_settings(faults="1:explode")
    keys = problems("demo_bench", model=REAL)
    assert all(any(k in p for p in keys) for k in no_keys), keys
    assert problems("demo_bench", model="nope")[0].startswith("unknown model 'nope'")
    assert problems("demo_bench", model="sim", turns=[99]) == ["demo_bench: no turn(s) 99 (turns are 0-9)"]
    assert "not found" in problems("no_such_bench", tmp_path, model="sim")[0]
    audio = problems("noaudio_bench", data_without_audio, model="sim")
    assert len(audio) == 1 and "no audio for turn(s) 0, 1, 2" in audio[0]


async def start_run(app: ArenaApp, pilot, dialog: NewRunDialog, timeout: float = 90) -> RunState:
    """Start the dialog's run and wait for its end; the run's live state."""
    await pilot.click("#start")
    await until(pilot, lambda: isinstance(app.screen, RunScreen), 30)
    run_id = app.screen.state.run_id
    await until(pilot, lambda: not app.running(run_id), timeout)
    return app.live[run_id]


def shown(dialog: NewRunDialog, field: str) -> bool:
    return bool(dialog.query_one(f"#field-{field}").display)


async def test_speaker_and_server_vad_off_chosen_in_the_dialog_reach_the_run(tmp_path: Path) -> None:
    """person1's recordings and our commit closing the turn: the run plays that speaker's WAV and
    stores both in its config (its header says so); server VAD is offered only where the protocol
    lets our commit close the turn, and a speaker a text model cannot take is refused in one line."""
    data = tmp_path / "data"
    make_spoken(data / "spoken_bench")
    app = ArenaApp(tmp_path / "arena.db", data, launcher=EngineLauncher())
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        assert shown(dialog, "speaker") and shown(dialog, "vad")  # the simulator speaks OpenAI Realtime
        assert not shown(dialog, "cascade")
        dialog.query_one("#model").value = "gemini-native-audio"  # no client commit in its protocol
        await pilot.pause()
        assert not shown(dialog, "vad")
        dialog.query_one("#model").value = "gpt-4.1"
        dialog.query_one("#against").value = "fake"
        dialog.query_one("#benchmark").value = "demo_bench"
        await pilot.pause()
        assert [n for _, n in dialog.query_one("#speaker")._options] == ["tts"]  # demo_bench has no one else's voice
        dialog.query_one("#benchmark").value = "spoken_bench"
        await pilot.pause()  # the speakers offered become spoken_bench's
        assert [n for _, n in dialog.query_one("#speaker")._options] == ["tts", "person1", "person2"]
        dialog.query_one("#speaker").value = "person1"
        err = await start_and_read(dialog, pilot)
        assert err.strip() == "cannot start: text: --speaker person1 needs an audio model (a text model reads the turn's text)", err
        dialog.query_one("#model").value = "sim"
        await pilot.pause()
        assert shown(dialog, "vad")
        dialog.query_one("#vad").value = "off"
        dialog.query_one("#turns").value = "1"
        dialog.query_one("#speed").value = "10"
        dialog.query_one("#judge").value = "none"
        state = await start_run(app, pilot, dialog)
        assert state.status == "completed", state.log
        assert (state.started.config.get("speaker"), state.started.config.get("disable_vad")) == ("person1", True)
        assert "speech: person1" in state.model_label and "manual commit" in state.model_label
        played = state.turns[1].result
        assert played.status == "ok"
        heard = played.user_audio.end_ms - played.user_audio.start_ms
        assert heard == pytest.approx(tts_ms(data / "spoken_bench", 1) + LEAD_MS["person1"], abs=25)


async def test_a_cascade_typed_in_the_model_field_is_checked_as_the_cli_does_and_runs(tmp_path: Path) -> None:
    app = ArenaApp(tmp_path / "arena.db", tmp_path, launcher=EngineLauncher())
    async with app.run_test(size=(120, 40)) as pilot:
        dialog = await open_dialog(app, pilot)
        spelling = "cascade:<stt>+<llm>+<tts>"
        labels = {alias: str(label) for label, alias in dialog.query_one("#model")._options if alias}
        assert spelling in labels  # offered in the model list, typed in below it
        dialog.query_one("#model").value = spelling
        await pilot.pause()
        assert shown(dialog, "cascade") and not shown(dialog, "vad") and shown(dialog, "against")
        assert "type the cascade, e.g. cascade:" in text_of(dialog.query_one("#new-run-error"))
        err = await start_and_read(dialog, pilot)
        assert err.strip().startswith("cannot start: cascade: type one, e.g. cascade:"), err
        dialog.query_one("#cascade").focus()
        await pilot.press(*"cascade:vosk+gpt-4.1+openai-tts", "enter")  # enter starts, as Start does
        await until(pilot, lambda: "cannot start" in text_of(dialog.query_one("#new-run-error")))
        err = text_of(dialog.query_one("#new-run-error")).strip()
        assert err == ("cannot start: 'cascade:vosk+gpt-4.1+openai-tts': unknown speech-to-text 'vosk'; "
                       "known: openai-stt, deepgram, whisper"), err  # the CLI's rule and words, one line
        assert app.live == {}
        dialog.query_one("#cascade").value = "cascade:openai-stt+gpt-4.1-mini+openai-tts"
        dialog.query_one("#against").value = "fake"
        dialog.query_one("#turns").value = "1"
        dialog.query_one("#judge").value = "none"
        state = await start_run(app, pilot, dialog)
        assert state.status == "completed", state.log
        assert (state.started.model, state.started.provider) == ("cascade:openai-stt+gpt-4.1-mini+openai-tts", "cascade")
        result = state.turns[1].result
        assert result.status == "ok" and result.latencies.stages() is not None
        assert result.user_transcript == "How much is a basic tune-up?"  # what the STT heard
