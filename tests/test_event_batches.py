"""A worker's events cross to the coordinator in batches (arena_tui.orchestration.transport.batches):
each batch closes on the process's grid, so every run in a worker batches at the same instants."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena_tui.orchestration.transport import batches
from arena_tui.spine import grid
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import Level


async def test_every_run_in_a_process_batches_at_its_grid_instants_and_loses_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grid, "_phase", 0.5)
    period = 0.02
    buses = [EventBus() for _ in range(3)]  # three runs in one worker
    subs = [bus.subscribe() for bus in buses]
    sent: list[list[tuple[float, list[float]]]] = [[] for _ in buses]

    async def forward(k: int) -> None:
        async for batch in batches(subs[k], max_events=4, max_delay_s=period):
            sent[k].append((time.monotonic(), [e.t_ms for e in batch]))

    pumps = [asyncio.create_task(forward(k)) for k in range(len(buses))]
    for i in range(60):  # each run publishing all the time, as a run's levels and audio do
        for k, bus in enumerate(buses):
            bus.publish(Level(run_id=str(k), t_ms=float(i), source="user", rms_dbfs=-20.0, peak_dbfs=-10.0))
        await asyncio.sleep(0.002)
    for bus in buses:
        bus.close()
    await asyncio.wait_for(asyncio.gather(*pumps), 5)
    for k in range(len(buses)):
        assert [t for _, b in sent[k] for t in b] == [float(i) for i in range(60)], "each event once, in order"
        assert all(len(b) <= 4 for _, b in sent[k])
        for when, _ in sent[k]:  # sent just after an instant of the grid (phase 0.5), never between
            assert (when / period - 0.5) % 1.0 < 0.5, when
    instants = [{round(when / period - 0.5) for when, _ in s} for s in sent]
    assert instants[0] & instants[1] & instants[2], "the runs batched at the same instants"
