"""Which runs a comparison covers: the one place a report, a leaderboard or a campaign says so."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from arena_tui.spine.ids import unique_prefix

from ..store import Store

ALL = "all"  # the target that is every stored run, of every benchmark
# Maps a target to run ids, or None when the target is not its kind (e.g. a campaign id lookup).
Expander = Callable[[str], Awaitable[Sequence[str] | None]]


@dataclass
class Selection:
    run_ids: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # run id -> why it is not included
    targets: list[str] = field(default_factory=list)

    @property
    def description(self) -> str:
        return ", ".join(self.targets)


async def select_runs(store: Store, targets: Sequence[str], *, expand: Expander | None = None) -> Selection:
    """Resolve targets to run ids, oldest run first, each run once.

    A target is, in this order: whatever `expand` resolves (a campaign id, once campaigns exist),
    a run id, `all`, a benchmark name (every run of it), or a unique run-id prefix. Runs still
    recording are skipped and named (their unfinished turns would count as failures), and so are
    runs another run superseded (a campaign's re-run from scratch: the cell would count twice)
    unless named by their own id.
    Raises LookupError naming the first target that matches nothing or is ambiguous.
    """
    runs = await store.list_runs()
    by_id = {r.run_id: r for r in runs}
    benchmarks = {r.benchmark for r in runs}
    chosen: list[str] = []
    named: set[str] = set()  # asked for by their own id (or a prefix of it)
    for raw in targets:
        expanded = await expand(raw) if expand is not None else None
        if expanded is not None:
            unknown = [r for r in expanded if r not in by_id]
            if unknown:
                raise LookupError(f"{store.path}: {raw!r} names runs that are not stored: {', '.join(unknown[:5])}")
            hits = list(expanded)
        elif raw in by_id:
            hits = [raw]
            named.add(raw)
        elif raw == ALL:
            hits = [r.run_id for r in runs]
        elif raw in benchmarks:
            hits = [r.run_id for r in runs if r.benchmark == raw]
        elif not any(r.startswith(raw) for r in by_id):
            raise LookupError(f"{store.path}: no run or benchmark {raw!r} (see `arena-tui runs`)")
        else:  # a unique run-id prefix, by the rule every command takes ids by (IdError when ambiguous)
            hits = [unique_prefix(raw, by_id, kind="run", where=store.path)]
            named.update(hits)
        chosen += [h for h in hits if h not in chosen]
    sel = Selection([], targets=list(targets))
    for run_id in sorted(chosen, key=lambda r: (by_id[r].started_at, r)):
        if by_id[run_id].status == "running":
            sel.skipped[run_id] = "still recording"
        elif by_id[run_id].superseded_by and run_id not in named:
            sel.skipped[run_id] = f"superseded by run {by_id[run_id].superseded_by} (re-run from scratch)"
        else:
            sel.run_ids.append(run_id)
    return sel
