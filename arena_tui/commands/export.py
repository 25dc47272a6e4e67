"""`arena-tui export RUN [DIR]`: write a stored run in the reference harness's run-directory layout.

Without DIR it goes to the exports folder (`paths.exports_dir`), never into the benchmark data
or the current checkout; the full path written is printed.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from arena_tui.spine.errors import CliError
from arena_tui.spine.paths import db_path, exports_dir

from ..interop import InteropError, export_run
from ..store import Store, StoreError
from .ids import resolve_run_id


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", help="run id (or a unique prefix of one)")
    parser.add_argument("dest", metavar="DIR", nargs="?",
                        help="folder to write into (a runs/ folder is created in it; default: env "
                             "ARENA_TUI_EXPORTS, else <Documents>/arena-tui)")


async def _main(args: argparse.Namespace) -> str:
    async with await Store.open(db_path(args.db), create=False) as store:
        run_id = await resolve_run_id(store, args.run_id)
        dest = args.dest if args.dest is not None else exports_dir()
        return str(Path(await export_run(store, run_id, dest, data=args.data)).resolve())


def run(args: argparse.Namespace) -> int:
    try:
        print(asyncio.run(_main(args)))
    except (StoreError, InteropError, OSError) as e:
        raise CliError(str(e)) from None
    return 0
