"""Fan-out of run events to subscribers (store, UI, judge) without blocking the producer.

The engine's pacing loop must never wait on a consumer, so `publish` only appends to
each subscriber's unbounded queue; a slow consumer costs memory, not timing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from .events import RunEvent

_CLOSED = object()


class Subscription:
    def __init__(self, bus: "EventBus", accept: Callable[[RunEvent], bool] | None) -> None:
        self._bus = bus
        self.accept = accept
        self.queue: asyncio.Queue[object] = asyncio.Queue()

    def __aiter__(self) -> AsyncIterator[RunEvent]:
        return self._iter()

    async def _iter(self) -> AsyncIterator[RunEvent]:
        while True:
            item = await self.queue.get()
            if item is _CLOSED:
                return
            yield item  # type: ignore[misc]

    def drain(self) -> list[RunEvent]:
        """Everything queued right now, without waiting (for coalescing consumers)."""
        items: list[RunEvent] = []
        while True:
            try:
                item = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return items
            if item is _CLOSED:
                self.queue.put_nowait(_CLOSED)
                return items
            items.append(item)  # type: ignore[arg-type]

    def close(self) -> None:
        self._bus.unsubscribe(self)


class EventBus:
    def __init__(self) -> None:
        self._subs: list[Subscription] = []

    def subscribe(self, accept: Callable[[RunEvent], bool] | None = None) -> Subscription:
        sub = Subscription(self, accept)
        self._subs.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        if sub in self._subs:
            self._subs.remove(sub)
            sub.queue.put_nowait(_CLOSED)

    def publish(self, event: RunEvent) -> None:
        for sub in self._subs:
            if sub.accept is None or sub.accept(event):
                sub.queue.put_nowait(event)

    def close(self) -> None:
        """End every subscriber's iteration after what is already queued."""
        for sub in list(self._subs):
            self.unsubscribe(sub)
