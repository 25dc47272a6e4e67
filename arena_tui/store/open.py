"""File setup: create or migrate the database, switch it to WAL, open the two connections.

Done once with the standard library before the async connections open, so a file that is not
ours, damaged, cut short or too new is refused by name (one `StoreOpenError`) before anything
is written to it — never "repaired" by adding our tables to someone else's database.
"""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import struct
import time
from collections.abc import Callable
from pathlib import Path

import aiosqlite

from .connection import BUSY_TIMEOUT_MS, connect
from .errors import StoreOpenError
from .schema import SCHEMA_VERSION, SchemaError, migrate, schema_version
from .wal import committed_pages, wal_of

log = logging.getLogger(__name__)

_HEADER = b"SQLite format 3\x00"
#: why a command that only reads (or adds to what is recorded) refuses a path with no database: a
#: mistyped --db must not become an empty database that reads as "no runs recorded"
NO_DATABASE = ("no database here (check --db / ARENA_TUI_DB); a run creates one: `arena-tui run`, `demo`, "
               "`campaign run` or `import`")


def require_database(p: Path) -> None:
    """StoreOpenError naming `p` when no database file is there (nothing is created)."""
    if not p.exists():
        raise StoreOpenError(p, NO_DATABASE)


async def open_connections(p: Path, busy_timeout_ms: int = BUSY_TIMEOUT_MS, *,
                           create: bool = True) -> tuple[aiosqlite.Connection, aiosqlite.Connection]:
    """(writer, reader) connections to `p`, creating (`create`; else refused: `require_database`)
    and migrating the file as needed."""
    if not create:
        require_database(p)
    if p.is_dir():
        raise StoreOpenError(p, "is a directory, not a database file")
    if p.parent.exists() and not p.parent.is_dir():
        raise StoreOpenError(p, f"{p.parent} is a file, not a folder")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreOpenError(p, f"cannot create its folder: {e.strerror or e}") from None
    try:
        await asyncio.to_thread(_prepare, p)
        writer = await connect(p, query_only=False, busy_timeout_ms=busy_timeout_ms)
    except SchemaError as e:
        raise StoreOpenError(p, str(e).removeprefix(f"{p}: ")) from None
    except (sqlite3.Error, OSError) as e:
        raise StoreOpenError(p, f"cannot open the database: {e}") from None
    try:
        reader = await connect(p, query_only=True, busy_timeout_ms=busy_timeout_ms)
    except (sqlite3.Error, OSError) as e:
        await writer.close()
        raise StoreOpenError(p, f"cannot open the database: {e}") from None
    return writer, reader


def _prepare(path: Path) -> None:
    """Create/migrate the file and switch it to WAL, once, before the async connections open."""
    _check_header(path)
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as e:
        raise StoreOpenError(path, f"cannot open the database: {e}") from None
    try:
        try:
            mode, version, tables = _contended(lambda: _state(conn))
        except sqlite3.OperationalError as e:
            raise StoreOpenError(path, f"cannot open the database: {e}") from None
        except sqlite3.DatabaseError as e:
            raise StoreOpenError(path, f"not an arena-tui database ({e})") from None
        if version == 0 and tables:
            ours = {"runs", "events"} <= set(tables)
            raise StoreOpenError(
                path,
                "not an arena-tui database (it holds "
                + ("our tables without a schema version" if ours else f"other tables: {', '.join(tables[:5])}")
                + "); use another --db",
            )
        if mode.lower() != "wal":
            log.warning("%s: journal mode is %s, not WAL", path, mode)
        if version != SCHEMA_VERSION:
            _contended(lambda: migrate(conn, str(path)))  # also refuses a schema newer than this code
    finally:
        conn.close()


def _state(conn: sqlite3.Connection) -> tuple[str, int, list[str]]:
    """(journal mode after asking for WAL, schema version, table names), the last two read in one
    transaction: read apart, another opener's first migration could land between them and make
    our own fresh tables look like someone else's database."""
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    conn.execute("BEGIN")
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        version = schema_version(conn)
    finally:
        conn.execute("COMMIT")
    return mode, version, tables


def _contended[T](step: Callable[[], T], wait_s: float = BUSY_TIMEOUT_MS / 1000) -> T:
    """`step`, again after a short random pause while SQLite says the file is locked, up to `wait_s`.

    The busy timeout does not cover every lock: two openers of a new file that both ask for WAL
    each hold a read lock and want the write lock, and SQLite then fails one at once rather than
    let them wait on each other for ever. Every step here can simply be taken again."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return step()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() >= deadline:
                raise
        time.sleep(random.uniform(0.005, 0.05))


def _check_header(path: Path) -> None:
    """Refuse a file cut short: its header promises more pages than the file and its WAL hold.

    SQLite would open it and fail later, on the first read or write of a missing page. A main
    file short of its header with the missing pages in its write-ahead log is whole (a disk that
    filled up mid-checkpoint leaves it so): SQLite reads those pages from the log, and the next
    checkpoint with room writes them back. Refusing it would lock the user out of every run
    recorded in it.
    """
    try:
        size = path.stat().st_size
        if size == 0:
            return  # a new (or empty) file: SQLite creates the database in it
        with path.open("rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreOpenError(path, f"cannot read the file: {e.strerror or e}") from None
    if len(head) < 100 or not head.startswith(_HEADER):
        raise StoreOpenError(path, "not an arena-tui database (not an SQLite file)")
    page_size = struct.unpack(">H", head[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change, pages = struct.unpack(">II", head[24:32])
    (valid_for,) = struct.unpack(">I", head[92:96])
    if not pages or change != valid_for or size >= pages * page_size:
        return
    wal = committed_pages(wal_of(path), page_size)
    if wal is not None and all(p in wal.pages for p in range(size // page_size + 1, wal.db_pages + 1)):
        return
    held = ", nor does its write-ahead log hold the rest" if wal is not None else ""
    raise StoreOpenError(
        path, f"the database file is truncated ({size} bytes; its header says {pages} pages of {page_size}{held})"
    )
