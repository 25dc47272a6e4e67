"""Command-line value types every command shares (argparse `type=`), so a value no run can use
is refused where it is typed, in one line (`cli.Parser`): a count of 0 workers or judges, an
empty `--turns` (which used to mean every turn), an empty `--condition` or `--effort` (which meant the default)."""

from __future__ import annotations

import argparse


def positive_int(raw: str) -> int:
    """A whole number of 1 or more (workers, turns judged at once)."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more (got {value})")
    return value


def turn_subset(raw: str) -> str:
    """A `--turns` value that names turns: an empty one selects none (leave the flag out for all)."""
    if not raw.strip(",- \t"):
        raise argparse.ArgumentTypeError(f"{raw!r} selects no turns (e.g. 0,5-9; leave --turns out to run every turn)")
    return raw


def named_values(raw: str) -> str:
    """A `--condition`/`--effort` value (one, or `a,b` for a campaign) that names something: an empty one
    is refused as `--turns ''` is, never read as the default it would silently have become."""
    if not raw.strip(", \t"):
        raise argparse.ArgumentTypeError(f"{raw!r} names nothing (leave the flag out for the default)")
    return raw
