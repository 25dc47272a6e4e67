"""Provider messages handled a share of a loop step at a time, across every session of the process.

A service's receive loop (`async for message in websocket`) does not suspend while messages are
already buffered: a provider that sends a reply's audio faster than real time (most do, in
bursts of tens of deltas) has the whole burst parsed, decoded and pushed into the pipeline in one
step of the event loop. Measured with the simulator's 200 ms deltas: steps of 5-7 ms of CPU, and
every paced input of the process (other sessions' too) waits for them. Yielding after each
message is not enough when sessions move in step (a campaign's cells start together and the
same replies arrive together): eight receivers each handling one message (~0.3 ms) make every
loop round 2-4 ms, and a paced input due meanwhile waits a round or two.

So a receiver handles buffered messages while they cost it less than `STEP_BUDGET_S` of one
step (`Share`: a reply opens with four cheap control messages before its first audio, and each
would otherwise cost a whole round of a loaded loop), then waits for its turn (`ReceiveTurns`):
one receiver per loop round, first come first served, with the paced inputs running between.
A message that finds its receiver idle is handled as it arrives, and the receiver's next few
turns go before the others' (a burst's start is what the user waits for: with eight sessions
replying together, a reply's first audio otherwise waited behind the other seven bursts, p95
47 ms from when the provider sent it; the rest of a burst is audio queued ahead of playback).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, cast


class ReceiveTurns:
    """One turn per loop round, handed out in the order asked, a burst's start before the rest of
    any burst (one per event loop: `turn`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._urgent: deque[asyncio.Future[None]] = deque()
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._armed = False

    def wait(self, urgent: bool = False) -> asyncio.Future[None]:
        fut = self._loop.create_future()
        (self._urgent if urgent else self._waiting).append(fut)
        if not self._armed:
            self._armed = True
            self._loop.call_soon(self._next)
        return fut

    def _grant(self) -> None:
        for queue in (self._urgent, self._waiting):
            while queue:
                fut = queue.popleft()
                if not fut.done():  # a receiver cancelled while it waited has no turn
                    fut.set_result(None)
                    return

    def _next(self) -> None:
        self._grant()
        if self._urgent or self._waiting:
            self._loop.call_soon(self._next)  # the next turn: the next round (this one's handles are fixed)
        else:
            self._armed = False


#: wall time one receiver may spend on buffered messages in one step of the loop before it waits
#: for its turn (a 200 ms audio delta costs ~0.3 ms here; a control message a tenth of that)
STEP_BUDGET_S = 0.0005

#: the turns of a burst's start that go before other receivers' bursts (`Share`)
URGENT_TURNS = 4


class Share:
    """One receiver's share of a loop step: `begin()` before each message, `await done()` after.

    A burst's start is what the user is waiting for (a reply's first audio, a call to answer):
    the rest of a burst is audio queued ahead of playback that can wait a few rounds. So a
    receiver that was idle (its message came after a wait for the socket, not for its turn) has
    its next `URGENT_TURNS` turns before every other receiver's ordinary ones."""

    def __init__(self) -> None:
        self._began = 0.0
        self._new_step = True  # the loop has gone round since this receiver's step began
        self._turned = False  # ... because this receiver waited for its turn
        self._urgent = 0

    def _went_round(self) -> None:
        self._new_step = True

    def begin(self) -> None:
        if self._new_step:
            if not self._turned:  # idle until this message: a burst starts
                self._urgent = URGENT_TURNS
            self._new_step = self._turned = False
            self._began = time.monotonic()
            asyncio.get_running_loop().call_soon(self._went_round)  # runs once this step has ended

    async def done(self) -> None:
        if time.monotonic() - self._began >= STEP_BUDGET_S:
            urgent = self._urgent > 0
            self._urgent -= urgent
            self._turned = True
            await turn(urgent)


_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ReceiveTurns] = weakref.WeakKeyDictionary()


async def turn(urgent: bool = False) -> None:
    """Wait for this receiver's turn to handle its next message."""
    loop = asyncio.get_running_loop()
    turns = _TURNS.get(loop)
    if turns is None:
        turns = _TURNS[loop] = ReceiveTurns(loop)
    await turns.wait(urgent)


class FairReceive:
    """Wraps a websocket connection: past its `Share` of a step, iteration waits for its next `turn`;
    everything else (send, close, state) is the connection's own."""

    def __init__(self, ws: AsyncIterable[object]) -> None:
        self._ws = ws

    @property
    def wrapped(self) -> AsyncIterable[object]:
        return self._ws

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ws, name)

    def __aiter__(self) -> AsyncIterator[object]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[object]:
        share = Share()
        async for message in self._ws:
            share.begin()
            yield message
            await share.done()


def fair[W: AsyncIterable[object] | None](ws: W) -> W:
    """`ws` wrapped once (None and an already fair socket stay as they are). The wrapper passes every
    attribute on to the connection it wraps, so it stands where the connection stood, typed as it."""
    if ws is None or isinstance(ws, FairReceive):
        return ws
    return cast(W, FairReceive(ws))
