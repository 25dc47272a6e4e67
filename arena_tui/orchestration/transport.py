"""How a worker's events reach the coordinator: batched, as the events' own JSON.

Batching keeps the per-message cost (pipe write, Ray object) off the per-event path: a batch is
sent at the next `MAX_DELAY_S` instant after its first event (in pieces of at most `MAX_EVENTS`),
so the coordinator's view lags a worker by at most ~50 ms. The JSON is the one `parse_event` reads back from the store, so
events cross as the existing typed events (AudioChunk PCM as base64).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Iterator, Sequence

from pydantic import TypeAdapter

from arena_tui.spine.bus import Subscription
from arena_tui.spine.events import AudioChunk, RunEvent
from arena_tui.spine.grid import next_tick

MAX_EVENTS = 200
MAX_DELAY_S = 0.05

_batch_adapter: TypeAdapter[list[RunEvent]] = TypeAdapter(list[RunEvent])


#: PCM bytes base64-encoded in one step (a multiple of 3: the pieces join into one encoding)
PCM_PIECE = 3 * 65536


def encode_batch(events: Sequence[RunEvent]) -> bytes:
    """The batch as JSON: each event as its own `model_dump_json` (what `parse_event` reads back)."""
    return b"".join(_parts(events))


async def encode_batch_stepwise(events: Sequence[RunEvent]) -> bytes:
    """`encode_batch`, giving the loop back after each piece of audio: a turn's audio is MBs of
    PCM, and encoding it in one call held a worker's pacing loop 17-37 ms at every turn end."""
    parts = []
    for part in _parts(events):
        parts.append(part)
        if len(part) > PCM_PIECE:
            await asyncio.sleep(0)
    return b"".join(parts)


def _parts(events: Sequence[RunEvent]) -> Iterator[bytes]:
    yield b"["
    for i, e in enumerate(events):
        if i:
            yield b","
        if isinstance(e, AudioChunk) and len(e.pcm) > PCM_PIECE:
            head = e.model_dump_json(exclude={"pcm"}).encode()  # `pcm` is the model's last field
            yield head[:-1] + b',"pcm":"'
            for k in range(0, len(e.pcm), PCM_PIECE):  # URL-safe base64, as `ser_json_bytes="base64"` writes it
                yield base64.urlsafe_b64encode(e.pcm[k : k + PCM_PIECE])
            yield b'"}'
        else:
            yield e.model_dump_json().encode()
    yield b"]"


def decode_batch(data: bytes | str) -> list[RunEvent]:
    return _batch_adapter.validate_json(data)


async def batches(sub: Subscription, max_events: int = MAX_EVENTS,
                  max_delay_s: float = MAX_DELAY_S) -> AsyncIterator[list[RunEvent]]:
    """Everything published on `sub`'s bus, grouped; ends after the bus closes and all is yielded.

    A batch is what was published from its first event to the next instant of this process's grid
    of `max_delay_s` (`arena_tui.spine.grid`): one timer per batch, the same instant for every run
    in the process, so their batches wake the loop together. A run publishes all the time (levels,
    audio), and polling for more every 10 ms cost each session 100 wakes of its worker a second."""
    loop = asyncio.get_running_loop()
    async for first in sub:
        await asyncio.sleep(max(0.0, next_tick(loop.time(), max_delay_s) - loop.time()))
        batch = [first, *sub.drain()]
        for i in range(0, len(batch), max_events):
            yield batch[i : i + max_events]
