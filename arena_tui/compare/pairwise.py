"""pairwise.csv and the report's "Gaps between rows" tables: every pair of rows of a benchmark (or
each row against a `--baseline` row), B − A per figure with its 95 % interval, p and Holm's
adjusted p over the benchmark's pairs, by `gap.py` (the one place a gap is computed).

A row is named as the leaderboard names it in the CSV (`model_name`: its group, with its labels);
in the tables and lines people read, by the one rule of row labels (`spine.labels`: what a
benchmark's rows share said once, each row what tells it apart). The figure is `turn_pass_strict`
(the strict row rule, as run_results.csv names it) or a dimension's name.
docs/reports.md lists the columns and states the methods' assumptions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..stats.paired import ALPHA, BOOTSTRAP
from .gap import STRICT_KEY, Family, figure_name, gap_core, gap_detail, p_text, points, row_family
from .leaderboard import Leaderboard
from .tables import STRICT

PAIRWISE = [
    "benchmark_name", "row_a", "row_b", "dimension", "n_paired", "difference", "ci_lower", "ci_upper", "p",
    "method",  # the columns, then ours
    "runs_a", "runs_b", "rate_a", "rate_b", "p_holm", "pairs_in_family", "distinguishable", "a_only_passed",
    "b_only_passed", "lag1_correlation", "effective_turns", "block_turns", "caveat", "turns_left_out", "words",
]  # fmt: skip


def resolve_baseline(board: Leaderboard, text: str) -> str:
    """The row a `--baseline` names: its exact name, else the one row whose name holds `text`."""
    names = board.models
    if text in names:
        return text
    hits = [m for m in names if text.casefold() in m.casefold()]
    if len(hits) == 1:
        return hits[0]
    which = "several rows" if hits else "no row"
    raise LookupError(f"--baseline {text!r}: {which} ({'; '.join(hits or names)})")


def gap_families(board: Leaderboard, baseline: str | None = None) -> dict[str, Family]:
    """benchmark -> its family of row pairs (per-benchmark rows; pooled rows pair no turns)."""
    return row_family(board.rows, baseline)


def pairwise_rows(families: Mapping[str, Family]) -> list[dict[str, Any]]:
    out = []
    for bench, fam in families.items():
        for i, pair in enumerate(fam.pairs):
            for key, g in pair.figures.items():
                row: dict[str, Any] = {
                    "benchmark_name": bench, "row_a": pair.a.name, "row_b": pair.b.name,
                    "dimension": STRICT if key == STRICT_KEY else key, "n_paired": g.turns if g else 0,
                    "runs_a": len(pair.a.runs), "runs_b": len(pair.b.runs), "pairs_in_family": len(fam.pairs),
                    "turns_left_out": pair.pairing.left_out_text or None,
                }  # fmt: skip
                if g is not None:
                    p_holm = fam.p(i, key)
                    row.update({
                        "difference": g.difference, "ci_lower": g.ci[0], "ci_upper": g.ci[1], "p": g.p,
                        "method": g.method, "rate_a": g.a, "rate_b": g.b, "p_holm": p_holm,
                        "distinguishable": g.distinguishable(p_holm), "caveat": g.caveat or None,
                        "a_only_passed": g.discordant[0] if g.discordant else None,
                        "b_only_passed": g.discordant[1] if g.discordant else None,
                        "lag1_correlation": g.serial, "effective_turns": g.effective,
                        "block_turns": g.block if g.method == BOOTSTRAP else None,
                        "words": fam.text(i, key),
                    })  # fmt: skip
                else:
                    row["words"] = fam.text(i, key)
                out.append(row)
    return out


GAP_HEADER = ["A", "B", "figure", "paired", "B − A [95 %]", "p", "Holm p", "verdict", "method"]


def gap_tables(families: Mapping[str, Family]) -> list[tuple[str, list[list[str]], list[str]]]:
    """Per benchmark: (benchmark, table with a header row, notes): the report's gap sections."""
    out = []
    for bench, fam in families.items():
        table = [list(GAP_HEADER)]
        shared, name = fam.labels
        notes = [shared.header()] if shared.shared else []
        for i, pair in enumerate(fam.pairs):
            a, b = name[pair.a.name], name[pair.b.name]
            for key, g in pair.figures.items():
                if g is None:
                    table.append([a, b, figure_name(key), "0", "–", "–", "–", "no paired turn", "–"])
                    continue
                p_holm = fam.p(i, key)
                runs = f" × {g.runs[0]}+{g.runs[1]} runs" if g.runs != (1, 1) else ""
                table.append([a, b, figure_name(key), f"{g.turns} turn{'s' * (g.turns != 1)}{runs}",
                              f"{points(g.difference)} pts [{points(g.ci[0])}, {points(g.ci[1])}]", p_text(g.p),
                              p_text(p_holm) if p_holm is not None and len(fam.pairs) > 1 else "–",
                              _verdict(g.distinguishable(p_holm)), g.method + (f" ({g.caveat})" if g.caveat else "")])
            if pair.strict is not None:
                notes.append(f"{a} → {b}: {gap_core(pair.strict)} ({gap_detail(pair.strict)})")
            if pair.pairing.left_out_text:
                notes.append(f"{a} → {b}: {pair.pairing.left_out_text}")
        out.append((bench, table, notes))
    return out


def _verdict(distinguishable: bool) -> str:
    return "distinguishable" if distinguishable else "not distinguishable"


def family_note(families: Mapping[str, Family]) -> str:
    """How the verdict of many pairs is reached, said once."""
    most = max((len(f.pairs) for f in families.values()), default=0)
    if most <= 1:
        return f"the verdict: p < {ALPHA:g}; the interval is 95 %"
    return (f"intervals are per pair (95 %); the verdict is Holm's over a benchmark's pairs (family-wise {ALPHA:g}), "
            "each figure its own family")


def strict_lines(families: Mapping[str, Family], rows: Sequence[str] | None = None) -> list[str]:
    """`A → B: B − A = … (…)` for each pair's strict pass, Holm's verdict over its benchmark's pairs
    when it has several: what `campaign show` lists. Rows are named by `Family.labels`: what a
    benchmark's rows share in a line of its own (`bench: all rows: simulator · …`)."""
    out = []
    for bench, fam in families.items():
        shared, name = fam.labels
        lines = [f"{bench}: A {name[pair.a.name]} → B {name[pair.b.name]}: {fam.text(i)}"
                 for i, pair in enumerate(fam.pairs)
                 if rows is None or pair.a.name in rows or pair.b.name in rows]  # fmt: skip
        out += ([f"{bench}: {shared.header()}"] if lines and shared.shared else []) + lines
    return out
