"""Leaderboard figures and run pairs on constructed runs recorded in a real SQLite store.

Every expected number below is worked out by hand from `tests/compare_runs.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from arena_tui.compare.leaderboard import POOLED, build_leaderboard
from arena_tui.compare.stored import load_runs
from arena_tui.compare.pair import compare_runs
from arena_tui.stats import wilson
from arena_tui.store import Store

from .compare_runs import benchmark_for, record_scenario

FINISHED = ["r1", "r2", "r3", "r4", "r5", "r6"]


@pytest.fixture
async def runs(tmp_path: Path):
    db = tmp_path / "arena.db"
    await record_scenario(db)
    async with await Store.open(db) as store:
        yield await load_runs(store, FINISHED, benchmark_for)


async def test_rows_are_grouped_by_source(runs) -> None:
    board = build_leaderboard(runs)
    assert board.models == ["gpt-realtime", "gpt-realtime [heuristic judge]", "sim [simulator]"]
    assert board.benchmarks == ["mini_bench", "other_bench"]
    keys = [(r.model, r.benchmark) for r in board.rows]
    assert keys == [
        ("gpt-realtime", "mini_bench"),
        ("gpt-realtime", "other_bench"),
        ("gpt-realtime [heuristic judge]", "mini_bench"),
        ("sim [simulator]", "mini_bench"),
        ("gpt-realtime", POOLED),  # only a model with more than one benchmark gets a pooled row
    ]
    row = board.row("gpt-realtime", "mini_bench")
    assert [f.run.run_id for f in row.runs] == ["r1", "r2", "r3"]
    assert [f.repeat for f in row.runs] == [0, 1, 2]


async def test_pass_rates_count_the_judged_turns_the_model_played(runs) -> None:
    row = build_leaderboard(runs).row("gpt-realtime", "mini_bench")
    # R1 3/4, R2 1/2 (wrong call; its judge-failed turn 2 and never-played turn 3 counted apart), R3 3/4
    assert (row.strict.passes, row.strict.n) == (7, 10)
    assert row.strict.ci95 == pytest.approx(wilson(7, 10))
    got = {d: (r.passes, r.n) for d, r in row.dimensions.items()}
    assert got == {
        "kb_grounding": (10, 10),
        "instruction_following": (10, 10),
        "tool_use_correct": (2, 3),  # only turn 1 expects a call
        "state_tracking": (2, 4),  # turns 2 and 3 of R1 and R3
        "turn_taking": (10, 10),  # the same turns as every other dimension
    }
    assert list(row.dimensions) == list(got)  # rubric order
    assert row.dimensions["kb_grounding"].ci95 == pytest.approx(wilson(10, 10))
    assert (row.apart, row.empty_responses, row.ended_session) == ({"not_played": 1, "judge_error": 1}, 1, 1)
    assert row.apart_text == "1 not played · 1 judge error"
    r1 = row.runs[0].run
    assert (r1.verdict(0), r1.standing[0].error) == ("pass", "re-judge: HTTP 503")  # a failed re-judge erases nothing
    per_run = {f.run.run_id: (f.strict.passes, f.fail_rows, f.incomplete_rows) for f in row.runs}
    assert per_run == {"r1": (3, 1, 0), "r2": (1, 1, 1), "r3": (3, 1, 0)}
    assert row.categories["long_range_memory"].passes == 2 and row.categories["long_range_memory"].n == 4


async def test_latency_only_from_speed_one_runs(runs) -> None:
    board = build_leaderboard(runs)
    row = board.row("gpt-realtime", "mini_bench")
    # R1 900 1500 1100 1300, R2 1000 2500; R3's 50 ms turns at speed 20 stay out
    assert row.latency_excluded == {"r3": "speed 20×"}
    assert row.latency_runs == 2
    assert (row.v2v.n, row.v2v.p50, row.v2v.p95) == (6, 1200.0, pytest.approx(2250.0))
    assert row.v2v.min == 900.0
    lo, hi = row.v2v_p95_ci
    assert 900.0 <= lo <= row.v2v.p95 <= hi <= 2500.0
    assert build_leaderboard(runs).row("gpt-realtime", "mini_bench").v2v_p95_ci == row.v2v_p95_ci  # fixed seed
    assert (row.v2v_tool.n, row.v2v_tool.p50) == (2, 2000.0)
    assert (row.v2v_non_tool.n, row.v2v_non_tool.p50) == (4, 1050.0)
    assert (row.leading_silence.n, row.leading_silence.p50) == (4, 250.0)
    heuristic = board.row("gpt-realtime [heuristic judge]", "mini_bench")
    assert heuristic.latency_excluded == {"r6": "speed not recorded"} and heuristic.v2v is None
    assert heuristic.strict.rate == 1.0 and heuristic.labels == ("heuristic judge",)


async def test_pooled_row_sums_benchmarks(runs) -> None:
    board = build_leaderboard(runs)
    other = board.row("gpt-realtime", "other_bench")
    # no benchmark data for other_bench: its never-judged turn 1 is counted apart, not failed
    assert (other.strict.passes, other.strict.n, other.apart) == (1, 1, {"unjudged": 1})
    assert set(other.dimensions) == {"kb_grounding", "instruction_following", "turn_taking"}
    pooled = board.row("gpt-realtime")
    assert pooled.benchmark == POOLED
    assert (pooled.strict.passes, pooled.strict.n) == (8, 11)
    assert (pooled.dimensions["kb_grounding"].passes, pooled.dimensions["kb_grounding"].n) == (11, 11)
    assert pooled.v2v.n == 8 and pooled.consistency == []


async def test_consistency_across_repeats(runs) -> None:
    row = build_leaderboard(runs).row("gpt-realtime", "mini_bench")
    c = {t.turn_index: t for t in row.consistency}
    assert (c[0].flips, c[0].unstable) == (0, False)
    assert c[1].pattern == "1:pass|2:fail|3:pass" and c[1].metric_flips == {"tool_use_correct": 2}
    # turn 2: fails in R1 and R3, its judge failed in R2 -> never passes
    assert c[2].statuses == ("fail", "missing", "fail") and c[2].always_fails
    assert c[3].statuses == ("pass", "missing", "pass") and not c[3].always_fails
    assert (c[3].flips, c[3].unstable) == (0, False)  # a missing repeat is no flip


async def test_compare_two_runs_turn_by_turn(runs) -> None:
    by_id = {r.run_id: r for r in runs}
    rows = {r.turn_index: r for r in compare_runs(by_id["r1"], by_id["r2"])}
    assert sorted(rows) == [0, 1, 2, 3]
    assert rows[0].differences == []  # 900 vs 1000 ms is within the tolerance
    assert rows[1].differences == ["verdict", "tool_use_correct", "calls", "latency"]
    assert rows[1].a.calls == ['book(day="saturday")'] and rows[1].b.calls == ['book(day="sunday")']
    assert rows[1].latency_delta_ms == 1000.0
    # R1 failed state_tracking; R2's judge failed on its empty response: counted apart, no verdict to differ
    assert rows[2].differences == ["counted", "status"]
    assert (rows[2].a.verdict, rows[2].b.status, rows[2].b.verdict, rows[2].b.dimensions) == (
        "fail", "empty_response", "judge_error", {})  # fmt: skip
    assert (rows[3].b.status, rows[3].b.verdict, rows[3].differences) == ("not played", "not_played",
                                                                          ["counted", "status"])
    assert rows[3].user_text == "And the time again?"
    # a sped-up run shows no latency rather than a false one
    sped = {r.turn_index: r for r in compare_runs(by_id["r1"], by_id["r3"])}
    assert sped[0].b.voice_to_voice_ms is None and "latency" not in sped[0].differences


def test_latency_exclusion_reasons() -> None:
    from datetime import UTC, datetime

    from arena_tui.compare.stored import StoredRun
    from arena_tui.store import RunRow

    def run(speed: float | None, config: dict | None = None) -> StoredRun:
        row = RunRow(run_id="x", benchmark="b", model="m", provider="p", simulator=False, status="completed",
                     started_at=datetime(2026, 1, 1, tzinfo=UTC), turns_total=1, turns_done=1, config=config or {},
                     versions={}, speed=speed)  # fmt: skip
        return StoredRun(row, {}, {})

    # the run's own speed field counts, not what its config says
    assert run(1.0).latency_excluded is None
    assert run(1.0, {"speed": 20}).latency_excluded is None
    assert run(2.5).latency_excluded == "speed 2.5×"
    assert run(None, {"speed": 1.0}).latency_excluded == "speed not recorded"
    assert run(1.0, {"modality": "text"}).latency_excluded == "text run (no voice-to-voice)"
    assert run(1.0, {"fake": True}).group == "m [protocol fake, not judged]"


async def test_a_complete_run_counts_as_its_run_summary(runs) -> None:
    """The leaderboard and `arena-tui judge`'s summary count through the same verdict rules."""
    from arena_tui.compare.leaderboard import run_figures
    from arena_tui.judge.summary import summarize

    from .compare_runs import MINI

    for run in (r for r in runs if r.run_id in ("r1", "r3", "r5")):
        s = summarize(MINI, list(run.results.values()), run.revisions)
        f = run_figures(run)
        assert {d: (r.passes, r.n) for d, r in f.dimensions.items()} == {
            d: (t.passes, t.denominator) for d, t in s.dimensions.items()
        }
        assert (f.strict.passes, f.strict.n) == (s.strict.passes, s.strict.denominator)
        assert {c: (r.passes, r.n) for c, r in f.categories.items()} == {
            c: (t.passes, t.denominator) for c, t in s.category_totals.items()
        }


async def test_compare_two_models_turn_by_turn(runs) -> None:
    from arena_tui.compare.pair import compare_models

    board = build_leaderboard(runs)
    gpt, sim = board.row("gpt-realtime", "mini_bench"), board.row("sim [simulator]", "mini_bench")
    rows = {r.turn_index: r for r in compare_models(gpt, sim)}
    assert sorted(rows) == [0, 1, 2, 3]
    # turn 0: 3/3 vs 1/1 passing; medians 950 (R1 900, R2 1000; R3 is sped up) vs 600
    assert (rows[0].a.pass_runs, rows[0].a.runs, rows[0].b.pass_runs) == (3, 3, 1)
    assert (rows[0].a.voice_to_voice_p50_ms, rows[0].b.voice_to_voice_p50_ms) == (950.0, 600.0)
    assert rows[0].differences == ["latency"]
    assert rows[1].a.statuses == ("pass", "fail", "pass") and rows[1].differences == ["pass share", "latency"]
    assert rows[2].a.statuses == ("fail", "missing", "fail") and rows[2].a.pass_runs == 0
    assert rows[2].a.share_text == "0/2 pass · 1 judge error"
    # R2 never played turn 3: not a failure, so 2/2 beside the simulator's 1/1 is no difference
    assert (rows[3].a.share_text, rows[3].b.share_text, rows[3].differences) == (
        "2/2 pass · 1 not played", "1/1 pass", ["latency"])
    assert rows[3].user_text == "And the time again?"
    with pytest.raises(ValueError, match="different benchmarks"):
        compare_models(gpt, board.row("gpt-realtime", "other_bench"))


async def test_a_never_judged_run_is_not_judged_never_failed(tmp_path: Path) -> None:
    """A run the judge never saw has no rates ("not judged", labelled); one partly judged counts
    its judged turns, and its never-judged turn 1 apart (r4)."""
    from datetime import UTC, datetime

    from arena_tui.compare.render import summary_markdown
    from arena_tui.compare.selection import Selection
    from arena_tui.compare.tables import run_results_rows

    from .compare_runs import unjudged_run

    db = tmp_path / "arena.db"
    await record_scenario(db, extra=[unjudged_run()])
    async with await Store.open(db) as store:
        board = build_leaderboard(await load_runs(store, ["r1", "r4", "u1"], benchmark_for))
    row = board.row("gpt-realtime [not judged]", "mini_bench")
    assert not row.judged and row.labels == ("not judged",)
    assert (row.strict.n, row.strict.rate, row.strict.ci95, row.dimensions, row.categories) == (0, None, None, {}, {})
    f = row.runs[0]
    assert (f.incomplete_rows, f.fail_rows, f.verdicts) == (4, 0, {0: {}, 1: {}, 2: {}, 3: {}})
    assert row.v2v.n == 4  # its latency is measured all the same
    assert not any(c.always_fails for c in row.consistency)
    partial = board.row("gpt-realtime", "other_bench")
    assert partial.judged and (partial.strict.passes, partial.strict.n, partial.runs[0].fail_rows) == (1, 1, 0)

    csv_row = next(r for r in run_results_rows(board) if r["run_id"] == "u1")
    assert (csv_row["turns_scored"], csv_row["pass_row_rate"], csv_row["fail_rows"], csv_row["incomplete_rows"]) == (
        0, None, 0, 4)  # fmt: skip
    assert csv_row["kb_grounding_pass_rate"] is None
    md = summary_markdown(board, Selection(["r1", "r4", "u1"]), datetime(2026, 1, 1, tzinfo=UTC))
    line = next(ln for ln in md.splitlines() if ln.startswith("| gpt-realtime [not judged] |"))
    assert "– (not judged)" in line and "0.0%" not in line and "(0/" not in line
    from arena_tui.compare.render import report_html

    html = report_html(board, Selection(["r1", "r4", "u1"]), datetime(2026, 1, 1, tzinfo=UTC))
    # its bars read "not judged": both turn passes, five dimensions and three categories of mini_bench
    assert html.count(">not judged</text>") == 2 + 5 + 3 and "0.0% (0/" not in html
