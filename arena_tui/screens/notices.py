"""Saying when a run or a campaign ends while you look at something else: a notice (Textual's
`notify`) and, when `ARENA_TUI_BELL` is set (1, yes, true, on), the terminal's bell.

A run this monitor started says so when it ends (completed, interrupted or failed, with its strict
pass and why it failed) unless its own screen is the one on top. A campaign (usually run by `arena-tui
campaign run` in another terminal) is watched through the store every `CAMPAIGN_POLL_S`: one whose
coordinator was there at the last look and is gone now has ended, and its cells' states are said.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from ..verdicts import STRICT

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from ..run_view import RunState
    from ..store import Store

BELL_ENV = "ARENA_TUI_BELL"
CAMPAIGN_POLL_S = 5.0
Severity = Literal["information", "warning", "error"]


def bell_wanted(env: Mapping[str, str] = os.environ) -> bool:
    return env.get(BELL_ENV, "").strip().lower() in ("1", "yes", "true", "on")


def watching(screen: Screen, *, run_id: str | None = None, campaign_id: str | None = None) -> bool:
    """Whether the screen on top already shows that run (its run screen, a turn of it) or campaign."""
    state = getattr(screen, "state", None)
    if run_id is not None and getattr(state, "run_id", None) == run_id:
        return True
    return campaign_id is not None and getattr(screen, "campaign_id", None) == campaign_id


def tell(app: App, title: str, message: str, severity: Severity = "information") -> None:
    app.notify(message, title=title, severity=severity, timeout=12)
    if bell_wanted():
        app.bell()


def run_notice(run_id: str, status: str, error: str | None, state: RunState | None) -> tuple[str, str, Severity]:
    """(title, message, severity) for a run that ended: what it was, its strict pass, why it failed."""
    parts = [run_id]
    if state is not None:
        parts.append(f"{state.benchmark} · {state.model_name}")
        passed, judged = state.tally().strict
        if judged:
            parts.append(f"{STRICT} {passed}/{judged}")
    if error:
        parts.append(error)
    severity: Severity = "information" if status == "completed" else "warning" if status == "interrupted" else "error"
    return f"run {status}", " · ".join(parts), severity


class CampaignWatch:
    """Which campaigns had a live coordinator at the last look (None: not looked yet)."""

    def __init__(self) -> None:
        self.running: set[str] | None = None

    async def ended(self, store: Store) -> list[tuple[str, str, Severity]]:
        """(campaign id, its cells' states, severity) of each campaign whose coordinator has gone
        since the last call (the first call only looks)."""
        from ..store.liveness import recorder_alive  # deferred: the UI starts, and says why, even when the store cannot load

        rows = await store.read_rows("SELECT campaign_id, pid, host, heartbeat_at FROM campaigns")
        now = {cid for cid, pid, host, beat in rows
               if pid is not None and recorder_alive(pid, host, datetime.fromisoformat(beat) if beat else None)}
        before, self.running = self.running, now
        out: list[tuple[str, str, Severity]] = []
        for cid in sorted((before or set()) - now):
            states = Counter(s for (s,) in await store.read_rows(
                "SELECT status FROM campaign_cells WHERE campaign_id=?", (cid,)))
            said = ", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "no cells"
            done = set(states) <= {"done", "skipped"}
            out.append((cid, said, "information" if done else "warning"))
        return out
