"""Provider messages are handled one per loop round across sessions (`runners/providers/fair_receive.py`)."""

from __future__ import annotations

import asyncio

from runners.providers.fair_receive import FairReceive, fair


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
