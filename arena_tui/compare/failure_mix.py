"""`failure_causes.csv`: why each leaderboard row's turns failed, cause by cause.

One row per leaderboard row (model and benchmark, + pooled) and cause: the failed turns of its runs
(`fail_rows`: strict failures) that were given that cause (`arena_tui.judge.causes`, the list in
docs/judging.md). A failed turn may have several causes, so a row's shares may add up to more
than 1; a turn counted apart is no failure and in none.
"""

from __future__ import annotations

from typing import Any

from arena_tui.spine.causes import CODE, HEURISTIC, JUDGE
from .leaderboard import Leaderboard

FAILURE_CAUSES = ["model_name", "benchmark_name", "runs", "failed_turns", "cause", "turns", "share", "decided_by"]


def decided_by(cause: str) -> str:
    """Who names a cause: code (the run knows it), the judge, the offline heuristic, or nobody."""
    return "code" if cause in CODE else "judge" if cause in JUDGE else "heuristic" if cause in HEURISTIC else "none"


def failure_cause_rows(board: Leaderboard) -> list[dict[str, Any]]:
    rows = []
    for r in board.rows:
        failed = sum(f.fail_rows for f in r.runs)
        for cause, n in r.causes.items():
            rows.append({"model_name": r.model, "benchmark_name": r.benchmark, "runs": len(r.runs), "failed_turns": failed,
                         "cause": cause, "turns": n, "share": n / failed if failed else None,
                         "decided_by": decided_by(cause)})  # fmt: skip
    return rows
