"""Show a turn as done only once it is durable: a run's live events are held back from each
`turn_ended` until the store has committed that event (its `committed` bus says so).

Holding the whole run's stream behind it, rather than the turn_ended alone, keeps the order
every consumer (RunState) was written for; the delay is one writer batch (~50 ms).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from arena_tui.spine.bus import Subscription
from arena_tui.spine.events import RunEvent


class CommitGate:
    def __init__(self, acks: Subscription, watched: Callable[[str], bool]) -> None:
        """`acks`: a subscription to the store's committed events (turn_ended is enough);
        `watched(run_id)`: whether a run's events go through the gate."""
        self._acks = acks
        self._watched = watched
        self._committed: dict[int, RunEvent] = {}  # acknowledged, not yet met on the live bus
        self._held: dict[str, deque[RunEvent]] = {}
        self.failed = False

    def release(self, events: list[RunEvent]) -> tuple[list[RunEvent], list[RunEvent]]:
        """(events to show now, in order per run; turn_ended events dropped as never recorded).

        Call it on every tick, also with no new events: acknowledgements arrive on their own.
        Once `failed` is set (the store cannot write), what is held is released, except the
        turn ends that were not committed: those are returned as dropped.
        """
        for ev in self._acks.drain():
            if self._watched(ev.run_id):
                self._committed[id(ev)] = ev  # keeps ev alive, so its id is not reused meanwhile
        out: list[RunEvent] = []
        for ev in events:
            held = self._held.get(ev.run_id)
            if held is not None:
                held.append(ev)
            elif ev.kind == "turn_ended" and self._watched(ev.run_id) and id(ev) not in self._committed:
                self._held[ev.run_id] = deque([ev])
            else:
                self._committed.pop(id(ev), None)
                out.append(ev)
        dropped: list[RunEvent] = []
        for run_id, held in list(self._held.items()):
            while held:
                ev = held[0]
                if ev.kind == "turn_ended" and self._committed.pop(id(ev), None) is None:
                    if not self.failed:
                        break
                    dropped.append(held.popleft())
                    continue
                out.append(held.popleft())
            if not held:
                del self._held[run_id]
        return out, dropped
