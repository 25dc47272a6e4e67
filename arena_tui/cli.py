"""`arena-tui` console script: subcommands are the modules of `arena_tui.commands`.

Each command module defines `NAME`, `HELP`, `ORDER` (position in --help), `add_arguments(parser)`
and `run(args) -> int`; adding a module adds a subcommand, nothing here changes.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from types import ModuleType

from . import __version__, commands


def _command_modules() -> list[ModuleType]:
    mods = [importlib.import_module(f"{commands.__name__}.{m.name}") for m in pkgutil.iter_modules(commands.__path__)]
    return sorted((m for m in mods if hasattr(m, "NAME")), key=lambda m: (getattr(m, "ORDER", 100), m.NAME))


class CliError(Exception):
    """An error the user can act on: printed as one line, exit status 2, no traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena-tui",
        description="Live-run monitor for the Audio Arena voice-agent benchmarks. "
        "With no subcommand, opens the runs list.",
    )
    parser.add_argument("--version", action="version", version=f"arena-tui {__version__}")
    parser.add_argument("--db", help="SQLite database file (env ARENA_TUI_DB; default: user data dir)")
    parser.add_argument("--data", help="folder holding benchmark folders (env ARENA_TUI_DATA)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "_run", None)
    if run is None:
        try:
            from .commands import ui
        except ImportError:
            parser.print_help()
            return 0
        run = ui.run
    try:
        return int(run(args) or 0)
    except CliError as e:
        print(f"arena-tui: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
