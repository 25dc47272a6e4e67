"""Fan-out of run events to subscribers (store, UI, judge) without blocking the producer.

The engine's pacing loop must never wait on a consumer, so `publish` only appends to
each subscriber's unbounded queue; a slow consumer costs memory, not timing.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
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
            yield item  # type: ignore[misc]  # not _CLOSED: a RunEvent (the queue holds both)

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
            items.append(item)  # type: ignore[arg-type]  # not _CLOSED: a RunEvent (the queue holds both)

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


class ThreadPublisher:
    """`publish` for a producer on another thread's event loop (the app's engine thread).

    The bus and its subscribers belong to `loop`; events are handed over in order, in batches:
    one wake-up of that loop for whatever arrived since the last one, so a burst of events
    costs the consumer's loop one callback, not one per event.
    """

    def __init__(self, bus: EventBus, loop: asyncio.AbstractEventLoop) -> None:
        self._bus, self._loop = bus, loop
        self._pending: deque[RunEvent] = deque()
        self._lock = threading.Lock()
        self._scheduled = False

    def publish(self, event: RunEvent) -> None:
        with self._lock:
            self._pending.append(event)
            if self._scheduled:
                return
            self._scheduled = True
        try:
            self._loop.call_soon_threadsafe(self._deliver)
        except RuntimeError:  # the consumer's loop is closed (the app has exited): nobody to tell
            pass

    def _deliver(self) -> None:
        with self._lock:
            batch, self._pending = self._pending, deque()
            self._scheduled = False
        for event in batch:
            self._bus.publish(event)
