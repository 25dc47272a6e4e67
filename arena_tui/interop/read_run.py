"""Read a reference run folder (ours or the reference harness's) into the store as events.

A folder we exported carries our exact records (`arena_tui` keys) and comes back as it was. A
folder the reference harness wrote is read field by field (`fields.py`) and, being another
harness's, recorded as imported (its config's `imported`): its judges as they named themselves,
its runtime (mode, parallelism, VAD), speed 1 unless its runtime.json says otherwise (its audio
plays in real time), and voice-to-voice, leading silence and overlap derived on import from its
`conversation.wav` by our own rules (`wav_metrics.py`), when its rows carry none of ours.
Either way a folder is data: the endpoint, service class and service arguments its config names
are kept as provenance (`spine.provenance`), never as settings a resume connects with.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from arena_tui.spine.recorded import IMPORTED, IMPORTED_FROM, TURN_DURATION
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.provenance import as_provenance
from arena_tui.spine.events import (
    DimensionScore, Judgement, Latencies, RunEnded, RunStarted, ToolCallRecord, TurnEnded, TurnResult, UsageReported,
)
from . import wav_metrics
from .conversation import conversation_events, read_conversation
from .fields import OUR_LATENCIES, SENTINEL_STATUS
from .layout import (
    BENCHMARK,
    CONVERSATION,
    JUDGED_SUFFIX,
    RUN_DIR,
    RUNTIME,
    SUMMARY_SUFFIX,
    TRANSCRIPT,
    AlreadyStored,
    InteropError,
    field,
    folder_run_id,
    parse_ts,
    read_jsonl,
)

if TYPE_CHECKING:
    from arena_tui.store import Store


def _result_from_reference(row: dict[str, Any], where: str) -> TurnResult:
    turn = field(row, "turn", int, where)
    text = field(row, "assistant_text", str, where, "")
    calls = field(row, "tool_calls", list, where, [])
    responses = field(row, "tool_results", list, where, [])
    records = []
    for k, c in enumerate(calls):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise InteropError(f"{where}: tool_calls[{k}] needs a 'name'")
        resp = responses[k].get("response") if k < len(responses) and isinstance(responses[k], dict) else None
        records.append(ToolCallRecord(call_id=f"t{turn}-{k}", name=c["name"], args=c.get("args") or {},
                                      status="duplicate_skipped" if c.get("is_duplicate") else "recorded",
                                      response=resp, is_duplicate=bool(c.get("is_duplicate"))))
    sentinel = text if text in SENTINEL_STATUS else None
    status = SENTINEL_STATUS.get(text, "ok")
    num = (int, float)
    return TurnResult(
        turn_index=turn, status=status, user_text=field(row, "user_text", str, where, ""),
        assistant_text="" if sentinel else text, sentinel=sentinel, tool_calls=records,
        tokens={k: v for k, v in (field(row, "tokens", dict, where, {}) or {}).items() if isinstance(v, int)},
        # latency_ms is the turn's duration, not a latency of ours: import_run keeps it in the config
        latencies=Latencies(provider_ttfb_ms=field(row, "ttfb_ms", num, where, None),
                            **{ours: field(row, name, num, where, None) for name, ours in OUR_LATENCIES.items()}),
        reconnects=field(row, "reconnection_count", int, where, 0),
    )


def _judgement_from_reference(row: dict[str, Any], where: str, run_id: str, judge: str, heuristic: bool) -> Judgement:
    scores_raw = field(row, "scores", dict, where)
    reasoning = row.get("judge_reasoning") or ""
    scores = {}
    for dim, v in scores_raw.items():
        if v is not None and not isinstance(v, bool):
            raise InteropError(f"{where}: scores.{dim} should be true, false or null, got {v!r}")
        verdict = "na" if v is None else ("pass" if v else "fail")
        scores[dim] = DimensionScore(verdict=verdict, reasoning=str(reasoning)[:2000])
    return Judgement(run_id=run_id, t_ms=0.0, turn_index=row["turn"], judge=judge, revision=1, phase=1,
                     scores=scores, heuristic=heuristic)


async def import_run(store: Store, run_dir: str | Path, *, benchmark: str | None = None, run_id: str | None = None) -> str:
    """Read a reference run directory into the store (as synthesized events); returns the run id."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise InteropError(f"{run_dir}: not a directory")
    tpath = run_dir / TRANSCRIPT
    if not tpath.is_file():
        raise InteropError(f"{run_dir}: no transcript.jsonl (not a run directory)")
    runtime: dict[str, Any] = {}
    rpath = run_dir / RUNTIME
    if rpath.is_file():
        try:
            runtime = json.loads(rpath.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise InteropError(f"{rpath}: not JSON ({e.msg} at line {e.lineno})") from None
        if not isinstance(runtime, dict):
            raise InteropError(f"{rpath}: expected a JSON object")
    ours: dict[str, Any] = runtime["arena_tui"] if isinstance(runtime.get("arena_tui"), dict) else {}
    m = RUN_DIR.match(run_dir.name)
    bench = benchmark or ours.get("benchmark") or (run_dir.parent.name if run_dir.parent.name != "runs" else None)
    if not bench:
        raise InteropError(f"{run_dir}: cannot tell the benchmark (pass --benchmark)")
    rid = run_id or ours.get("run_id") or folder_run_id(run_dir.name)
    if await store.get_run(rid) is not None:
        raise AlreadyStored(rid)

    results: list[tuple[float, TurnResult, datetime | None]] = []
    durations: dict[str, int | float] = {}
    for n, row in read_jsonl(tpath):
        where = f"{tpath}:{n}"
        duration = field(row, "latency_ms", (int, float), where, None)
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
        ts = parse_ts(row["ts"], where) if isinstance(row.get("ts"), str) else None
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
        t0 = parse_ts(ours["started_at"], str(rpath))
    timed = []
    for t_ms, r, ts in results:
        if ts is not None and t0 is not None:
            t_ms = (ts - t0).total_seconds() * 1000.0
        timed.append((t_ms, r))
    timed.sort(key=lambda x: (x[0], x[1].turn_index))
    model = runtime.get("model_name") or (m.group(2) if m else "unknown")
    config = dict(ours.get("config") or {})
    if durations:
        config[TURN_DURATION] = durations
    if runtime.get("note"):
        config.setdefault("note", runtime["note"])
    recording = read_conversation(run_dir / CONVERSATION)
    judgements, judges = _judgement_events(run_dir, rid)
    if ours:
        config.setdefault(IMPORTED_FROM, str(run_dir))
        speed = ours.get("speed") if _positive(ours.get("speed")) else None
    else:  # the reference harness's folder
        speed = float(runtime["speed"]) if _positive(runtime.get("speed")) else 1.0
        for key in ("mode", "parallel", "disable_vad"):  # its runtime.json, under our config's names
            if runtime.get(key) is not None:
                config[key] = runtime[key]
        imported: dict[str, Any] = {
            "from": str(run_dir), "harness": "reference", "judges": judges,
            "speed": f"{speed:g}" + ("" if _positive(runtime.get("speed")) else
                                     " (not recorded: the reference plays its audio in real time)"),
        }  # fmt: skip
        timed, t0, imported["latency"], imported["derived"] = _derive(timed, t0, recording, tpath)
        config[IMPORTED] = imported
    # its endpoint, service class and arguments are provenance, never settings: a file never aims a key
    config = as_provenance(config)
    events: list[Any] = [
        RunStarted(run_id=rid, t_ms=0.0, benchmark=bench, model=str(model),
                   provider=ours.get("provider") or "reference", simulator=bool(ours.get("simulator", False)),
                   turn_indices=ours.get("turn_indices") or sorted(seen), config=config,
                   speed=speed, wall_time=t0,  # the run's own start, not the import's
                   benchmark_snapshot=_snapshot(run_dir / BENCHMARK))
    ]
    events += [TurnEnded(run_id=rid, t_ms=t_ms, turn_index=r.turn_index, result=r) for t_ms, r in timed]
    if recording is not None:
        events += conversation_events(*recording, rid, ours.get("conversation"))
    events += judgements
    events += _usage_events(ours.get("usage"), rid, rpath)
    end_t = max((t for t, _ in timed), default=0.0)
    status = ours.get("status") if ours.get("status") in ("completed", "interrupted", "failed") else "completed"
    # the run's own end: as exported, else the last row's wall clock (else the store's started + t / speed)
    ended = parse_ts(ours["ended_at"], str(rpath)) if isinstance(ours.get("ended_at"), str) else max(stamps, default=None)
    events.append(RunEnded(run_id=rid, t_ms=end_t, status=status, reason=f"imported from {run_dir.name}", wall_time=ended))
    for ev in events:
        store.submit(ev)
    await store.flush()
    return rid


def _usage_events(usage: object, run_id: str, where: Path) -> list[UsageReported]:
    """What our export kept of the run's usage reports (`arena_tui.usage`), as they were recorded."""
    if usage is None:
        return []
    if not isinstance(usage, list):
        raise InteropError(f"{where}: field arena_tui.usage: a list of usage reports, not {type(usage).__name__}")
    try:
        return [UsageReported(run_id=run_id, t_ms=u["t_ms"], turn_index=u.get("turn_index"), usage=u["usage"]) for u in usage]
    except (ValidationError, KeyError, TypeError) as e:
        why = e.errors()[0]["msg"] if isinstance(e, ValidationError) else f"missing {e}"
        raise InteropError(f"{where}: field arena_tui.usage: {why}") from None


def _positive(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < float("inf")


def _derive(timed: list[tuple[float, TurnResult]], t0: datetime | None, recording: tuple[Any, int] | None,
            tpath: Path) -> tuple[list[tuple[float, TurnResult]], datetime | None, str, dict[str, Any] | None]:
    """The rows with voice-to-voice, leading silence and overlap derived from the recording
    (`wav_metrics`), when no row carries figures of ours; the run's start moved to the recording's
    (each turn then ends where the transcript's clock says, and no turn before its last speech);
    what `imported.latency` says; what was derived (None: nothing tried)."""
    if recording is None:
        return timed, t0, "none: the folder has no conversation.wav", None
    if any(getattr(r.latencies, ours) is not None for _, r in timed for ours in OUR_LATENCIES.values()):
        return timed, t0, f"the latency fields of {tpath.name} (v2v_ms, leading_silence_ms, pipeline_ttfb_ms)", None
    rec = wav_metrics.read_recording(*recording)
    derived = wav_metrics.derive(rec, [r for _, r in timed])
    if derived.problem or not derived.measures:
        return timed, t0, f"none: {derived.problem or 'no turn could be measured'}", derived.summary(rec)
    rows = wav_metrics.apply([r for _, r in timed], derived)
    ends = {t: max(w.speech[-1].end_ms, *(b.end_ms for b in w.bot_speech)) for t, (w, _, _) in derived.measures.items()}
    if t0 is None:  # rows without a clock: each measured turn ends where its speech does
        moved = sorted(((ends.get(r.turn_index, t), r) for (t, _), r in zip(timed, rows)), key=lambda x: x[0])
    else:
        shift = max(ends[r.turn_index] - t for (t, _), r in zip(timed, rows) if r.turn_index in ends)
        moved = [(t + shift, r) for (t, _), r in zip(timed, rows)]
        t0 -= timedelta(milliseconds=shift)
    n, total = len(derived.measures), sum(1 for _, r in timed if r.turn_index >= 0)
    return moved, t0, f"derived on import from conversation.wav ({n} of {total} turns, our timeline rules)", \
        derived.summary(rec)


def _judgement_events(run_dir: Path, run_id: str) -> tuple[list[Judgement], dict[str, dict[str, Any]]]:
    """Every judge file's verdicts as judgements, and per judge what its summary says of itself
    (judge_name, judge_model, judge_version, judged_at: the reference's run_results columns)."""
    out: list[Judgement] = []
    judges: dict[str, dict[str, Any]] = {}
    revision: dict[int, int] = {}  # several judges' files: later files become later revisions
    seen: set[tuple[int | None, int, str]] = set()
    for path in sorted(run_dir.glob(f"*{JUDGED_SUFFIX}")):
        prefix = path.name[: -len(JUDGED_SUFFIX)]
        summary_path = run_dir / f"{prefix}{SUMMARY_SUFFIX}"
        judge, heuristic = f"reference:{prefix}", prefix == "heuristic"
        doc: dict[str, Any] = {}
        if summary_path.is_file():
            try:
                doc = json.loads(summary_path.read_text(encoding="utf-8"))
                doc = doc if isinstance(doc, dict) else {}
                judge = f"reference:{doc['judge_model']}" if doc.get("judge_model") else judge
                heuristic = bool(doc.get("heuristic", heuristic))
            except json.JSONDecodeError as e:
                raise InteropError(f"{summary_path}: not JSON ({e.msg})") from None
        judges[judge] = {"judge_name": str(doc.get("judge_name") or prefix),
                         **{k: str(doc[k]) for k in ("judge_model", "judge_version", "judged_at") if doc.get(k)}}
        for n, row in read_jsonl(path):
            where = f"{path}:{n}"
            extra = row.get("arena_tui")
            if isinstance(extra, dict) and ("judgement" in extra or "reviews" in extra):  # ours: as recorded
                for j in _our_judgements(extra, where, run_id):
                    key = (j.turn_index, j.revision, j.judge)
                    if j.review is None or key not in seen:  # a person's verdicts go with every judge's file
                        seen.add(key)
                        out.append(j)
                continue
            turn = field(row, "turn", int, where)
            j = _judgement_from_reference(row, where, run_id, judge, heuristic)
            revision[turn] = revision.get(turn, 0) + 1
            out.append(j.model_copy(update={"revision": revision[turn]}))
    return out, judges


def _our_judgements(extra: dict[str, Any], where: str, run_id: str) -> list[Judgement]:
    """An exported row's judge's revision and the person's revisions of its turn (`export`)."""
    raw = ([extra["judgement"]] if "judgement" in extra else []) + list(extra.get("reviews") or [])
    try:
        return [Judgement.model_validate({**j, "run_id": run_id}) for j in raw]
    except (ValidationError, TypeError) as e:
        first = e.errors()[0] if isinstance(e, ValidationError) else {"loc": ("reviews",), "msg": str(e)}
        raise InteropError(f"{where}: field {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def _snapshot(path: Path) -> dict[str, Any] | None:
    """The benchmark snapshot an export carried (so the imported run is judged against what it
    ran, with no data folder); None when the folder has none (a reference run)."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Benchmark.from_snapshot(data).snapshot()
    except json.JSONDecodeError as e:
        raise InteropError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    except (ValidationError, AttributeError, TypeError) as e:
        raise InteropError(f"{path}: not a benchmark snapshot ({str(e).splitlines()[0]})") from None
