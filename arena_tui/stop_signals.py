"""SIGTERM and SIGHUP end a headless run the way ctrl+c does: the run task is cancelled, so the
engine records it as interrupted and the caller still prints its summary; the exit status then
says which signal it was (128 + signal number, as a shell reports a killed process)."""

from __future__ import annotations

import asyncio
import signal

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """While entered, the listed signals cancel `task` (default: the current task)."""

    def __init__(self, task: asyncio.Task | None = None, signals: tuple[signal.Signals, ...] = SIGNALS) -> None:
        self._task = task
        self._signals = signals
        self.received: signal.Signals | None = None
        self._installed: list[signal.Signals] = []

    def exit_status(self, default: int = 130) -> int:
        """128 + the signal that stopped the run, else `default` (ctrl+c: 130)."""
        return 128 + int(self.received) if self.received is not None else default

    def _on_signal(self, sig: signal.Signals) -> None:
        if self.received is None:
            self.received = sig
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

    def __exit__(self, *exc: object) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()
