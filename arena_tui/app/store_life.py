"""The app's database, from mount to shutdown: opened (a file it cannot use is a notice, never a
crash), recording the bus, gating live turns until they are committed, a refused write said once
(and the runs stopped), flushed and closed last. Pipecat's logs go to a file beside it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from arena_tui.spine.paths import log_path

from ..commit_gate import CommitGate

if TYPE_CHECKING:
    from ..store import Store


class StoreLife:
    """A part of `ArenaApp`: `store`, `store_error` and what keeps them (it reads the app's `bus`,
    `live`, `notify` and `stop_runs`)."""

    db_path: Path | None
    store: Store | None
    store_error: str | None
    _recorder: asyncio.Task | None
    _gate: CommitGate | None  # live turns are shown once the store has committed them

    def _route_logs(self) -> None:
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

    async def open_store(self) -> None:
        if self.db_path is None:
            self.store_error = "no database configured"
            return
        try:
            from ..store import Store  # deferred: the UI starts, and says why, even when the store cannot load
        except ImportError as e:
            self.store_error = f"the store module is not available ({e})"
            return
        try:
            self.store = await Store.open(self.db_path)
            await self.store.mark_interrupted_stale()
            self._recorder = self.store.start_recording(self.bus)
            acks = self.store.committed.subscribe(accept=lambda e: e.kind == "turn_ended")
            self._gate = CommitGate(acks, lambda run_id: run_id in self.live)
        except Exception as e:  # a corrupt or unreadable DB must not crash the UI
            self.store, self.store_error = None, f"cannot open database {self.db_path.name}: {e}"
            self.notify(self.store_error, severity="error", timeout=10)

    def _check_store_failure(self) -> None:
        """The file refused a write: say so once and stop the runs (nothing more is recorded)."""
        failure = self.store.write_failure if self.store is not None else None
        if failure is None or self._gate is None or self._gate.failed:
            return
        self._gate.failed = True
        self.store_error = str(failure)
        self.notify(f"{failure}; runs stopped", severity="error", timeout=30)
        self.run_worker(self.stop_runs(), exclusive=False)

    async def _flush_store(self) -> None:
        """Everything published so far committed (a store that cannot write has said so already)."""
        if self.store is not None:
            try:
                await asyncio.wait_for(self.store.flush(), 15)
            except Exception:
                pass

    async def _close_store(self) -> None:
        if self.store is not None:
            try:
                await asyncio.wait_for(self.store.flush(), 15)
                await asyncio.wait_for(self.store.close(), 15)
            except Exception as e:
                self.log.error(f"store close: {e}")
            self.store = None
