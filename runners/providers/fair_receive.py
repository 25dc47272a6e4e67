"""Provider messages handled one at a time per loop round, across every session of the process.

A service's receive loop (`async for message in websocket`) does not suspend while messages are
already buffered: a provider that sends a reply's audio faster than real time (most do, in
bursts of tens of deltas) has the whole burst parsed, decoded and pushed into the pipeline in one
step of the event loop. Measured with the simulator's 200 ms deltas: steps of 5-7 ms of CPU, and
every paced input of the process (other sessions' too) waits for them. Yielding after each
message is not enough when sessions move in step (a campaign's cells start together and the
same replies arrive together): eight receivers each handling one message (~0.3 ms) make every
loop round 2-4 ms, and a paced input due meanwhile waits a round or two. So after each message a
receiver waits for its turn (`ReceiveTurns`): one message of one session per loop round, first
come first served, and the paced inputs run between them. A message that finds its receiver
idle is handled as it arrives; only the rest of a burst waits.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncIterator
from typing import Any


class ReceiveTurns:
    """One turn per loop round, handed out in the order asked (one per event loop: `turn`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._armed = False

    def wait(self) -> asyncio.Future[None]:
        fut = self._loop.create_future()
        self._waiting.append(fut)
        if not self._armed:
            self._armed = True
            self._loop.call_soon(self._next)
        return fut

    def _next(self) -> None:
        while self._waiting:
            fut = self._waiting.popleft()
            if not fut.done():  # a receiver cancelled while it waited has no turn
                fut.set_result(None)
                break
        if self._waiting:
            self._loop.call_soon(self._next)  # the next turn: the next round (this one's handles are fixed)
        else:
            self._armed = False


_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ReceiveTurns] = weakref.WeakKeyDictionary()


async def turn() -> None:
    """Wait for this receiver's turn to handle its next message."""
    loop = asyncio.get_running_loop()
    turns = _TURNS.get(loop)
    if turns is None:
        turns = _TURNS[loop] = ReceiveTurns(loop)
    await turns.wait()


class FairReceive:
    """Wraps a websocket connection: after each message, iteration waits for its next `turn`;
    everything else (send, close, state) is the connection's own."""

    def __init__(self, ws: Any) -> None:
        self._ws = ws

    @property
    def wrapped(self) -> Any:
        return self._ws

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ws, name)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[Any]:
        async for message in self._ws:
            yield message
            await turn()


def fair(ws: Any) -> Any:
    """`ws` wrapped once (None and an already fair socket stay as they are)."""
    return ws if ws is None or isinstance(ws, FairReceive) else FairReceive(ws)
