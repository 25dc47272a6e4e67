"""The rows of the report's CSV files, as dicts: the reference's columns, in its order, then ours.

`run_results.csv`, `model_summary.csv` and `metric_summary.csv` are the reference comparison
script's files (Design-Arena/audio-agent-bench `scripts/compare_model_runs.py`): its 74, 63 and 9
columns first, exactly, then ours (`OURS_*`), and the same columns whatever the data (a dimension
nobody scored is 0 passes of 0, an empty rate). docs/reports.md lists every column: its meaning
and the reference's name. Where a reference column means something we count differently, the
column keeps the reference's meaning and the difference is written there:
- `latency_ms_*` is the reference's turn duration (wall clock, a turn's first start to its end),
  never a response latency; ours are `voice_to_voice_ms_*`. `ttfb_ms_*` is what the service
  reported (= our `provider_ttfb_ms_*`). Both rounded to 2 decimals, as the reference.
- `latency_ms_p95_ci_*`: its bootstrap (2000 resamples) seeded with the run's `run_index`, as it.
- `judge_name` is the reference's judge name (`claude`, `openai`; an imported run's own); our
  judge (`openai:gpt-5-mini`, `heuristic`, `reference:<model>`) is `judge`; `judge_version` is an
  imported run's, else the version of our rules (`arena-judge/2`). `latency_ms_meaning` (ours) says
  what the reference's `latency_ms_*` columns are in the file itself.
- `judge_agreement`: the share of repeated judgings' verdicts that agree with the majority
  (`arena_tui.judge.agreement`), empty for a run no turn of which was judged more than once.
- Rates count what `arena_tui.verdicts.tally` counts: the judged turns the model played
  (`turns_scored`); every other turn the run set out to run is in no rate and is counted apart,
  one `turns_<reason>` column per reason (not played, stopped, lost pace, infra failure, engine
  error, judge error, not judged); `incomplete_rows` is the reference's: played turns without a
  usable verdict. A `turn_taking` that was never scored is 0 of 0 here (the reference counts
  every turn as passing it). A run in which no turn of the model's got an answer has no row.
Per-category figures vary with the benchmark, so they are their own file (`category_summary.csv`,
one row per run and category): the three tables never change shape. Consistency is
`consistency.py`; the original eval's aggregates `aggregates.py`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from arena_tui.spine.recorded import RecordedRun

from .costs import COST_NOTES, COST_ROW_COLUMNS, COST_RUN_COLUMNS, row_cost_columns, run_cost_columns
from .duplex import DUPLEX_COLUMNS, duplex_columns
from .judging import row_agreement, stored_agreement
from .leaderboard import STAGES, BoardRow, Leaderboard, RunFigures
from ..stats import Distribution, Rate, bootstrap_percentile_cis, describe, mean_std, wilson
from ..timing import speed_note
from ..verdicts import APART, REFERENCE_ORDER

# The reference's six metrics (its SCORE_COLUMNS), in its order: one metric_summary row each.
METRICS = REFERENCE_ORDER
STRICT = "turn_pass_strict"  # ours: every scored dimension passes (turn_taking included)
ORIGINAL = "turn_pass_tool_instruction_kb"  # the original eval's turn pass: tool ∧ instruction ∧ KB
_COUNTS = ["pass_rows", "fail_rows", "empty_response_count", "model_ended_session_count"]
APART_COLUMNS = {why: f"turns_{why}" for why in APART}  # ours: turns counted apart, one column per reason
LATENCY_MS_MEANING = "turn duration: wall clock from a turn's first start to its end, not a response latency"
_STATS = ["mean", "p50", "p90", "p95", "p99"]

REFERENCE_RUN_RESULTS = [
    "model_name", "run_index", "run_id", "run_dir", "benchmark_name", "judge_name", "judge_model",
    "judge_version", "judged_at", "runtime_mode", "runtime_parallel", "disable_vad", "turns_scored",
    "pass_rows", "fail_rows", "incomplete_rows", "pass_row_rate", "fail_row_rate", "empty_response_count",
    "model_ended_session_count",
    *(f"{c}_ci_{end}" for c in _COUNTS for end in ("lower", "upper")),
    "pass_row_rate_ci_lower", "pass_row_rate_ci_upper", "fail_row_rate_ci_lower", "fail_row_rate_ci_upper",
    *(f"{m}_{s}" for m in METRICS for s in ("passes", "applicable", "pass_rate", "pass_rate_ci_lower",
                                            "pass_rate_ci_upper")),
    *(f"latency_ms_{s}" for s in _STATS), *(f"ttfb_ms_{s}" for s in _STATS),
    "latency_ms_p95_ci_lower", "latency_ms_p95_ci_upper",
]  # fmt: skip
# The run_results columns the reference's model_summary averages over runs (mean, std), in its order.
REFERENCE_AVERAGED = [
    "pass_rows", "fail_rows", "incomplete_rows", "pass_row_rate", "pass_row_rate_ci_lower",
    "pass_row_rate_ci_upper", "fail_row_rate", "fail_row_rate_ci_lower", "fail_row_rate_ci_upper",
    "empty_response_count", "empty_response_count_ci_lower", "empty_response_count_ci_upper",
    "model_ended_session_count", "model_ended_session_count_ci_lower", "model_ended_session_count_ci_upper",
    "pass_rows_ci_lower", "pass_rows_ci_upper", "fail_rows_ci_lower", "fail_rows_ci_upper",
    "latency_ms_mean", "latency_ms_p50", "latency_ms_p90", "latency_ms_p95", "latency_ms_p95_ci_lower",
    "latency_ms_p95_ci_upper", "latency_ms_p99", "ttfb_ms_mean", "ttfb_ms_p50", "ttfb_ms_p90", "ttfb_ms_p95",
    "ttfb_ms_p99",
]  # fmt: skip
REFERENCE_MODEL_SUMMARY = ["model_name", *(f"{c}_{s}" for c in REFERENCE_AVERAGED for s in ("mean", "std"))]
REFERENCE_METRIC_SUMMARY = ["model_name", "metric", "mean_pass_rate", "std_pass_rate", "mean_pass_rate_ci_lower",
                            "mean_pass_rate_ci_upper", "mean_pass_count", "mean_applicable", "runs"]  # fmt: skip


def _rate_names(prefix: str, rate_name: str = "rate") -> list[str]:
    return [f"{prefix}_passes", f"{prefix}_applicable", f"{prefix}_{rate_name}", f"{prefix}_{rate_name}_ci_lower",
            f"{prefix}_{rate_name}_ci_upper"]  # fmt: skip


def _dist_names(prefix: str, stats: Sequence[str]) -> list[str]:
    return [f"{prefix}_{s}" for s in stats]


_V2V = ["mean", "p50", "p90", "p95", "p99"]
_STAGE_STATS = ["mean", "p50", "p95"]  # a cascade's stages (`Latencies.stages`), each on our clock
_LATENCY_OURS = [
    "voice_to_voice_n", *_dist_names("voice_to_voice_ms", _V2V),
    "voice_to_voice_ms_p50_ci_lower", "voice_to_voice_ms_p50_ci_upper",
    "voice_to_voice_ms_p95_ci_lower", "voice_to_voice_ms_p95_ci_upper",
    *_dist_names("voice_to_voice_tool_ms", ["n", "mean", "p50", "p95"]),
    *_dist_names("voice_to_voice_non_tool_ms", ["n", "mean", "p50", "p95", "max"]),
    *_dist_names("leading_silence_ms", ["n", "mean", "p50", "p95"]),
    *_dist_names("pipeline_ttfb_ms", _V2V), *_dist_names("provider_ttfb_ms", _V2V),
    "overlap_turns", "overlap_measured_turns", *_dist_names("overlap_ms", ["mean", "p50", "max"]),
    "stage_turns", *(n for k in STAGES for n in _dist_names(f"stage_{k}_ms", _STAGE_STATS)),
]  # fmt: skip
OURS_RUN_RESULTS = [
    "judge", "judge_agreement", "model_alias", "provider", "status", "started_at", "duration_s", "speed", "latency_note", "simulator", "fake",
    "heuristic_judge", "imported", "labels", "condition", "effort", "latency_source", "turns_recorded", "human_verdicts",
    "never_answered", *APART_COLUMNS.values(),
    "latency_excluded", "latency_untrusted_turns", "latency_ms_meaning", *_rate_names(STRICT), *_rate_names(ORIGINAL),
    *_LATENCY_OURS, *DUPLEX_COLUMNS, *COST_RUN_COLUMNS,
]  # fmt: skip
RUN_RESULTS = [*REFERENCE_RUN_RESULTS, *OURS_RUN_RESULTS]
# run_results columns that are not figures to average over runs
_NOT_AVERAGED = {
    "model_name", "run_index", "run_id", "run_dir", "benchmark_name", "judge_name", "judge_model", "judge_version",
    "judged_at", "runtime_mode", "runtime_parallel", "disable_vad", "judge", "model_alias", "provider", "status",
    "started_at", "speed", "latency_note", "simulator", "fake", "heuristic_judge", "imported", "labels",
    "condition", "effort", "latency_source", "turns_recorded", "latency_excluded", "latency_ms_meaning", "never_answered",
    *COST_NOTES,
}  # fmt: skip
OURS_AVERAGED = [c for c in RUN_RESULTS if c not in _NOT_AVERAGED and c not in REFERENCE_AVERAGED]
OURS_MODEL_SUMMARY = [
    "benchmark_name", "runs", "labels", "judge", "condition", "effort", "turns", "latency_runs", "latency_excluded",
    "judge_agreement_pooled", "latency_ms_meaning", "never_answered_runs",
    *_rate_names(STRICT), *_rate_names(ORIGINAL), *(n for m in METRICS for n in _rate_names(f"{m}_pooled")),
    *_LATENCY_OURS, *DUPLEX_COLUMNS,
    "empty_response_total", "model_ended_session_total", *(f"{c}_total" for c in APART_COLUMNS.values()),
    "latency_untrusted_turns_total", "unstable_turns", "always_failing_turns", *COST_ROW_COLUMNS,
    *(f"{c}_{s}" for c in OURS_AVERAGED for s in ("mean", "std")),
]  # fmt: skip
MODEL_SUMMARY = [*REFERENCE_MODEL_SUMMARY, *OURS_MODEL_SUMMARY]
OURS_METRIC_SUMMARY = ["benchmark_name", "pooled_passes", "pooled_applicable", "pooled_pass_rate",
                       "pooled_pass_rate_ci_lower", "pooled_pass_rate_ci_upper", "labels", "judge"]  # fmt: skip
METRIC_SUMMARY = [*REFERENCE_METRIC_SUMMARY, *OURS_METRIC_SUMMARY]
CATEGORY_SUMMARY = ["model_name", "run_index", "run_id", "benchmark_name", "category",
                    *_rate_names("turn_pass_strict", "pass_rate")]  # fmt: skip


def _rate_cols(prefix: str, r: Rate | None, *, rate_name: str = "rate") -> dict[str, Any]:
    r = r or Rate(0, 0)
    lo, hi = r.ci95 or (None, None)
    return dict(zip(_rate_names(prefix, rate_name), (r.passes, r.n, r.rate, lo, hi)))


def _dist_cols(prefix: str, d: Distribution | None, stats: Sequence[str], digits: int | None = None) -> dict[str, Any]:
    def value(s: str) -> Any:
        v = getattr(d, s) if d is not None else (0 if s == "n" else None)
        return round(v, digits) if digits is not None and isinstance(v, float) else v

    return {f"{prefix}_{s}": value(s) for s in stats}


def _count_cols(name: str, count: int, total: int) -> dict[str, Any]:
    """The reference's interval on a count: the Wilson interval of count/total, times total."""
    lo, hi = wilson(count, total) if total else (None, None)
    return {f"{name}_ci_lower": lo * total if lo is not None else None,
            f"{name}_ci_upper": hi * total if hi is not None else None}  # fmt: skip


def _latency_ours(v2v: Distribution | None, cis: Sequence[tuple[float, float] | None], tool: Distribution | None,
                  non_tool: Distribution | None, silence: Distribution | None, pipeline: Distribution | None,
                  provider: Distribution | None, overlap: Rate, overlap_ms: Distribution | None,
                  stages: Mapping[str, Distribution]) -> dict[str, Any]:  # fmt: skip
    """Our latency and overlap columns of one set of turns (a run, or a leaderboard row's); a
    cascade's stages over its turns timed in every stage (`stage_turns`: 0 for any other model)."""
    out: dict[str, Any] = {"voice_to_voice_n": v2v.n if v2v else 0, **_dist_cols("voice_to_voice_ms", v2v, _V2V)}
    p50_ci, p95_ci = cis
    out["voice_to_voice_ms_p50_ci_lower"], out["voice_to_voice_ms_p50_ci_upper"] = p50_ci or (None, None)
    out["voice_to_voice_ms_p95_ci_lower"], out["voice_to_voice_ms_p95_ci_upper"] = p95_ci or (None, None)
    out.update(_dist_cols("voice_to_voice_tool_ms", tool, ["n", "mean", "p50", "p95"]))
    out.update(_dist_cols("voice_to_voice_non_tool_ms", non_tool, ["n", "mean", "p50", "p95", "max"]))
    out.update(_dist_cols("leading_silence_ms", silence, ["n", "mean", "p50", "p95"]))
    out.update(_dist_cols("pipeline_ttfb_ms", pipeline, _V2V))
    out.update(_dist_cols("provider_ttfb_ms", provider, _V2V))
    out.update({"overlap_turns": overlap.passes, "overlap_measured_turns": overlap.n})
    out.update(_dist_cols("overlap_ms", overlap_ms, ["mean", "p50", "max"]))
    out["stage_turns"] = stages[STAGES[0]].n if stages else 0  # a turn has every stage or none
    for k in STAGES:
        out.update(_dist_cols(f"stage_{k}_ms", stages.get(k), _STAGE_STATS))
    return out


def _run_latency(f: RunFigures) -> dict[str, Any]:
    cis = bootstrap_percentile_cis(f.v2v, [50, 95]) or (None, None)
    return _latency_ours(describe(f.v2v), cis, describe(f.v2v_tool), describe(f.v2v_non_tool),
                         describe(f.leading_silence), describe(f.pipeline_ttfb), describe(f.provider_ttfb),
                         Rate(sum(v > 0 for v in f.overlap), len(f.overlap)), describe([v for v in f.overlap if v > 0]),
                         {k: d for k, values in f.stages.items() if (d := describe(values)) is not None})


def _judge_columns(f: RunFigures) -> dict[str, Any]:
    """judge_name / judge_model / judge_version / judged_at as the reference's summary has them: an
    imported run's own (its config's `imported.judges`), else our judge's kind, model and the
    version of our rules it was asked by."""
    run = f.run
    judges = sorted({st.shown.judge for st in run.standing.values()})
    ours = {st.shown.judge: st.shown.judge_version for st in run.standing.values() if st.shown.judge_version}
    names, models, versions, times = [], [], [], []
    for judge in judges:
        mine = run.row.recorded.reference_judge(judge)
        kind, _, model = judge.partition(":")
        names.append(mine.get("judge_name") or kind)
        models.append(mine.get("judge_model") or model or kind)
        versions.append(mine.get("judge_version") or ours.get(judge) or "")
        times.append(mine.get("judged_at") or "")

    def joined(values: list[str]) -> str | None:
        return ", ".join(v for v in values if v) or None

    return {"judge_name": joined(names), "judge_model": joined(models), "judge_version": joined(versions),
            "judged_at": joined(times)}  # fmt: skip


def _runtime_columns(run: RecordedRun) -> dict[str, Any]:
    """runtime_mode / runtime_parallel / disable_vad as the reference's runtime.json has them: only a
    rehydrated run names its mode and parallelism (a sequential run leaves them empty, as theirs)."""
    rehydrated = run.mode != "sequential"
    return {"runtime_mode": run.mode if rehydrated else None, "runtime_parallel": run.parallel if rehydrated else None,
            "disable_vad": run.disable_vad_recorded}  # fmt: skip


def _latency_source(f: RunFigures) -> str:
    recorded = f.run.row.recorded
    if recorded.reference is not None:
        return recorded.reference_latency or "none: the folder has no conversation.wav to derive them from"
    return "our timeline (live run)"


def run_results_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """One row per run: the reference's run_results.csv columns, then ours (`RUN_RESULTS`)."""
    rows = []
    for f in board.runs:
        run, total = f.run, f.strict.n
        recorded = run.row.recorded
        row: dict[str, Any] = {
            "model_name": f.name,
            "run_index": f.run_index,
            "run_id": run.run_id,
            "run_dir": recorded.run_dir,
            "benchmark_name": run.row.benchmark,
            **_judge_columns(f),
            **_runtime_columns(recorded),
            "turns_scored": total,
            "pass_rows": f.strict.passes,
            "fail_rows": f.fail_rows,
            "incomplete_rows": f.incomplete_rows,
            "pass_row_rate": f.strict.rate,
            "fail_row_rate": f.fail_rows / total if total else None,
            "empty_response_count": f.empty_responses,
            "model_ended_session_count": f.ended_session,
        }
        for name in _COUNTS:
            row.update(_count_cols(name, int(row[name]), total))
        for name, count in (("pass_row_rate", f.strict.passes), ("fail_row_rate", f.fail_rows)):
            lo, hi = wilson(count, total) if total else (None, None)
            row[f"{name}_ci_lower"], row[f"{name}_ci_upper"] = lo, hi
        for m in METRICS:
            row.update(_rate_cols(m, f.dimensions.get(m), rate_name="pass_rate"))
        row.update(_dist_cols("latency_ms", describe(f.turn_durations), _STATS, digits=2))
        row.update(_dist_cols("ttfb_ms", describe(f.provider_ttfb), _STATS, digits=2))  # the service's own report
        ci = bootstrap_percentile_cis(f.turn_durations, [95], seed=f.run_index)  # seeded as the reference
        row["latency_ms_p95_ci_lower"], row["latency_ms_p95_ci_upper"] = ci[0] if ci else (None, None)
        # ours from here
        row.update({
            "judge": run.judge,
            "judge_agreement": stored_agreement(run).rate,
            "model_alias": run.row.model,
            "provider": run.row.provider,
            "status": run.row.status,
            "started_at": run.row.started_at.isoformat(),
            "duration_s": round(run.row.active_s(), 1),  # wall clock it ran, as the runs list says it (`RunRow.active_s`)
            "speed": run.speed,
            "latency_note": speed_note(run.speed),
            "simulator": run.row.simulator,
            "fake": recorded.fake,
            "heuristic_judge": run.heuristic,
            "imported": recorded.reference is not None,
            "labels": ", ".join(run.source_labels),
            "condition": recorded.condition_text,
            "effort": recorded.effort,
            "latency_source": _latency_source(f),
            "turns_recorded": len(run.results),
            "human_verdicts": run.tally.human_verdicts,
            "never_answered": run.tally.never_answered,
            **{col: f.count(why) for why, col in APART_COLUMNS.items()},
            "latency_excluded": run.latency_excluded,
            "latency_untrusted_turns": f.untrusted,
            "latency_ms_meaning": LATENCY_MS_MEANING,
            **_rate_cols(STRICT, f.strict),
            **_rate_cols(ORIGINAL, f.original),
            **_run_latency(f),
            **duplex_columns(f.duplex),
            **run_cost_columns(f),
        })  # fmt: skip
        rows.append(row)
    return rows


def _row_figures(row: BoardRow) -> dict[str, Any]:
    """A row's figures over all turns of its runs (ours, after the reference's averages)."""
    return {
        "benchmark_name": row.benchmark,
        "runs": len(row.runs),
        "labels": ", ".join(row.labels),
        "judge": row.judge,
        # (a row's runs share them: both are part of its labels, so of its identity)
        "condition": row.runs[0].run.row.recorded.condition_text if row.runs else "",
        "effort": row.runs[0].run.row.recorded.effort if row.runs else "",
        "turns": row.strict.n,
        "latency_runs": row.latency_runs,
        "latency_excluded": "; ".join(f"{k}: {v}" for k, v in row.latency_excluded.items()),
        "judge_agreement_pooled": row_agreement(row).rate,
        "latency_ms_meaning": LATENCY_MS_MEANING,
        "never_answered_runs": len(row.never_answered),
        **_rate_cols(STRICT, row.strict),
        **_rate_cols(ORIGINAL, row.original),
        **{k: v for m in METRICS for k, v in _rate_cols(f"{m}_pooled", row.dimensions.get(m)).items()},
        **_latency_ours(row.v2v, (row.v2v_p50_ci, row.v2v_p95_ci), row.v2v_tool, row.v2v_non_tool,
                        row.leading_silence, row.pipeline_ttfb, row.provider_ttfb, row.overlap, row.overlap_ms,
                        row.stages),
        **duplex_columns(row.duplex),
        "empty_response_total": row.empty_responses,
        "model_ended_session_total": row.ended_session,
        **{f"{col}_total": row.apart.get(why, 0) for why, col in APART_COLUMNS.items()},
        "latency_untrusted_turns_total": row.untrusted,
        "unstable_turns": sum(c.unstable for c in row.consistency),
        "always_failing_turns": ",".join(str(c.turn_index) for c in row.consistency if c.always_fails),
        **row_cost_columns(row),
    }  # fmt: skip


def _of_row(row: BoardRow, run_rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    ids = {f.run.run_id for f in row.runs}
    return [r for r in run_rows if r["run_id"] in ids]


def model_summary_rows(board: Leaderboard, run_rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per model and benchmark (and pooled): as the reference, `<column>_mean` / `_std`
    (sample std, empty for one run) of its run_results columns over runs; then our figures over
    all turns, then the same averages of our own run columns (`MODEL_SUMMARY`)."""
    out = []
    for row in board.rows:
        mine = _of_row(row, run_rows)
        figures: dict[str, Any] = {"model_name": row.model}
        for k in REFERENCE_AVERAGED:
            figures[f"{k}_mean"], figures[f"{k}_std"] = mean_std([r.get(k) for r in mine])
        figures.update(_row_figures(row))
        for k in OURS_AVERAGED:
            figures[f"{k}_mean"], figures[f"{k}_std"] = mean_std([_number(r.get(k)) for r in mine])
        out.append(figures)
    return out


def _number(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def metric_summary_rows(board: Leaderboard, run_rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per model (and benchmark), the reference's six metric rows from its run_results columns:
    the mean of the runs' pass rates (runs where the metric was scored), their population std (0
    when there is none), the mean interval bounds, passes and applicable turns; then ours: the
    row's pooled rate. After the six, our two turn-pass metrics (`STRICT`, `ORIGINAL`)."""
    out = []
    for row in board.rows:
        mine = _of_row(row, run_rows)
        pooled = {**row.dimensions, STRICT: row.strict, ORIGINAL: row.original}
        for metric in [*METRICS, STRICT, ORIGINAL]:
            rate = "pass_rate" if metric in METRICS else "rate"
            rates = [r[f"{metric}_{rate}"] for r in mine if r[f"{metric}_{rate}"] is not None]
            mean_rate, std_rate = mean_std(rates, ddof=0)
            p = pooled.get(metric) or Rate(0, 0)
            plo, phi = p.ci95 or (None, None)
            out.append({
                "model_name": row.model,
                "metric": metric,
                "mean_pass_rate": mean_rate,
                "std_pass_rate": std_rate if std_rate is not None else 0.0,
                "mean_pass_rate_ci_lower": mean_std([r[f"{metric}_{rate}_ci_lower"] for r in mine])[0],
                "mean_pass_rate_ci_upper": mean_std([r[f"{metric}_{rate}_ci_upper"] for r in mine])[0],
                "mean_pass_count": mean_std([r[f"{metric}_passes"] for r in mine])[0],
                "mean_applicable": mean_std([r[f"{metric}_applicable"] for r in mine])[0],
                "runs": len(mine),
                "benchmark_name": row.benchmark,
                "pooled_passes": p.passes,
                "pooled_applicable": p.n,
                "pooled_pass_rate": p.rate,
                "pooled_pass_rate_ci_lower": plo,
                "pooled_pass_rate_ci_upper": phi,
                "labels": ", ".join(row.labels),
                "judge": row.judge,
            })  # fmt: skip
    return out


def category_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """One row per run and benchmark category: the strict turn pass over the category's turns."""
    return [
        {"model_name": f.name, "run_index": f.run_index, "run_id": f.run.run_id,
         "benchmark_name": f.run.row.benchmark, "category": c, **_rate_cols("turn_pass_strict", r, rate_name="pass_rate")}
        for f in board.runs for c, r in f.categories.items()
    ]  # fmt: skip


def _cell(v: object) -> object:
    """A value as the reference's CSVs write it: empty for none, floats in full (`repr`)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v)
    return v


def to_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """CSV text with exactly `columns`, in order (a row holding any other key is a bug)."""
    extra = {k for r in rows for k in r} - set(columns)
    if extra:
        raise ValueError(f"columns not in the table's column list: {sorted(extra)}")
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _cell(r.get(k)) for k in columns})
    return buf.getvalue()
