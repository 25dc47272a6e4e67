"""A cascade's stages (STT final, turn end, LLM first token, TTS first audio, on our clock) reach
the headless summary and the report's own tables, and a sped-up run's are labelled or left out.

Two real cascade runs against the parts' local fakes (`--fake`), recorded headless: one at speed 1,
one sped up. Every expected figure is computed here from the `turn_ended` events the store kept,
with the standard library (not with the code under test).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import statistics
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.store import Store

CASCADE = "cascade:openai-stt+gpt-4.1-mini+openai-tts"
STAGES = ("stt", "turn", "llm", "tts")
NAMES = {"stt": "STT", "turn": "turn", "llm": "LLM", "tts": "TTS"}
FAST = 3.0


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default), by hand."""
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def ms(v: float) -> str:
    return f"{v:,.0f} ms"


async def stored(db: Path) -> dict[float, list]:
    """speed -> the run's stored turn results (from its turn_ended events, in turn order)."""
    out = {}
    async with await Store.open(db) as store:
        for run in await store.list_runs():
            events = [ev for _, ev in await store.events(run.run_id, kinds=["turn_ended"])]
            out[run.speed] = sorted((ev.result for ev in events if ev.result.turn_index >= 0),
                                    key=lambda r: r.turn_index)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict[float, str], dict[float, list]]:
    """(db, speed -> headless stdout, speed -> stored turn results) of the two runs."""
    db = tmp_path_factory.mktemp("stages") / "arena.db"
    printed = {}
    for speed, turns in ((1.0, "0,1"), (FAST, "1")):
        buf = io.StringIO()
        with redirect_stdout(buf):
            code = main(["--db", str(db), "run", "demo_bench", "--model", CASCADE, "--fake", "--fake-timing", "instant",
                         "--turns", turns, "--speed", f"{speed:g}", "--no-greeting", "--headless", "--judge", "heuristic"])
        assert code == 0, buf.getvalue()
        printed[speed] = buf.getvalue()
    return db, printed, asyncio.run(stored(db))


def expected_line(results: list, caveat: str = "") -> str:
    stages = [r.latencies.stages() for r in results]
    assert all(s is not None for s in stages), [r.latencies for r in results]
    figures = ", ".join(f"{NAMES[k]} {ms(statistics.median([s[k] for s in stages]))}" for k in STAGES)
    v2v = statistics.median([r.latencies.voice_to_voice_ms for r in results])
    return (f"stages p50 on our clock ({len(results)} turn(s){caveat}): {figures}; voice-to-voice {ms(v2v)}")


def test_headless_summary_prints_the_stage_p50s_on_our_clock(runs) -> None:
    _, printed, results = runs
    assert [r.status for r in results[1.0]] == ["ok", "ok"]
    assert expected_line(results[1.0]) in printed[1.0].splitlines(), printed[1.0]


def test_a_sped_up_runs_stage_line_says_it_is_not_comparable(runs) -> None:
    _, printed, results = runs
    line = expected_line(results[FAST], f", latency at {FAST:g}× — not comparable")
    assert line in printed[FAST].splitlines(), printed[FAST]


def test_a_run_without_stages_prints_no_stage_line(tmp_path, capsys) -> None:
    code = main(["--db", str(tmp_path / "x.db"), "run", "demo_bench", "--model", "sim", "--speed", "20", "--turns", "1",
                 "--no-greeting", "--headless", "--judge", "none"])
    out = capsys.readouterr().out
    assert code == 0 and "median v2v" in out and "stages p50" not in out, out


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_report_carries_the_stages_in_our_columns(runs, tmp_path) -> None:
    db, _, results = runs
    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "all", str(out)]) == 0
    timed = results[1.0]  # the sped-up run's latency is left out of every comparison
    by_speed = {float(r["speed"]): r for r in read_csv(out / "run_results.csv")}
    fast = by_speed[FAST]
    assert fast["latency_excluded"] == f"speed {FAST:g}×" and fast["stage_turns"] == "0" and fast["stage_stt_ms_p50"] == ""
    for row in (by_speed[1.0], next(r for r in read_csv(out / "model_summary.csv") if r["benchmark_name"] == "demo_bench")):
        assert row["stage_turns"] == str(len(timed))
        for k in STAGES:
            values = [r.latencies.stages()[k] for r in timed]
            assert float(row[f"stage_{k}_ms_mean"]) == pytest.approx(statistics.mean(values)), k
            assert float(row[f"stage_{k}_ms_p50"]) == pytest.approx(statistics.median(values)), k
            assert float(row[f"stage_{k}_ms_p95"]) == pytest.approx(percentile(values, 95)), k
    agg = json.loads((out / "aggregates.json").read_text())["demo_bench"]
    (mine,) = agg.values()
    assert mine["arena_tui"]["stages_ms"] == {k: pytest.approx([r.latencies.stages()[k] for r in timed]) for k in STAGES}
    md = (out / "summary.md").read_text()
    p50s = "/".join(f"{statistics.median([r.latencies.stages()[k] for r in timed]):.0f}" for k in STAGES)
    assert "stages p50 stt/turn/llm/tts" in md and f"| {p50s} ms |" in md, md
