"""A campaign over conditions and efforts for the UI tests and screenshots: `--condition
clean,telephony,noise=10 --effort low,high` against the simulator, each cell a real recorded run.

The campaign rows go in through `arena_tui.campaign.records` (what the orchestrator writes); each
cell's run is the frozen real demo recording (`fixture_run.py`: simulator, heuristic judge, its
injected faults) written by the real store under the cell's run id, its `run_started.config` saying
the cell's condition and effort as the engine stores them. `conditions` and `efforts` make a bigger
matrix (12 rows: six conditions × two efforts). Wall-clock columns are pinned so snapshots never drift.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .fixture_run import FAULTS, FIXED_ENDED, FIXED_STARTED, fixture_events

VARIANT_CAMPAIGN = "a11c0de5eed6"
CONDITIONS = ("clean", "telephony", "noise=10")
EFFORTS = ("low", "high")
MANY_CONDITIONS = ("clean", "telephony", "noise=10", "noise=20", "loss=5", "loss=10")  # × EFFORTS: 12 rows


def variant_run_id(condition: str, effort: str) -> str:
    """A run id of the one form runs get (32 hex digits), one per cell, stable."""
    import hashlib

    return hashlib.sha256(f"{condition}|{effort}".encode()).hexdigest()[:32]


async def load_variant_campaign_db(db: Path, conditions: tuple[str, ...] = CONDITIONS,
                                   efforts: tuple[str, ...] = EFFORTS) -> str:
    """The campaign in a fresh database, every cell complete; returns its id."""
    from arena_tui.campaign import records
    from arena_tui.campaign.spec import CampaignSpec, cell_condition, model_parts
    from arena_tui.store import Store

    spec = CampaignSpec(benchmarks=("demo_bench",), models=("sim",), speed=15.0, turns="0-5", judge="heuristic",
                        conditions=conditions, efforts=efforts, extra={"faults": FAULTS})
    events = fixture_events()
    store = await Store.open(db)
    try:
        await records.create(store, VARIANT_CAMPAIGN, spec)
        for cell in spec.cells():
            condition, effort = cell_condition(cell.benchmark), model_parts(cell.model)[1] or ""
            run_id = variant_run_id(condition, effort)
            first, *rest = (ev.model_copy(update={"run_id": run_id}) for ev in events)
            config = {**first.config, "condition": condition, "effort": effort}
            for ev in (first.model_copy(update={"config": config}), *rest):
                store.submit(ev)
            await store.flush()
            await records.set_cell(store, VARIANT_CAMPAIGN, cell, status="done", run_id=run_id)
        await store.flush()
    finally:
        await store.close()
    with sqlite3.connect(db) as conn:  # wall-clock columns are the recorder's; pin them
        conn.execute("UPDATE campaigns SET created_at=? WHERE campaign_id=?", (FIXED_STARTED, VARIANT_CAMPAIGN))
        conn.execute("UPDATE runs SET started_at=?, ended_at=?", (FIXED_STARTED, FIXED_ENDED))
    return VARIANT_CAMPAIGN
