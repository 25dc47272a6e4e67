"""What the review screens draw from, without a screen: two answers word by word, a run's latency
over its turns (and report.html's chart of it), compare's sides (what each said, not played, why it
failed), the leaderboard's failure mix, a superseded run's search hits, and the notices a run's or
a campaign's end gets.

The runs are tests/compare_runs.py's, recorded in a real SQLite store.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena_tui.campaign import records
from arena_tui.campaign.spec import build_spec
from arena_tui.compare.failure_mix import failed_turns, mix_columns
from arena_tui.compare.leaderboard import build_leaderboard
from arena_tui.compare.pair import compare_runs
from arena_tui.compare.report import build_report
from arena_tui.compare.search import search
from arena_tui.compare.stored import load_runs
from arena_tui.compare.turn_latency import barge_ins, turn_latencies
from arena_tui.compare.word_diff import shared, word_diff
from arena_tui.screens.notices import BELL_ENV, CampaignWatch, bell_wanted, run_notice
from arena_tui.spine.events import Latencies, RunSuperseded, ToolCallRecord, TurnResult
from arena_tui.store import Store

from .compare_runs import benchmark_for, record_scenario

FINISHED = ["r1", "r2", "r3", "r4", "r5", "r6"]


def test_two_answers_word_by_word_ignore_case_and_punctuation() -> None:
    a, b = word_diff("I booked you for Saturday at 10.", "i booked you for Sunday, at 10!")
    assert [(p.text.strip(), p.op) for p in a] == [("I booked you for", "same"), ("Saturday", "gone"), ("at 10.", "same")]
    assert [(p.text.strip(), p.op) for p in b] == [("i booked you for", "same"), ("Sunday,", "new"), ("at 10!", "same")]
    assert "".join(p.text for p in b) == "i booked you for Sunday, at 10!"  # each side reads as it was said
    assert shared("Booked.", "booked") == 1.0 and shared("", "") is None
    assert shared("one two three four", "one two") == pytest.approx(2 * 2 / 6)
    left, right = word_diff("", "a reply")
    assert left == [] and [p.op for p in right] == ["new"]


def _result(turn: int, v2v: float | None, *, status: str = "ok", tool: bool = False) -> TurnResult:
    calls = [ToolCallRecord(call_id=f"c{turn}", name="book", args={}, status="matched")] if tool else []
    return TurnResult(turn_index=turn, status=status, user_text="hi", assistant_text="ok", tool_calls=calls,
                      latencies=Latencies(voice_to_voice_ms=v2v))


def test_a_runs_latency_over_its_turns_marks_tool_turns_and_what_counts_in_no_figure() -> None:
    results = [_result(-1, 500), _result(0, 900), _result(1, 1400, tool=True), _result(2, -300),
               _result(3, 800, status="interrupted"), _result(4, 1200), _result(5, None)]
    points = turn_latencies(results, untrusted={4})
    assert [(p.turn, p.ms, p.tool, p.counted) for p in points] == [
        (0, 900, False, True), (1, 1400, True, True),  # the greeting is no turn; a barge-in no latency
        (3, 800, False, False),  # stopped: not the model's turn, drawn hollow
        (4, 1200, False, False),  # its input went out late: untrusted, hollow
    ]
    assert barge_ins(results) == [2]


@pytest.fixture
async def db(tmp_path: Path) -> Path:
    path = tmp_path / "arena.db"
    await record_scenario(path)
    return path


async def test_report_html_draws_each_speed_one_runs_latency_over_its_turns(db: Path, tmp_path: Path) -> None:
    async with await Store.open(db) as store:
        await build_report(store, ["all"], tmp_path / "report", benchmark_for)
    html = (tmp_path / "report" / "report.html").read_text()
    chart = html[html.index("Voice-to-voice over each run&#x27;s turns — mini_bench"):]
    chart = chart[: chart.index("</svg>")]
    assert "gpt-realtime #1" in chart and "sim [simulator] #1" in chart
    assert "not drawn: r3 (speed 20×)" in chart  # a sped-up run's clock is compressed: named, never drawn
    assert "<rect" in chart and "<circle" in chart  # tool turns and the others


async def test_compare_sides_say_what_each_said_and_a_turn_not_played_is_no_failure(db: Path) -> None:
    async with await Store.open(db) as store:
        runs = {r.run_id: r for r in await load_runs(store, FINISHED, benchmark_for)}
    rows = {t.turn_index: t for t in compare_runs(runs["r1"], runs["r2"])}
    t1 = rows[1]
    assert t1.golden and t1.a.played and t1.b.played
    assert t1.a.answer == runs["r1"].results[1].assistant_text
    assert t1.b.verdict == "fail" and "wrong_arguments" in t1.b.causes and t1.a.causes == ()
    t3 = rows[3]
    assert not t3.b.played and t3.b.verdict == "not_played" and t3.b.causes == () and t3.b.answer == ""


async def test_the_failure_mix_columns_count_each_rows_failed_turns_per_cause(db: Path) -> None:
    async with await Store.open(db) as store:
        board = build_leaderboard(await load_runs(store, FINISHED, benchmark_for))
    cols = mix_columns(board.rows)
    assert [c.key for c in cols[:3]] == ["model", "benchmark", "failed"]
    row = board.row("gpt-realtime", "mini_bench")
    assert row is not None and row.causes
    for cause, n in row.causes.items():
        col = next(c for c in cols if c.key == f"cause:{cause}")
        assert col.value(row) == n
        assert col.figure(row).line == f"{n} of {failed_turns(row)}"
    given = [c.key.removeprefix("cause:") for c in cols[3:]]
    totals = [sum(r.causes.get(c, 0) for r in board.rows) for c in given]
    assert totals == sorted(totals, reverse=True)  # the most given first


async def test_a_superseded_runs_hits_say_so(db: Path) -> None:
    async with await Store.open(db) as store:
        store.submit(RunSuperseded(run_id="r2", t_ms=0.0, by="r1"))
        await store.flush()
        hits = await search(store, "", run_ids=["r1", "r2"])
    assert {h.superseded_by for h in hits if h.run_id == "r2"} == {"r1"}
    assert {h.superseded_by for h in hits if h.run_id == "r1"} == {None}


async def test_a_campaigns_end_is_seen_once_its_coordinator_is_gone(db: Path) -> None:
    spec = build_spec({}, {"benchmarks": "mini_bench", "models": "sim", "repeats": 2})
    watch = CampaignWatch()
    async with await Store.open(db) as store:
        await records.create(store, "camp", spec)
        await records.claim(store, "camp")  # this process coordinates it
        assert await watch.ended(store) == []  # the first look only looks
        assert await watch.ended(store) == []  # still running
        for cell in spec.cells():
            await records.set_cell(store, "camp", cell, status="done")
        await records.release(store, "camp")
        ended = await watch.ended(store)
        assert ended == [("camp", "2 done", "information")]
        assert await watch.ended(store) == []  # said once


def test_a_runs_end_says_what_it_was_and_rings_only_when_asked(monkeypatch) -> None:
    title, message, severity = run_notice("r9", "failed", "no turn got an answer", None)
    assert (title, severity) == ("run failed", "error") and "no turn got an answer" in message
    assert run_notice("r9", "completed", None, None)[2] == "information"
    monkeypatch.delenv(BELL_ENV, raising=False)
    assert not bell_wanted(os.environ)
    assert bell_wanted({BELL_ENV: "1"}) and bell_wanted({BELL_ENV: "on"}) and not bell_wanted({BELL_ENV: "0"})
