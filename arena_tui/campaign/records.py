"""A campaign in the run database: its spec and one row per cell naming the cell's latest run.

Completion is never read from a flag: `cell_state` looks at the run's stored turn rows (one
per expected turn, none interrupted) and only then calls the cell complete.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from arena_tui.store import Store

from .spec import CampaignSpec, Cell


@dataclass(frozen=True)
class CellRow:
    cell: Cell
    run_id: str | None
    status: str  # pending|queued|skipped|done
    reason: str


async def create(store: Store, campaign_id: str, spec: CampaignSpec) -> None:
    now = datetime.now(UTC).isoformat()
    await store.write_rows("INSERT OR IGNORE INTO campaigns(campaign_id, spec, created_at) VALUES (?, ?, ?)",
                           [(campaign_id, json.dumps(spec.to_json()), now)])
    await store.write_rows(
        "INSERT OR IGNORE INTO campaign_cells(campaign_id, benchmark, model, repeat) VALUES (?, ?, ?, ?)",
        [(campaign_id, c.benchmark, c.model, c.repeat) for c in spec.cells()])


async def set_cell(store: Store, campaign_id: str, cell: Cell, *, status: str, run_id: str | None = None,
                   reason: str = "") -> None:
    await store.write_rows(
        "UPDATE campaign_cells SET status=?, reason=?, run_id=COALESCE(?, run_id) "
        "WHERE campaign_id=? AND benchmark=? AND model=? AND repeat=?",
        [(status, reason, run_id, campaign_id, cell.benchmark, cell.model, cell.repeat)])


async def load_spec(store: Store, campaign_id: str) -> CampaignSpec | None:
    rows = await store.read_rows("SELECT spec FROM campaigns WHERE campaign_id=?", (campaign_id,))
    return CampaignSpec.from_json(json.loads(rows[0][0])) if rows else None


async def find_by_spec(store: Store, spec: CampaignSpec) -> str | None:
    """The newest campaign recorded with exactly this spec (re-running a spec file resumes it)."""
    rows = await store.read_rows("SELECT campaign_id FROM campaigns WHERE spec=? ORDER BY created_at DESC",
                                 (json.dumps(spec.to_json()),))
    return rows[0][0] if rows else None


async def list_campaigns(store: Store) -> list[tuple[str, str, CampaignSpec]]:
    rows = await store.read_rows("SELECT campaign_id, created_at, spec FROM campaigns ORDER BY created_at DESC")
    return [(cid, created, CampaignSpec.from_json(json.loads(spec))) for cid, created, spec in rows]


async def cells(store: Store, campaign_id: str) -> list[CellRow]:
    rows = await store.read_rows(
        "SELECT benchmark, model, repeat, run_id, status, reason FROM campaign_cells WHERE campaign_id=? "
        "ORDER BY rowid", (campaign_id,))
    return [CellRow(Cell(b, m, r), run_id, status, reason) for b, m, r, run_id, status, reason in rows]


async def run_ids(store: Store, campaign_id: str) -> list[str]:
    """Every run of the campaign (compare/selection's `expand=` hook)."""
    return [c.run_id for c in await cells(store, campaign_id) if c.run_id]


async def cell_state(store: Store, run_id: str | None) -> tuple[str, int, int]:
    """(state, turns done, turns expected): state is complete|interrupted|running|failed|missing,
    judged by the turn rows: complete only with one row per expected turn and none interrupted."""
    if run_id is None:
        return "missing", 0, 0
    run = await store.get_run(run_id)
    if run is None:
        return "missing", 0, 0
    expected = list(run.turn_indices)
    rows = {r.turn_index: r for r in await store.turn_results(run_id) if r.turn_index >= 0}
    done = [i for i in expected if i in rows and rows[i].status != "interrupted"]
    if expected and len(done) == len(expected):
        return "complete", len(done), len(expected)
    status = run.status if run.status in ("running", "failed") else "interrupted"
    return status, len(done), len(expected)
