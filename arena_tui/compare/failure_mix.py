"""Why each leaderboard row's turns failed, cause by cause: `failure_causes.csv`, and the
leaderboard screen's failure mix (`mix_columns`, its `m`).

One row per leaderboard row (model and benchmark, + pooled) and cause: the failed turns of its runs
(`fail_rows`: strict failures) that were given that cause (`arena_tui.judge.causes`, the list in
docs/judging.md). A failed turn may have several causes, so a row's shares may add up to more
than 1; a turn counted apart is no failure and in none.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from arena_tui.spine.causes import CODE, HEURISTIC, JUDGE, label, ordered
from .columns import Column, Words, board_columns
from .leaderboard import BoardRow, Leaderboard

FAILURE_CAUSES = ["model_name", "benchmark_name", "runs", "failed_turns", "cause", "turns", "share", "decided_by"]


def failed_turns(row: BoardRow) -> int:
    """The row's failed turns (strict failures over its runs): what a cause's share is of."""
    return sum(f.fail_rows for f in row.runs)


def _cause(row: BoardRow, cause: str) -> Words:
    """`3` over `60%` of the row's failed turns; `–` when none was given it."""
    n, failed = row.causes.get(cause, 0), failed_turns(row)
    if not n:
        return Words("–", tone="muted", whole="–")
    return Words(str(n), f"{100 * n / failed:.0f}%" if failed else "", "warn", whole=f"{n} of {failed}")


def mix_columns(rows: list[BoardRow]) -> list[Column]:
    """The leaderboard's failure mix: model and benchmark, the failed turns (of the turns counted),
    then one column per cause any row was given, the most given first (sorted by its count)."""
    given: Counter[str] = Counter()
    for r in rows:
        given.update(r.causes)
    order = {c: i for i, c in enumerate(ordered(given))}
    causes = sorted(given, key=lambda c: (-given[c], order[c]))
    cols = board_columns([])[:2]
    cols.append(Column("failed", "failed turns", lambda r: Words(str(failed_turns(r)), f"of {r.strict.n} counted",
                                                                 "warn" if failed_turns(r) else "muted"),
                       failed_turns, True))  # fmt: skip
    cols += [Column(f"cause:{c}", label(c), lambda r, c=c: _cause(r, c), lambda r, c=c: r.causes.get(c, 0), True,
                    title=f"{label(c)} ({decided_by(c)})") for c in causes]  # fmt: skip
    return cols


def decided_by(cause: str) -> str:
    """Who names a cause: code (the run knows it), the judge, the offline heuristic, or nobody."""
    return "code" if cause in CODE else "judge" if cause in JUDGE else "heuristic" if cause in HEURISTIC else "none"


def failure_cause_rows(board: Leaderboard) -> list[dict[str, Any]]:
    rows = []
    for r in board.rows:
        failed = failed_turns(r)
        for cause, n in r.causes.items():
            rows.append({"model_name": r.model, "benchmark_name": r.benchmark, "runs": len(r.runs), "failed_turns": failed,
                         "cause": cause, "turns": n, "share": n / failed if failed else None,
                         "decided_by": decided_by(cause)})  # fmt: skip
    return rows
