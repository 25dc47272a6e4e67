"""The commands are registered lazily (`arena_tui.commands.COMMANDS`): `arena-tui --help` reads the
registry alone and imports no command module (so none of what the commands need: the store,
Textual, numpy, the engine); every command module is registered and every registered command
builds its own parser, its module imported only then."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

from arena_tui import commands
from arena_tui.cli import build_parser, chosen
from arena_tui.commands import COMMANDS

#: what a command may need that the top-level help must not load
HEAVY = ("arena_tui.commands.", "arena_tui.store", "arena_tui.orchestration", "arena_tui.app", "runners", "benchmarks",
         "textual", "pipecat", "numpy", "pydantic", "aiosqlite")


def test_help_imports_no_command_module_nor_what_commands_need() -> None:
    code = ("import sys\n"
            "from arena_tui.cli import main\n"
            "try:\n"
            "    main(['--help'])\n"
            "except SystemExit:\n"
            "    pass\n"
            f"print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})), file=sys.stderr)\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    assert "COMMAND" in got.stdout and all(c.name in got.stdout for c in COMMANDS), got.stdout
    assert got.stderr.strip() == "[]", got.stderr


def test_every_command_module_is_registered_once() -> None:
    helpers = {"ids"}  # what commands share (ids as every command takes them), no command of its own
    modules = {m.name for m in pkgutil.iter_modules(commands.__path__)} - helpers
    registered = [c.module for c in COMMANDS]
    assert sorted(registered) == sorted(modules)
    assert len({c.name for c in COMMANDS}) == len(COMMANDS)
    for name in helpers:
        assert not hasattr(importlib.import_module(f"arena_tui.commands.{name}"), "add_arguments")


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_each_command_builds_its_own_parser(command) -> None:
    parser = build_parser([command.name])
    (sub,) = [a for a in parser._actions if a.dest == "command"]
    mine = sub.choices[command.name]
    assert mine.get_default("_run") is not None  # its module's run, loaded now
    assert mine.format_help().startswith(f"usage: arena-tui {command.name}")
    others = [p for name, p in sub.choices.items() if name != command.name]
    assert all(p.get_default("_run") is None for p in others)  # no other command's module was asked for


@pytest.mark.parametrize("argv,name", [
    ([], None),
    (["--db", "x.db", "runs"], "runs"),
    (["--db=x.db", "--data", "run", "runs"], "runs"),  # a global option's value is not the command
    (["--version"], None),
    (["nope"], None),
    (["run", "runs"], "run"),
])
def test_the_command_is_the_first_word_that_is_no_option(argv, name) -> None:
    got = chosen(argv)
    assert (got.name if got else None) == name
