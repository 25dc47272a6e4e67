"""How a worker's events reach the coordinator: batched, as the events' own JSON.

Batching keeps the per-message cost (pipe write, Ray object) off the per-event path: a batch is
sent after `MAX_DELAY_S` or `MAX_EVENTS`, whichever comes first, so the coordinator's view lags
a worker by at most ~50 ms. The JSON is the one `parse_event` reads back from the store, so
events cross as the existing typed events (AudioChunk PCM as base64).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

from pydantic import TypeAdapter

from arena_tui.spine.bus import Subscription
from arena_tui.spine.events import RunEvent

MAX_EVENTS = 200
MAX_DELAY_S = 0.05
_POLL_S = 0.01

_batch_adapter: TypeAdapter[list[RunEvent]] = TypeAdapter(list[RunEvent])


def encode_batch(events: Sequence[RunEvent]) -> bytes:
    return ("[" + ",".join(e.model_dump_json() for e in events) + "]").encode()


def decode_batch(data: bytes | str) -> list[RunEvent]:
    return _batch_adapter.validate_json(data)


async def batches(sub: Subscription, max_events: int = MAX_EVENTS,
                  max_delay_s: float = MAX_DELAY_S) -> AsyncIterator[list[RunEvent]]:
    """Everything published on `sub`'s bus, grouped; ends after the bus closes and all is yielded."""
    loop = asyncio.get_running_loop()
    async for first in sub:
        batch = [first, *sub.drain()]
        deadline = loop.time() + max_delay_s
        while len(batch) < max_events and (left := deadline - loop.time()) > 0:
            await asyncio.sleep(min(_POLL_S, left))
            batch.extend(sub.drain())
        for i in range(0, len(batch), max_events):
            yield batch[i : i + max_events]
