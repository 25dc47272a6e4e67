"""The report of a set of runs: the reference's CSVs, its consistency CSVs, the causes of the
failures (`failure_causes.csv`), the gaps between rows (`pairwise.csv`, `pairwise.py`), the
original eval's aggregates, summary.md and report.html.

`build_report` is the whole of `arena-tui report` minus argument parsing: select (`selection`),
read (`stored.load_runs`), compute (`leaderboard.build_leaderboard`), write.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import json
from datetime import UTC, datetime
from pathlib import Path

from arena_tui.spine.benchmark import Benchmark

from ..store import Store
from .aggregates import aggregates
from .consistency import FILES as CONSISTENCY_FILES
from .consistency import consistency_tables
from .failure_mix import FAILURE_CAUSES, failure_cause_rows
from .leaderboard import Leaderboard, build_leaderboard
from .pairwise import PAIRWISE, gap_families, pairwise_rows, resolve_baseline
from .stored import load_runs
from .render import report_html, summary_markdown
from .selection import Expander, Selection, select_runs
from .tables import (
    CATEGORY_SUMMARY,
    METRIC_SUMMARY,
    MODEL_SUMMARY,
    RUN_RESULTS,
    category_rows,
    metric_summary_rows,
    model_summary_rows,
    run_results_rows,
    to_csv,
)

FILES = (
    "run_results.csv",
    "model_summary.csv",
    "pairwise.csv",
    "metric_summary.csv",
    "category_summary.csv",
    "failure_causes.csv",
    *CONSISTENCY_FILES,
    "aggregates.json",
    "summary.md",
    "report.html",
)


def write_report(board: Leaderboard, sel: Selection, dest: str | Path, *, now: datetime | None = None,
                 baseline: str | None = None) -> list[Path]:
    """Write every report file into `dest` (created); returns their paths in FILES order. `baseline`:
    the gaps are each row's against this one (a row's name, or a unique part of it), not every pair's."""
    base = resolve_baseline(board, baseline) if baseline is not None else None  # a wrong name writes nothing
    out = Path(dest)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"{out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    now = now or datetime.now(UTC)
    run_rows = run_results_rows(board)
    consistency = consistency_tables(board, str(out.resolve()))
    gaps = gap_families(board, base)
    texts = {
        "run_results.csv": to_csv(run_rows, RUN_RESULTS),
        "model_summary.csv": to_csv(model_summary_rows(board, run_rows), MODEL_SUMMARY),
        "pairwise.csv": to_csv(pairwise_rows(gaps), PAIRWISE),
        "metric_summary.csv": to_csv(metric_summary_rows(board, run_rows), METRIC_SUMMARY),
        "category_summary.csv": to_csv(category_rows(board), CATEGORY_SUMMARY),
        "failure_causes.csv": to_csv(failure_cause_rows(board), FAILURE_CAUSES),
        **{name: to_csv(consistency[name], columns) for name, columns in CONSISTENCY_FILES.items()},
        "aggregates.json": json.dumps(aggregates(board), indent=2) + "\n",
        "summary.md": summary_markdown(board, sel, now, gaps),
        "report.html": report_html(board, sel, now, gaps),
    }
    paths = []
    for name in FILES:
        p = out / name
        p.write_text(texts[name], encoding="utf-8")
        paths.append(p)
    return paths


async def build_report(
    store: Store,
    targets: Sequence[str],
    dest: str | Path,
    benchmark_for: Callable[[str], Benchmark | None] | None = None,
    *,
    expand: Expander | None = None,
    baseline: str | None = None,
) -> tuple[Selection, Leaderboard, list[Path]]:
    """Select, read, compute and write. Raises LookupError when nothing finished is selected, or
    when `baseline` names no row (or several)."""
    sel = await select_runs(store, targets, expand=expand)
    if not sel.run_ids:
        why = "; ".join(f"{k}: {v}" for k, v in sel.skipped.items()) or "nothing selected"
        raise LookupError(f"no finished runs to report ({why})")
    board = build_leaderboard(await load_runs(store, sel.run_ids, benchmark_for))
    return sel, board, write_report(board, sel, dest, baseline=baseline)
