"""File setup: create or migrate the database, switch it to WAL, open the two connections.

Done once with the standard library before the async connections open, so a file that is not
ours, damaged or too new is refused by name before anything is written to it.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import aiosqlite

from .connection import BUSY_TIMEOUT_MS, connect
from .errors import StoreError
from .schema import SCHEMA_VERSION, SchemaError, migrate, schema_version

log = logging.getLogger(__name__)


async def open_connections(p: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
    """(writer, reader) connections to `p`, creating and migrating the file as needed."""
    if p.exists() and p.is_dir():
        raise StoreError(f"{p}: is a directory, not a database file")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(_prepare, p)
        writer = await connect(p, query_only=False, busy_timeout_ms=busy_timeout_ms)
        reader = await connect(p, query_only=True, busy_timeout_ms=busy_timeout_ms)
    except SchemaError as e:
        raise StoreError(str(e)) from None
    except (sqlite3.Error, OSError) as e:
        raise StoreError(f"{p}: cannot open the database: {e}") from None
    return writer, reader


def _prepare(path: Path) -> None:
    """Create/migrate the file and switch it to WAL, once, before the async connections open."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        try:
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not an arena-tui database ({e})") from None
        if mode.lower() != "wal":
            log.warning("%s: journal mode is %s, not WAL", path, mode)
        if schema_version(conn) != SCHEMA_VERSION:
            migrate(conn, str(path))  # also refuses a schema newer than this code
    finally:
        conn.close()
