"""`arena-tui` console script: the subcommands are `arena_tui.commands.COMMANDS` (name, help
line, module), each module defining `add_arguments(parser)` and `run(args) -> int`.

Only the command being run is imported (and only its parser gets its arguments): `--help` reads
the registry alone, so a command module imports what its command needs at its top.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from . import __version__
from .commands import COMMANDS, Command
from .spine.errors import CliError
from .spine.heap import unsettle_heap
from .spine.paths import PRICES_ENV, prices_path

#: the command run when none is given
DEFAULT = "ui"
#: the global options that take a value (`--db X`): what `chosen` steps over to find the command
_VALUED = ("--db", "--data", "--prices")


def load(command: Command) -> ModuleType:
    """The command's module, imported now."""
    return importlib.import_module(f"{__package__}.commands.{command.module}")


def chosen(argv: Sequence[str]) -> Command | None:
    """The command `argv` names: its first word that is not a global option or an option's value."""
    words = iter(argv)
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return next((c for c in COMMANDS if c.name == word), None)
    return None


def add_global_options(parser: argparse.ArgumentParser, *, sub: bool = False) -> None:
    """The options every command shares, accepted before or after the subcommand.

    On subcommand parsers they default to SUPPRESS, so a value given before the subcommand is
    kept unless it is given again after it.
    """
    default: dict[str, Any] = {"default": argparse.SUPPRESS} if sub else {}
    g = parser.add_argument_group("global options") if sub else parser
    g.add_argument("--db", help="SQLite database file (env ARENA_TUI_DB; default: user data dir)", **default)
    g.add_argument("--data", help="folder holding benchmark folders (env ARENA_TUI_DATA)", **default)
    g.add_argument("--prices", metavar="FILE", help=f"a price table over arena-tui's, for cost estimates (env {PRICES_ENV})",
                   **default)


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


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of `argv` (default: the command line): every command listed, and the arguments
    of the one `argv` names (its module imported now; no other is)."""
    argv = sys.argv[1:] if argv is None else argv
    parser = Parser(
        prog="arena-tui",
        description="Live-run monitor for the Audio Arena voice-agent benchmarks. "
        "With no subcommand, opens the runs list.",
    )
    parser.add_argument("--version", action="version", version=f"arena-tui {__version__}")
    add_global_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = chosen(argv)
    for command in COMMANDS:
        if command is named:
            mod = load(command)
            p = sub.add_parser(command.name, help=command.help, description=command.description or command.help)
            mod.add_arguments(p)
            p.set_defaults(_run=mod.run)
        else:
            sub.add_parser(command.name, help=command.help)
    _add_globals_to_subparsers(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv).parse_args(argv)
    run = getattr(args, "_run", None)
    if run is None:
        run = load(next(c for c in COMMANDS if c.name == DEFAULT)).run
    before = os.environ.get(PRICES_ENV)
    try:
        use_prices(getattr(args, "prices", None))
        status = int(run(args) or 0)
        sys.stdout.flush()  # a reader gone mid-output shows here, in the handler, not at interpreter exit
    except CliError as e:
        print(f"arena-tui: {e}", file=sys.stderr)
        status = 2
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        return _reader_went_away()
    finally:  # the command's own: a process that runs several (tests, the README's) starts each afresh
        if before is None:
            os.environ.pop(PRICES_ENV, None)
        else:
            os.environ[PRICES_ENV] = before
    if status:
        unsettle_heap()  # what a failed or stopped run left in reference cycles, freed now (`spine.heap`)
    return status


def use_prices(path: str | None) -> None:
    """`--prices FILE` for every surface of this process (and the monitor's): it becomes
    `ARENA_TUI_PRICES`; the table in use is read now, so a bad one is refused in one line before
    anything is shown with it."""
    if path:
        os.environ[PRICES_ENV] = path
    if prices_path() is not None:
        from .cost import load_prices  # deferred: pricing loads pydantic, and `--help` must not

        load_prices()


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
