"""Provider messages are handled a share of a loop step at a time across sessions
(`runners/providers/fair_receive.py`)."""

from __future__ import annotations

import asyncio
import time

from runners.providers.fair_receive import STEP_BUDGET_S, URGENT_TURNS, FairReceive, fair


def handle(cost_s: float) -> None:
    """A handler's CPU time (parsing, decoding, pushing a frame)."""
    end = time.monotonic() + cost_s
    while time.monotonic() < end:
        pass


COSTLY = STEP_BUDGET_S * 1.2  # an audio delta: past one step's share


class Buffered:
    """A websocket whose messages have all arrived already (iteration never suspends), as a burst does."""

    def __init__(self, name: str, n: int) -> None:
        self.messages = [f"{name}{i}" for i in range(n)]
        self.state = "OPEN"
        self.sent: list[str] = []

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        for m in self.messages:
            yield m

    async def send(self, data: str) -> None:
        self.sent.append(data)


async def test_bursts_of_two_sessions_interleave_with_a_pacer_between_every_message() -> None:
    handled: list[str] = []
    rounds = 0
    done = asyncio.Event()

    async def pacer() -> None:  # stands in for a paced input: it runs once per loop round
        nonlocal rounds
        while not done.is_set():
            handled.append("|")
            rounds += 1
            await asyncio.sleep(0)

    async def receive(ws) -> None:
        async for m in ws:
            handled.append(m)
            handle(COSTLY)

    p = asyncio.create_task(pacer())
    await asyncio.gather(receive(fair(Buffered("a", 4))), receive(fair(Buffered("b", 4))))
    done.set()
    await p
    messages = [m for m in handled if m != "|"]
    assert sorted(messages) == sorted([f"a{i}" for i in range(4)] + [f"b{i}" for i in range(4)])
    assert messages[:4] == ["a0", "b0", "a1", "b1"]  # first come first served, turn by turn
    # never two messages without the pacer running between them (except each burst's first, on arrival)
    text = "".join("M" if m != "|" else "|" for m in handled)
    assert "MMM" not in text and text.count("MM") <= 1


async def test_cheap_messages_of_a_burst_go_together_until_the_share_is_spent() -> None:
    handled: list[str] = []
    done = asyncio.Event()

    async def pacer() -> None:
        while not done.is_set():
            handled.append("|")
            await asyncio.sleep(0)

    async def receive(ws) -> None:
        async for m in ws:
            handled.append(m)
            handle(STEP_BUDGET_S / 5)  # a control message

    p = asyncio.create_task(pacer())
    await receive(fair(Buffered("a", 40)))
    done.set()
    await p
    runs = [len(r) for r in "".join("M" if m != "|" else "|" for m in handled).split("|") if r]
    assert sum(runs) == 40
    assert max(runs) >= 3  # several to a step, not one message per round
    assert max(runs) <= 7  # and a step stays within its share (plus the message that crossed it)


class Arriving:
    """A websocket whose messages arrive when the test puts them (iteration waits for the socket)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        while (m := await self.queue.get()) is not None:
            yield m


async def test_a_new_bursts_start_goes_before_the_rest_of_another_burst() -> None:
    order: list[str] = []

    async def receive(ws) -> None:
        async for m in ws:
            order.append(m)
            handle(COSTLY)

    busy = asyncio.create_task(receive(fair(Buffered("a", 40))))  # a reply's audio, mid-burst:
    while len(order) < 2 * URGENT_TURNS:  # past its own start
        await asyncio.sleep(0)
    b = Arriving()
    newcomer = asyncio.create_task(receive(fair(b)))
    for m in ["b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"]:  # a reply's start: all at once
        b.queue.put_nowait(m)
    b.queue.put_nowait(None)
    await asyncio.gather(busy, newcomer)
    at = order.index("b0")
    # on arrival, then its urgent turns; at most the one turn the older burst was granted already
    start = order[at : at + URGENT_TURNS + 2]
    assert [m for m in start if m[0] == "b"] == [f"b{i}" for i in range(URGENT_TURNS + 1)]
    rest = "".join(m[0] for m in order[order.index(f"b{URGENT_TURNS}") + 1 :])
    assert rest.count("bb") == 0 and rest.count("b") == 8 - URGENT_TURNS - 1  # then turn about again


async def test_the_wrapper_is_the_socket_for_everything_but_iteration() -> None:
    ws = Buffered("a", 1)
    w = fair(ws)
    assert isinstance(w, FairReceive) and w.wrapped is ws and fair(w) is w and fair(None) is None
    assert w.state == "OPEN"
    await w.send("x")
    assert ws.sent == ["x"]


async def test_a_receiver_cancelled_while_waiting_gives_its_turn_away() -> None:
    got: list[str] = []

    async def receive(ws) -> None:
        async for m in ws:
            got.append(m)

    a = asyncio.create_task(receive(fair(Buffered("a", 50))))
    b = asyncio.create_task(receive(fair(Buffered("b", 3))))
    for _ in range(3):
        await asyncio.sleep(0)
    a.cancel()
    await asyncio.wait_for(b, 2)  # b still gets every turn it asks for
    assert [m for m in got if m.startswith("b")] == ["b0", "b1", "b2"]
