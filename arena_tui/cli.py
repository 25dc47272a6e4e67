"""`arena-tui` console script: subcommands are the modules of `arena_tui.commands`.

Each command module defines `NAME`, `HELP`, `ORDER` (position in --help), `add_arguments(parser)`
and `run(args) -> int`; adding a module adds a subcommand, nothing here changes.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import pkgutil
import sys
from types import ModuleType
from typing import NoReturn

from . import __version__, commands
from .commands import ui
from .spine.errors import CliError


def _command_modules() -> list[ModuleType]:
    mods = [importlib.import_module(f"{commands.__name__}.{m.name}") for m in pkgutil.iter_modules(commands.__path__)]
    return sorted((m for m in mods if hasattr(m, "NAME")), key=lambda m: (getattr(m, "ORDER", 100), m.NAME))


def add_global_options(parser: argparse.ArgumentParser, *, sub: bool = False) -> None:
    """The options every command shares, accepted before or after the subcommand.

    On subcommand parsers they default to SUPPRESS, so a value given before the subcommand is
    kept unless it is given again after it.
    """
    default = {"default": argparse.SUPPRESS} if sub else {}
    g = parser.add_argument_group("global options") if sub else parser
    g.add_argument("--db", help="SQLite database file (env ARENA_TUI_DB; default: user data dir)", **default)
    g.add_argument("--data", help="folder holding benchmark folders (env ARENA_TUI_DATA)", **default)


def _add_globals_to_subparsers(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for p in action.choices.values():
                add_global_options(p, sub=True)
                _add_globals_to_subparsers(p)  # nested actions, e.g. `db path --db X`


class Parser(argparse.ArgumentParser):
    """argparse whose refusal of a flag is one line naming it, as every other refusal is (not
    the usage block, 17 lines for `run`, that buried the reason); `--help` still shows the usage.
    Subcommand parsers are made of the same class (argparse's `parser_class`)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="arena-tui",
        description="Live-run monitor for the Audio Arena voice-agent benchmarks. "
        "With no subcommand, opens the runs list.",
    )
    parser.add_argument("--version", action="version", version=f"arena-tui {__version__}")
    add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in _command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=getattr(mod, "DESCRIPTION", mod.HELP))
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    _add_globals_to_subparsers(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run = getattr(args, "_run", None)
    if run is None:
        run = ui.run
    try:
        status = int(run(args) or 0)
        sys.stdout.flush()  # a reader gone mid-output shows here, in the handler, not at interpreter exit
    except CliError as e:
        print(f"arena-tui: {e}", file=sys.stderr)
        status = 2
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        return _reader_went_away()
    if status:
        _free_failed_runs()
    return status


def _free_failed_runs() -> None:
    """Free what a failed or stopped run left in reference cycles now, not at interpreter exit: a
    process that settled its heap (`spine.heap.settle_heap`: the monitor) froze what its run had
    loaded, its sessions stayed reachable from it, and soxr's nanobind objects they hold printed a
    20-line leak report on stderr after the one line saying why. ~0.3 s after a run, nothing when
    nothing was frozen."""
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()


def _reader_went_away() -> int:
    """`arena-tui runs | head`: the reader closed the pipe. End quietly with the shell's SIGPIPE
    status (128 + 13), and point stdout at /dev/null so the interpreter's final flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return 141


if __name__ == "__main__":
    sys.exit(main())
