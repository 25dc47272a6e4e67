"""Export to and import from the reference harness's run-directory layout.

Layout: `runs/<benchmark>/<YYYYmmddTHHMMSS>_<model>_<uuid8>/` holding `transcript.jsonl`,
`runtime.json`, stereo `conversation.wav` (left user, right bot), and per judge
`<judge>_judged.jsonl`, `<judge>_summary.json`, `<judge>_analysis.md`.

Rows carry the reference fields with the reference's meaning; our exports add an `arena_tui`
key holding the exact TurnResult / Judgement / summary, so a round trip through our own exports
loses nothing, while reference directories (without that key) import through the mapping below.

Latency fields, both ways:
- `ttfb_ms`: the provider's own TTFB (Pipecat's metric) <-> `provider_ttfb_ms`, never ours.
- `latency_ms`: wall-clock time from the turn's start to its end — the turn's duration, not a
  response latency. Exported from our `turn_started` -> `turn_ended` (audio timeline / speed);
  imported into the run config's `turn_duration_ms` (turn -> ms), never into our latencies.
- our own figures go in extra row fields: `pipeline_ttfb_ms`, `v2v_ms`, `leading_silence_ms`;
  a negative one is no latency (null) and a barge-in is `barge_in_ms` (its overlap); a run at
  a speed other than 1 says `latency_note` ("20× — not comparable") on every row, and its
  `runtime.json` holds `speed`, `started_at` and `ended_at` (wall clock).
`function_tracking` in `<judge>_summary.json` is the reference's dict keyed `<function>_<n>`
holding `{expected_turn, actual_turn, status}` (on_time | early | late | missing); our own
tracking rows, with our statuses, stay in the summary's `arena_tui.tracking`.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arena_tui.spine.audio import SILENCE_KEPT_MS, AudioError, float_to_pcm16, read_wav, write_wav
from arena_tui.spine.events import (
    EMPTY_RESPONSE,
    MODEL_ENDED_SESSION,
    MODEL_ENDED_SESSION_EARLY,
    AudioChunk,
    DimensionScore,
    Judgement,
    Latencies,
    RunEnded,
    RunStarted,
    ToolCallRecord,
    TurnEnded,
    TurnResult,
)
from arena_tui.spine.times import wall_ms
from .timing import barge_in_ms, response_latency, speed_note
from .verdicts import pass_rates, standing
from .judge.summary import render_text, summarize
from .judge.locate import benchmark_of_run

SLICE_S = 10  # conversation audio is imported in slices, as a live run records it
_SENTINEL_STATUS = {
    EMPTY_RESPONSE: "no_response",
    MODEL_ENDED_SESSION: "ended_session",
    MODEL_ENDED_SESSION_EARLY: "ended_early",
}
_DIR = re.compile(r"^(\d{8}T\d{6})_(.+)_([0-9a-fA-F]{8})$")
TURN_DURATION = "turn_duration_ms"  # run config key: the reference's latency_ms per turn, kept as imported
_OUR_LATENCIES = {"pipeline_ttfb_ms": "pipeline_ttfb_ms", "v2v_ms": "voice_to_voice_ms",
                  "leading_silence_ms": "leading_silence_ms"}  # extra row field -> Latencies field
# phase-2 link status -> the reference's; a call made with wrong arguments never satisfied the expectation
_TRACKING_STATUS = {"matched": "on_time", "early": "early", "late": "late", "missed": "missing", "wrong": "missing"}


class InteropError(Exception):
    """A run directory that cannot be read or written; names the file, line and field."""


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "unknown"


def judge_file_prefix(judge: str) -> str:
    """`openai:gpt-5-mini` -> `openai_gpt-5-mini` (file-name safe, stable)."""
    return _safe(judge.replace(":", "_"))


def _uuid8(run_id: str) -> str:
    hexes = re.sub(r"[^0-9a-f]", "", run_id.lower())
    return hexes[:8] if len(hexes) >= 8 else uuid.uuid5(uuid.NAMESPACE_URL, run_id).hex[:8]


def _iso(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def _bool(score: DimensionScore | None) -> bool | None:
    if score is None or score.verdict == "na":
        return None
    return score.verdict == "pass"


# ------------------------------------------------------------------------------------- export


async def export_run(store: Any, run_id: str, dest: str | Path, *, benchmark: Any = None,
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
    out = root / _safe(run.benchmark) / f"{started.astimezone(UTC):%Y%m%dT%H%M%S}_{_safe(run.model)}_{_uuid8(run_id)}"
    out.mkdir(parents=True, exist_ok=True)

    results = {r.turn_index: r for r in await store.turn_results(run_id)}
    t_end = {ev.turn_index: ev.t_ms for _, ev in await store.events(run_id, kinds=["turn_ended"])}
    speed = run.speed  # the run timeline over the wall clock (None: not recorded, taken as 1)
    durations = _turn_durations(run.config, t_end, await store.events(run_id, kinds=["turn_started"]), speed)
    rows: dict[int, dict[str, Any]] = {}
    for idx, r in sorted(results.items()):
        if idx < 0:
            continue  # the greeting is not a benchmark turn
        lat = r.latencies
        row: dict[str, Any] = {
            "ts": _iso(started + timedelta(milliseconds=wall_ms(t_end.get(idx, 0.0), speed))),
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
               for name, ours in _OUR_LATENCIES.items()},
            **({"barge_in_ms": round(b)} if (b := barge_in_ms(lat)) is not None else {}),
            **({"latency_note": note} if (note := speed_note(run.speed)) else {}),
            "arena_tui": {"result": r.model_dump(mode="json"), "t_ms": t_end.get(idx, 0.0)},
        }
        rows[idx] = row
    _write_jsonl(out / "transcript.jsonl", rows.values())
    runtime = {
        "model_name": run.model,
        "turns": len(rows),
        "note": f"exported by arena-tui from run {run_id}" + (" (simulator)" if run.simulator else ""),
        "audio_source": run.config.get("audio_source", "recorded") if isinstance(run.config, dict) else "recorded",
        "arena_tui": {
            "run_id": run_id, "benchmark": run.benchmark, "provider": run.provider, "simulator": run.simulator,
            "status": run.status, "turn_indices": run.turn_indices, "config": run.config,
            "started_at": _iso(started), "ended_at": _iso(run.ended_at) if run.ended_at else None,
            "speed": run.speed, **({"latency": note} if (note := speed_note(run.speed)) else {}),
        },
    }
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
    (out / "runtime.json").write_text(json.dumps(runtime, indent=2, ensure_ascii=False, default=str) + "\n")
    if clip is not None and clip.pcm:
        write_wav(out / "conversation.wav", clip.pcm, clip.sample_rate, clip.channels)

    judgements = await store.judgements(run_id)
    benchmark = benchmark or await _benchmark_or_none(store, run_id, data)
    for judge in sorted({j.judge for j in judgements}):
        mine = [j for j in judgements if j.judge == judge]
        standings = standing(mine)
        now = {i: st.shown for i, st in standings.items()}
        prefix = judge_file_prefix(judge)
        judged = []
        for idx, row in rows.items():
            j = now.get(idx)
            if j is None:
                continue
            rec = {k: v for k, v in row.items() if k != "arena_tui"}
            rec["scores"] = {d: _bool(s) for d, s in j.scores.items()}
            rec["judge_reasoning"] = j.error or "\n".join(f"{d}: {s.reasoning}" for d, s in j.scores.items())
            tt = j.scores.get("turn_taking")
            if tt is not None and tt.verdict == "fail":
                rec["turn_taking_issues"] = tt.reasoning.split("; ")
            rec["arena_tui"] = {"judgement": j.model_dump(mode="json")}
            if j.error is None and standings[idx].error:  # a failed re-judge: the verdict before it stands
                rec["arena_tui"]["rejudge_error"] = standings[idx].error
            judged.append(rec)
        _write_jsonl(out / f"{prefix}_judged.jsonl", judged)
        heuristic = any(j.heuristic for j in now.values())
        summary_doc: dict[str, Any] = {
            "model_name": run.model,
            "judge_name": prefix,
            "judge_model": judge,
            "heuristic": heuristic,
            "turns_scored": len(judged),
            "judged_at": _iso(datetime.now(UTC)),
            "realignment_applied": any(j.phase == 2 for j in now.values()),
        }
        text = ""
        if benchmark is not None:
            s = summarize(benchmark, list(results.values()), mine)
            summary_doc["passes"] = {d: t.passes for d, t in s.dimensions.items()}
            summary_doc["category_totals"] = {d: t.denominator for d, t in s.dimensions.items()}
            summary_doc["function_tracking"] = [t.model_dump() for t in s.tracking]
            summary_doc["arena_tui"] = s.model_dump(mode="json")
            text = render_text(s)
        else:  # no benchmark, so no denominators for unjudged turns: the rates over judged turns
            rates = pass_rates(mine)
            summary_doc["passes"] = {d: p for d, (p, _) in rates.items()}
            summary_doc["category_totals"] = {d: n for d, (_, n) in rates.items()}
        summary_doc["turn_taking_failures"] = sorted(
            i for i, j in now.items() if (j.scores.get("turn_taking") and j.scores["turn_taking"].verdict == "fail")
        )
        summary_doc["function_tracking"] = reference_tracking(summary_doc.get("function_tracking") or [])
        (out / f"{prefix}_summary.json").write_text(json.dumps(summary_doc, indent=2, ensure_ascii=False) + "\n")
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
        (out / f"{prefix}_analysis.md").write_text("\n".join(md) + "\n")
    return out


def _int_or_none(ms: float | None) -> int | None:
    return None if ms is None else round(ms)


def _turn_durations(config: Any, t_end: dict[int, float], started: list[tuple[int, Any]], speed: float | None) -> dict[int, int]:
    """turn -> wall-clock ms from its first `turn_started` to its `turn_ended` (the reference's latency_ms).

    Event times are on the audio timeline, which runs `speed` times faster than the wall clock.
    A turn without a recorded start (an imported run) keeps the duration it was imported with.
    """
    config = config if isinstance(config, dict) else {}
    kept = config.get(TURN_DURATION) if isinstance(config.get(TURN_DURATION), dict) else {}
    out = {int(k): int(v) for k, v in kept.items() if str(k).lstrip("-").isdigit() and isinstance(v, (int, float))}
    t_start: dict[int, float] = {}
    for _, ev in started:
        if ev.turn_index is not None:
            t_start[ev.turn_index] = min(ev.t_ms, t_start.get(ev.turn_index, ev.t_ms))
    for idx, t0 in t_start.items():
        if idx in t_end:
            out[idx] = round(wall_ms(t_end[idx] - t0, speed))
    return out


def reference_tracking(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Our tracking rows (phase-2 links) as the reference's `function_tracking`: `<function>_<n>` keys.

    `n` counts each function's expected calls from 1, in expected-turn order.
    """
    out: dict[str, dict[str, Any]] = {}
    seen: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: (r["expected_turn"], r.get("expected_index", 0))):
        seen[row["name"]] = seen.get(row["name"], 0) + 1
        status = _TRACKING_STATUS.get(row["status"], "missing")
        out[f"{row['name']}_{seen[row['name']]}"] = {
            "expected_turn": row["expected_turn"],
            "actual_turn": None if status == "missing" else row.get("actual_turn"),
            "status": status,
        }
    return out


async def _benchmark_or_none(store: Any, run_id: str, data: str | os.PathLike[str] | None):
    try:
        return await benchmark_of_run(store, run_id, data)
    except Exception:  # noqa: BLE001 - the summary then falls back to counting verdicts
        return None


def _write_jsonl(path: Path, rows: Any) -> None:
    tmp = path.with_name(path.name + ".part")
    with tmp.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    tmp.replace(path)


# ------------------------------------------------------------------------------------- import


def _read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InteropError(f"{path}: cannot read: {e.strerror or e}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InteropError(f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise InteropError(f"{path}:{n}: expected a JSON object per line")
        rows.append((n, row))
    return rows


def _field(row: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str, default: Any = ...) -> Any:
    if name not in row or row[name] is None:
        if default is ...:
            raise InteropError(f"{where}: missing field {name!r}")
        return default
    value = row[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        want = " or ".join("number" if k is float else k.__name__ for k in kinds if not (k is int and float in kinds))
        raise InteropError(f"{where}: field {name!r} should be {want}, got {value!r:.60}")
    return value


def _parse_ts(value: str, where: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InteropError(f"{where}: field 'ts' is not an ISO timestamp: {value!r}") from None


def _result_from_reference(row: dict[str, Any], where: str) -> TurnResult:
    turn = _field(row, "turn", int, where)
    text = _field(row, "assistant_text", str, where, "")
    calls = _field(row, "tool_calls", list, where, [])
    responses = _field(row, "tool_results", list, where, [])
    records = []
    for k, c in enumerate(calls):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise InteropError(f"{where}: tool_calls[{k}] needs a 'name'")
        resp = responses[k].get("response") if k < len(responses) and isinstance(responses[k], dict) else None
        records.append(ToolCallRecord(call_id=f"t{turn}-{k}", name=c["name"], args=c.get("args") or {},
                                      status="duplicate_skipped" if c.get("is_duplicate") else "recorded",
                                      response=resp, is_duplicate=bool(c.get("is_duplicate"))))
    sentinel = text if text in _SENTINEL_STATUS else None
    status = _SENTINEL_STATUS.get(text, "ok")
    num = (int, float)
    return TurnResult(
        turn_index=turn, status=status, user_text=_field(row, "user_text", str, where, ""),  # type: ignore[arg-type]
        assistant_text="" if sentinel else text, sentinel=sentinel, tool_calls=records,
        tokens={k: v for k, v in (_field(row, "tokens", dict, where, {}) or {}).items() if isinstance(v, int)},
        # latency_ms is the turn's duration, not a latency of ours: import_run keeps it in the config
        latencies=Latencies(provider_ttfb_ms=_field(row, "ttfb_ms", num, where, None),
                            **{ours: _field(row, name, num, where, None) for name, ours in _OUR_LATENCIES.items()}),
        reconnects=_field(row, "reconnection_count", int, where, 0),
    )


def _judgement_from_reference(row: dict[str, Any], where: str, run_id: str, judge: str, heuristic: bool) -> Judgement:
    scores_raw = _field(row, "scores", dict, where)
    reasoning = row.get("judge_reasoning") or ""
    scores = {}
    for dim, v in scores_raw.items():
        if v is not None and not isinstance(v, bool):
            raise InteropError(f"{where}: scores.{dim} should be true, false or null, got {v!r}")
        verdict = "na" if v is None else ("pass" if v else "fail")
        scores[dim] = DimensionScore(verdict=verdict, reasoning=str(reasoning)[:2000])
    return Judgement(run_id=run_id, t_ms=0.0, turn_index=row["turn"], judge=judge, revision=1, phase=1,
                     scores=scores, heuristic=heuristic)


async def import_run(store: Any, run_dir: str | Path, *, benchmark: str | None = None, run_id: str | None = None) -> str:
    """Read a reference run directory into the store (as synthesized events); returns the run id."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InteropError(f"{run_dir}: not a directory")
    tpath = run_dir / "transcript.jsonl"
    if not tpath.is_file():
        raise InteropError(f"{run_dir}: no transcript.jsonl (not a run directory)")
    runtime: dict[str, Any] = {}
    rpath = run_dir / "runtime.json"
    if rpath.is_file():
        try:
            runtime = json.loads(rpath.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise InteropError(f"{rpath}: not JSON ({e.msg} at line {e.lineno})") from None
        if not isinstance(runtime, dict):
            raise InteropError(f"{rpath}: expected a JSON object")
    ours = runtime.get("arena_tui") if isinstance(runtime.get("arena_tui"), dict) else {}
    m = _DIR.match(run_dir.name)
    bench = benchmark or ours.get("benchmark") or (run_dir.parent.name if run_dir.parent.name != "runs" else None)
    if not bench:
        raise InteropError(f"{run_dir}: cannot tell the benchmark (pass --benchmark)")
    rid = run_id or ours.get("run_id") or f"ref-{m.group(3) if m else uuid.uuid4().hex[:8]}"
    if await store.get_run(rid) is not None:
        raise InteropError(f"run {rid} is already in the database (delete it first or pass --run-id)")

    results: list[tuple[float, TurnResult, datetime | None]] = []
    durations: dict[str, int | float] = {}
    for n, row in _read_jsonl(tpath):
        where = f"{tpath}:{n}"
        duration = _field(row, "latency_ms", (int, float), where, None)
        if duration is not None and isinstance(row.get("turn"), int):
            durations[str(row["turn"])] = duration
        extra = row.get("arena_tui")
        try:
            if isinstance(extra, dict) and "result" in extra:
                r = TurnResult.model_validate(extra["result"])
                results.append((float(extra.get("t_ms", 0.0)), r, None))
                continue
            r = _result_from_reference(row, where)
        except ValidationError as e:
            first = e.errors()[0]
            raise InteropError(f"{where}: field {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
        ts = _parse_ts(row["ts"], where) if isinstance(row.get("ts"), str) else None
        results.append((0.0, r, ts))
    if not results:
        raise InteropError(f"{tpath}: no turns")
    greeting = ours.get("greeting")
    if isinstance(greeting, dict) and "result" in greeting:
        try:
            results.append((float(greeting.get("t_ms", 0.0)), TurnResult.model_validate(greeting["result"]), None))
        except ValidationError as e:
            raise InteropError(f"{rpath}: field arena_tui.greeting: {e.errors()[0]['msg']}") from None
    seen: set[int] = set()
    for _, r, _ in results:
        if r.turn_index in seen:
            raise InteropError(f"{tpath}: turn {r.turn_index} appears twice")
        seen.add(r.turn_index)
    stamps = [ts for _, _, ts in results if ts is not None]
    t0 = min(stamps) if stamps else None
    if ours.get("started_at"):
        t0 = _parse_ts(ours["started_at"], str(rpath))
    timed = []
    for t_ms, r, ts in results:
        if ts is not None and t0 is not None:
            t_ms = (ts - t0).total_seconds() * 1000.0
        timed.append((t_ms, r))
    timed.sort(key=lambda x: (x[0], x[1].turn_index))
    model = runtime.get("model_name") or (m.group(2) if m else "unknown")
    config = dict(ours.get("config") or {})
    config.setdefault("imported_from", str(run_dir))
    if durations:
        config[TURN_DURATION] = durations
    if runtime.get("note"):
        config.setdefault("note", runtime["note"])
    speed = ours.get("speed") if isinstance(ours.get("speed"), (int, float)) and ours["speed"] > 0 else None
    events: list[Any] = [
        RunStarted(run_id=rid, t_ms=0.0, benchmark=bench, model=str(model),
                   provider=ours.get("provider") or "reference", simulator=bool(ours.get("simulator", False)),
                   turn_indices=ours.get("turn_indices") or sorted(seen), config=config,
                   speed=speed, wall_time=t0)  # the run's own start, not the import's
    ]
    events += [TurnEnded(run_id=rid, t_ms=t_ms, turn_index=r.turn_index, result=r) for t_ms, r in timed]
    events += _audio_events(run_dir / "conversation.wav", rid, ours.get("conversation"))
    events += _judgement_events(run_dir, rid)
    end_t = max((t for t, _ in timed), default=0.0)
    status = ours.get("status") if ours.get("status") in ("completed", "interrupted", "failed") else "completed"
    # the run's own end: as exported, else the last row's wall clock (else the store's started + t / speed)
    ended = _parse_ts(ours["ended_at"], str(rpath)) if isinstance(ours.get("ended_at"), str) else max(stamps, default=None)
    events.append(RunEnded(run_id=rid, t_ms=end_t, status=status, reason=f"imported from {run_dir.name}", wall_time=ended))
    for ev in events:
        store.submit(ev)
    await store.flush()
    return rid


def _audio_events(path: Path, run_id: str, layout: Any = None) -> list[AudioChunk]:
    """The WAV as conversation slices; `layout` (our export's `conversation`: its start on the
    timeline and the silences it cut) puts each slice back where it was recorded."""
    if not path.is_file():
        return []
    try:
        frames, fmt = read_wav(path)
    except AudioError as e:
        raise InteropError(str(e)) from None
    if fmt.channels != 2:
        raise InteropError(f"{path}: conversation.wav must be stereo (left user, right bot), has {fmt.channels} channel(s)")
    pcm = float_to_pcm16(frames)
    rate = fmt.sample_rate
    layout = layout if isinstance(layout, dict) else {}
    start_ms = float(layout.get("start_ms") or 0.0)
    kept = round(float(layout.get("silence_kept_ms") or 0.0) * rate / 1000.0)
    # (first frame, its timeline ms, frame past its last) of each part between cuts; a part ends
    # before the silence kept ahead of its cut, so the gap is whole again, as it was recorded
    parts: list[list[Any]] = [[0, start_ms, len(pcm)]]
    skipped = 0.0
    for cut in layout.get("cuts") or []:
        at, ms = float(cut["at_ms"]), float(cut["cut_ms"])
        frame = round((at - start_ms - skipped) * rate / 1000.0)
        parts[-1][2] = max(parts[-1][0], frame - kept)
        parts.append([frame, at + ms, len(pcm)])
        skipped += ms
    step = SLICE_S * rate
    out = []
    for first, t0, last in parts:
        for i in range(first, last, step):
            t = t0 + (i - first) * 1000.0 / rate
            out.append(AudioChunk(run_id=run_id, t_ms=t, track="conversation", sample_rate=rate, channels=2,
                                  start_ms=t, pcm=pcm[i : min(i + step, last)].astype("<i2").tobytes()))
    return out


def _judgement_events(run_dir: Path, run_id: str) -> list[Judgement]:
    out: list[Judgement] = []
    revision: dict[int, int] = {}  # several judges' files: later files become later revisions
    for path in sorted(run_dir.glob("*_judged.jsonl")):
        prefix = path.name[: -len("_judged.jsonl")]
        summary_path = run_dir / f"{prefix}_summary.json"
        judge, heuristic = f"reference:{prefix}", prefix == "heuristic"
        if summary_path.is_file():
            try:
                doc = json.loads(summary_path.read_text(encoding="utf-8"))
                doc = doc if isinstance(doc, dict) else {}
                judge = f"reference:{doc['judge_model']}" if doc.get("judge_model") else judge
                heuristic = bool(doc.get("heuristic", heuristic))
            except json.JSONDecodeError as e:
                raise InteropError(f"{summary_path}: not JSON ({e.msg})") from None
        for n, row in _read_jsonl(path):
            where = f"{path}:{n}"
            extra = row.get("arena_tui")
            if isinstance(extra, dict) and "judgement" in extra:
                try:
                    j = Judgement.model_validate({**extra["judgement"], "run_id": run_id})
                except ValidationError as e:
                    first = e.errors()[0]
                    raise InteropError(f"{where}: field {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
                out.append(j)
                continue
            turn = _field(row, "turn", int, where)
            j = _judgement_from_reference(row, where, run_id, judge, heuristic)
            revision[turn] = revision.get(turn, 0) + 1
            out.append(j.model_copy(update={"revision": revision[turn]}))
    return out
