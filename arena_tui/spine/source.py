"""What answered a run when it was not the real service: one label for every surface.

A run is `simulated` (the stored `simulator` flag) when it talked to something local: our
simulator (`--model sim`) or a provider's local protocol fake (`--fake`, `config["fake"]`). A
user comparing scores must know which one, so every screen, listing and export asks here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SIMULATOR = "simulator"
FAKE = "protocol fake"


def source_label(simulator: bool, config: Mapping[str, Any] | None) -> str | None:
    """`protocol fake`, `simulator`, or None for the real service."""
    if (config or {}).get("fake"):
        return FAKE
    return SIMULATOR if simulator else None


def against(source: str, *, loud: bool = False) -> str:
    """`the local simulator` / `a local protocol fake` (`loud`: the name in capitals): what a
    run's scores were against."""
    name = source.upper() if loud else source
    return f"the local {name}" if source == SIMULATOR else f"a local {name}"


def tag(source: str | None) -> str:
    """` [SIM]` / ` [FAKE]` after a model's name in a list (empty for the real service)."""
    if not source:
        return ""
    return " [SIM]" if source == SIMULATOR else " [FAKE]"
