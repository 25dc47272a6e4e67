"""The store's error types: every message names the file and what went wrong, in one line."""

from __future__ import annotations

from pathlib import Path


class StoreError(Exception):
    """The store cannot do what was asked; the message names the file, run and event."""


class StoreOpenError(StoreError):
    """The file cannot be used as a run database (missing folder, not ours, damaged, too new)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreWriteError(StoreError):
    """The database refused a write that was not the fault of one event (read-only, damaged,
    full, held by another process): nothing more can be recorded, so whoever records must stop."""
