"""The new-run dialog: benchmark, model (a cascade typed in), the run options it offers (against
what, turns, speed, whose voice: the benchmark's speakers, the acoustic condition, the reasoning
effort, who closes the user's turn, faults: each an option's `dialog` field, `spine.settings.OPTIONS`)
and judge, checked by the launcher's preflight before anything starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static

from arena_tui.spine.judges import DIALOG as JUDGES
from arena_tui.spine.settings import BY_KEY, SPEAKERS, DialogField, RunSettings, build_settings, options
from arena_tui.spine.source import TTS
from ...launcher import Launcher, ModelChoice, RunRequest
from ..base import ArenaDialog



CHROME_ROWS = 10  # new-run dialog rows that are not fields: border 2, padding 2, title 1, error 1, buttons 4


#: the run options the dialog offers, each its field (`spine.settings.OPTIONS`, in its order)
FIELDS: tuple[tuple[str, DialogField], ...] = tuple((o.key, o.dialog) for o in options("dialog") if o.dialog is not None)
#: the reasoning effort field's hint when the model takes none (`--effort`; one that does says what it takes)
NO_EFFORT = BY_KEY["effort"].dialog.placeholder if BY_KEY["effort"].dialog else ""


def speaker_label(name: str) -> str:
    """A speaker as the dialog offers it: the benchmark's TTS audio, or a human speaker's recordings."""
    return "tts (the benchmark's synthesised audio)" if name == TTS else f"{name} (human recordings: real_audio/{name}/)"


class NewRunDialog(ArenaDialog[RunRequest | None]):
    """Benchmark, model/provider, simulator faults and judge for a new run.

    The model list says what each alias still needs (missing keys, packages), and so does the line
    above the buttons as soon as a model is chosen; faults are offered only for the simulator; Start
    (or enter in a text field) runs the same preflight as `arena-tui run` (in a thread: it loads
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
        """`launcher`: the app's (`models()`, `preflight(benchmark, settings, data_dir)`)."""
        super().__init__()
        self.data_dir = data_dir
        self.launcher = launcher
        self.choices: dict[str, ModelChoice] = {}

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
            ("cascade", Input("", id="cascade", placeholder="cascade:<stt>+<llm>+<tts>")),
            *((f.label, self._widget(f, default)) for _, f in FIELDS),
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

    def _widget(self, field: DialogField, benchmark: str) -> Widget:
        """An option's field: an Input, or a Select of its choices (the speakers: `benchmark`'s)."""
        if field.choices is None:
            return Input(field.initial, id=field.id, placeholder=field.placeholder)
        offered = self._speakers(benchmark) if field.choices == SPEAKERS else list(field.choices)
        return Select(offered, value=field.initial, allow_blank=False, id=field.id)

    def _speakers(self, benchmark: str) -> list[tuple[str, str]]:
        """Whose voice `benchmark`'s user audio can be: tts, then each human speaker it has recordings of."""
        try:
            from benchmarks.registry import speakers  # deferred: benchmark reading (pydantic models, jsonschema) loads only when a benchmark is read

            names = speakers(benchmark, self.data_dir)
        except Exception:  # (one that cannot be read: the preflight says why at Start)
            names = [TTS]
        return [(speaker_label(n), n) for n in names]

    @on(Select.Changed, "#benchmark")
    def benchmark_changed(self) -> None:
        """The speakers offered are the chosen benchmark's (tts when it has no one else's)."""
        field = self.query_one("#speaker", Select)
        offered = self._speakers(str(self.query_one("#benchmark", Select).value))
        keep = field.value if field.value in [n for _, n in offered] else TTS
        with field.prevent(Select.Changed):
            field.set_options(offered)
            field.value = keep

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
        self._sim_only()
        self._needs_line()

    def _choice(self) -> ModelChoice | None:
        """The chosen model's `ModelChoice` (None before the list is loaded)."""
        return self.choices.get(str(self.query_one("#model", Select).value))

    def _needs_line(self) -> None:
        """What the chosen model still needs, said when it is chosen (not only after Start)."""
        choice = self._choice()
        if choice is None:
            return
        if choice.typed:
            self._error_line(Text(f"type the cascade, e.g. {choice.typed}", "yellow"))
            return
        fake = not choice.simulated and self.query_one("#against", Select).value == "fake"
        missing = choice.needs_fake if fake else choice.needs
        if unready := choice.unready(fake):
            self._error_line(Text(f"{choice.alias}: {unready} (start its server, or run against its local protocol fake)",
                                  "bold yellow"))
            return
        if not missing:
            self._error_line("")
            return
        text = Text(f"{choice.alias} needs {', '.join(missing)}", "bold yellow")
        if not fake and not choice.simulated and not choice.needs_fake:
            text.append(": set it before starting the monitor, or run against its local protocol fake (no key)",
                        "yellow")
        self._error_line(text)

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
        """Faults are a simulator feature, and `against` means nothing for it; the cascade field is for
        a typed model, server VAD off for a protocol that lets our commit close the turn: each shown
        only where it applies."""
        sim = self._is_sim()
        choice = self._choice()
        shown = {"always": True, "sim": sim, "not_sim": not sim, "manual_commit": bool(choice is not None and choice.manual_commit)}
        for _, field in FIELDS:
            self.query_one(f"#field-{field.id}").display = shown[field.shown]
        self.query_one("#field-cascade").display = bool(choice is not None and choice.typed)
        effort = choice.effort if choice is not None else ""
        self.query_one("#effort", Input).placeholder = f"the model's default, or {effort}" if effort else NO_EFFORT
        self.fit(self.app.size.height)

    @on(Select.Changed, "#model")
    def model_changed(self) -> None:
        self._sim_only()
        self._needs_line()

    @on(Select.Changed, "#against")
    def against_changed(self) -> None:
        self._model_labels()
        self._needs_line()

    @on(Input.Submitted)
    def submitted(self) -> None:
        """Enter in a text field starts, as the Start button does."""
        start = self.query_one("#start", Button)
        if not start.disabled:
            start.press()

    def on_resize(self, event: events.Resize) -> None:
        self.fit(event.size.height)

    def fit(self, screen_rows: int) -> None:
        """Pick the field layout for the terminal height: every field whole, Start always on screen.

        Full (bordered, 3-row) fields need ~34 rows of dialog; below that the fields go compact
        (one row each, spaced while there is room), and if even that does not fit the form scrolls
        between a fixed title and fixed buttons.
        """
        error = self.query_one("#new-run-error", Static)  # what it says past its one row takes room from the form
        extra = max(len(Text(str(error.content)).wrap(self.app.console, error.size.width)) - 1, 0) \
            if error.size.width and str(error.content) else 0
        room = int(screen_rows * 0.9) - CHROME_ROWS - extra  # the dialog is at most 90% high (app.tcss)
        n = sum(1 for f in self.query(".field") if f.display)
        full = room >= n * 4
        gap = 1 if full or room >= n * 2 else 0
        for w in self.query("#new-run-form Input, #new-run-form Select"):
            if isinstance(w, (Input, Select)):  # what the query selects: both have Textual's compact form
                w.compact = not full
            w.styles.margin = (0, 0, gap, 0)
        for label in self.query(".field > Label"):
            label.styles.padding = (1 if full else 0, 0, 0, 0)
        form = self.query_one("#new-run-form")
        form.styles.max_height = max(room, 3)

    def _form(self) -> tuple[str, RunSettings]:
        """(benchmark, run settings) as entered, built by the one builder every way of starting a
        run uses (`spine.settings.build_settings`: the same bounds and messages as the flags);
        SettingsError for what it refuses. A typed model (a cascade) is checked at Start by the
        preflight, by the rule `arena-tui run --model` uses."""
        model = str(self.query_one("#model", Select).value)
        choice = self._choice()
        if choice is not None and choice.typed:
            model = self.query_one("#cascade", Input).value.strip()
            if not model:
                raise ValueError(f"cascade: type one, e.g. {choice.typed}")
        chosen = {key: field.choice(self._value(field)) for key, field in FIELDS
                  if self.query_one(f"#field-{field.id}").display}  # a field not shown: its option's default
        return str(self.query_one("#benchmark", Select).value), build_settings(model, **chosen)

    def _value(self, field: DialogField) -> str:
        """What a field holds as typed or chosen."""
        widget = self.query_one(f"#{field.id}")
        return str(widget.value if isinstance(widget, (Input, Select)) else "")

    @on(Button.Pressed, "#start")
    def start(self, event: Button.Pressed) -> None:
        # end the 0.2 s press effect now: Textual ignores clicks on an "-active" button, so a
        # corrected form submitted right away would otherwise be silently dropped
        event.button.remove_class("-active")
        try:
            benchmark, settings = self._form()
        except ValueError as e:  # SettingsError: one line naming the setting
            self._problems([str(e)])
            return
        event.button.disabled = True
        self._error_line(Text("checking…", "italic"))
        self.check_and_start(benchmark, settings)

    @work(exclusive=True, group="new-run-check")
    async def check_and_start(self, benchmark: str, settings: RunSettings) -> None:
        try:
            problems = await asyncio.to_thread(self.launcher.preflight, benchmark, settings, self.data_dir)
        except Exception as e:
            problems = [f"cannot check the run: {e}"]
        self.call_later(self._checked, benchmark, settings, problems)

    def _checked(self, benchmark: str, settings: RunSettings, problems: list[str]) -> None:
        self.query_one("#start", Button).disabled = False
        if problems:
            self._problems(problems)
            return
        self.dismiss(RunRequest(benchmark, settings, str(self.query_one("#judge", Select).value)))

    def _problems(self, problems: list[str]) -> None:
        """One problem on one line (`cannot start: …`), more as a list under it."""
        text = Text("cannot start:" + (" " if len(problems) == 1 else "\n"), "bold red")
        # plain text: messages may hold [brackets]
        text.append(problems[0] if len(problems) == 1 else "\n".join(f"• {p}" for p in problems), "red")
        self._error_line(text)

    def _error_line(self, text: Text | str) -> None:
        self.query_one("#new-run-error", Static).update(text)
        self.fit(self.app.size.height)  # a long one (a list of what --faults takes) never pushes Start off screen

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
