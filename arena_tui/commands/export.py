"""`arena-tui export RUN DIR`: write a stored run in the reference harness's run-directory layout."""

from __future__ import annotations

import argparse
import asyncio

from ..cli import CliError
from ..interop import InteropError, export_run
from ..paths import db_path
from ..store import Store, StoreError

NAME = "export"
HELP = "export a recorded run as runs/<benchmark>/<ts>_<model>_<id>/ (transcript, audio, judge files)"
ORDER = 50


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN", help="run id (or a unique prefix of one)")
    parser.add_argument("dest", metavar="DIR", help="folder to write into (a runs/ folder is created in it)")


async def _main(args: argparse.Namespace) -> str:
    from .judge import resolve_run_id

    async with await Store.open(db_path(args.db)) as store:
        run_id = await resolve_run_id(store, args.run_id)
        return str(await export_run(store, run_id, args.dest, data=args.data))


def run(args: argparse.Namespace) -> int:
    try:
        print(asyncio.run(_main(args)))
    except (StoreError, InteropError, OSError) as e:
        raise CliError(str(e)) from None
    return 0
