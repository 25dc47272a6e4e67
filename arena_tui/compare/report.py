"""Report files for a set of runs: the reference's CSVs, a summary.md and one self-contained report.html.

File names and columns follow the reference comparison script where it has them
(`run_results.csv`, `model_summary.csv`, `metric_summary.csv`, `summary.md`; the consistency
analysis's `consistency_turn_summary.csv`, `consistency_metric_flips.csv`), with our extra
columns after them. Where a reference column means something we do not measure it is left
out rather than filled with a different quantity: its `latency_ms` is the wall-clock length of a
turn, so ours is `voice_to_voice_ms` (our timeline); its `ttfb_ms` is what the service reported,
which is our `provider_ttfb_ms` and is written under both names.

What is in a report is decided by one function, `select_runs`: run ids (or unique prefixes),
benchmark names (all runs of that benchmark) or `all`. A campaign id plugs in there.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from benchmarks.model import Benchmark

from ..store import Store
from .leaderboard import POOLED, BoardRow, Leaderboard, RunFigures, build_leaderboard, dimension_order, load_runs
from .stats import Distribution, Rate, bootstrap_percentile_ci, describe, mean_std, wilson
from .svg import Bar, Strip, latency_strips, rate_bars

STRICT = "turn_pass_strict"  # metric name of the strict row pass in metric_summary.csv
FILES = (
    "run_results.csv",
    "model_summary.csv",
    "metric_summary.csv",
    "consistency_turn_summary.csv",
    "consistency_metric_flips.csv",
    "summary.md",
    "report.html",
)


# --- which runs --------------------------------------------------------------------------------


@dataclass
class Selection:
    run_ids: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # run id -> why it is not in the report
    targets: list[str] = field(default_factory=list)

    @property
    def description(self) -> str:
        return ", ".join(self.targets)


async def select_runs(store: Store, targets: Sequence[str]) -> Selection:
    """Resolve report targets to run ids, in the order given, each run once.

    A target is a run id, `all`, a benchmark name (every run of it), or a unique run-id prefix.
    Runs still recording are skipped (their unfinished turns would count as failures) and named.
    Raises LookupError naming the first target that matches nothing or is ambiguous.
    """
    runs = await store.list_runs()
    by_id = {r.run_id: r for r in runs}
    benchmarks = {r.benchmark for r in runs}
    chosen: list[str] = []
    for raw in targets:
        if raw in by_id:
            hits = [raw]
        elif raw == "all":
            hits = [r.run_id for r in runs]
        elif raw in benchmarks:
            hits = [r.run_id for r in runs if r.benchmark == raw]
        else:
            hits = [r.run_id for r in runs if r.run_id.startswith(raw)]
            if len(hits) > 1:
                raise LookupError(f"run id {raw!r} is ambiguous in {store.path}: {', '.join(hits[:5])}")
            if not hits:
                raise LookupError(f"{store.path}: no run or benchmark {raw!r} (see `arena-tui runs`)")
        chosen += [h for h in hits if h not in chosen]
    sel = Selection([], targets=list(targets))
    for run_id in sorted(chosen, key=lambda r: (by_id[r].started_at, r)):
        if by_id[run_id].status == "running":
            sel.skipped[run_id] = "still recording"
        else:
            sel.run_ids.append(run_id)
    return sel


# --- table rows --------------------------------------------------------------------------------


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


def _dimensions(board: Leaderboard) -> list[str]:
    return dimension_order(d for row in board.rows for d in row.dimensions)


def run_results_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """One row per run: the reference's run_results.csv columns, then ours."""
    dims = _dimensions(board)
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
        p50_ci, p95_ci = bootstrap_percentile_ci(f.v2v, 50), bootstrap_percentile_ci(f.v2v, 95)
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


def _user_text(f: RunFigures, turn: int) -> str:
    r = f.run.results.get(turn)
    if r is not None:
        return r.user_text
    if f.run.benchmark is not None:
        try:
            return f.run.benchmark.turn(turn).input
        except KeyError:
            pass
    return ""


def consistency_rows(board: Leaderboard) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(consistency_turn_summary rows, consistency_metric_flips rows), per model and benchmark."""
    turns, flips = [], []
    for row in board.rows:
        if row.benchmark == POOLED:
            continue
        for c in row.consistency:
            text = next((t for f in row.runs if (t := _user_text(f, c.turn_index))), "")
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


# --- writing -----------------------------------------------------------------------------------


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


def _pct(r: Rate | None) -> str:
    if r is None or not r.n:
        return "–"
    lo, hi = r.ci95 or (0.0, 0.0)
    return f"{100 * (r.rate or 0):.1f}% [{100 * lo:.0f}–{100 * hi:.0f}] ({r.passes}/{r.n})"


def _ms(v: float | None, ci: tuple[float, float] | None = None) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f} ms" + (f" [{ci[0]:,.0f}–{ci[1]:,.0f}]" if ci else "")


def _leaderboard_table(board: Leaderboard, bench: str) -> list[list[str]]:
    dims = _dimensions(board)
    header = ["model", "runs", "strict turn pass", *dims, "v2v p50", "v2v p95", "v2v tool p50",
              "v2v non-tool p50", "leading silence p50", "empty", "ended", "missing/unjudged"]  # fmt: skip
    rows = [header]
    ranked = sorted((r for r in board.rows if r.benchmark == bench), key=lambda r: -(r.strict.rate or 0))
    for r in ranked:
        lat_note = "" if not r.latency_excluded else f" ({r.latency_runs}/{len(r.runs)} runs)"
        rows.append([
            r.model, str(len(r.runs)), _pct(r.strict), *(_pct(r.dimensions.get(d)) for d in dims),
            _ms(r.v2v.p50 if r.v2v else None, r.v2v_p50_ci) + lat_note,
            _ms(r.v2v.p95 if r.v2v else None, r.v2v_p95_ci),
            _ms(r.v2v_tool.p50 if r.v2v_tool else None), _ms(r.v2v_non_tool.p50 if r.v2v_non_tool else None),
            _ms(r.leading_silence.p50 if r.leading_silence else None),
            str(r.empty_responses), str(r.ended_session), f"{r.missing_turns}/{r.unjudged_turns}",
        ])  # fmt: skip
    return rows


DEFINITIONS = [
    "strict turn pass: every dimension scored on the turn passes; over the turns each run set out to run "
    "(a turn that never ran, was never judged or whose judge failed counts as a failure).",
    "[a–b]: Wilson 95 % interval for rates; percentile-bootstrap 95 % interval (2000 resamples, fixed seed) for latency percentiles.",
    "v2v: voice-to-voice on our own timeline (user speech end → audible bot speech). Only runs at speed 1 count; "
    "sped-up runs and runs whose speed was not recorded are listed as excluded.",
    "tool turn: the model made at least one call on the turn. leading silence: first bot audio frame → audible speech.",
    "Rows labelled simulator / fake / heuristic judge come from the local simulator, a protocol fake scripted from "
    "the golden answers, or the offline word-overlap judge: not real model scores.",
    "CSV columns ending _mean/_std are over runs (as the reference); pooled columns are over all turns of a row's runs. "
    "ttfb_ms is the service's own report (= provider_ttfb_ms); the reference's latency_ms (turn wall time) is not produced.",
]


def summary_markdown(board: Leaderboard, sel: Selection, generated_at: datetime) -> str:
    lines = ["# Model comparison", "", f"- generated_at: {generated_at.isoformat(timespec='seconds')}",
             f"- selection: {sel.description}", f"- runs: {len(board.runs)}", f"- models: {', '.join(board.models)}",
             f"- benchmarks: {', '.join(board.benchmarks)}"]  # fmt: skip
    for run_id, why in sel.skipped.items():
        lines.append(f"- skipped {run_id}: {why}")
    for bench in [*board.benchmarks, POOLED]:
        table = _leaderboard_table(board, bench)
        if len(table) == 1:
            continue
        lines += ["", f"## {bench if bench != POOLED else 'All benchmarks (pooled)'}", ""]
        lines.append("| " + " | ".join(table[0]) + " |")
        lines.append("|" + "---|" * len(table[0]))
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in table[1:]]
        for r in board.rows:
            if r.benchmark == bench and r.latency_excluded:
                lines.append(f"- {r.model}: latency excluded for {', '.join(f'{k} ({v})' for k, v in r.latency_excluded.items())}")
    lines += ["", "## Consistency across repeats", ""]
    any_row = False
    for r in board.rows:
        if r.benchmark == POOLED or len(r.runs) < 2:
            continue
        any_row = True
        unstable = [c for c in r.consistency if c.unstable]
        always = [c.turn_index for c in r.consistency if c.always_fails]
        lines.append(f"- {r.model} on {r.benchmark}: {len(unstable)}/{len(r.consistency)} turns flip across "
                     f"{len(r.runs)} repeats; always failing: {', '.join(map(str, always)) or 'none'}")  # fmt: skip
        for c in sorted(unstable, key=lambda c: (-c.flips, c.turn_index))[:20]:
            dims = ", ".join(f"{d}×{n}" for d, n in c.metric_flips.items()) or "-"
            lines.append(f"  - turn {c.turn_index}: {c.pattern} ({c.flips} changes; dimensions {dims})")
    if not any_row:
        lines.append("- no model has two or more runs of one benchmark in this selection")
    lines += ["", "## Runs", "", "| model | benchmark | repeat | run | status | speed | strict | judge |", "|---|---|---|---|---|---|---|---|"]
    for f in board.runs:
        sp = "?" if f.run.speed is None else f"{f.run.speed:g}x"
        lines.append(f"| {f.run.group} | {f.run.row.benchmark} | {f.repeat} | {f.run.run_id} | {f.run.row.status} | "
                     f"{sp} | {_pct(f.strict)} | {f.run.judge} |")  # fmt: skip
    lines += ["", "## Definitions", ""] + [f"- {d}" for d in DEFINITIONS]
    return "\n".join(lines) + "\n"


_CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#111827;max-width:1500px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #e5e7eb}h3{font-size:15px}
table{border-collapse:collapse;font-size:11.5px;margin:8px 0}th,td{border:1px solid #e5e7eb;padding:3px 6px;text-align:left;
vertical-align:top;white-space:nowrap}th{background:#f3f4f6;font-weight:600;white-space:normal;overflow-wrap:anywhere;min-width:52px}td.num{text-align:right}
td small{color:#6b7280}.wide{overflow-x:auto}.lab{color:#b45309;font-weight:bold}
.note{color:#6b7280;font-size:12px}.plots{display:flex;flex-wrap:wrap;gap:18px}"""


def _cell_html(text: str) -> str:
    """`value [detail]` as the value over a small second line, so wide tables stay readable."""
    i = text.find(" [")
    if i <= 0:
        return escape(text)
    return f"{escape(text[:i])}<br><small>{escape(text[i + 1:])}</small>"


def _html_table(rows: list[list[str]], numeric_from: int = 1) -> str:
    head = "".join(f"<th>{escape(c.replace('_', ' '))}</th>" for c in rows[0])
    body = []
    for row in rows[1:]:
        cells = [f'<td class="num">{_cell_html(c)}</td>' if i >= numeric_from else f"<td>{_cell_html(c)}</td>"
                 for i, c in enumerate(row)]  # fmt: skip
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _plots(board: Leaderboard, bench: str, colours: Mapping[str, int]) -> list[str]:
    rows = [r for r in board.rows if r.benchmark == bench]
    strips = []
    for r in rows:
        values = [v for f in r.runs for v in f.v2v]
        note = "" if not r.latency_excluded else f"{r.latency_runs}/{len(r.runs)} runs at 1x"
        if not values:
            note = "; ".join(sorted(set(r.latency_excluded.values()))) or "no voice-to-voice recorded"
        strips.append(Strip(colours[r.model], r.model, values, r.v2v.p50 if r.v2v else None, r.v2v_p50_ci,
                            r.v2v.p95 if r.v2v else None, r.v2v_p95_ci, note))  # fmt: skip
    out = [latency_strips(f"Voice-to-voice per turn — {bench} (◆ p50, ▲ p95, bars: 95 % bootstrap)", strips)]
    dims = [d for d in _dimensions(board) if any(d in r.dimensions for r in rows)]
    groups = [("strict turn pass", [Bar(colours[r.model], r.model, r.strict.rate, r.strict.ci95, f"{r.strict.passes}/{r.strict.n}") for r in rows])]
    groups += [(d, [Bar(colours[r.model], r.model, (x := r.dimensions.get(d, Rate(0, 0))).rate, x.ci95,
                        f"{x.passes}/{x.n}" if x.n else "") for r in rows]) for d in dims]  # fmt: skip
    out.append(rate_bars(f"Pass rate per dimension — {bench}", groups))
    cats = sorted({c for r in rows for c in r.categories})
    if cats:
        cgroups = [(c, [Bar(colours[r.model], r.model, (x := r.categories.get(c, Rate(0, 0))).rate, x.ci95,
                            f"{x.passes}/{x.n}" if x.n else "") for r in rows]) for c in cats]  # fmt: skip
        out.append(rate_bars(f"Strict turn pass per category — {bench}", cgroups))
    return out


def report_html(board: Leaderboard, sel: Selection, generated_at: datetime) -> str:
    """One file: tables, inline SVG plots, inline CSS. Nothing is fetched when it is opened."""
    colours = {m: i for i, m in enumerate(board.models)}
    parts = [f"<h1>Audio Arena model comparison</h1><p class=\"note\">generated {escape(generated_at.isoformat(timespec='seconds'))}"
             f" · {len(board.runs)} runs · selection: {escape(sel.description)}</p>"]  # fmt: skip
    labelled = [m for m in board.models if "[" in m]
    if labelled:
        parts.append(f'<p class="lab">Labelled rows are not real model scores: {escape("; ".join(labelled))}</p>')
    for run_id, why in sel.skipped.items():
        parts.append(f'<p class="note">skipped {escape(run_id)}: {escape(why)}</p>')
    for bench in [*board.benchmarks, POOLED]:
        table = _leaderboard_table(board, bench)
        if len(table) == 1:
            continue
        parts.append(f"<h2>{escape(bench if bench != POOLED else 'All benchmarks (pooled)')}</h2>")
        parts.append(_html_table(table))
        for r in board.rows:
            if r.benchmark == bench and r.latency_excluded:
                why = ", ".join(f"{k} ({v})" for k, v in r.latency_excluded.items())
                parts.append(f'<p class="note">{escape(r.model)}: latency excluded for {escape(why)}</p>')
        parts.append('<div class="plots">' + "".join(_plots(board, bench, colours)) + "</div>")
    parts.append("<h2>Consistency across repeats</h2>")
    crow = [["model", "benchmark", "turn", "pattern (repeat:verdict)", "changes", "dimensions that flip", "always fails"]]
    summary = []
    for r in board.rows:
        if r.benchmark == POOLED or len(r.runs) < 2:
            continue
        always = [str(c.turn_index) for c in r.consistency if c.always_fails]
        summary.append(f"<li>{escape(r.model)} on {escape(r.benchmark)}: {sum(c.unstable for c in r.consistency)}/"
                       f"{len(r.consistency)} turns flip over {len(r.runs)} repeats; always failing: "
                       f"{escape(', '.join(always) or 'none')}</li>")  # fmt: skip
        for c in r.consistency:
            if c.unstable or c.always_fails:
                dims = ", ".join(f"{d}×{n}" for d, n in c.metric_flips.items())
                crow.append([r.model, r.benchmark, str(c.turn_index), c.pattern, str(c.flips), dims,
                             "yes" if c.always_fails else ""])  # fmt: skip
    if summary:
        parts.append("<ul>" + "".join(summary) + "</ul>")
        if len(crow) > 1:
            parts.append(_html_table(crow, numeric_from=99))
    else:
        parts.append('<p class="note">No model has two or more runs of one benchmark in this selection.</p>')
    parts.append("<h2>Runs</h2>")
    rrows = [["model", "benchmark", "repeat", "run", "status", "speed", "strict turn pass", "judge", "latency"]]
    for f in board.runs:
        sp = "?" if f.run.speed is None else f"{f.run.speed:g}x"
        rrows.append([f.run.group, f.run.row.benchmark, str(f.repeat), f.run.run_id, f.run.row.status, sp,
                      _pct(f.strict), f.run.judge, f.run.latency_excluded or "counted"])  # fmt: skip
    parts.append(_html_table(rrows, numeric_from=99))
    parts.append("<h2>Definitions</h2><ul>" + "".join(f"<li>{escape(d)}</li>" for d in DEFINITIONS) + "</ul>")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Audio Arena model comparison</title>'
            f"<style>{_CSS}</style></head><body>{''.join(parts)}</body></html>\n")  # fmt: skip


def write_report(board: Leaderboard, sel: Selection, dest: str | Path, *, now: datetime | None = None) -> list[Path]:
    """Write every report file into `dest` (created); returns their paths in FILES order."""
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    now = now or datetime.now(UTC)
    run_rows = run_results_rows(board)
    turn_rows, flip_rows = consistency_rows(board)
    texts = {
        "run_results.csv": to_csv(run_rows),
        "model_summary.csv": to_csv(model_summary_rows(board, run_rows)),
        "metric_summary.csv": to_csv(metric_summary_rows(board)),
        "consistency_turn_summary.csv": to_csv(turn_rows, ["model_name", "benchmark_name", "turn", "runs"]),
        "consistency_metric_flips.csv": to_csv(flip_rows, ["model_name", "benchmark_name", "turn", "metric", "pattern"]),
        "summary.md": summary_markdown(board, sel, now),
        "report.html": report_html(board, sel, now),
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
) -> tuple[Selection, Leaderboard, list[Path]]:
    """Select, read, compute and write: the whole `arena-tui report` minus argument parsing."""
    sel = await select_runs(store, targets)
    if not sel.run_ids:
        why = "; ".join(f"{k}: {v}" for k, v in sel.skipped.items()) or "nothing selected"
        raise LookupError(f"no finished runs to report ({why})")
    board = build_leaderboard(await load_runs(store, sel.run_ids, benchmark_for))
    return sel, board, write_report(board, sel, dest)
