"""The app's database, from mount to shutdown: opened (a file it cannot use is a notice, never a
crash), recording the bus, gating live turns until they are committed, a refused write said once
(and the runs stopped), flushed and closed last. Pipecat's logs go to a file beside it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from textual.notifications import SeverityLevel

from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import RunEvent
from arena_tui.spine.paths import log_path

from ..commit_gate import CommitGate

if TYPE_CHECKING:
    from ..store import Store


class StoreHost(Protocol):
    """What the store's life calls back on the app: say something, stop every run, log an error."""

    def notify(self, message: str, *, severity: SeverityLevel = ..., timeout: float | None = ...) -> None: ...

    def stop_all_runs(self) -> None:
        """Stop every run (in a worker: this returns at once)."""
        ...

    def log_error(self, text: str) -> None: ...


class StoreLife:
    """The app's `store` and `store_error` and what keeps them: the recorder on `bus` and the gate
    that holds a watched run's (`watched(run_id)`) turn ends until they are committed."""

    def __init__(self, db_path: Path | None, bus: EventBus, host: StoreHost, watched: Callable[[str], bool]) -> None:
        self.db_path = db_path
        self.bus = bus
        self.host = host
        self.watched = watched
        self.store: Store | None = None
        self.error: str | None = None
        self.recorder: asyncio.Task | None = None
        self.gate: CommitGate | None = None  # live turns are shown once the store has committed them

    def route_logs(self) -> None:
        """Pipecat logs through loguru straight to the real stderr, which would tear the screen:
        send warnings and errors to a file next to the database instead."""
        try:
            from loguru import logger  # deferred: loguru comes with Pipecat; it is configured only for a run
        except ImportError:
            return
        logger.remove()
        if self.db_path is not None:
            try:
                from ..store.scrub import scrub_log_record  # deferred: the UI starts, and says why, even when the store cannot load

                logger.add(log_path(self.db_path), level="WARNING", rotation="5 MB",
                           filter=scrub_log_record)
            except Exception:
                pass

    async def open(self) -> None:
        if self.db_path is None:
            self.error = "no database configured"
            return
        try:
            from ..store import Store  # deferred: the UI starts, and says why, even when the store cannot load
        except ImportError as e:
            self.error = f"the store module is not available ({e})"
            return
        try:
            self.store = await Store.open(self.db_path)
            await self.store.mark_interrupted_stale()
            self.recorder = self.store.start_recording(self.bus)
            acks = self.store.committed.subscribe(accept=lambda e: e.kind == "turn_ended")
            self.gate = CommitGate(acks, self.watched)
        except Exception as e:  # a corrupt or unreadable DB must not crash the UI
            self.store, self.error = None, f"cannot open database {self.db_path.name}: {e}"
            self.host.notify(self.error, severity="error", timeout=10)

    def release(self, events: list[RunEvent]) -> tuple[list[RunEvent], list[RunEvent]]:
        """(the events to show now, the turn ends never recorded): a turn is shown once committed
        (`CommitGate`); a write the file refused is said first."""
        if self.gate is None:
            return events, []
        self.check_failure()
        return self.gate.release(events)

    def check_failure(self) -> None:
        """The file refused a write: say so once and stop the runs (nothing more is recorded)."""
        failure = self.store.write_failure if self.store is not None else None
        if failure is None or self.gate is None or self.gate.failed:
            return
        self.gate.failed = True
        self.error = str(failure)
        self.host.notify(f"{failure}; runs stopped", severity="error", timeout=30)
        self.host.stop_all_runs()

    async def flush(self) -> None:
        """Everything published so far committed (a store that cannot write has said so already)."""
        if self.store is not None:
            try:
                await asyncio.wait_for(self.store.flush(), 15)
            except Exception:
                pass

    async def close(self) -> None:
        if self.store is not None:
            try:
                await asyncio.wait_for(self.store.flush(), 15)
                await asyncio.wait_for(self.store.close(), 15)
            except Exception as e:
                self.host.log_error(f"store close: {e}")
            self.store = None
