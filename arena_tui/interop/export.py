"""Write one stored run as a reference run folder (see `arena_tui.interop`; fields: `fields.py`)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arena_tui.spine.audio import SILENCE_KEPT_MS, write_wav
from arena_tui.spine.events import UsageReported
from arena_tui.spine.times import wall_ms
from ..judge.locate import benchmark_of_run
from ..judge.summary import render_text, summarize
from ..timing import barge_in_ms, response_latency, speed_note, turn_durations
from ..verdicts import is_review, standing, tally
from .fields import OUR_LATENCIES, reference_tracking, score_value
from .layout import (
    ANALYSIS_SUFFIX,
    BENCHMARK,
    CONVERSATION,
    JUDGED_SUFFIX,
    RUNTIME,
    SUMMARY_SUFFIX,
    TRANSCRIPT,
    InteropError,
    iso,
    judge_file_prefix,
    safe_name,
    uuid8,
    write_jsonl,
)

if TYPE_CHECKING:
    from arena_tui.spine.benchmark import Benchmark
    from arena_tui.store import Store


async def export_run(store: Store, run_id: str, dest: str | Path, *, benchmark: Benchmark | None = None,
                     data: str | os.PathLike[str] | None = None) -> Path:
    """Write one stored run in the reference layout under `dest` (a `runs/` folder is made).

    `benchmark` (else the run's stored snapshot, else looked up by name in `data`) lets the
    summary apply the rubric's denominators.
    """
    run = await store.get_run(run_id)
    if run is None:
        raise InteropError(f"no run {run_id!r} in the database")
    dest = Path(dest)
    root = dest if dest.name == "runs" else dest / "runs"
    started: datetime = run.started_at
    out = root / safe_name(run.benchmark) / f"{started.astimezone(UTC):%Y%m%dT%H%M%S}_{safe_name(run.model)}_{uuid8(run_id)}"
    out.mkdir(parents=True, exist_ok=True)

    results = {r.turn_index: r for r in await store.turn_results(run_id)}
    t_start, t_end = await store.turn_times(run_id)
    speed = run.speed  # the run timeline over the wall clock (None: not recorded, taken as 1)
    durations = turn_durations(run.recorded.turn_durations, t_start, t_end, speed)
    rows: dict[int, dict[str, Any]] = {}
    for idx, r in sorted(results.items()):
        if idx < 0:
            continue  # the greeting is not a benchmark turn
        lat = r.latencies
        row: dict[str, Any] = {
            "ts": iso(started + timedelta(milliseconds=wall_ms(t_end.get(idx, 0.0), speed))),
            "turn": idx,
            "model_name": run.model,
            "user_text": r.user_text,
            "assistant_text": r.sentinel or r.assistant_text,
            "tool_calls": [
                {"name": c.name, "args": c.args, **({"is_duplicate": True} if c.is_duplicate else {})}
                for c in r.tool_calls
            ],
            "tool_results": [{"name": c.name, "response": c.response} for c in r.tool_calls],
            "tokens": r.tokens or None,
            "ttfb_ms": _int_or_none(lat.provider_ttfb_ms),
            "latency_ms": durations.get(idx),
            "reconnection_count": r.reconnects,
            # a figure from the user's end below 0 is no latency: a barge-in, with its overlap
            **{name: response_latency(getattr(lat, ours)) if ours != "leading_silence_ms" else getattr(lat, ours)
               for name, ours in OUR_LATENCIES.items()},
            **({"barge_in_ms": round(b)} if (b := barge_in_ms(lat)) is not None else {}),
            **({"latency_note": note} if (note := speed_note(run.speed)) else {}),
            "arena_tui": {"result": r.model_dump(mode="json"), "t_ms": t_end.get(idx, 0.0)},
        }
        rows[idx] = row
    write_jsonl(out / TRANSCRIPT, rows.values())
    runtime: dict[str, Any] = {
        "model_name": run.model,
        "turns": len(rows),
        "note": f"exported by arena-tui from run {run_id}" + (" (simulator)" if run.simulator else ""),
        "audio_source": run.recorded.audio_source,
        "arena_tui": {
            "run_id": run_id, "benchmark": run.benchmark, "provider": run.provider, "simulator": run.simulator,
            "status": run.status, "turn_indices": run.turn_indices, "config": run.recorded.stored(),
            "started_at": iso(started), "ended_at": iso(run.ended_at) if run.ended_at else None,
            "speed": run.speed, **({"latency": note} if (note := speed_note(run.speed)) else {}),
        },
    }
    usage = [{"t_ms": ev.t_ms, "turn_index": ev.turn_index, "usage": ev.usage.model_dump(mode="json", exclude_defaults=True)}
             for _, ev in await store.events(run_id, kinds=["usage"]) if isinstance(ev, UsageReported)]
    if usage:  # what its services said they used, for its cost (docs/cost.md): kept for a lossless round trip
        runtime["arena_tui"]["usage"] = usage
    if -1 in results:  # not a benchmark turn, so not a transcript row; kept for a lossless round trip
        runtime["arena_tui"]["greeting"] = {"result": results[-1].model_dump(mode="json"), "t_ms": t_end.get(-1, 0.0)}
    clip = await store.conversation_audio(run_id)
    if clip is not None and clip.pcm:
        # where the WAV sits on the run's timeline, and the silences it leaves out (so an import
        # puts every slice back in time)
        runtime["arena_tui"]["conversation"] = {
            "start_ms": clip.start_ms, "silence_kept_ms": SILENCE_KEPT_MS,
            "cuts": [{"at_ms": at, "cut_ms": ms} for at, ms in clip.cuts],
            **({"note": f"silences over {SILENCE_KEPT_MS / 1000:g} s keep {SILENCE_KEPT_MS / 1000:g} s; "
                        f"{len(clip.cuts)} cut(s), {sum(ms for _, ms in clip.cuts) / 1000:,.1f} s in all"}
               if clip.cuts else {}),
        }
    (out / RUNTIME).write_text(json.dumps(runtime, indent=2, ensure_ascii=False, default=str) + "\n")
    if clip is not None and clip.pcm:
        write_wav(out / CONVERSATION, clip.pcm, clip.sample_rate, clip.channels)

    judgements = await store.judgements(run_id)
    benchmark = benchmark or await _benchmark_or_none(store, run_id, data)
    if benchmark is not None:  # the import restores it: the run is judged again without a data folder
        (out / BENCHMARK).write_text(json.dumps(benchmark.snapshot(), ensure_ascii=False) + "\n", encoding="utf-8")
    # a person's verdicts go with every judge's file: they win over whichever judge's (`verdicts.standing`)
    reviews = [j for j in judgements if is_review(j)]
    judges = sorted({j.judge for j in judgements if not is_review(j)}) or sorted({j.judge for j in reviews})[:1]
    statuses = {i: r.status for i, r in results.items()}
    for judge in judges:
        mine = [j for j in judgements if j.judge == judge and not is_review(j)] + reviews
        # what the app counts (`verdicts.tally`): a turn counted apart as not the model's (not played,
        # stopped, lost pace, infrastructure, engine error) gets no record; one the judge could not
        # score gets the reference's incomplete row (every score null)
        counted = tally(mine, statuses, run.turn_indices or None)
        standings = {i: st for i, st in standing(mine, judge=counted.judge).items()
                     if i in counted.rows or i in counted.judge_errors}
        now = {i: st.shown for i, st in standings.items()}
        prefix = judge_file_prefix(judge)
        judged = []
        for idx, row in rows.items():
            j = now.get(idx)
            if j is None:
                continue
            rec = {k: v for k, v in row.items() if k != "arena_tui"}
            rec["scores"] = {d: score_value(s) if idx in counted.rows else None for d, s in j.scores.items()}
            rec["judge_reasoning"] = j.error or "\n".join(f"{d}: {s.reasoning}" for d, s in j.scores.items())
            tt = j.scores.get("turn_taking")
            if tt is not None and tt.verdict == "fail":
                rec["turn_taking_issues"] = tt.reasoning.split("; ")
            st = standings[idx]
            if st.human:  # the reference's scores above are the person's there; who and why, per dimension
                rec["human_verdicts"] = {d: {"verdict": score_value(j.scores[d]), "by": j.scores[d].by,
                                             "reason": j.scores[d].reasoning} for d in st.human if d in j.scores}
            # ours: the judge's own revision and every person's, as recorded, so an import counts the same
            ours = st.machine or st.judging
            rec["arena_tui"] = {**({"judgement": ours.model_dump(mode="json")} if ours is not None else {}),
                                **({"reviews": [r.model_dump(mode="json") for r in reviews if r.turn_index == idx]}
                                   if any(r.turn_index == idx for r in reviews) else {})}
            if j.error is None and st.error:  # a failed re-judge: the verdict before it stands
                rec["arena_tui"]["rejudge_error"] = st.error
            judged.append(rec)
        write_jsonl(out / f"{prefix}{JUDGED_SUFFIX}", judged)
        heuristic = any(j.heuristic for j in now.values())
        summary_doc: dict[str, Any] = {
            "model_name": run.model,
            "judge_name": prefix,
            "judge_model": judge,
            # the version of our rules the judge was asked by, as the reference names its prompt's
            **({"judge_version": v} if (v := ", ".join(sorted({j.judge_version for j in now.values()
                                                                if j.judge_version}))) else {}),
            "heuristic": heuristic,
            "turns_scored": len(counted.rows),  # the turns every figure counts (`verdicts.tally`)
            "judged_at": iso(datetime.now(UTC)),
            "realignment_applied": any(j.phase == 2 for j in now.values()),
            # how many verdicts counted are a person's, not this judge's (`verdicts.Tally.human`)
            "human_verdicts": sum(len(st.human) for st in standings.values()),
        }
        text = ""
        if benchmark is not None:
            s = summarize(benchmark, list(results.values()), mine, run.turn_indices or None)
            summary_doc["passes"] = {d: t.passes for d, t in s.dimensions.items()}
            summary_doc["category_totals"] = {d: t.denominator for d, t in s.dimensions.items()}
            summary_doc["function_tracking"] = [t.model_dump() for t in s.tracking]
            summary_doc["arena_tui"] = s.model_dump(mode="json")
            text = render_text(s)
        else:  # no benchmark: the rates alone, by the same rule
            summary_doc["passes"] = {d: p for d, (p, _) in counted.dimensions.items()}
            summary_doc["category_totals"] = {d: n for d, (_, n) in counted.dimensions.items()}
        summary_doc["turn_taking_failures"] = sorted(
            i for i, j in now.items()
            if i in counted.rows and j.scores.get("turn_taking") and j.scores["turn_taking"].verdict == "fail"
        )
        summary_doc["function_tracking"] = reference_tracking(summary_doc.get("function_tracking") or [])
        (out / f"{prefix}{SUMMARY_SUFFIX}").write_text(json.dumps(summary_doc, indent=2, ensure_ascii=False) + "\n")
        label = " (HEURISTIC: offline word-overlap scores, not an LLM judge)" if heuristic else ""
        md = [f"# {judge} evaluation{label}", "", f"**Model**: {run.model}", f"**Turns**: {len(judged)}", ""]
        if text:
            md += ["```", text, "```", ""]
        failed = [(i, st) for i, st in standings.items() if st.verdict in ("fail", "judge_error")]
        if failed:
            md += ["## Failed turns", ""]
            for i, st in failed:
                j = st.shown
                why = j.error or "; ".join(f"{d}: {s.reasoning}" for d, s in j.scores.items() if s.verdict == "fail")
                md.append(f"- Turn {i}: {why}")
        rejudged = [(i, st.error) for i, st in standings.items() if st.judgement is not None and st.error]
        if rejudged:
            md += ["", "## Failed re-judges (the verdict before each stands)", ""]
            md += [f"- Turn {i}: {err}" for i, err in rejudged]
        (out / f"{prefix}{ANALYSIS_SUFFIX}").write_text("\n".join(md) + "\n")
    return out


def _int_or_none(ms: float | None) -> int | None:
    return None if ms is None else round(ms)


async def _benchmark_or_none(store: Store, run_id: str, data: str | os.PathLike[str] | None):
    try:
        return await benchmark_of_run(store, run_id, data)
    except Exception:  # noqa: BLE001 - the summary then falls back to counting verdicts
        return None
