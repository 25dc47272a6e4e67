"""Messages between the app (which owns the bus, store and run workers) and its screens."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from arena_tui.spine.events import Judgement


class LiveUpdate(Message, bubble=False):
    """Posted to the active screen at most `app.REFRESH_HZ` (30) times/s with the runs whose state changed."""

    def __init__(self, run_ids: frozenset[str], kinds: frozenset[str]) -> None:
        super().__init__()
        self.run_ids = run_ids
        self.kinds = kinds


class RunFinished(Message, bubble=False):
    """A run worker ended (completed, interrupted or failed); the runs list reloads.

    The worker posts it to the app, which forwards a copy to every screen; screens' copies
    must not bubble back up to the app (that would forward them again, forever).
    """

    def __init__(self, run_id: str, status: str, error: str | None = None, then: str = "") -> None:
        super().__init__()
        self.run_id = run_id
        self.status = status
        self.error = error
        self.then = then  # what to do next, for the run the app was started for (`arena-tui demo`): its screen says it


class TurnRejudged(Message, bubble=False):
    """A turn was judged again (`screens/actions.rejudge`), or judgements another process stored
    were read back (`actions.reread_judgements`; `turn` None: any turn); posted to every screen,
    which redraws it if it shows that run. `judgements`: the revisions read back from the store,
    which a replay keeps among its events."""

    def __init__(self, run_id: str, turn: int | None, judgements: list[Judgement]) -> None:
        super().__init__()
        self.run_id = run_id
        self.turn = turn
        self.judgements = judgements
