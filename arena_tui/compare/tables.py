"""The rows of the report's CSV files, as dicts: the reference's column names first, then ours.

File names and columns follow the reference comparison script where it has them
(`run_results.csv`, `model_summary.csv`, `metric_summary.csv`; its consistency analysis's
`consistency_turn_summary.csv`, `consistency_metric_flips.csv`). A reference column that means
something we do not measure is left out rather than filled with a different quantity: its
`latency_ms` is the wall-clock length of a turn, so ours is `voice_to_voice_ms` (our timeline);
its `ttfb_ms` is what the service reported, which is our `provider_ttfb_ms`, written under both names.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .leaderboard import POOLED, BoardRow, Leaderboard
from ..stats import Distribution, Rate, bootstrap_percentile_cis, describe, mean_std, wilson

STRICT = "turn_pass_strict"  # metric name of the strict row pass in metric_summary.csv


def _rate_cols(prefix: str, r: Rate | None, *, rate_name: str = "pass_rate") -> dict[str, Any]:
    lo, hi = (r.ci95 if r is not None and r.ci95 else (None, None))
    return {
        f"{prefix}_passes": r.passes if r else None,
        f"{prefix}_applicable": r.n if r else None,
        f"{prefix}_{rate_name}": r.rate if r else None,
        f"{prefix}_{rate_name}_ci_lower": lo,
        f"{prefix}_{rate_name}_ci_upper": hi,
    }


def _dist_cols(prefix: str, d: Distribution | None, stats: Iterable[str] = ("mean", "p50", "p90", "p95", "p99")) -> dict:
    return {f"{prefix}_{s}": (getattr(d, s) if d else None) for s in stats}


def _count_cols(name: str, count: int, total: int) -> dict[str, Any]:
    lo, hi = wilson(count, total) if total else (None, None)
    return {f"{name}_ci_lower": lo * total if lo is not None else None,
            f"{name}_ci_upper": hi * total if hi is not None else None}  # fmt: skip


def run_results_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """One row per run: the reference's run_results.csv columns, then ours."""
    dims = board.dimensions
    rows = []
    for f in board.runs:
        run, total = f.run, f.strict.n
        judge = run.judge
        row: dict[str, Any] = {
            "model_name": run.group,
            "run_index": f.repeat,
            "run_id": run.run_id,
            "benchmark_name": run.row.benchmark,
            "judge_name": judge,
            "judge_model": judge.split(":", 1)[1] if ":" in judge else judge,
            "runtime_mode": run.row.config.get("mode") or "sequential",
            "turns_scored": total,
            "pass_rows": f.strict.passes,
            "fail_rows": f.fail_rows,
            "incomplete_rows": f.unjudged_turns,
            "pass_row_rate": f.strict.rate,
            "fail_row_rate": f.fail_rows / total if total else None,
            "empty_response_count": f.empty_responses,
            "model_ended_session_count": f.ended_session,
        }
        for name in ("pass_rows", "fail_rows", "empty_response_count", "model_ended_session_count"):
            row.update(_count_cols(name, int(row[name]), total))
        for name, count in (("pass_row_rate", f.strict.passes), ("fail_row_rate", f.fail_rows)):
            lo, hi = wilson(count, total) if total else (None, None)
            row[f"{name}_ci_lower"], row[f"{name}_ci_upper"] = lo, hi
        for d in dims:
            row.update(_rate_cols(d, f.dimensions.get(d)))
        provider = describe(f.provider_ttfb)
        row.update(_dist_cols("ttfb_ms", provider))  # the reference's ttfb_ms: the service's own report
        # ours from here
        v2v = describe(f.v2v)
        p50_ci, p95_ci = bootstrap_percentile_cis(f.v2v, [50, 95]) or (None, None)
        row.update({
            "model_alias": run.row.model,
            "provider": run.row.provider,
            "status": run.row.status,
            "started_at": run.row.started_at.isoformat(),
            "speed": run.speed,
            "simulator": run.row.simulator,
            "fake": bool(run.row.config.get("fake")),
            "heuristic_judge": run.heuristic,
            "labels": ", ".join(run.source_labels),
            "turns_recorded": len(run.results),
            "missing_turns": f.missing_turns,
            "latency_excluded": run.latency_excluded or "",
            "voice_to_voice_n": v2v.n if v2v else 0,
        })  # fmt: skip
        row.update(_dist_cols("voice_to_voice_ms", v2v))
        row["voice_to_voice_ms_p50_ci_lower"], row["voice_to_voice_ms_p50_ci_upper"] = p50_ci or (None, None)
        row["voice_to_voice_ms_p95_ci_lower"], row["voice_to_voice_ms_p95_ci_upper"] = p95_ci or (None, None)
        row.update(_dist_cols("voice_to_voice_tool_ms", describe(f.v2v_tool), ("n", "mean", "p50")))
        row.update(_dist_cols("voice_to_voice_non_tool_ms", describe(f.v2v_non_tool), ("n", "mean", "p50")))
        row.update(_dist_cols("leading_silence_ms", describe(f.leading_silence), ("mean", "p50", "p95")))
        row.update(_dist_cols("pipeline_ttfb_ms", describe(f.pipeline_ttfb)))
        row.update(_dist_cols("provider_ttfb_ms", provider))
        for c, r in f.categories.items():
            row.update(_rate_cols(f"category_{c}", r))
        rows.append(row)
    return rows


_NOT_AVERAGED = {"run_index", "speed", "turns_recorded"}


def _row_figures(row: BoardRow) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model_name": row.model,
        "benchmark_name": row.benchmark,
        "runs": len(row.runs),
        "labels": ", ".join(row.labels),
        "turns": row.strict.n,
        "latency_runs": row.latency_runs,
        "latency_excluded": "; ".join(f"{k}: {v}" for k, v in row.latency_excluded.items()),
    }
    out.update(_rate_cols(STRICT, row.strict, rate_name="rate"))
    for d, r in row.dimensions.items():
        out.update(_rate_cols(f"{d}_pooled", r, rate_name="rate"))
    out["voice_to_voice_n"] = row.v2v.n if row.v2v else 0
    out.update(_dist_cols("voice_to_voice_ms", row.v2v))
    out["voice_to_voice_ms_p50_ci_lower"], out["voice_to_voice_ms_p50_ci_upper"] = row.v2v_p50_ci or (None, None)
    out["voice_to_voice_ms_p95_ci_lower"], out["voice_to_voice_ms_p95_ci_upper"] = row.v2v_p95_ci or (None, None)
    out.update(_dist_cols("voice_to_voice_tool_ms", row.v2v_tool, ("n", "mean", "p50", "p95")))
    out.update(_dist_cols("voice_to_voice_non_tool_ms", row.v2v_non_tool, ("n", "mean", "p50", "p95", "max")))
    out.update(_dist_cols("leading_silence_ms", row.leading_silence, ("mean", "p50", "p95")))
    out.update({
        "empty_response_total": row.empty_responses,
        "model_ended_session_total": row.ended_session,
        "missing_turns_total": row.missing_turns,
        "unjudged_turns_total": row.unjudged_turns,
        "unstable_turns": sum(c.unstable for c in row.consistency),
        "always_failing_turns": ",".join(str(c.turn_index) for c in row.consistency if c.always_fails),
    })  # fmt: skip
    return out


def model_summary_rows(board: Leaderboard, run_rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per model and benchmark (and pooled): figures over all turns of its runs, then, as
    the reference, `<column>_mean` / `<column>_std` of every numeric run_results column over runs."""
    out = []
    for row in board.rows:
        ids = {f.run.run_id for f in row.runs}
        mine = [r for r in run_rows if r["run_id"] in ids]
        figures = _row_figures(row)
        numeric = [k for k, v in mine[0].items() if _numeric(v) and k not in _NOT_AVERAGED] if mine else []
        for k in dict.fromkeys(k for r in mine for k, v in r.items() if _numeric(v) and k not in _NOT_AVERAGED):
            if k not in numeric:
                numeric.append(k)
        for k in numeric:
            m, s = mean_std([r.get(k) for r in mine])
            figures[f"{k}_mean"], figures[f"{k}_std"] = m, s
        out.append(figures)
    return out


def _numeric(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def metric_summary_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """Per model, benchmark and metric: the reference's mean-over-runs columns, then the pooled rate."""
    out = []
    for row in board.rows:
        metrics: dict[str, list[Rate | None]] = {d: [f.dimensions.get(d) for f in row.runs] for d in row.dimensions}
        metrics[STRICT] = [f.strict for f in row.runs]
        pooled = {**row.dimensions, STRICT: row.strict}
        for metric, per_run in metrics.items():
            scored = [r for r in per_run if r is not None and r.n]
            rates = [r.rate for r in scored]
            cis = [r.ci95 for r in scored if r.ci95]
            mean_rate, std_rate = mean_std(rates, ddof=0)
            p = pooled[metric]
            plo, phi = p.ci95 or (None, None)
            out.append({
                "model_name": row.model,
                "metric": metric,
                "mean_pass_rate": mean_rate,
                "std_pass_rate": std_rate if std_rate is not None else (0.0 if rates else None),
                "mean_pass_rate_ci_lower": mean_std([c[0] for c in cis])[0],
                "mean_pass_rate_ci_upper": mean_std([c[1] for c in cis])[0],
                "mean_pass_count": mean_std([r.passes for r in scored])[0],
                "mean_applicable": mean_std([r.n for r in scored])[0],
                "runs": len(row.runs),
                "benchmark_name": row.benchmark,
                "pooled_passes": p.passes,
                "pooled_applicable": p.n,
                "pooled_pass_rate": p.rate,
                "pooled_pass_rate_ci_lower": plo,
                "pooled_pass_rate_ci_upper": phi,
                "labels": ", ".join(row.labels),
            })  # fmt: skip
    return out


def consistency_rows(board: Leaderboard) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(consistency_turn_summary rows, consistency_metric_flips rows), per model and benchmark."""
    turns, flips = [], []
    for row in board.rows:
        if row.benchmark == POOLED:
            continue
        for c in row.consistency:
            text = next((t for f in row.runs if (t := f.run.user_text(c.turn_index))), "")
            per_repeat = [f.verdicts.get(c.turn_index, {}) for f in row.runs]
            dims = sorted({d for v in per_repeat for d in v})
            flipped = [d for d in dims if d in c.metric_flips]
            turns.append({
                "model_name": row.model,
                "benchmark_name": row.benchmark,
                "turn": c.turn_index,
                "runs": c.runs,
                "pass_runs": c.pass_runs,
                "fail_runs": c.fail_runs,
                "incomplete_runs": c.missing_runs,
                "overall_status_pattern": c.pattern,
                "overall_status_unique_count": len(set(c.statuses)),
                "metric_flip_count": len(flipped),
                "metric_flips": ",".join(flipped),
                "unstable_overall": c.unstable,
                "unstable_metric": bool(flipped),
                "user_text": text,
                "status_changes": c.flips,
                "always_fails": c.always_fails,
            })  # fmt: skip
            for d in flipped:
                values = [v.get(d, "na") for v in per_repeat]
                flips.append({
                    "model_name": row.model,
                    "benchmark_name": row.benchmark,
                    "turn": c.turn_index,
                    "metric": d,
                    "pattern": "|".join(f"{i}:{v}" for i, v in enumerate(values)),
                    "pass_runs": values.count("pass"),
                    "fail_runs": values.count("fail"),
                    "na_runs": values.count("na"),
                    "user_text": text,
                    "changes": c.metric_flips[d],
                })  # fmt: skip
    return turns, flips


def _cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e6 else f"{v:.1f}"
    return v


def to_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] = ()) -> str:
    """CSV text; columns in first-seen order (or `columns` when there are no rows)."""
    names = list(dict.fromkeys([*columns, *(k for r in rows for k in r)]))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k)) for k in names})
    return buf.getvalue()


