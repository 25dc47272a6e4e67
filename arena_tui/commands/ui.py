"""`arena-tui` with no subcommand (or `arena-tui ui`): the runs list of the database."""

from __future__ import annotations

import argparse

from .. import paths
from ..cli import CliError

NAME = "ui"
HELP = "open the live monitor on the runs list (the default when no command is given)"
ORDER = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--open", metavar="RUN_ID", help="open this run straight away (replay if stored)")


def run(args: argparse.Namespace) -> int:
    from ..app import ArenaApp

    try:
        db = paths.db_path(getattr(args, "db", None))
    except OSError as e:
        raise CliError(f"cannot use database location: {e}") from None
    data = paths.data_dir(getattr(args, "data", None))
    if data is not None and not data.is_dir():
        raise CliError(f"--data {data}: not a folder")
    _check_database(db)
    ArenaApp(db, data, open_run=getattr(args, "open", None)).run()
    return 0


def _check_database(db: object) -> None:
    """A database that cannot be opened is one line and exit 2 here, before the screen takes over."""
    import asyncio

    from ..store import Store, StoreError

    async def probe() -> None:
        store = await Store.open(db)  # type: ignore[arg-type]
        await store.close()

    try:
        asyncio.run(probe())
    except StoreError as e:
        raise CliError(str(e)) from None
