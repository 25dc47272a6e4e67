"""aiosqlite plumbing shared by the writer and the reader: connect, execute, fetch, roll back."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import aiosqlite

from arena_tui.spine.times import wall_ms

BUSY_TIMEOUT_MS = 10_000


async def connect(path: Path, *, query_only: bool, busy_timeout_ms: int) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path, isolation_level=None, timeout=busy_timeout_ms / 1000)
    await execute(conn, f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    await execute(conn, "PRAGMA foreign_keys=ON")
    await execute(conn, "PRAGMA synchronous=NORMAL")  # WAL: durable against a killed process
    if query_only:
        await execute(conn, "PRAGMA query_only=ON")
    # run time → wall time in SQL is the spine's rule itself (`spine.times.wall_ms`), never a copy of it
    await conn.create_function("wall_ms", 2, wall_ms, deterministic=True)
    return conn


async def execute(conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...] = ()) -> int:
    """Run one statement and finalise it at once (an unfinished statement pins a WAL snapshot)."""
    async with conn.execute(sql, params) as cur:
        await cur.fetchall()
        return cur.rowcount


async def fetchall(conn: aiosqlite.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    async with conn.execute(sql, params) as cur:
        return list(await cur.fetchall())


async def rollback(conn: aiosqlite.Connection) -> None:
    try:
        if conn.in_transaction:
            await execute(conn, "ROLLBACK")
    except sqlite3.Error:
        pass
