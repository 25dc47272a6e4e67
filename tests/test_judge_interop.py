"""Export to the reference run-directory layout and import back (round trip), plus reference-shaped input."""

from __future__ import annotations

import asyncio
import json
import wave
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.cli import main
from arena_tui.spine.events import (
    EMPTY_RESPONSE,
    AudioChunk,
    Latencies,
    RunEnded,
    RunStarted,
    ToolCallRecord,
    TurnEnded,
    TurnResult,
    TurnStarted,
)
from arena_tui.interop import InteropError, export_run, import_run
from arena_tui.interop.layout import folder_run_id
from arena_tui.judge import HeuristicJudge, rejudge_turn
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from arena_tui.spine.benchmark import Benchmark

from .test_judge_worker import RUN, record_run

RATE = 24000


@pytest.fixture(scope="module")
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark(shared_data / "conversation_bench")


def stereo(seconds: float) -> bytes:
    t = np.arange(int(RATE * seconds)) / RATE
    left = (0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype("<i2")
    right = (0.2 * np.sin(2 * np.pi * 660 * t) * 32767).astype("<i2")
    return np.stack([left, right], axis=1).astype("<i2").tobytes()


async def recorded(conv: Benchmark, db: Path) -> bytes:
    await record_run(conv, db, HeuristicJudge())
    pcm = stereo(12.5)
    async with await Store.open(db) as store:
        bus = EventBus()
        store.start_recording(bus)
        half = len(pcm) // 2 // 4 * 4
        bus.publish(AudioChunk(run_id=RUN, t_ms=0, track="conversation", sample_rate=RATE, channels=2, pcm=pcm[:half]))
        bus.publish(AudioChunk(run_id=RUN, t_ms=1, track="conversation", sample_rate=RATE, channels=2,
                               start_ms=half / 4 * 1000 / RATE, pcm=pcm[half:]))
        await store.flush()
        bus.close()
    return pcm


async def test_export_writes_the_reference_layout_and_import_round_trips(conv, tmp_path):
    pcm = await recorded(conv, tmp_path / "a.db")
    async with await Store.open(tmp_path / "a.db") as a:
        out = await export_run(a, RUN, tmp_path / "exp", benchmark=conv)
        results_a = await a.turn_results(RUN)
        latest_a = await a.latest_judgements(RUN)
    assert out.parent.parent.name == "runs" and out.parent.name == "conversation_bench"
    ts, model, uid = out.name.split("_")
    assert len(ts) == 15 and ts[8] == "T" and model == "fake-model" and len(uid) == 8
    names = sorted(p.name for p in out.iterdir())
    assert names == ["arena_tui_benchmark.json", "conversation.wav", "heuristic_analysis.md", "heuristic_judged.jsonl", "heuristic_summary.json",
                     "runtime.json", "transcript.jsonl"]
    rows = [json.loads(x) for x in (out / "transcript.jsonl").read_text().splitlines()]
    assert [r["turn"] for r in rows] == [8, 9, 10, 11]
    r9 = rows[1]
    assert r9["ts"].endswith("Z") and r9["model_name"] == "fake-model" and r9["user_text"] == conv.turn(9).input
    assert r9["tool_calls"] == [{"name": "vote_for_session", "args": {"name": "Jennifer Smith", "session_id": "1"}}]
    assert r9["tool_results"][0]["name"] == "vote_for_session" and r9["reconnection_count"] == 0
    runtime = json.loads((out / "runtime.json").read_text())
    assert {"model_name", "turns", "note", "audio_source"} <= runtime.keys() and runtime["turns"] == 4
    judged = [json.loads(x) for x in (out / "heuristic_judged.jsonl").read_text().splitlines()]
    assert judged[1]["scores"]["tool_use_correct"] is False and "judge_reasoning" in judged[1]
    assert judged[0]["scores"]["tool_use_correct"] is None  # na
    assert "turn_taking_issues" in judged[3]  # 250 ms overlap on turn 11
    summary = json.loads((out / "heuristic_summary.json").read_text())
    assert summary["heuristic"] is True and summary["passes"]["tool_use_correct"] == 1
    assert summary["category_totals"]["tool_use_correct"] == 3 and summary["turns_scored"] == 4
    assert "HEURISTIC" in (out / "heuristic_analysis.md").read_text()
    with wave.open(str(out / "conversation.wav")) as w:
        assert (w.getnchannels(), w.getframerate(), w.getsampwidth()) == (2, RATE, 2)
        assert w.readframes(w.getnframes()) == pcm

    async with await Store.open(tmp_path / "b.db") as b:
        rid = await import_run(b, out)
        assert rid == RUN
        assert await b.turn_results(rid) == results_a
        latest_b = await b.latest_judgements(rid)
        assert {i: j.scores for i, j in latest_b.items()} == {i: j.scores for i, j in latest_a.items()}
        assert all(j.heuristic for j in latest_b.values())
        clip = await b.conversation_audio(rid)
        assert clip is not None and clip.channels == 2 and clip.pcm == pcm
        run = await b.get_run(rid)
        assert run.benchmark == "conversation_bench" and run.status == "completed"
        with pytest.raises(InteropError, match="already in the database"):
            await import_run(b, out)


async def test_import_reference_shaped_directory(conv, tmp_path):
    d = tmp_path / "runs" / "conversation_bench" / "20250101T120000_gpt-realtime_abcdef12"
    d.mkdir(parents=True)
    rows = [
        {"ts": "2025-01-01T12:00:05.000Z", "turn": 0, "model_name": "gpt-realtime", "user_text": "hi",
         "assistant_text": "Hello!", "tool_calls": [], "tool_results": [], "tokens": {"input": 5},
         "ttfb_ms": 700, "latency_ms": 1100, "reconnection_count": 0},
        {"ts": "2025-01-01T12:00:01.000Z", "turn": 2, "model_name": "gpt-realtime", "user_text": "vote",
         "assistant_text": EMPTY_RESPONSE, "tool_calls": [{"name": "vote_for_session", "args": {"session_id": "1"}}],
         "tool_results": [{"name": "vote_for_session", "response": {"status": "success"}}], "tokens": {},
         "ttfb_ms": None, "latency_ms": None, "reconnection_count": 1},
    ]
    (d / "transcript.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (d / "runtime.json").write_text(json.dumps({"model_name": "gpt-realtime", "turns": 2, "note": "", "audio_source": "tts"}))
    judged = [{**rows[0], "scores": {"kb_grounding": True, "tool_use_correct": None, "turn_taking": True},
               "judge_reasoning": "fine"},
              {**rows[1], "scores": {"kb_grounding": False, "tool_use_correct": False, "turn_taking": False},
               "judge_reasoning": "empty", "turn_taking_issues": ["empty"]}]
    (d / "claude_judged.jsonl").write_text("\n".join(json.dumps(r) for r in judged) + "\n")
    (d / "claude_summary.json").write_text(json.dumps({
        "judge_model": "claude-opus-4-5", "passes": {},
        "function_tracking": {"vote_for_session_1": {"expected_turn": 2, "actual_turn": 2, "status": "on_time"}},
    }))
    async with await Store.open(tmp_path / "c.db") as store:
        rid = await import_run(store, d)
        assert rid == folder_run_id(d.name) and len(rid) == 32  # one id form, the same for the same folder
        results = await store.turn_results(rid)
        assert [r.turn_index for r in results] == [0, 2]
        r2 = results[1]
        assert r2.status == "no_response" and r2.sentinel == EMPTY_RESPONSE and r2.reconnects == 1
        assert r2.tool_calls[0].response == {"status": "success"}
        lat0 = results[0].latencies
        assert lat0.provider_ttfb_ms == 700  # the provider's TTFB, labelled as such
        # latency_ms is the reference's turn duration: none of our latency figures
        assert lat0.pipeline_ttfb_ms is None and lat0.voice_to_voice_ms is None and lat0.leading_silence_ms is None
        latest = await store.latest_judgements(rid)
        assert latest[2].judge == "reference:claude-opus-4-5" and latest[2].scores["tool_use_correct"].verdict == "fail"
        assert latest[0].scores["tool_use_correct"].verdict == "na"
        run = await store.get_run(rid)
        assert run.model == "gpt-realtime" and run.provider == "reference"
        assert run.config["turn_duration_ms"] == {"0": 1100}  # kept, under its own name
        back = await export_run(store, rid, tmp_path / "again", benchmark=conv)
    again = {r["turn"]: r for r in map(json.loads, (back / "transcript.jsonl").read_text().splitlines())}
    assert (again[0]["ttfb_ms"], again[0]["latency_ms"], again[0]["pipeline_ttfb_ms"]) == (700, 1100, None)
    assert (again[2]["ttfb_ms"], again[2]["latency_ms"], again[2]["v2v_ms"]) == (None, None, None)


def test_bad_input_names_file_line_and_field_and_records_nothing(tmp_path, capsys):
    d = tmp_path / "runs" / "event_bench" / "20250101T120000_m_00000000"
    d.mkdir(parents=True)
    t = d / "transcript.jsonl"
    t.write_text(json.dumps({"turn": 0, "assistant_text": "ok"}) + "\n" + "{oops\n")
    db = tmp_path / "d.db"
    assert main(["--db", str(db), "import", str(d)]) == 2
    assert f"{t}:2: not JSON" in capsys.readouterr().err
    t.write_text(json.dumps({"assistant_text": "ok"}) + "\n")
    assert main(["--db", str(db), "import", str(d)]) == 2
    assert f"{t}:1: missing field 'turn'" in capsys.readouterr().err
    t.write_text(json.dumps({"turn": "zero"}) + "\n")
    assert main(["--db", str(db), "import", str(d)]) == 2
    assert "field 'turn' should be int" in capsys.readouterr().err
    t.write_text(json.dumps({"turn": 0, "latency_ms": "1.2 s"}) + "\n")
    assert main(["--db", str(db), "import", str(d)]) == 2
    assert f"{t}:1: field 'latency_ms' should be number, got '1.2 s'" in capsys.readouterr().err
    t.write_text(json.dumps({"turn": 0, "ttfb_ms": True}) + "\n")
    assert main(["--db", str(db), "import", str(d)]) == 2
    assert "field 'ttfb_ms' should be number, got True" in capsys.readouterr().err
    assert main(["--db", str(db), "import", str(tmp_path)]) == 2
    assert "no transcript.jsonl" in capsys.readouterr().err

    async def runs() -> list:
        async with await Store.open(db) as store:
            return await store.list_runs()

    assert asyncio.run(runs()) == []
    assert main(["--db", str(db), "export", "nope", str(tmp_path / "x")]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_export_and_import_commands(conv, tmp_path, shared_data, capsys):
    asyncio.run(recorded(conv, tmp_path / "e.db"))
    assert main(["--db", str(tmp_path / "e.db"), "--data", str(shared_data), "export", RUN, str(tmp_path / "o")]) == 0
    out = Path(capsys.readouterr().out.strip())
    assert (out / "transcript.jsonl").is_file() and (out / "heuristic_summary.json").is_file()
    assert main(["--db", str(tmp_path / "f.db"), "import", str(out), "--run-id", "copy1"]) == 0
    assert "imported as run copy1" in capsys.readouterr().out
    # the export carried the benchmark snapshot and the import restored it: the copy is judged
    # again with no data folder anywhere (it said: "benchmark … of this run cannot be loaded")
    assert (out / "arena_tui_benchmark.json").is_file()
    assert main(["--db", str(tmp_path / "f.db"), "--data", str(tmp_path / "nowhere"), "judge", "copy1",
                 "--judge", "heuristic"]) == 0, capsys.readouterr().err
    assert "judged by heuristic" in capsys.readouterr().out


SPEED = 4.0


async def record_timed_run(conv: Benchmark, db: Path) -> dict[int, tuple[float, float]]:
    """A run at --speed 4 with turn_started/turn_ended on its (audio) timeline, early, late and wrong calls."""
    def call(cid: str, turn: int, **override) -> ToolCallRecord:
        exp = conv.turn(turn).expected_calls[0]
        return ToolCallRecord(call_id=cid, name=exp.name, args={**exp.args, **override}, status="recorded")

    lat = Latencies(pipeline_ttfb_ms=950.0, voice_to_voice_ms=1210.0, provider_ttfb_ms=700.4, leading_silence_ms=160.0)
    calls = {10: [call("c10", 10)], 11: [call("c11", 11, suggestion_text="something else")],
             12: [call("c12", 13)], 13: [], 15: [], 16: [call("c16", 15)]}
    spans = {10: (2000.0, 10000.0), 11: (10000.0, 16400.0), 12: (16400.0, 20000.0), 13: (20000.0, 26000.0),
             15: (26000.0, 30000.0), 16: (30000.0, 34000.0)}
    async with await Store.open(db) as store:
        bus = EventBus()
        store.start_recording(bus)
        bus.publish(RunStarted(run_id=RUN, t_ms=0, benchmark=conv.name, model="fake-model", provider="simulator",
                               simulator=True, turn_indices=sorted(calls), config={"speed": SPEED}))
        for i, (t0, t1) in spans.items():
            bus.publish(TurnStarted(run_id=RUN, t_ms=t0, turn_index=i))
            if i == 13:  # a retried turn: its duration runs from the first start
                bus.publish(TurnStarted(run_id=RUN, t_ms=t0 + 3000, turn_index=i, attempt=1))
            r = TurnResult(turn_index=i, status="ok", user_text=conv.turn(i).input, assistant_text="ok",
                           tool_calls=calls[i], latencies=lat)
            bus.publish(TurnEnded(run_id=RUN, t_ms=t1, turn_index=i, result=r))
        bus.publish(RunEnded(run_id=RUN, t_ms=35000.0, status="completed"))
        await store.flush()
        await rejudge_turn(store, RUN, None, HeuristicJudge(), benchmark=conv)
        bus.close()
    return spans


def rows_of(path: Path) -> dict[int, dict]:
    return {r["turn"]: r for r in map(json.loads, path.read_text().splitlines())}


async def test_export_uses_the_reference_meaning_of_latency_and_function_tracking(conv, tmp_path):
    spans = await record_timed_run(conv, tmp_path / "t.db")
    async with await Store.open(tmp_path / "t.db") as a:
        out = await export_run(a, RUN, tmp_path / "exp", benchmark=conv)
        started = (await a.get_run(RUN)).started_at
        results_a = await a.turn_results(RUN)
    rows = rows_of(out / "transcript.jsonl")
    for i, (t0, t1) in spans.items():
        row = rows[i]
        assert row["latency_ms"] == round((t1 - t0) / SPEED), i  # wall-clock turn duration
        assert row["ttfb_ms"] == 700  # the provider's TTFB, an int as the reference writes it
        assert (row["pipeline_ttfb_ms"], row["v2v_ms"], row["leading_silence_ms"]) == (950.0, 1210.0, 160.0)
        assert datetime.fromisoformat(row["ts"]) == started + timedelta(milliseconds=round(t1 / SPEED))
    assert rows[13]["latency_ms"] == 1500  # from the first start, not the retry's
    judged = rows_of(out / "heuristic_judged.jsonl")
    assert judged[10]["latency_ms"] == 2000 and judged[10]["v2v_ms"] == 1210.0
    summary = json.loads((out / "heuristic_summary.json").read_text())
    assert summary["function_tracking"] == {
        "submit_session_suggestion_1": {"expected_turn": 10, "actual_turn": 10, "status": "on_time"},
        "submit_session_suggestion_2": {"expected_turn": 11, "actual_turn": None, "status": "missing"},  # wrong args
        "submit_dietary_request_1": {"expected_turn": 13, "actual_turn": 12, "status": "early"},
        "request_tech_support_1": {"expected_turn": 15, "actual_turn": 16, "status": "late"},
    }
    ours = {(t["expected_turn"], t["status"]) for t in summary["arena_tui"]["tracking"]}
    assert ours == {(10, "matched"), (11, "wrong"), (13, "early"), (15, "late")}  # our statuses kept beside

    async with await Store.open(tmp_path / "u.db") as b:  # round trip: nothing changes meaning
        assert await import_run(b, out) == RUN
        assert await b.turn_results(RUN) == results_a
        assert (await b.get_run(RUN)).config["turn_duration_ms"] == {str(i): rows[i]["latency_ms"] for i in spans}
        back = await export_run(b, RUN, tmp_path / "back", benchmark=conv)
    again = rows_of(back / "transcript.jsonl")
    keys = ("latency_ms", "ttfb_ms", "pipeline_ttfb_ms", "v2v_ms", "leading_silence_ms")
    assert {i: {k: r[k] for k in keys} for i, r in again.items()} == {i: {k: r[k] for k in keys} for i, r in rows.items()}

    def offsets(rs: dict[int, dict]) -> dict[int, timedelta]:  # the imported run starts when it is imported
        ts = {i: datetime.fromisoformat(r["ts"]) for i, r in rs.items()}
        return {i: t - min(ts.values()) for i, t in ts.items()}

    assert offsets(again) == offsets(rows)
    assert json.loads((back / "heuristic_summary.json").read_text())["function_tracking"] == summary["function_tracking"]


async def test_a_stripped_export_imports_our_figures_from_their_extra_fields(conv, tmp_path):
    """Rows without our `arena_tui` key (e.g. rewritten by another tool) still map field by field."""
    await record_timed_run(conv, tmp_path / "s.db")
    async with await Store.open(tmp_path / "s.db") as a:
        out = await export_run(a, RUN, tmp_path / "exp", benchmark=conv)
    t = out / "transcript.jsonl"
    rows = [{k: v for k, v in json.loads(x).items() if k != "arena_tui"} for x in t.read_text().splitlines()]
    t.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "runtime.json").write_text(json.dumps({"model_name": "fake-model", "turns": len(rows)}))
    async with await Store.open(tmp_path / "v.db") as b:
        rid = await import_run(b, out, run_id="stripped")
        lat = (await b.turn_results(rid))[0].latencies
    assert (lat.provider_ttfb_ms, lat.pipeline_ttfb_ms, lat.voice_to_voice_ms, lat.leading_silence_ms) == (
        700, 950.0, 1210.0, 160.0)
