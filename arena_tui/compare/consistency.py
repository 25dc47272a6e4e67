"""Consistency across repeats as the reference's `analyze_consistency_runs.py` reports it.

Its six files, with its columns in its order: `consistency_run_details.csv` (one row per run and
turn), `consistency_turn_summary.csv` (per benchmark turn: runs, pass/fail/incomplete runs, the
status pattern, which metrics flip), `consistency_metric_flips.csv`, `consistency_flip_details.csv`
(the detail rows of unstable turns), `consistency_benchmark_summary.csv` (unstable turns, min/max
passing runs) and `consistency_sanity_checks.csv` (rows, unique runs and turns, duplicate run/turn
rows, missing fields). Like the reference they pool every run of the report per benchmark turn,
whatever its model, but never across judges (ours: `judge`, a run's judge and rules version,
`stored.row_identity`: no two judges, the offline heuristic included, are pooled); the
`_by_model.csv` files give the same per model row (`model_name`, and ours: `status_changes`,
`always_fails`, `changes`).

A turn's status and its metric flips are `arena_tui.verdicts` (`turn_consistency`), over the runs
that set out to run the turn (as the reference has a row only where a run has one): a turn
that counts in no figure (`arena_tui.verdicts`: not played, stopped, lost pace, infra failure,
engine error, judge error, not judged) is `incomplete`, as the reference calls a row whose scores
are all empty; ours, `counted_apart`, says why. `unstable_overall` is the reference's: the
statuses are not all the same (an incomplete run against a passing one counts); ours,
`status_changes` in the _by_model files, counts only changes between verdicts that exist
(`TurnConsistency.flips`). Patterns read
`run_index:status`, run_index from 1 as the reference's; pooled over models, by run_index (stable).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .leaderboard import POOLED, Leaderboard, RunFigures
from .tables import METRICS
from ..verdicts import APART, ordered, repeat_status, turn_consistency

STATUS = {"pass": "pass", "fail": "fail", "missing": "incomplete"}  # our repeat status -> the reference's
RUN_DETAILS = [
    "comparison_dir", "benchmark_name", "model_name", "run_index", "run_id", "run_dir", "turn", "user_text",
    "assistant_text", "tool_calls_json", "judge_reasoning", "latency_ms", "ttfb_ms", "overall_status",
    "failed_metric_count", "failing_metrics", *METRICS,
]  # fmt: skip
TURN_SUMMARY = [
    "benchmark_name", "turn", "runs", "pass_runs", "fail_runs", "incomplete_runs", "overall_status_pattern",
    "overall_status_unique_count", "metric_flip_count", "metric_flips", "unstable_overall", "unstable_metric",
    "user_text",
]  # fmt: skip
METRIC_FLIPS = ["benchmark_name", "turn", "metric", "pattern", "pass_runs", "fail_runs", "na_runs", "user_text"]
BENCHMARK_SUMMARY = ["benchmark_name", "turns", "unstable_overall_turns", "unstable_metric_turns", "max_pass_runs",
                     "min_pass_runs"]  # fmt: skip
SANITY_CHECKS = ["check", "value"]
JUDGE = ["judge"]  # ours, after the reference's columns: the judge (and rules version) of the pooled runs
DETAILS = [*RUN_DETAILS, *JUDGE, "counted_apart"]
BY_MODEL = ["model_name"]  # ours, after the reference's columns in the _by_model files
TURN_SUMMARY_BY_MODEL = [*TURN_SUMMARY, *JUDGE, *BY_MODEL, "status_changes", "always_fails"]
METRIC_FLIPS_BY_MODEL = [*METRIC_FLIPS, *JUDGE, *BY_MODEL, "changes"]
BENCHMARK_SUMMARY_BY_MODEL = [*BENCHMARK_SUMMARY, *JUDGE, *BY_MODEL]

FILES = {  # file -> its columns
    "consistency_run_details.csv": DETAILS,
    "consistency_turn_summary.csv": [*TURN_SUMMARY, *JUDGE],
    "consistency_metric_flips.csv": [*METRIC_FLIPS, *JUDGE],
    "consistency_flip_details.csv": DETAILS,
    "consistency_benchmark_summary.csv": [*BENCHMARK_SUMMARY, *JUDGE],
    "consistency_sanity_checks.csv": SANITY_CHECKS,
    "consistency_turn_summary_by_model.csv": TURN_SUMMARY_BY_MODEL,
    "consistency_metric_flips_by_model.csv": METRIC_FLIPS_BY_MODEL,
    "consistency_flip_details_by_model.csv": DETAILS,
    "consistency_benchmark_summary_by_model.csv": BENCHMARK_SUMMARY_BY_MODEL,
}


def _detail(f: RunFigures, turn: int, comparison_dir: str) -> dict[str, Any]:
    """One run's turn as the reference's detail row (its judged row plus the verdict columns)."""
    run = f.run
    result = run.results.get(turn)
    st = run.standing.get(turn)
    scores = f.verdicts.get(turn) or {}
    failing = [d for d in ordered(scores) if scores[d] == "fail"]
    reasoning = None
    if st is not None:
        j = st.shown
        reasoning = j.error or "\n".join(f"{d}: {s.reasoning}" for d, s in j.scores.items())
    calls = [{"name": c.name, "args": c.args, **({"is_duplicate": True} if c.is_duplicate else {})}
             for c in result.tool_calls] if result is not None else []  # fmt: skip
    return {
        "comparison_dir": comparison_dir,
        "benchmark_name": run.row.benchmark,
        "model_name": f.name,
        "run_index": f.run_index,
        "run_id": run.run_id,
        "run_dir": run.row.recorded.run_dir,
        "turn": turn,
        "user_text": run.user_text(turn) or None,
        "assistant_text": (result.sentinel or result.assistant_text) if result is not None else None,
        "tool_calls_json": json.dumps(calls, ensure_ascii=True, sort_keys=True),
        "judge_reasoning": reasoning,
        "latency_ms": run.durations.get(turn),
        "ttfb_ms": result.latencies.provider_ttfb_ms if result is not None else None,
        "overall_status": STATUS[repeat_status(scores)],
        "failed_metric_count": len(failing),
        "failing_metrics": ",".join(failing),
        **{m: scores.get(m, "na") for m in METRICS},
        "judge": run.identity.judge,
        "counted_apart": APART[f.apart[turn]] if turn in f.apart else None,
    }


Unstable = tuple[str, str, int]  # (benchmark, judge, turn)


def _turn_rows(runs: Sequence[RunFigures], by_model: str | None) -> tuple[list[dict], list[dict], list[Unstable]]:
    """(turn summary rows, metric flip rows, unstable turns) of one benchmark's runs of one judge
    (and rules version), ordered by run_index (stable: model order breaks ties, as the report lists them)."""
    runs = sorted(runs, key=lambda f: f.run_index)
    bench, kind = runs[0].run.row.benchmark, runs[0].run.identity.judge
    turns, flips, unstable = [], [], []
    for turn in sorted({t for f in runs for t in f.verdicts}):
        runs_t = [f for f in runs if turn in f.verdicts]  # a run that did not set out to run it has no row
        (c,) = turn_consistency([{turn: f.verdicts[turn]} for f in runs_t])
        text = next((t for f in runs_t if (t := f.run.user_text(turn))), "")
        statuses = [STATUS[s] for s in c.statuses]
        names = [m for m in METRICS if m in c.metric_flips] + [d for d in ordered(c.metric_flips) if d not in METRICS]
        row = {
            "benchmark_name": bench, "turn": c.turn_index, "runs": c.runs, "pass_runs": c.pass_runs,
            "fail_runs": c.fail_runs, "incomplete_runs": c.missing_runs,
            "overall_status_pattern": "|".join(f"{f.run_index}:{s}" for f, s in zip(runs_t, statuses)),
            "overall_status_unique_count": len(set(statuses)), "metric_flip_count": len(names),
            "metric_flips": ",".join(names), "unstable_overall": len(set(statuses)) > 1, "unstable_metric": bool(names),
            "user_text": text, "judge": kind,
        }  # fmt: skip
        if by_model is not None:
            row.update({"model_name": by_model, "status_changes": c.flips, "always_fails": c.always_fails})
        turns.append(row)
        if len(set(statuses)) > 1 or names:
            unstable.append((bench, kind, c.turn_index))
        for m in names:
            values = [(f.verdicts.get(turn) or {}).get(m, "na") for f in runs_t]
            flip = {
                "benchmark_name": bench, "turn": c.turn_index, "metric": m,
                "pattern": "|".join(f"{f.run_index}:{v}" for f, v in zip(runs_t, values)),
                "pass_runs": values.count("pass"), "fail_runs": values.count("fail"), "na_runs": values.count("na"),
                "user_text": text, "judge": kind,
            }  # fmt: skip
            if by_model is not None:
                flip.update({"model_name": by_model, "changes": c.metric_flips[m]})
            flips.append(flip)
    return turns, flips, unstable


def _benchmark_rows(turns: list[dict], by_model: str | None) -> list[dict]:
    out = []
    for bench, kind in sorted({(t["benchmark_name"], t["judge"]) for t in turns}):
        mine = [t for t in turns if (t["benchmark_name"], t["judge"]) == (bench, kind)]
        row = {"benchmark_name": bench, "judge": kind, "turns": len(mine),
               "unstable_overall_turns": sum(t["unstable_overall"] for t in mine),
               "unstable_metric_turns": sum(t["unstable_metric"] for t in mine),
               "max_pass_runs": max(t["pass_runs"] for t in mine), "min_pass_runs": min(t["pass_runs"] for t in mine)}  # fmt: skip
        if by_model is not None:
            row["model_name"] = by_model
        out.append(row)
    return out


def _sanity(details: list[dict]) -> list[dict]:
    seen = [(d["run_id"], d["turn"]) for d in details]
    checks = [("rows", len(details)), ("unique_runs", len({d["run_id"] for d in details})),
              ("unique_turns", len({(d["benchmark_name"], d["turn"]) for d in details})),
              ("duplicate_run_turn_rows", len(seen) - len(set(seen)))]  # fmt: skip
    for name in ("user_text", "assistant_text", "judge_reasoning", "latency_ms", "ttfb_ms"):
        checks.append((f"missing_{name}", sum(d[name] is None for d in details)))
    return [{"check": k, "value": v} for k, v in checks]


def _flip_details(details: list[dict], unstable: list[Unstable]) -> list[dict]:
    keep = set(unstable)
    rows = [d for d in details if (d["benchmark_name"], d["judge"], d["turn"]) in keep]
    return sorted(rows, key=lambda d: (d["benchmark_name"], d["judge"], d["turn"], d["run_index"]))


def consistency_tables(board: Leaderboard, comparison_dir: str = "") -> dict[str, list[dict[str, Any]]]:
    """file name -> rows, for every file in `FILES`; `comparison_dir` is where the report is written."""
    details = [_detail(f, t, comparison_dir) for f in board.runs for t in sorted(f.verdicts)]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in FILES}
    unstable: list[Unstable] = []
    pools = sorted({(f.run.row.benchmark, f.run.identity.judge) for f in board.runs})
    for bench, kind in pools:  # never across judges
        turns, flips, bad = _turn_rows([f for f in board.runs if (f.run.row.benchmark, f.run.identity.judge) == (bench, kind)],
                                       None)
        out["consistency_turn_summary.csv"] += turns
        out["consistency_metric_flips.csv"] += flips
        unstable += bad
    out["consistency_run_details.csv"] = details
    out["consistency_flip_details.csv"] = _flip_details(details, unstable)
    out["consistency_benchmark_summary.csv"] = _benchmark_rows(out["consistency_turn_summary.csv"], None)
    out["consistency_sanity_checks.csv"] = _sanity(details)
    for row in board.rows:
        if row.benchmark == POOLED or not row.runs:
            continue
        turns, flips, bad = _turn_rows(row.runs, row.model)
        out["consistency_turn_summary_by_model.csv"] += turns
        out["consistency_metric_flips_by_model.csv"] += flips
        out["consistency_benchmark_summary_by_model.csv"] += _benchmark_rows(turns, row.model)
        ids = {f.run.run_id for f in row.runs}
        out["consistency_flip_details_by_model.csv"] += _flip_details([d for d in details if d["run_id"] in ids], bad)
    return out
