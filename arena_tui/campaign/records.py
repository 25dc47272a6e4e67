"""A campaign in the run database: its spec and one row per cell naming the cell's latest run.

Completion is never read from a flag: `cell_state` looks at the run's stored turn rows (a finished
one per expected turn) and only then calls the cell complete. `cell_views` and
`campaign_views` are what `arena-tui campaign show|list` print and the TUI's campaign screens
show: one place decides a cell's shown state, its turn progress, its pass rate and what it cost
(its run's, `arena_tui.cost` through `StoredRun.cost`). The pass rate is the report's
(`arena_tui.compare.stored.run_tally`: fixed denominators, lost-pace turns left out), so
`campaign show` and `report` can never tell two numbers for one run.

Nothing is shown running or queued on a process's word alone: a run still `running` whose
recorder is gone shows interrupted, and a queued cell whose campaign's coordinator is gone
shows pending, both judged by the rule `runs` uses (`arena_tui.store.liveness`). The
coordinator names itself on the campaign row (`claim`) and renews its heartbeat (`beat`).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from arena_tui.compare.gap import Family
from arena_tui.compare.leaderboard import build_leaderboard
from arena_tui.compare.load import load_stored
from arena_tui.compare.pairwise import gap_families
from arena_tui.compare.stored import StoredRun, run_tally
from arena_tui.cost import Estimate
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.conditions import CLEAN
from arena_tui.spine.events import LOST_PACE, unfinished
from arena_tui.spine.ids import IdError, unique_prefix
from arena_tui.spine.source import TTS
from arena_tui.store import RunRow, Store
from arena_tui.store.liveness import THIS_HOST, recorder_alive
from arena_tui.verdicts import Tally

from .spec import CampaignSpec, Cell, caps_given_text


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


async def claim(store: Store, campaign_id: str) -> None:
    """This process is now the campaign's coordinator (until `release`); its first heartbeat."""
    await store.write_rows("UPDATE campaigns SET pid=?, host=?, heartbeat_at=? WHERE campaign_id=?",
                           [(os.getpid(), THIS_HOST, datetime.now(UTC).isoformat(), campaign_id)])


async def beat(store: Store, campaign_id: str) -> None:
    await store.write_rows("UPDATE campaigns SET heartbeat_at=? WHERE campaign_id=? AND pid=? AND host=?",
                           [(datetime.now(UTC).isoformat(), campaign_id, os.getpid(), THIS_HOST)])


async def release(store: Store, campaign_id: str) -> None:
    """Nothing runs the campaign any more (if it was still ours)."""
    await store.write_rows("UPDATE campaigns SET pid=NULL, pace='' WHERE campaign_id=? AND pid=? AND host=?",
                           [(campaign_id, os.getpid(), THIS_HOST)])


async def set_pace(store: Store, campaign_id: str, text: str) -> None:
    """What admission control says about the campaign's pace now (admission.py `pace_text`)."""
    await store.write_rows("UPDATE campaigns SET pace=? WHERE campaign_id=? AND pid=? AND host=?",
                           [(text, campaign_id, os.getpid(), THIS_HOST)])


async def coordinated(store: Store, campaign_id: str) -> bool:
    """Whether a live coordinator is running the campaign now."""
    rows = await store.read_rows("SELECT pid, host, heartbeat_at FROM campaigns WHERE campaign_id=?", (campaign_id,))
    if not rows or rows[0][0] is None:
        return False
    pid, host, heartbeat_at = rows[0]
    return recorder_alive(pid, host, datetime.fromisoformat(heartbeat_at) if heartbeat_at else None)


def recording(run: RunRow) -> bool:
    """A `running` run whose recorder is still there (a dead recorder's run is interrupted)."""
    return run.status == "running" and recorder_alive(run.pid, run.host, run.heartbeat_at or run.started_at)


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
    """Every run of the campaign."""
    return [c.run_id for c in await cells(store, campaign_id) if c.run_id]


async def campaign_ids(store: Store) -> list[str]:
    """Every recorded campaign's id (what a campaign id or prefix is resolved among: `spine.ids`)."""
    return [cid for (cid,) in await store.read_rows("SELECT campaign_id FROM campaigns")]


async def campaign_runs(store: Store, raw: str) -> list[str] | None:
    """The runs of the campaign `raw` names (compare/selection's `expand=` hook: `report CAMPAIGN`),
    None when it names none: its id, or a prefix of one campaign's id (`spine.ids.unique_prefix`,
    the rule every command takes ids by) that begins no run's id."""
    ids = await campaign_ids(store)
    if raw not in ids:
        runs = await store.read_rows("SELECT 1 FROM runs WHERE substr(run_id, 1, length(?)) = ? LIMIT 1", (raw, raw))
        if runs:
            return None
        try:
            raw = unique_prefix(raw, ids, kind="campaign", where=store.path)
        except IdError:
            return None
    return await run_ids(store, raw)


async def cell_state(store: Store, run_id: str | None) -> tuple[str, int, int]:
    """(state, turns done, turns expected): state is complete|interrupted|running|failed|missing,
    judged by the turn rows: complete only when no expected turn is `unfinished` (the rule a
    resume plays by: a cell is never skipped that `arena-tui resume` would replay); running
    only while its recorder lives."""
    if run_id is None:
        return "missing", 0, 0
    run = await store.get_run(run_id)
    if run is None:
        return "missing", 0, 0
    expected = list(run.turn_indices)
    left = unfinished(expected, {r.turn_index: r for r in await store.turn_results(run_id) if r.turn_index >= 0})
    done = len(expected) - len(left)
    if expected and not left:
        return "complete", done, len(expected)
    status = "failed" if run.status == "failed" else "running" if recording(run) else "interrupted"
    return status, done, len(expected)


async def lost_pace_turns(store: Store, run_id: str) -> list[int]:
    """The run's turns whose stored row says our machine lost pace on them (played again by a resume)."""
    return sorted(r.turn_index for r in await store.turn_results(run_id) if r.turn_index >= 0 and r.status == LOST_PACE)


# what a cell shows; ACTIVE: a campaign is working on the cell now (screens poll while any is)
STATES = ("queued", "running", "complete", "interrupted", "failed", "pending", "skipped")
ACTIVE = frozenset({"queued", "running"})


@dataclass(frozen=True)
class CellView:
    """One cell as it is shown: state from the run's turn rows (`cell_state`) and the cell row,
    turn progress from the stored turn rows, verdicts as the report counts them (`run_tally`)."""

    cell: Cell
    run_id: str | None
    state: str  # one of STATES
    reason: str  # why skipped, pending or re-queued ('' when nothing to say)
    done: int  # turns with a stored, uninterrupted turn row
    total: int  # turns the run expects (0: no run recorded yet)
    tally: Tally  # the run's verdicts by the report's rule (empty when unjudged or not run)
    cost: Estimate = Estimate()  # what its run cost, estimated (`StoredRun.cost`; nothing reported: no run yet)
    judge_cost: Estimate = Estimate()  # what judging it cost, apart (`StoredRun.judge_cost`)

    @property
    def strict(self) -> tuple[int, int]:
        """(turns passing every scored dimension, turns due: every turn the run set out to run
        but those our machine lost pace on; one not yet played or judged does not pass)."""
        return self.tally.strict

    @property
    def progress(self) -> str:
        return f"{self.done}/{self.total}" if self.total else "–"

    @property
    def active(self) -> bool:
        """Queued or running: its turns to come are not "not played", nor is it "no answer" yet."""
        return self.state in ACTIVE


ORPHANED = "its campaign process ended before the run started"


def shown_state(row: CellRow, run_state: str, coordinated: bool = True) -> str:
    """The cell's state from its row and its run's `cell_state`: the turn rows decide complete;
    a cell without a recorded run is queued (submitted to a live coordinator) or pending (not
    yet, not again, or its coordinator is gone)."""
    if row.status == "skipped":
        return "skipped"
    if run_state == "missing":
        return "queued" if row.status == "queued" and coordinated else "pending"
    return run_state


async def cell_views(store: Store, campaign_id: str, data_dir: Path | None = None,
                     known: dict[str, Benchmark | None] | None = None) -> list[CellView]:
    """The campaign's cells as shown; `data_dir` and `known` find benchmark data as the report
    does (`arena_tui.compare.load.load_stored`: what an unjudged turn is charged on)."""
    return (await _cells_and_runs(store, campaign_id, data_dir, known))[0]


async def _cells_and_runs(store: Store, campaign_id: str, data_dir: Path | None,
                          known: dict[str, Benchmark | None] | None) -> tuple[list[CellView], list[StoredRun]]:
    out = []
    alive = await coordinated(store, campaign_id)
    rows = [(row, await cell_state(store, row.run_id)) for row in await cells(store, campaign_id)]
    recorded = [row.run_id for row, (run_state, _, _) in rows if row.run_id and run_state != "missing"]
    runs, _ = await load_stored(store, recorded, data_dir, known)
    by_id = {r.run_id: r for r in runs}
    for row, (run_state, done, total) in rows:
        run = by_id.get(row.run_id or "")
        state = shown_state(row, run_state, alive)
        reason = ORPHANED if state == "pending" and row.status == "queued" and not row.reason else row.reason
        out.append(CellView(row.cell, row.run_id, state, reason, done, total, run_tally(run) if run else Tally(),
                            *((run.cost, run.judge_cost) if run else ())))
    return out, runs


def campaign_gaps(runs: list[StoredRun]) -> dict[str, Family]:
    """benchmark -> the gaps between the campaign's rows (its models, conditions, efforts, speakers:
    each its own leaderboard row), every pair of a benchmark, by the report's rule
    (`compare.pairwise.gap_families`, over the runs a report of the campaign counts: none still recording)."""
    done = [r for r in runs if r.row.status != "running"]
    return gap_families(build_leaderboard(done)) if done else {}


@dataclass(frozen=True)
class CampaignView:
    """One campaign as the list shows it: its spec and its cells' views."""

    campaign_id: str
    created_at: str  # ISO wall clock of the first `campaign run` with this id
    spec: CampaignSpec
    cells: list[CellView]
    pace: str = ""  # its live coordinator's admission control ("" when none runs it)
    gaps: dict[str, Family] = field(default_factory=dict)  # benchmark -> gaps between its rows (`campaign_gaps`; asked for)

    def count(self, *states: str) -> int:
        return sum(c.state in states for c in self.cells)

    @property
    def summary(self) -> str:
        """benchmarks × models × repeats, e.g. "demo_bench × sim, gpt-realtime × 2", with the
        conditions and efforts when it has them ("demo_bench × clean, telephony × sim × effort low, high × 1")."""
        s = self.spec
        conditions = f" × {', '.join(s.conditions)}" if s.conditions != (CLEAN.label,) else ""
        efforts = f" × effort {', '.join(s.efforts)}" if s.efforts else ""
        return f"{', '.join(s.benchmarks)}{conditions} × {', '.join(s.models)}{efforts} × {s.repeats}"

    @property
    def caps(self) -> str:
        """The provider caps its spec gives (`--provider-cap`), "" none: "at most 2 openai sessions at once"
        (a catalog's documented limit is the engine's to know: `campaign show` says those too)."""
        return caps_given_text(self.spec.provider_caps)

    @property
    def shape(self) -> str:
        """The same as counts, for narrow places: "1 bench × 2 models × 2", "1 bench × 1 model × 1", with
        each axis it has besides ("1 bench × 1 model × 3 conditions × 2 efforts × 1"): their product is its cells."""
        s = self.spec

        def n(count: int, what: str) -> str:
            return f"{count} {what}{'s' if count != 1 else ''}"

        axes = [f"{len(s.benchmarks)} bench", n(len(s.models), "model")]
        axes += [n(len(values), what) for values, default, what in ((s.speakers, (TTS,), "speaker"),
                 (s.conditions, (CLEAN.label,), "condition"), (s.efforts, (), "effort")) if values != default]
        return " × ".join([*axes, str(s.repeats)])


async def campaign_view(store: Store, campaign_id: str, data_dir: Path | None = None,
                        known: dict[str, Benchmark | None] | None = None, *, gaps: bool = False) -> CampaignView | None:
    """One campaign as shown; `gaps`: with the gaps between its rows (`campaign_gaps`)."""
    rows = await store.read_rows("SELECT created_at, spec FROM campaigns WHERE campaign_id=?", (campaign_id,))
    if not rows:
        return None
    created, spec = rows[0]
    views, runs = await _cells_and_runs(store, campaign_id, data_dir, known)
    return CampaignView(campaign_id, created, CampaignSpec.from_json(json.loads(spec)), views,
                        await live_pace(store, campaign_id),
                        await asyncio.to_thread(campaign_gaps, runs) if gaps else {})  # bootstraps: off the loop


async def campaign_views(store: Store, data_dir: Path | None = None,
                         known: dict[str, Benchmark | None] | None = None) -> list[CampaignView]:
    """Every campaign, newest first."""
    return [CampaignView(cid, created, spec, await cell_views(store, cid, data_dir, known), await live_pace(store, cid))
            for cid, created, spec in await list_campaigns(store)]


async def live_pace(store: Store, campaign_id: str) -> str:
    """The pace its coordinator reported, while that coordinator lives ("" otherwise)."""
    if not await coordinated(store, campaign_id):
        return ""
    rows = await store.read_rows("SELECT pace FROM campaigns WHERE campaign_id=?", (campaign_id,))
    return rows[0][0] if rows else ""
