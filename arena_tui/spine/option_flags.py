"""The run options (`spine.settings.OPTIONS`) as command-line flags: `run`, `demo` and `campaign run`
add theirs from the table (`add_option_flags`) and hand what was typed to the one builder
(`chosen`, then `build_settings`), so a new option is a flag of every command it applies to
without a line in any of them. A flag not given is None: the option's default, or (a campaign)
what its spec file says."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any, Literal

from .settings import OPTIONS, Option

Command = Literal["run", "demo", "campaign"]


def offered(command: Command) -> tuple[Option, ...]:
    """The options `command` takes as flags: a campaign's are its keys, its axes and where its runs connect."""
    if command == "campaign":
        return tuple(o for o in OPTIONS if o.applies("campaign") or o.applies("axis") or o.applies("connection"))
    return tuple(o for o in OPTIONS if o.applies(command))


def add_option_flags(parser: argparse.ArgumentParser, command: Command, *,
                     defaults: Mapping[str, Any] | None = None) -> None:
    """Each option `command` takes as its flag (`dest`: the option's key), in the table's order;
    `defaults`: the command's own default of an option (the demo's turns and faults), said in its help."""
    for option in offered(command):
        kw = dict(option.cli or {})
        words = option.help
        if command == "campaign" and option.applies("axis"):
            words = option.axis_help
            kw["metavar"] = f"{kw.get('metavar', option.key.upper())},…"
        elif command == "campaign" and option.applies("connection"):
            words += " (every run of the campaign; never from a spec file)"
        elif command == "campaign" and option.applies("campaign"):
            words += " (every run of the campaign)"
        if defaults and option.key in defaults:
            kw["default"] = defaults[option.key]
            words += f" (default {defaults[option.key]!r})"
        parser.add_argument(option.flag, dest=option.key, help=words, **kw)


def chosen(args: argparse.Namespace, command: Command) -> dict[str, Any]:
    """Option key -> what was typed for it on `command`'s line (None: not given)."""
    return {o.key: getattr(args, o.key, None) for o in offered(command)}
