"""The smaller things a user reads on the command line, each said whole and once: a search line names
the simulator and how the run's input differed; a search snippet never prints raw cause names again;
the headless tools column names each tool whole; the `--faults` error lists every item it takes; a
duplex turn's interruption and the judge's "no overlap" say which measure each is; a withdrawal
needs no reason; the report and its CSVs carry each run's duration; `import` into the database a
run came from says how to delete it. Real Store, real commands."""

from __future__ import annotations

import asyncio
import csv
import io
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.interop import export_run
from arena_tui.judge.rubric import turn_taking
from arena_tui.orchestration.headless import Progress
from arena_tui.run_view import TurnRow
from arena_tui.screens.turn_detail import flags_text
from arena_tui.spine.events import DuplexOutcome, Interval, Latencies, ToolCallRecord, TurnResult
from arena_tui.spine.faults import FaultSpecError, parse_faults
from arena_tui.spine.times import duration_text
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from tests.snapshots.fixture_run import load_fixture_db

from .counting_runs import ended, judged, record, resumed_run, started
from .test_review import passing_run


def test_a_search_line_names_the_simulator_and_the_runs_variant(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    run = [started("tel1", [0, 1], model="sim", simulator=True, config={"condition": "telephony", "effort": "high"}),
           ended("tel1", 0), judged("tel1", 0), ended("tel1", 1), judged("tel1", 1)]
    asyncio.run(record(db, run))
    assert main(["--db", str(db), "search", "reply"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("tel1")]
    assert len(lines) == 2 and all("sim [simulator] (telephony, effort=high) · demo_bench" in ln for ln in lines), lines


def test_a_match_in_the_causes_prints_them_once_as_they_read(tmp_path: Path, capsys) -> None:
    """The demo recording's turn 0 fails on `barge_in` and `overlap`: found by "barge", its line says the
    causes once, readable, and the snippet under it is what was answered, not the index's raw names."""
    db = tmp_path / "arena.db"
    asyncio.run(load_fixture_db(db))
    assert main(["--db", str(db), "search", "barge"]) == 0
    out = capsys.readouterr().out.splitlines()
    line, snippet = out[0], out[1]
    assert "matched in: causes" in line and line.endswith("causes: barge in, overlap"), line
    assert "barge_in" not in snippet and "barge" not in snippet.casefold(), snippet
    assert snippet.strip().startswith("Yes, on Saturdays"), snippet


def test_the_headless_tools_column_names_each_tool_whole() -> None:
    out = io.StringIO()
    progress = Progress(2, out)
    calls = [ToolCallRecord(call_id="c1", name="check_repair_slots", args={}, status="matched"),
             ToolCallRecord(call_id="c2", name="book_repair", args={}, status="wrong_args")]
    progress.results = [TurnResult(turn_index=0, status="ok", user_text="u", assistant_text="a", tool_calls=calls,
                                   latencies=Latencies(voice_to_voice_ms=900.0)),
                        TurnResult(turn_index=1, status="ok", user_text="u", assistant_text="a",
                                   latencies=Latencies(voice_to_voice_ms=800.0))]
    progress.summary(out, None)
    table = out.getvalue().splitlines()
    head = next(ln for ln in table if ln.lstrip().startswith("turn"))
    row = next(ln for ln in table if ln.lstrip().startswith("0 "))
    assert "✓check_repair_slots ✗book_repair" in row, row
    assert row.index("✓check_repair_slots") == head.index("tools")  # the column starts where its header does
    assert head.index("flags") > row.index("✗book_repair") + len("✗book_repair")  # and is as wide as its longest


def test_the_faults_error_lists_every_item_it_takes(tmp_path: Path, capsys) -> None:
    with pytest.raises(FaultSpecError) as e:
        parse_faults("1:bogus")
    for item in ("no_response", "yield", "expire=SECONDS", "backchannel=yield|ignore", "side_speech=answer|ignore"):
        assert item in str(e.value), str(e.value)
    code = main(["--db", str(tmp_path / "a.db"), "run", "demo_bench", "--model", "sim", "--faults", "1:bogus",
                 "--headless"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "backchannel=yield|ignore" in err and "side_speech" in err, err


#: how a duplex turn's interruption reads (`compare.duplex.CUE_OVER_REPLY`): the measure it is
CUE_OVER_REPLY = "user spoke over the reply (a duplex cue: not a turn-taking overlap)"


def duplex_turn(**kw) -> TurnResult:
    """A duplex turn as the engine records one: a backchannel cue over the reply, the bot talking on;
    the live overlap tracker marked the reply interrupted, the turn's own speech never overlapped."""
    cue = DuplexOutcome(index=0, kind="backchannel", played=Interval(start_ms=1500.0, end_ms=1900.0), bot_speaking=True,
                        yielded=False, answered=False)
    return TurnResult(turn_index=0, status="ok", user_text="u", assistant_text="a", interrupted=True, overlap_ms=0.0,
                      duplex=[cue], latencies=Latencies(voice_to_voice_ms=900.0, pipeline_ttfb_ms=800.0), **kw)


def test_a_duplex_turns_interruption_and_the_judges_no_overlap_say_which_measure_each_is() -> None:
    res = duplex_turn()
    verdict = turn_taking(res)
    assert verdict.verdict == "pass"
    assert "duplex" in verdict.reasoning and "turn's own speech" in verdict.reasoning, verdict.reasoning
    detail = flags_text(TurnRow(0, result=res)).plain  # the turn detail's turn-taking line
    assert CUE_OVER_REPLY in detail and "interrupted" not in detail, detail
    out = io.StringIO()
    progress = Progress(1, out)
    progress.results = [res]
    progress.summary(out, None)
    row = next(ln for ln in out.getvalue().splitlines() if ln.lstrip().startswith("0 "))
    assert CUE_OVER_REPLY in row and "interrupted" not in row, row
    plain = turn_taking(duplex_turn().model_copy(update={"duplex": None}))
    assert plain.reasoning == "timing present, no overlap, no reconnect"  # a turn without cues reads as it always did


def test_a_withdrawal_needs_no_reason(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    asyncio.run(record(db, passing_run("r1")))
    base = ["--db", str(db), "review", "r1", "--turn", "1"]
    assert main([*base, "kb_grounding=fail", "--by", "ann"]) == 2  # a verdict still needs its reason
    assert "--reason" in capsys.readouterr().err
    assert main([*base, "kb_grounding=fail", "--reason", "the price is wrong", "--by", "ann"]) == 0
    capsys.readouterr()
    assert main([*base, "--withdraw", "--by", "ann"]) == 0
    assert "withdrew the person's verdicts (withdrawn (no reason given))" in capsys.readouterr().out


def test_the_report_and_its_csvs_carry_each_runs_duration(tmp_path: Path, capsys) -> None:
    """A resumed run ran 0:37, sat interrupted 10 minutes, then ran 1:50: 02:27 in the runs list, and
    the same in run_results.csv (seconds), model_summary.csv (mean over runs) and summary.md."""
    db = tmp_path / "arena.db"
    asyncio.run(record(db, resumed_run("res1")))
    assert main(["--db", str(db), "runs"]) == 0
    listed = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("res1"))
    assert " 02:27 " in f"{listed} "
    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "res1", str(out)]) == 0
    with (out / "run_results.csv").open(newline="") as f:
        [row] = list(csv.DictReader(f))
    assert float(row["duration_s"]) == 147.0
    with (out / "model_summary.csv").open(newline="") as f:
        [summary] = list(csv.DictReader(f))
    assert float(summary["duration_s_mean"]) == 147.0
    runs_table = (out / "summary.md").read_text().split("## Runs", 1)[1]
    assert "duration" in runs_table.splitlines()[2] and f"| {duration_text(147_000)} |" in runs_table, runs_table[:600]
    assert duration_text(147_000) == "02:27"


def test_importing_a_run_into_the_database_it_came_from_says_how_to_delete_it(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    asyncio.run(record(db, passing_run("r1")))

    async def export() -> Path:
        async with await Store.open(db) as store:
            return await export_run(store, "r1", tmp_path / "exp", benchmark=load_benchmark("demo_bench"))

    folder = asyncio.run(export())
    assert main(["--db", str(db), "import", str(folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"`arena-tui --db {db} runs --delete r1`" in err and "--run-id" in err, err
