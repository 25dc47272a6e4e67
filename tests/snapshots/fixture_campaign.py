"""A campaign for the UI snapshots and screenshots: real recorded runs, one per state a cell can show.

The campaign rows go in through `arena_tui.campaign.records` (what the orchestrator writes),
the runs are the frozen real demo recording (`fixture_run.py`) written by the real store under
one run id per cell: one complete, one cut mid-turn (still running: its recorder, this process,
is alive), one interrupted, one queued with no run yet (its coordinator, this process, is alive
and named on the campaign row), the gpt-realtime cells skipped by preflight, and a model with a
long id (`fixture_run.LONG_MODEL`): its first cell the long-named recording (a turn answered
empty on every attempt), the others pending. Wall-clock columns are pinned so snapshots never drift.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .fixture_run import FAULTS, FIXED_ENDED, FIXED_STARTED, LONG_MODEL, LONG_RUN_ID, cut_mid_turn, fixture_events, long_events

CAMPAIGN_ID = "c0ffee5eed01"
CREATED_AT = "2026-05-05T08:59:30+00:00"
# what preflight reports for gpt-realtime at speed 15 without OPENAI_API_KEY (the reason the cells were skipped)
SKIPPED = ("demo_bench × gpt-realtime: openai: environment variable OPENAI_API_KEY is not set (the API key); "
           "demo_bench × gpt-realtime: openai: --speed must be 1 against a real service (got 15.0)")
INTERRUPTED = "the recording process ended without finishing the run"


def campaign_spec():
    from arena_tui.campaign.spec import CampaignSpec

    return CampaignSpec(benchmarks=("demo_bench",), models=("sim", "gpt-realtime", LONG_MODEL), repeats=4, speed=15.0,
                        turns="0-5", extra={"faults": FAULTS})


def run_id_of(model: str, repeat: int) -> str:
    return f"camp-{model}-{repeat}"


async def load_campaign_db(db: Path) -> str:
    """The campaign in a fresh database, written by the real store; returns its id."""
    from arena_tui.campaign import records
    from arena_tui.campaign.spec import Cell
    from arena_tui.spine.events import RunEnded
    from arena_tui.store import Store

    events = fixture_events()
    spec = campaign_spec()

    def as_run(evs: list, run_id: str) -> list:
        return [ev.model_copy(update={"run_id": run_id}) for ev in evs]

    interrupted = cut_mid_turn(events, 2)
    interrupted.append(RunEnded(run_id="", t_ms=interrupted[-1].t_ms, status="interrupted", reason=INTERRUPTED))
    runs = {1: events, 2: interrupted, 3: cut_mid_turn(events, 3)}
    store = await Store.open(db)
    try:
        await records.create(store, CAMPAIGN_ID, spec)
        await records.claim(store, CAMPAIGN_ID)  # as the orchestrator does: this process runs it
        for repeat, evs in runs.items():
            for ev in as_run(evs, run_id_of("sim", repeat)):
                store.submit(ev)
        for ev in long_events():
            store.submit(ev)
        await store.flush()
        await records.set_cell(store, CAMPAIGN_ID, Cell("demo_bench", LONG_MODEL, 1), status="done", run_id=LONG_RUN_ID)
        sim = {1: ("done", ""), 2: ("pending", INTERRUPTED), 3: ("queued", ""), 4: ("queued", "")}
        for repeat, (status, reason) in sim.items():
            await records.set_cell(store, CAMPAIGN_ID, Cell("demo_bench", "sim", repeat), status=status,
                                   run_id=run_id_of("sim", repeat), reason=reason)
        for repeat in range(1, spec.repeats + 1):
            await records.set_cell(store, CAMPAIGN_ID, Cell("demo_bench", "gpt-realtime", repeat), status="skipped",
                                   reason=SKIPPED)
        await store.flush()
    finally:
        await store.close()
    with sqlite3.connect(db) as conn:  # wall-clock columns are the recorder's; pin them
        conn.execute("UPDATE campaigns SET created_at=? WHERE campaign_id=?", (CREATED_AT, CAMPAIGN_ID))
        conn.execute("UPDATE runs SET started_at=?, ended_at=CASE WHEN status='running' THEN NULL ELSE ? END",
                     (FIXED_STARTED, FIXED_ENDED))
    return CAMPAIGN_ID
