"""The local cascade parts' weights, for `arena-tui weights`: what each part needs, whether it is on
this machine, and fetching it when the user asks (the only way arena-tui downloads a model).

A part's check imports its package only when it is installed.
"""

from __future__ import annotations

from typing import Any

from arena_tui.spine.errors import CliError
from runners import catalog
from runners.catalog import installed
from runners.providers import local_parts as lp

ALL = "all"


def _parts() -> dict[str, Any]:
    return {c.name: c for c in (*catalog.STT.values(), *catalog.TTS.values()) if c.local}


def local_parts() -> list[str]:
    return list(_parts())


def _not_installed(part: str) -> str | None:
    """"not installed (pip install …)" when the part's packages are not all here."""

    c = _parts()[part]
    return None if all(installed(m) for m in c.packages) else f"not installed ({c.install_hint})"


def status(part: str) -> str:
    """One line: what the part's weights are, and where they are or what to do."""

    if missing := _not_installed(part):
        return f"{lp.describe(part)}: {missing}"
    try:
        folder = lp.locate(part)
    except ValueError as e:
        return f"{lp.describe(part)}: {e}"
    return f"{lp.describe(part)}: at {folder}" if folder else f"{lp.describe(part)}: missing ({lp.fetch_command(part)})"


def chosen(names: list[str]) -> list[str]:
    """The parts `--fetch` names (`all`: every one), each once; CliError naming an unknown or not
    installed one, before anything is downloaded."""
    known = local_parts()
    parts = known if ALL in names else list(dict.fromkeys(names))
    unknown = [p for p in parts if p not in known]
    if unknown:
        raise CliError(f"unknown local part {', '.join(unknown)} (choose from {', '.join(known)}, or {ALL})")
    for part in parts:
        if missing := _not_installed(part):
            raise CliError(f"{part}: {missing}")
    return parts


def fetch(part: str) -> str:
    """Download one part's weights; the folder they are in. CliError in one line when it fails."""

    try:
        return str(lp.fetch(part))
    except Exception as e:  # the network, an HTTP status, the disk, an unknown model name: one line, no traceback
        raise CliError(f"{part}: fetching the {lp.describe(part)} failed: {' '.join(str(e).split())}") from None
