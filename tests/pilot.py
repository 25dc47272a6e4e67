"""Waiting in Textual pilot tests: for a condition on the app, never for a fixed time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def until(pilot, cond: Callable[[], object], timeout: float = 120.0, step: float = 0.05) -> None:
    """Let the app run until `cond()` holds; fail after `timeout` s (only a failing test waits it)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("the screen did not get there in time")
        await pilot.pause(step)
