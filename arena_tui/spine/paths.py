"""Where things live: the database, the benchmark data folder, imported benchmarks, exports, the log,
a price table of the user's."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir, user_documents_dir


def db_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """--db, else ARENA_TUI_DB, else <user data dir>/arena-tui/arena.db.

    Only the name: `Store.open` creates the folder, and says in one line why it cannot."""
    raw = explicit or os.environ.get("ARENA_TUI_DB")
    return Path(raw) if raw else Path(user_data_dir("arena-tui")) / "arena.db"


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """--data, else ARENA_TUI_DATA; None means only built-in and downloaded benchmarks."""
    raw = explicit or os.environ.get("ARENA_TUI_DATA")
    return Path(raw).expanduser() if raw else None


PRICES_ENV = "ARENA_TUI_PRICES"


def prices_path(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """--prices, else ARENA_TUI_PRICES: the user's price table (`arena_tui.cost`); None: the shipped one alone."""
    raw = explicit or os.environ.get(PRICES_ENV)
    return str(raw) if raw else None


def user_benchmarks_dir() -> Path:
    """Benchmarks the user brought in (`arena-tui benchmarks import`), found by name like --data's:
    env ARENA_TUI_BENCHMARKS, else <user data dir>/arena-tui/benchmarks; never the checkout."""
    raw = os.environ.get("ARENA_TUI_BENCHMARKS")
    return Path(raw).expanduser() if raw else Path(user_data_dir("arena-tui")) / "benchmarks"


def exports_dir() -> Path:
    """Where files the user asks for (run exports, WAVs) go when no folder is given: env
    ARENA_TUI_EXPORTS, else <Documents>/arena-tui; never the benchmark data or the current checkout."""
    raw = os.environ.get("ARENA_TUI_EXPORTS")
    return (Path(raw).expanduser() if raw else Path(user_documents_dir()) / "arena-tui").resolve()


def log_path(db: Path) -> Path:
    """The log file beside a database: Pipecat's and Ray's own lines go there, never on the terminal."""
    return db.with_name("arena-tui.log")
