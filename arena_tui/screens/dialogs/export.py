"""Export a stored run to a folder the user picks (the reference harness's layout)."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from ..base import ArenaDialog


class ExportDialog(ArenaDialog[Path | None]):
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
        arena = self.arena
        try:
            if arena.store is None:
                raise RuntimeError(f"no database: {arena.store_error}")
            if dest.exists() and not dest.is_dir():
                raise NotADirectoryError(f"{dest} is a file, not a folder")
            from ...interop import export_run  # deferred: the export code loads only when a run is exported

            out = await export_run(arena.store, self.run_id, dest, data=arena.data_dir)
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
