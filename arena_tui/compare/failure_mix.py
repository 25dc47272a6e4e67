"""Why each leaderboard row's turns failed, cause by cause: `failure_causes.csv`, and the
leaderboard screen's failure mix (`mix_columns`, its `m`).

One row per leaderboard row (model and benchmark, + pooled) and cause: the failed turns of its runs
(`fail_rows`: strict failures) that were given that cause (`arena_tui.judge.causes`, the list in
docs/judging.md). A failed turn may have several causes, so a row's shares may add up to more
than 1; a turn counted apart is no failure and in none. Who named a cause (`decided_by`) is a
person where their verdict named it on a turn (`named_by`), else code, the judge or the heuristic.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from arena_tui.spine.causes import CODE, HEURISTIC, JUDGE, label, ordered
from arena_tui.spine.events import Judgement
from .columns import Column, Words, board_columns
from .leaderboard import BoardRow, Leaderboard
from ..verdicts import Standing

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
    cols += [_cause_column(c) for c in causes]
    return cols


def _cause_column(cause: str) -> Column:
    """The failure mix's column of one cause (a function of its own: each column's lambdas hold their own cause)."""
    return Column(f"cause:{cause}", label(cause), lambda r: _cause(r, cause), lambda r: r.causes.get(cause, 0), True,
                  title=f"{label(cause)} ({decided_by(cause)})")


def decided_by(cause: str) -> str:
    """Who names a cause: code (the run knows it), the judge, the offline heuristic, or nobody."""
    return "code" if cause in CODE else "judge" if cause in JUDGE else "heuristic" if cause in HEURISTIC else "none"


PERSON = "person"  # a cause a person's verdict named (`arena-tui review --cause`), over the judge's


def named_by(cause: str, st: Standing[Judgement] | None) -> str:
    """Who named a cause on one turn: a person (their verdict named it), else `decided_by`."""
    if st is not None and st.judgement is not None and any(r.causes for r in st.reviews) and cause in st.judgement.causes:
        return PERSON
    return decided_by(cause)


def _named_by(row: BoardRow, cause: str) -> str:
    """Who named `cause` on the row's failed turns given it: `person`, `judge`, both (`judge, person`), …"""
    who = {named_by(cause, f.run.standing.get(t)) for f in row.runs for t, causes in f.run.causes.items()
           if cause in causes and t in f.run.tally.rows}
    return ", ".join(sorted(who)) or decided_by(cause)


def failure_cause_rows(board: Leaderboard) -> list[dict[str, Any]]:
    rows = []
    for r in board.rows:
        failed = failed_turns(r)
        for cause, n in r.causes.items():
            rows.append({"model_name": r.model, "benchmark_name": r.benchmark, "runs": len(r.runs), "failed_turns": failed,
                         "cause": cause, "turns": n, "share": n / failed if failed else None,
                         "decided_by": _named_by(r, cause)})  # fmt: skip
    return rows
