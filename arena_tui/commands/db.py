"""`arena-tui db`: where the database is, how big it is, and compacting it."""

from __future__ import annotations

import argparse
import asyncio

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import db_path
from ..store import Store, StoreError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="db_action", metavar="ACTION")
    sub.add_parser("path", help="print the database file path")
    info = sub.add_parser("info", help="schema version, file sizes and row counts")
    info.add_argument("--json", action="store_true", help="as JSON")
    sub.add_parser("vacuum", help="reclaim space left by deleted runs (not while a run records)")


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


async def _info(args: argparse.Namespace) -> None:
    async with await Store.open(db_path(args.db), create=False) as store:
        info = await store.info()
    if getattr(args, "json", False):
        print(info.model_dump_json(indent=2))
        return
    print(f"path            {info.path}")
    print(f"schema version  {info.schema_version}")
    print(f"file            {_mb(info.file_bytes)} (+ WAL {_mb(info.wal_bytes)})")
    print(f"free pages      {info.freelist_pages} x {info.page_size} B")
    for table, n in info.counts.items():
        print(f"{table:15} {n}")
    print(f"audio PCM       {_mb(info.audio_bytes)} (stored as {_mb(info.audio_stored_bytes)}, lossless)")


async def _vacuum(args: argparse.Namespace) -> None:
    async with await Store.open(db_path(args.db), create=False) as store:
        before, after = await store.vacuum()
    print(f"{store.path}: {_mb(before)} -> {_mb(after)}")


def run(args: argparse.Namespace) -> int:
    action = args.db_action or "path"
    try:
        if action == "path":
            print(db_path(args.db))
        else:
            asyncio.run(_info(args) if action == "info" else _vacuum(args))
    except StoreError as e:
        raise CliError(str(e)) from None
    except OSError as e:  # e.g. the database folder cannot be created
        raise CliError(f"{e.filename or args.db}: {e.strerror or e}") from None
    return 0
