"""Measurement scripts, each run as `python -m scripts.NAME`: they print numbers and assert nothing
(tests/test_scripts_smoke.py runs every one with small arguments, so a change that breaks one is seen)."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_ENV = "ARENA_TUI_SHARED"


def shared_data() -> Path:
    """The Audio Arena benchmark folders, found as the tests find them: $ARENA_TUI_SHARED, else
    ../shared/audio-arena beside this checkout."""
    raw = os.environ.get(SHARED_ENV)
    return Path(raw).expanduser() if raw else Path(__file__).resolve().parents[2] / "shared" / "audio-arena"
