"""`arena-tui import DIR`: read a reference run directory into the database to browse, judge, compare."""

from __future__ import annotations

import argparse
import asyncio
import shlex

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import db_path

from ..interop import AlreadyStored, InteropError, import_run
from ..store import Store, StoreError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="DIR", help="runs/<benchmark>/<ts>_<model>_<id>/ folder")
    parser.add_argument("--benchmark", help="benchmark name when the folder layout does not tell it")
    parser.add_argument("--run-id", help="id to give the imported run (default: from the folder)")


async def _main(args: argparse.Namespace) -> str:
    async with await Store.open(db_path(args.db)) as store:
        return await import_run(store, args.run_dir, benchmark=args.benchmark, run_id=args.run_id)


def run(args: argparse.Namespace) -> int:
    try:
        run_id = asyncio.run(_main(args))
    except AlreadyStored as e:  # how to delete it, in the database this command used
        db = db_path(args.db)
        raise CliError(str(AlreadyStored(e.run_id, f" --db {shlex.quote(str(db))}" if db != db_path(None) else ""))) from None
    except (StoreError, InteropError, OSError) as e:
        raise CliError(str(e)) from None
    print(f"imported as run {run_id}")
    return 0
