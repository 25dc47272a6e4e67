"""Modal dialogs: confirm, new run, category filter, play/export a turn's audio."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static

from arena_tui.spine.judges import AUTO, HEURISTIC, KINDS_OR_NONE, NONE
from arena_tui.spine.paths import exports_dir
from ..playback import NoAudio, PlaybackError, Which, export_wav, output_device, turn_audio
from ..launcher import Launcher
from ..run_view import RunState


class ConfirmDialog(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("y", "yes", "Yes", show=False)]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.question)
            with Horizontal(classes="buttons"):
                yield Button("Yes", id="yes", variant="error")
                yield Button("No", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class CategoryDialog(ModalScreen[str | None]):
    """Pick a category to filter the turn table by ('' clears the filter)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, categories: list[str], current: str | None) -> None:
        super().__init__()
        self.categories = categories
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Show only turns of category:")
            options = [("(all categories)", "")] + [(c, c) for c in self.categories]
            yield Select(options, value=self.current or "", allow_blank=False, id="category")
            with Horizontal(classes="buttons"):
                yield Button("Apply", id="apply", variant="primary")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed, "#apply")
    def apply(self) -> None:
        self.dismiss(str(self.query_one("#category", Select).value or ""))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


JUDGE_LABELS = {AUTO: "auto (LLM if a key is set, else heuristic)", HEURISTIC: "heuristic (offline)",
                "openai": "OpenAI", "bedrock": "Bedrock"}
# every kind (`spine.judges`): auto first, then the offline judge, the LLM judges, none last
JUDGES = [(JUDGE_LABELS.get(k, k), k) for k in sorted(KINDS_OR_NONE, key=lambda k: (k != AUTO, k != HEURISTIC, k == NONE))]


CHROME_ROWS = 10  # new-run dialog rows that are not fields: border 2, padding 2, title 1, error 1, buttons 4


AGAINST = [
    ("the real service (key from the environment)", "service"),
    ("its local protocol fake (no key; scripted answers)", "fake"),
]


class NewRunDialog(ModalScreen[dict[str, Any] | None]):
    """Benchmark, model/provider, simulator faults and judge for a new run.

    The model list says what each alias still needs (missing keys, packages); faults are offered
    only for the simulator; Start runs the same preflight as `arena-tui run` (in a thread: it loads
    the runner modules) and shows every problem here, so nothing is started that would fail.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    NewRunDialog #new-run { max-width: 100%; }
    NewRunDialog #new-run-form { height: auto; }
    NewRunDialog .field { height: auto; }
    NewRunDialog .field > Label { width: 18; }
    NewRunDialog .field > Input, NewRunDialog .field > Select { width: 1fr; }
    """

    def __init__(self, data_dir: Path | None, launcher: Launcher) -> None:
        """`launcher`: the app's (`models()`, `preflight(benchmark, config, data_dir)`, `parse_turns`)."""
        super().__init__()
        self.data_dir = data_dir
        self.launcher = launcher
        self.choices: dict[str, Any] = {}

    def _benchmarks(self) -> tuple[list[tuple[str, str]], str]:
        """(label, name) options and the default: the first benchmark with local data, else the demo."""
        options: list[tuple[str, str]] = []
        default = ""
        try:
            from benchmarks.registry import available_benchmarks  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read

            for b in available_benchmarks(self.data_dir):
                name = str(getattr(b, "name", b))
                local = getattr(b, "path", True) is not None and not getattr(b, "problems", None)
                options.append((name if local else f"{name} (not downloaded)", name))
                if local and not default:
                    default = name
        except Exception:
            pass
        if "demo_bench" not in [n for _, n in options]:
            options.insert(0, ("demo_bench", "demo_bench"))
        return options, default or "demo_bench"

    def compose(self) -> ComposeResult:
        options, default = self._benchmarks()
        fields: list[tuple[str, Widget]] = [
            ("benchmark", Select(options, value=default, allow_blank=False, id="benchmark")),
            ("model", Select([("sim  (simulator; ready)", "sim")], value="sim", allow_blank=False, id="model")),
            ("against", Select(AGAINST, value="service", allow_blank=False, id="against")),
            ("simulator faults", Input("", id="faults", placeholder="e.g. 1:no_response,2:barge_in")),
            ("turns", Input("", id="turns", placeholder="all, or e.g. 0-4,7")),
            ("speed", Input("1.0", id="speed", placeholder="1.0 = real time")),
            ("judge", Select(JUDGES, value="auto", allow_blank=False, id="judge")),
        ]
        with Vertical(classes="dialog wide", id="new-run"):
            yield Label("[b]New run[/b]", id="new-run-title")
            with VerticalScroll(id="new-run-form"):
                for label, widget in fields:
                    with Horizontal(classes="field", id=f"field-{widget.id}"):
                        yield Label(label)
                        yield widget
            yield Static("", id="new-run-error")
            with Horizontal(classes="buttons"):
                yield Button("Start", id="start", variant="success")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.fit(self.app.size.height)
        self.query_one("#benchmark", Select).focus()
        self._sim_only()
        self.load_models()

    @work(exclusive=True, group="new-run-models")
    async def load_models(self) -> None:
        """Fill the model list from the runners (their import takes a moment: off the UI loop)."""
        try:
            choices = await asyncio.to_thread(self.launcher.models)
        except Exception as e:
            self.call_later(self._error_line, Text(f"cannot list models: {e}", "bold red"))
            return
        self.call_later(self._models_loaded, choices)

    def _models_loaded(self, choices: list) -> None:
        self.choices = {c.alias: c for c in choices}
        self._model_labels()

    def _model_labels(self) -> None:
        if not self.choices:
            return
        fake = self.query_one("#against", Select).value == "fake"
        model = self.query_one("#model", Select)
        current = model.value if model.value in self.choices else "sim"
        with model.prevent(Select.Changed):
            model.set_options([(c.label(fake), c.alias) for c in self.choices.values()])
            model.value = current

    def _is_sim(self) -> bool:
        alias = self.query_one("#model", Select).value
        choice = self.choices.get(str(alias))
        return choice.simulated if choice is not None else alias == "sim"

    def _sim_only(self) -> None:
        """Faults are a simulator feature, and `against` means nothing for it: shown only where they apply."""
        sim = self._is_sim()
        self.query_one("#field-faults").display = sim
        self.query_one("#field-against").display = not sim

    @on(Select.Changed, "#model")
    def model_changed(self) -> None:
        self._sim_only()
        self._error_line("")

    @on(Select.Changed, "#against")
    def against_changed(self) -> None:
        self._model_labels()

    def on_resize(self, event: events.Resize) -> None:
        self.fit(event.size.height)

    def fit(self, screen_rows: int) -> None:
        """Pick the field layout for the terminal height: every field whole, Start always on screen.

        Full (bordered, 3-row) fields need ~34 rows of dialog; below that the fields go compact
        (one row each, spaced while there is room), and if even that does not fit the form scrolls
        between a fixed title and fixed buttons.
        """
        room = int(screen_rows * 0.9) - CHROME_ROWS  # the dialog is at most 90% high (app.tcss)
        n = len(self.query(".field"))
        full = room >= n * 4
        gap = 1 if full or room >= n * 2 else 0
        for w in self.query("#new-run-form Input, #new-run-form Select"):
            w.compact = not full
            w.styles.margin = (0, 0, gap, 0)
        for label in self.query(".field > Label"):
            label.styles.padding = (1 if full else 0, 0, 0, 0)
        form = self.query_one("#new-run-form")
        form.styles.max_height = max(room, 3)

    def _form(self) -> tuple[str, dict[str, Any]]:
        """(benchmark, run config) as entered; ValueError for what cannot even be read."""
        config: dict[str, Any] = {"model": str(self.query_one("#model", Select).value)}
        sim = self._is_sim()
        if not sim and self.query_one("#against", Select).value == "fake":
            config["fake"] = True
        faults = self.query_one("#faults", Input).value.strip()
        if faults and sim:
            config["faults"] = faults
        turns = self.query_one("#turns", Input).value.strip()
        if turns and turns != "all":
            config["turns"] = self.launcher.parse_turns(turns)
        raw = self.query_one("#speed", Input).value.strip() or "1"
        try:
            speed = float(raw)
        except ValueError:
            raise ValueError(f"speed: {raw!r} is not a number") from None
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        config["speed"] = speed
        return str(self.query_one("#benchmark", Select).value), config

    @on(Button.Pressed, "#start")
    def start(self, event: Button.Pressed) -> None:
        # end the 0.2 s press effect now: Textual ignores clicks on an "-active" button, so a
        # corrected form submitted right away would otherwise be silently dropped
        event.button.remove_class("-active")
        try:
            benchmark, config = self._form()
        except Exception as e:
            self._problems([str(e)])
            return
        event.button.disabled = True
        self._error_line(Text("checking…", "italic"))
        self.check_and_start(benchmark, config)

    @work(exclusive=True, group="new-run-check")
    async def check_and_start(self, benchmark: str, config: dict[str, Any]) -> None:
        try:
            problems = await asyncio.to_thread(self.launcher.preflight, benchmark, config, self.data_dir)
        except Exception as e:
            problems = [f"cannot check the run: {e}"]
        self.call_later(self._checked, benchmark, config, problems)

    def _checked(self, benchmark: str, config: dict[str, Any], problems: list[str]) -> None:
        self.query_one("#start", Button).disabled = False
        if problems:
            self._problems(problems)
            return
        self.dismiss({"benchmark": benchmark, "config": config, "judge": str(self.query_one("#judge", Select).value)})

    def _problems(self, problems: list[str]) -> None:
        text = Text("cannot start:\n", "bold red")
        text.append("\n".join(f"• {p}" for p in problems), "red")  # plain text: messages may hold [brackets]
        self._error_line(text)

    def _error_line(self, text: Text | str) -> None:
        self.query_one("#new-run-error", Static).update(text)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class PlayDialog(ModalScreen[None]):
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
        return self.query_one("#which", Select).value  # type: ignore[return-value]

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
            return await turn_audio(self.app.store, self.state.run_id, self.turn, self.which, span, result)  # type: ignore[attr-defined]
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
            name = self.app.player.play(frames, rate)  # type: ignore[attr-defined]
        except PlaybackError as e:
            self._status(f"[b red]{e}[/]")
            return
        self._status(f"playing {self.which} ({len(frames) / rate:.1f} s) on {name}")

    @on(Button.Pressed, "#stop-btn")
    def action_stop(self) -> None:
        stopped = self.app.player.stop()  # type: ignore[attr-defined]
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


class ExportDialog(ModalScreen[Path | None]):
    """Export a stored run in the reference harness's layout to a folder the user picks.

    The export runs in a worker (it reads every event and the audio); a bad folder is shown here
    so it can be corrected, and success closes the dialog with a notice of where the run went.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, run_id: str, default_dir: Path) -> None:
        super().__init__()
        self.run_id = run_id
        self.default_dir = default_dir
        self.written: Path | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="export"):
            yield Label(f"[b]Export run[/b]  {self.run_id}", markup=True)
            yield Static("Folder to write into (a runs/<benchmark>/<time>_<model>_<id>/ folder is made in it):")
            yield Input(str(self.default_dir), id="export-dir")
            yield Static("", id="export-status")
            with Horizontal(classes="buttons"):
                yield Button("Export", id="export-go", variant="primary")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        self.query_one("#export-dir", Input).focus()

    def _status(self, text: Text | str) -> None:
        self.query_one("#export-status", Static).update(text)

    @on(Input.Submitted, "#export-dir")
    @on(Button.Pressed, "#export-go")
    def go(self) -> None:
        raw = self.query_one("#export-dir", Input).value.strip()
        if not raw:
            self._status(Text("give a folder to export into", "bold red"))
            return
        self.query_one("#export-go", Button).disabled = True
        self._status("exporting…")
        self.export(Path(raw).expanduser())

    @work(exclusive=True, group="export")
    async def export(self, dest: Path) -> None:
        app: Any = self.app
        try:
            if app.store is None:
                raise RuntimeError(f"no database: {app.store_error}")
            if dest.exists() and not dest.is_dir():
                raise NotADirectoryError(f"{dest} is a file, not a folder")
            from ..interop import export_run  # deferred: the UI starts, and says why, even when the judge cannot load

            out = await export_run(app.store, self.run_id, dest, data=app.data_dir)
        except Exception as e:  # OSError, InteropError, StoreError...: shown here, the form stays
            self.call_later(self._failed, e)
            return
        self.call_later(self._exported, out)

    def _failed(self, e: Exception) -> None:
        button = self.query_one("#export-go", Button)
        button.disabled = False
        button.remove_class("-active")  # else Textual drops a click within its 0.2 s press effect
        self._status(Text(f"export failed: {e}", "bold red"))  # plain: paths may hold [brackets]

    def _exported(self, out: Path) -> None:
        self.written = out
        self.app.notify(f"exported {self.run_id} to {out}", timeout=10)
        self.dismiss(out)

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
