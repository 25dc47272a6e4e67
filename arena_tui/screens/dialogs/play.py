"""Play a turn's stored audio, or write it to a WAV where nothing can play."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from arena_tui.spine.paths import exports_dir
from ...playback import NoAudio, PlaybackError, Which, export_wav, output_device, turn_audio
from ...run_view import RunState
from ..base import ArenaDialog


class PlayDialog(ArenaDialog[None]):
    """Play a turn's user, bot or both (stereo) audio; without an output device, write a WAV."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("s", "stop", "Stop")]

    def __init__(self, state: RunState, turn: int) -> None:
        super().__init__()
        self.state = state
        self.turn = turn
        self.device, self.device_note = output_device()

    def compose(self) -> ComposeResult:
        label = "greeting" if self.turn == -1 else f"turn {self.turn}"
        with Vertical(classes="dialog wide", id="play"):
            yield Label(f"[b]Audio of {label}[/b]  ({self.state.run_id})")
            yield Select([("both (stereo: left user, right bot)", "both"), ("user", "user"), ("bot", "bot")],
                         value="both", allow_blank=False, id="which")
            if self.device is None:
                yield Static(f"[b yellow]Cannot play here: {self.device_note}.[/]\n"
                             "Write the audio to a WAV file instead:", id="no-device")
            else:
                yield Static(f"output device: {self.device_note}", id="device")
            yield Input(self._default_name("both"), id="wav-path")
            yield Static("", id="play-status")
            with Horizontal(classes="buttons"):
                if self.device is not None:
                    yield Button("Play", id="play-btn", variant="success")
                    yield Button("Stop", id="stop-btn")
                yield Button("Write WAV", id="export-btn", variant="primary")
                yield Button("Close", id="close-btn")

    def _default_name(self, which: str) -> str:
        t = "greeting" if self.turn == -1 else f"turn{self.turn:03d}"
        return f"{self.state.run_id}_{t}_{which}.wav"

    @on(Select.Changed, "#which")
    def which_changed(self, event: Select.Changed) -> None:
        path = self.query_one("#wav-path", Input)
        for w in ("both", "user", "bot"):
            if path.value == self._default_name(w):
                path.value = self._default_name(str(event.value))

    @property
    def which(self) -> Which:
        return cast(Which, self.query_one("#which", Select).value)  # one of the three options above

    def _status(self, text: str) -> None:
        self.query_one("#play-status", Static).update(text)

    async def _load(self) -> tuple[Any, int] | str:
        """The turn's frames and rate, or the line saying why there are none."""
        try:
            row = self.state.turns.get(self.turn)
            span = None
            if row is not None and row.started_ms is not None:
                span = (row.started_ms, row.ended_ms if row.ended_ms is not None else self.state.last_ms)
            result = row.result if row is not None else None
            store = self.arena.store
            if store is None:
                return f"[b red]cannot read audio: no database ({self.arena.store_error})[/]"
            return await turn_audio(store, self.state.run_id, self.turn, self.which, span, result)
        except NoAudio as e:
            return f"[b red]{e}[/]"
        except Exception as e:
            return f"[b red]cannot read audio: {e}[/]"

    # The workers read the audio; what follows runs through `call_later`, on this dialog's own
    # loop (Textual drops it if the dialog was closed meanwhile).
    @on(Button.Pressed, "#play-btn")
    @work(exclusive=True, group="play")
    async def play(self) -> None:
        self.call_later(self._play, await self._load())

    def _play(self, got: tuple[Any, int] | str) -> None:
        if isinstance(got, str):
            self._status(got)
            return
        frames, rate = got
        try:
            name = self.arena.player.play(frames, rate)
        except PlaybackError as e:
            self._status(f"[b red]{e}[/]")
            return
        self._status(f"playing {self.which} ({len(frames) / rate:.1f} s) on {name}")

    @on(Button.Pressed, "#stop-btn")
    def action_stop(self) -> None:
        stopped = self.arena.player.stop()
        self._status("stopped" if stopped else "nothing is playing")

    @on(Button.Pressed, "#export-btn")
    @work(exclusive=True, group="play")
    async def export(self) -> None:
        raw = self.query_one("#wav-path", Input).value.strip()
        if not raw:
            self._status("[b red]give a file name for the WAV[/]")
            return
        self.call_later(self._export, raw, await self._load())

    def _export(self, raw: str, got: tuple[Any, int] | str) -> None:
        if isinstance(got, str):
            self._status(got)
            return
        frames, rate = got
        try:
            path = export_wav(exports_dir() / Path(raw).expanduser(), frames, rate)  # a bare name: the exports folder
        except PlaybackError as e:
            self._status(f"[b red]{e}[/]")
            return
        self.last_export = path
        self._status(f"[b green]wrote {path.resolve()}[/] ({frames.shape[1]} ch, {rate} Hz, {len(frames) / rate:.1f} s)")

    @on(Button.Pressed, "#close-btn")
    def action_close(self) -> None:
        self.dismiss(None)
