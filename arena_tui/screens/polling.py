"""A screen over what another process may be writing (the runs list, campaigns).

The store is read in a worker and the result comes back as a `Read` message, drawn on the
screen's own message loop: a read that finishes while the screen is being closed (its widgets
already gone) is dropped by Textual instead of drawing into nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from .base import ArenaScreen

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark

    from ..store import Store

POLL_S = 2.0  # how often the store is read (a run or campaign may start in another terminal at any time)

T = TypeVar("T")  # what a screen's read gives (its runs' rows, its campaigns)
R = TypeVar("R")


class PollingScreen(ArenaScreen, Generic[T]):
    """A screen over what another process may be writing: the store is read in a worker now, on
    return to the screen, on `g`, and every POLL_S when something was committed (unless the last
    read is still going); the result comes back as a `Read` message and is drawn again on resize."""

    BINDINGS = [Binding("g", "reload", "Reload", show=False)]
    TABLE = ""  # the id of the table that gets focus
    MISSING = "not found"  # the error when `read` returns None
    _loading = False
    _version: int | None = None  # the store's data_version at the last successful read
    loaded: T | None = None  # the last successful read

    def __init__(self) -> None:
        super().__init__()
        # benchmark name -> its data (None: not found), read once per screen, not on every poll:
        # what a stored run's unjudged turns are charged on (`arena_tui.compare.load.load_stored`)
        self._benchmarks: dict[str, Benchmark | None] = {}

    class Read(Message, Generic[R]):
        """The worker's result, or the one line saying why there is none."""

        def __init__(self, result: R | None, error: str | None = None) -> None:
            super().__init__()
            self.result = result
            self.error = error

    async def read(self, store: Store) -> T | None:
        raise NotImplementedError

    def show(self, result: T) -> None:
        """Draw a successful read (also on resize)."""
        raise NotImplementedError

    def show_error(self, error: str | None) -> None:
        raise NotImplementedError

    def on_mount(self) -> None:
        self.query_one(f"#{self.TABLE}", DataTable).focus()
        self.load()
        self.set_interval(POLL_S, self._tick)

    def _tick(self) -> None:
        if not self._loading:
            self.load(if_changed=True)

    def on_screen_resume(self) -> None:
        self.load()

    def on_resize(self) -> None:
        if self.is_mounted and self.loaded is not None:
            self.call_after_refresh(self.show, self.loaded)

    def action_reload(self) -> None:
        self.load()

    @work(exclusive=True, group="poll")
    async def load(self, if_changed: bool = False) -> None:
        """Read and post the result; a timer's poll (`if_changed`) reads only when something was
        committed since the last read (a full read of a big database every POLL_S would be a
        steady load on the UI's loop for nothing)."""
        store = self.arena.store
        if store is None:
            self.post_message(self.Read(None, f"no database: {self.arena.store_error}"))
            return
        self._loading = True
        try:
            version = await store.data_version()  # before the read: a commit during it is seen next time
            if if_changed and version == self._version:
                return
            result = await self.read(store)
        except Exception as e:  # StoreError, a spec this version cannot read: one line, the screen stays
            self.post_message(self.Read(None, str(e) or type(e).__name__))
            return
        finally:
            self._loading = False
        self._version = version
        self.post_message(self.Read(result, None if result is not None else self.MISSING))

    def on_polling_screen_read(self, message: PollingScreen.Read[T]) -> None:
        if message.result is None:
            self.show_error(message.error)
            return
        self.loaded = message.result
        self.show(message.result)
