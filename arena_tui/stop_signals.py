"""SIGTERM, SIGHUP and SIGINT end a headless run the same way: the run task is cancelled, so the
engine records it as interrupted and the caller still prints its summary; the exit status then
says which signal it was (128 + signal number, as a shell reports a killed process).

Once the run is over (`disarm`), a signal no longer cancels: the cleanup that follows (the store's
last flush, its close, the summary) must finish, or a SIGTERM that lands in it leaves a traceback
and exit 1 instead of a recorded run. A second signal is the user insisting: the process then
ends by that signal at once, as it would without a handler.
"""

from __future__ import annotations

import asyncio
import os
import signal

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class StopSignals:
    """While entered, the listed signals cancel `task` (default: the current task)."""

    def __init__(self, task: asyncio.Task | None = None, signals: tuple[signal.Signals, ...] = SIGNALS) -> None:
        self._task = task
        self._signals = signals
        self.received: signal.Signals | None = None
        self._armed = True
        self._installed: list[signal.Signals] = []

    def exit_status(self, default: int = 130) -> int:
        """128 + the signal that stopped the run, else `default` (ctrl+c: 130)."""
        return 128 + int(self.received) if self.received is not None else default

    def disarm(self) -> None:
        """The run is over: from now on a first signal is only noted, the cleanup goes on."""
        self._armed = False

    def _on_signal(self, sig: signal.Signals) -> None:
        if self.received is not None:  # the second one: end now, by that signal
            self._uninstall()
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            return
        self.received = sig
        if self._armed:
            assert self._task is not None
            self._task.cancel()

    def __enter__(self) -> StopSignals:
        loop = asyncio.get_running_loop()
        self._task = self._task or asyncio.current_task()
        for sig in self._signals:
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread / no such signal here
                continue
            self._installed.append(sig)
        return self

    def _uninstall(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    def __exit__(self, *exc: object) -> None:
        self._uninstall()
