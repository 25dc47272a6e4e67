"""A campaign says something at least every 10 s of wall time: it once printed nothing for 98 s
(beside 6 CPU hogs) or 154 s (on Ray) while its turns advanced, which reads as a hang."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from arena_tui.campaign.spec import build_spec
from arena_tui.orchestration.heartbeat import PROGRESS_S, Heartbeat
from arena_tui.orchestration.orchestrator import run_campaign
from arena_tui.spine.bus import EventBus
from arena_tui.store import Store

SLACK_S = 3.0  # a loaded machine's loop may be this late on top of the period


async def test_a_quiet_stretch_gets_a_line_and_a_notice_resets_the_wait() -> None:
    said: list[tuple[float, str]] = []
    pulse = Heartbeat(lambda line: said.append((time.monotonic(), line)), lambda: asyncio.sleep(0, "state"), every_s=0.3)
    t0 = time.monotonic()
    task = asyncio.create_task(pulse.run())
    await asyncio.sleep(0.2)
    pulse.notice("a cell started")  # 0.2 s in: the next line is due 0.3 s after it, not at 0.3 s
    await asyncio.sleep(0.65)
    task.cancel()
    lines = [line for _, line in said]
    assert lines[:2] == ["a cell started", "state"], lines
    assert said[1][0] - said[0][0] >= 0.3 and said[1][0] - t0 >= 0.5


async def test_a_campaign_of_long_turns_says_where_it_is_at_least_every_period(tmp_path: Path) -> None:
    spec = build_spec({}, {"benchmarks": "demo_bench", "models": "sim", "speed": 1.0, "turns": "0-1",
                           "greeting": False, "judge": "none", "workers": 1})
    said: list[tuple[float, str]] = []
    store = await Store.open(tmp_path / "arena.db")
    try:
        bus = EventBus()
        recording = store.start_recording(bus)
        t0 = time.monotonic()
        try:
            result = await run_campaign(store, bus, spec, notice=lambda line: said.append((time.monotonic(), line)))
        finally:
            bus.close()
            await recording
        t1 = time.monotonic()
    finally:
        await store.close()
    assert len(result.complete) == 1, said
    assert t1 - t0 > 2 * PROGRESS_S, f"the campaign took {t1 - t0:.1f} s: too short to show the period"
    times = [t0, *(t for t, _ in said), t1]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    print(f"\ncampaign {t1 - t0:.1f} s, {len(said)} lines, longest silence {max(gaps):.1f} s")
    print("\n".join(f"{t - t0:5.1f} {line}" for t, line in said))
    assert max(gaps) <= PROGRESS_S + SLACK_S, [f"{t - t0:5.1f} {line}" for t, line in said]
    progress = [line for _, line in said if "of their turns done" in line]
    assert progress and all(", 0/1 cell(s) complete; 1 running, " in line for line in progress), said
