"""`arena-tui report`: the files, their columns and values, run selection, and bad targets."""

from __future__ import annotations

import asyncio
import csv
import fnmatch
import json
import re
from pathlib import Path

import pytest

from arena_tui import cli
from arena_tui.compare.report import FILES
from arena_tui.compare.selection import select_runs
from arena_tui.store import Store

from .compare_runs import record_scenario, write_data

REFERENCE_METRICS = ["turn_taking", "tool_use_correct", "instruction_following", "kb_grounding",
                     "ambiguity_handling", "state_tracking"]  # fmt: skip

GOLDEN = Path(__file__).parent / "golden"
# The reference's columns, by file, enumerated by hand from Design-Arena/audio-agent-bench
# scripts/compare_model_runs.py and scripts/analyze_consistency_runs.py (not from our code).
REFERENCE = json.loads((GOLDEN / "reference_columns.json").read_text())
# Every report CSV's whole header (the reference's columns, then ours). A deliberate column change
# rewrites it: `.venv/bin/python -m tests.test_compare_report` (then review the diff).
COLUMNS = GOLDEN / "report_columns.json"


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "arena.db"
    asyncio.run(record_scenario(path))
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """mini_bench as a benchmark folder, so the command finds its dimensions and categories."""
    return write_data(tmp_path / "data")


def test_report_files_and_columns(db: Path, data: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "report"
    rc = cli.main(["--db", str(db), "--data", str(data), "report", "mini_bench", "r4", str(out)])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert "skipped r7: still recording" in printed
    assert "benchmark data not found for other_bench" in printed

    cols, runs = read_csv(out / "run_results.csv")
    by_id = {r["run_id"]: r for r in runs}
    assert sorted(by_id) == ["r1", "r2", "r3", "r4", "r5", "r6"]
    r2 = by_id["r2"]
    # turn 2's judge failed (the reference's incomplete row), turn 3 never played: neither is scored
    assert (r2["turns_scored"], r2["pass_rows"], r2["fail_rows"], r2["incomplete_rows"]) == ("2", "1", "1", "1")
    assert float(r2["pass_row_rate"]) == 0.5 and r2["empty_response_count"] == "1"
    assert (r2["model_name"], r2["run_index"], r2["status"]) == ("gpt-realtime", "2", "interrupted")  # from 1
    assert (r2["judge_name"], r2["judge_model"], r2["judge"], r2["runtime_mode"]) == (
        "openai", "gpt-5-mini", "openai:gpt-5-mini", "")  # a sequential run's mode is empty, as theirs
    assert (r2["turns_not_played"], r2["turns_judge_error"], r2["turns_interrupted"]) == ("1", "1", "0")
    assert r2["latency_ms_meaning"].startswith("turn duration")
    assert float(r2["voice_to_voice_ms_p50"]) == 1750.0  # 1000 and 2500
    r3 = by_id["r3"]
    assert (r3["latency_excluded"], r3["voice_to_voice_ms_p50"], r3["speed"]) == ("speed 20×", "", "20.0")
    assert r3["model_ended_session_count"] == "1"
    assert by_id["r5"]["model_name"] == "sim [simulator]" and by_id["r5"]["simulator"] == "True"
    assert by_id["r6"]["judge_name"] == "heuristic" and by_id["r6"]["heuristic_judge"] == "True"
    # ambiguity_handling is scored nowhere: still its five columns, 0 of 0 and no rate
    assert [r2[f"ambiguity_handling_{c}"] for c in ("passes", "applicable", "pass_rate")] == ["0", "0", ""]

    cols, metrics = read_csv(out / "metric_summary.csv")
    row = next(m for m in metrics if (m["model_name"], m["benchmark_name"], m["metric"])
               == ("gpt-realtime", "mini_bench", "state_tracking"))  # fmt: skip
    # per run 1/2, none scored (R2's turn 2 judge failed, turn 3 never played), 1/2 -> mean 1/2; pooled 2/4
    assert float(row["mean_pass_rate"]) == pytest.approx(1 / 2, abs=1e-5)
    assert float(row["std_pass_rate"]) == 0.0
    assert (row["pooled_passes"], row["pooled_applicable"], row["runs"]) == ("2", "4", "3")
    strict = next(m for m in metrics if (m["model_name"], m["benchmark_name"], m["metric"])
                  == ("gpt-realtime", "all", "turn_pass_strict"))  # fmt: skip
    assert (strict["pooled_passes"], strict["pooled_applicable"]) == ("8", "11")
    sim = [m["metric"] for m in metrics if m["model_name"] == "sim [simulator]"]
    assert sim[:6] == REFERENCE_METRICS  # always the six, whatever was scored

    cols, models = read_csv(out / "model_summary.csv")
    gm = next(m for m in models if (m["model_name"], m["benchmark_name"]) == ("gpt-realtime", "mini_bench"))
    assert float(gm["pass_rows_mean"]) == pytest.approx(7 / 3, abs=1e-5)
    assert (gm["turn_pass_strict_passes"], gm["turn_pass_strict_applicable"]) == ("7", "10")
    assert (gm["turns_not_played_total"], gm["turns_judge_error_total"]) == ("1", "1")
    assert (float(gm["voice_to_voice_ms_p50"]), gm["latency_runs"]) == (1200.0, "2")
    assert gm["always_failing_turns"] == "2"

    _, turns = read_csv(out / "consistency_turn_summary_by_model.csv")
    t1 = next(t for t in turns if (t["model_name"], t["turn"]) == ("gpt-realtime", "1"))
    assert (t1["overall_status_pattern"], t1["metric_flips"], t1["unstable_overall"]) == (
        "1:pass|2:fail|3:pass", "tool_use_correct", "True")  # fmt: skip
    _, flips = read_csv(out / "consistency_metric_flips_by_model.csv")
    assert [(f["model_name"], f["turn"], f["metric"], f["pattern"]) for f in flips] == [
        ("gpt-realtime", "1", "tool_use_correct", "1:pass|2:fail|3:pass")
    ]

    md = (out / "summary.md").read_text()
    assert "## mini_bench" in md and "## All benchmarks (pooled)" in md
    assert "70.0% [40–89] (7/10)" in md  # strict, Wilson bounds of 7/10
    assert "| strict pass | tool+IF+KB pass |" in md and "1 not played · 1 judge error" in md
    assert "latency excluded for r3 (speed 20×)" in md
    assert "always failing: 2" in md


def test_report_html_is_self_contained(db: Path, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert cli.main(["--db", str(db), "--data", str(data), "report", "all", str(out)]) == 0
    html = (out / "report.html").read_text()
    assert html.count("<svg") >= 3  # per benchmark: dimensions, categories, latency
    for fetched in ("<script", "<link", "src=", "url(", "@import", "https://"):
        assert fetched not in html
    assert re.findall(r"http://[^\"']+", html) == ["http://www.w3.org/2000/svg"] * html.count("<svg")
    assert "Strict pass per category — mini_bench" in html
    assert "Labelled rows are not real model scores" in html and "sim [simulator]" in html
    assert "1,200&nbsp;ms<br><small>[" in html  # v2v p50 of gpt-realtime on mini_bench, over its bootstrap interval


async def test_select_runs(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    await record_scenario(db)
    async with await Store.open(db) as store:
        sel = await select_runs(store, ["r3", "other_bench", "r1"])
        assert sel.run_ids == ["r1", "r3", "r4"] and sel.skipped == {}
        sel = await select_runs(store, ["mini_bench"])
        assert sel.run_ids == ["r1", "r2", "r3", "r5", "r6"] and sel.skipped == {"r7": "still recording"}
        with pytest.raises(LookupError, match="ambiguous"):
            await select_runs(store, ["r"])
        with pytest.raises(LookupError, match="no run or benchmark 'nope'"):
            await select_runs(store, ["nope"])


def test_bad_targets_are_one_line(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["--db", str(db), "report", "nope", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no run or benchmark 'nope'" in err and str(db) in err
    assert not (tmp_path / "x").exists()
    assert cli.main(["--db", str(db), "report", "r7", str(tmp_path / "y")]) == 2
    assert "no finished runs to report (r7: still recording)" in capsys.readouterr().err


async def test_selection_takes_an_expander(tmp_path: Path) -> None:
    """How a campaign plugs in: its id expands to its runs before ids, benchmarks and prefixes."""
    db = tmp_path / "arena.db"
    await record_scenario(db)

    async def campaigns(target: str) -> list[str] | None:
        return {"camp-1": ["r5", "r1"], "camp-bad": ["r1", "gone"]}.get(target)

    async with await Store.open(db) as store:
        sel = await select_runs(store, ["camp-1"], expand=campaigns)
        assert sel.run_ids == ["r1", "r5"] and sel.description == "camp-1"
        assert (await select_runs(store, ["r4"], expand=campaigns)).run_ids == ["r4"]
        with pytest.raises(LookupError, match="'camp-bad' names runs that are not stored: gone"):
            await select_runs(store, ["camp-bad"], expand=campaigns)


def test_report_into_a_file_is_one_line(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    target = tmp_path / "taken"
    target.write_text("not a folder")
    assert cli.main(["--db", str(db), "report", "r1", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"arena-tui: {target}: exists and is not a folder"
    assert target.read_text() == "not a folder"


def headers(out: Path) -> dict[str, list[str]]:
    return {p.name: read_csv(p)[0] for p in sorted(out.glob("*.csv"))}


def test_report_columns_are_the_reference_then_ours_whatever_the_data(db: Path, data: Path, tmp_path: Path) -> None:
    """Golden lists: each file starts with the reference's columns exactly, in its order (74 in
    run_results, 63 in model_summary, 9 in metric_summary), and the whole header never depends on
    the data: two selections as different as can be write the same columns."""
    assert (len(REFERENCE["run_results.csv"]), len(REFERENCE["model_summary.csv"]),
            len(REFERENCE["metric_summary.csv"])) == (74, 63, 9)  # fmt: skip
    wide, narrow = tmp_path / "wide", tmp_path / "narrow"
    assert cli.main(["--db", str(db), "--data", str(data), "report", "all", str(wide)]) == 0
    assert cli.main(["--db", str(db), "report", "r4", str(narrow)]) == 0  # one run, no benchmark data
    got = headers(wide)
    assert got == headers(narrow)
    assert all(len(set(cols)) == len(cols) for cols in got.values())  # no column twice
    for name, reference in REFERENCE.items():
        assert got[name][: len(reference)] == reference, name
    assert got == json.loads(COLUMNS.read_text())


def test_docs_name_every_column() -> None:
    """docs/reports.md lists every column of every CSV (its meaning and the reference's name):
    each is named there, literally or by a pattern (`<metric>`, `<stat>`, `*`); a model_summary
    `<c>_mean` / `<c>_std` is the run_results column `<c>` averaged."""
    doc = (Path(__file__).parents[1] / "docs" / "reports.md").read_text(encoding="utf-8")
    doc = re.sub(r"```.*?```", "", doc, flags=re.S)  # the fenced examples
    patterns = set()
    for token in re.findall(r"`([^`]+)`", doc):
        for m in REFERENCE_METRICS:
            for stat in ("mean", "p50", "p90", "p95", "p99"):
                patterns.add(token.replace("<metric>", m).replace("<stat>", stat))
    columns = json.loads(COLUMNS.read_text())

    def named(col: str) -> bool:
        return any(fnmatch.fnmatchcase(col, p) for p in patterns)

    missing = sorted({c for cols in columns.values() for c in cols if not named(c)
                      and not (c.rsplit("_", 1)[-1] in ("mean", "std") and named(c.rsplit("_", 1)[0]))})  # fmt: skip
    assert missing == []


if __name__ == "__main__":  # rewrite the golden header lists from a report of the constructed runs
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        asyncio.run(record_scenario(root / "arena.db"))
        assert cli.main(["--db", str(root / "arena.db"), "--data", str(write_data(root / "data")), "report", "all",
                         str(root / "out")]) == 0  # fmt: skip
        COLUMNS.write_text(json.dumps(headers(root / "out"), indent=1) + "\n")
        print(f"wrote {COLUMNS}")


def test_one_column_spec_for_the_leaderboard_screen_the_report_and_the_csv(db: Path, data: Path, tmp_path: Path) -> None:
    """The report's leaderboard tables are the screen's columns, in its order, each cell its
    figure; every column names the model_summary.csv columns that hold the same figure, and the
    CSV holds the same numbers."""
    from arena_tui.compare.columns import board_columns
    from arena_tui.compare.tables import MODEL_SUMMARY

    out = tmp_path / "report"
    assert cli.main(["--db", str(db), "--data", str(data), "report", "all", str(out)]) == 0
    md = (out / "summary.md").read_text().split("## mini_bench", 1)[1]
    header = next(ln for ln in md.splitlines() if ln.startswith("| model |"))
    cols = board_columns(["kb_grounding", "instruction_following", "tool_use_correct", "state_tracking", "turn_taking"])
    assert header == "| " + " | ".join(c.heading for c in cols if c.report) + " |"
    assert "| knowledge base | instructions | tool use | state | turn-taking |" in header  # words, never cut mid-name
    assert all(set(c.csv) <= set(MODEL_SUMMARY) for c in cols), [c.key for c in cols if not set(c.csv) <= set(MODEL_SUMMARY)]
    _, summary = read_csv(out / "model_summary.csv")
    row = next(r for r in summary if (r["model_name"], r["benchmark_name"]) == ("gpt-realtime", "mini_bench"))
    strict = next(c for c in cols if c.key == "strict")
    assert strict.csv[:2] == ("turn_pass_strict_passes", "turn_pass_strict_applicable")
    assert (row[strict.csv[0]], row[strict.csv[1]]) == ("7", "10")
    line = next(ln for ln in md.splitlines() if ln.startswith("| gpt-realtime |"))
    assert "70.0% [40–89] (7/10)" in line and "| 3 [2 at 1×] |" in line  # strict; runs, those counted for latency


def test_report_html_tables_wrap_between_words_to_fit_a_window(db: Path, data: Path, tmp_path: Path) -> None:
    """A header wraps between words, never inside one (`trackin g`); cells wrap too, so the table
    takes the window's width instead of scrolling sideways (checked at 1280 px in headless
    Chromium: docs/reports.md); a figure keeps its unit."""
    out = tmp_path / "report"
    assert cli.main(["--db", str(db), "--data", str(data), "report", "all", str(out)]) == 0
    html = (out / "report.html").read_text()
    css = html.split("<style>", 1)[1].split("</style>", 1)[0]
    rules = {k.strip(): v for k, v in re.findall(r"([^{}]+)\{([^}]*)\}", css)}
    assert "anywhere" not in rules["th"] + rules["th,td"] and "nowrap" not in rules["th,td"]
    assert "width:100%" in rules["table"]
    assert "<th>state tracking</th>" not in html and "<th>knowledge base</th>" in html  # a dimension's words
    assert "1,200&nbsp;ms" in html
