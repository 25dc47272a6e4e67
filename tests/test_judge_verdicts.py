"""One verdict rule everywhere: an errored re-judge keeps the earlier verdict and shows as an error.

The same judgements, recorded in a real store, are read back the way each consumer reads them:
the run view-model (live and replay), the summary (`arena-tui judge`, exports) and the export's
summary file. Before the verdict module each had its own rule and they disagreed.
"""

from __future__ import annotations

import json
from pathlib import Path

from arena_tui.interop import export_run
from arena_tui.judge.phase2 import apply_rules
from arena_tui.judge.summary import render_text, summarize
from arena_tui.run_view import RunState
from arena_tui.store import Store
from arena_tui.verdicts import (
    DIMENSIONS,
    NAMES,
    original_row_passes,
    repeat_status,
    row_passes,
    row_verdict,
    standing,
    standing_judgements,
    tally,
    turn_consistency,
)
from arena_tui.widgets.turn_table import row_cells
from benchmarks.registry import load_benchmark

from .judge_helpers import EXPECTED, HTTP_500, RUN, bench, judged, record_rejudge_failed, result, turn

async def test_an_errored_rejudge_keeps_the_verdict_and_every_count_agrees(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    await record_rejudge_failed(db)
    demo = load_benchmark("demo_bench")
    async with await Store.open(db) as store:
        state = RunState(RUN)
        async for ev in store.replay(RUN):
            state.apply(ev)
        results = await store.turn_results(RUN)
        judgements = await store.judgements(RUN)
        out = await export_run(store, RUN, tmp_path / "exp", benchmark=demo)
    summary = summarize(demo, results, judgements)
    exported = json.loads((out / "heuristic_summary.json").read_text())

    assert state.pass_rates() == EXPECTED
    assert {d: (t.passes, t.denominator) for d, t in summary.dimensions.items()} == EXPECTED
    assert {d: (exported["passes"][d], exported["category_totals"][d]) for d in EXPECTED} == EXPECTED
    assert (summary.strict.passes, summary.strict.denominator) == state.tally().strict == (1, 2)
    # the verdict stands, and the failed re-judge is still in sight everywhere
    row = state.turns[0]
    assert row.verdict == "pass" and row.judge_error == HTTP_500
    assert "+ERR" in row_cells(row, state.dimensions)[2].plain  # the verdict cell (#, status, verdict, …)
    assert summary.judge_errors == [] and summary.rejudge_errors == [0]
    assert "re-judge failed on turns [0]" in render_text(summary)
    assert "Failed re-judges" in (out / "heuristic_analysis.md").read_text()


def test_a_turn_the_judge_could_not_score_is_counted_apart_never_failed() -> None:
    """A judge error (every revision errored) and a played turn never judged are no verdict on the
    model: in no rate, listed apart by reason, as is a turn the run set out to run and never played."""
    good = judged(1, {"kb_grounding": "pass", "instruction_following": "pass"})
    bad = judged(2, {"turn_taking": "pass"}, error=HTTP_500)
    on_screen = tally([good, bad])  # judgements alone: every judged turn taken as played
    assert on_screen.dimensions == {"kb_grounding": (1, 1), "instruction_following": (1, 1)}
    assert on_screen.judge_errors == [2] and on_screen.strict == (1, 1)
    report = tally([good, bad], {1: "ok", 2: "ok", 3: "ok"}, expected=[1, 2, 3, 4])
    assert report.dimensions == {"kb_grounding": (1, 1), "instruction_following": (1, 1)}
    assert report.strict == report.original == (1, 1)
    assert report.apart == {"not_played": [4], "judge_error": [2], "unjudged": [3]}
    assert report.apart_text() == "1 not played · 1 judge error · 1 not judged"
    assert report.apart_text(live=True) == "1 judge error"  # a live run's turns to come and being judged


def test_phase2_revises_the_verdict_that_stands_past_a_failed_rejudge() -> None:
    b = bench(turn(1))
    phase1 = [judged(1, {"kb_grounding": "pass", "instruction_following": "pass", "tool_use_correct": "fail"}),
              judged(1, {}, revision=2, error=HTTP_500)]
    new, _ = apply_rules(b, [result(1)], phase1)
    assert [(j.revision, j.phase, j.rule, j.scores["tool_use_correct"].verdict) for j in new] == [
        (3, 2, "tool_use_applicability", "na")]  # numbered after the errored revision
    now = standing([*phase1, *new])[1]
    assert now.judgement is new[0] and now.error is None


def test_standing_orders_revisions_then_phase_then_arrival_and_reads_rows() -> None:
    rows = [
        {"turn_index": 4, "revision": 2, "phase": 2, "error": None, "scores": {"kb_grounding": "pass"}},
        {"turn_index": 4, "revision": 2, "phase": 1, "error": None, "scores": {"kb_grounding": "fail"}},
        {"turn_index": 4, "revision": 1, "phase": 1, "error": None, "scores": {"kb_grounding": "fail"}},
        {"turn_index": 5, "revision": 1, "phase": 1, "error": "timeout", "scores": {}},
    ]
    st = standing(rows)
    assert st[4].judgement is rows[0] and st[4].verdict == "pass"
    assert st[5].judgement is None and st[5].verdict == "judge_error" and standing_judgements(rows)[5] is rows[3]
    assert tally(rows).dimensions == {"kb_grounding": (1, 1)}


def test_the_original_evals_turn_pass_beside_ours() -> None:
    """The original eval passes a turn on tool use, instruction following and KB grounding alone;
    ours on every scored dimension. A turn failing turn_taking (or state tracking) only passes
    theirs; a turn without a usable verdict passes neither."""
    core = {"kb_grounding": "pass", "instruction_following": "pass", "tool_use_correct": "na"}
    assert original_row_passes({**core, "turn_taking": "fail", "state_tracking": "fail"})
    assert not original_row_passes({**core, "kb_grounding": "fail"})
    rows = [judged(0, {**core, "turn_taking": "pass"}), judged(1, {**core, "turn_taking": "fail"}),
            judged(2, {**core, "tool_use_correct": "fail", "turn_taking": "pass"})]
    t = tally(rows, dict.fromkeys(range(4), "ok"))  # turn 3: never judged, counted apart
    assert t.strict == (1, 3) and t.original == (2, 3) and t.unjudged == [3]


def test_a_verdict_that_scores_nothing_is_no_pass() -> None:
    """An imported reference row whose scores are all null (its "incomplete" row) is no verdict:
    never a pass, nor a failure: the turn is not judged."""
    empty = judged(0, {"kb_grounding": "na", "instruction_following": "na", "turn_taking": "na"})
    t = tally([empty], {0: "ok"})
    assert t.strict == t.original == (0, 0) and t.unjudged == [0] and t.dimensions == {}


def test_strict_rows_and_dimension_labels() -> None:
    assert row_passes({"a": "pass", "b": "na"}) and not row_passes({"a": "pass", "b": "fail"})
    assert set(DIMENSIONS) == set(NAMES)  # every dimension has its one row: label, code and legend words
    assert len({s.code for s in NAMES.values()}) == len(NAMES)  # no two share a code


# --- consistency across repeats (moved from arena_tui.stats) -------------------------------------


def test_repeat_status_is_the_row_verdict() -> None:
    assert repeat_status({"kb_grounding": "pass", "tool_use_correct": "na"}) == "pass"
    assert repeat_status({"kb_grounding": "pass", "state_tracking": "fail"}) == "fail"
    assert repeat_status({"tool_use_correct": "na"}) == "missing"
    assert repeat_status({}) == "missing"
    assert repeat_status(None) == "missing"
    for scores in ({"kb_grounding": "pass"}, {"kb_grounding": "fail", "x": "pass"}):
        assert repeat_status(scores) == row_verdict(scores)


def test_flip_counts_on_constructed_verdicts() -> None:
    ok = {"kb_grounding": "pass", "tool_use_correct": "pass"}
    tool_fail = {"kb_grounding": "pass", "tool_use_correct": "fail"}
    kb_fail_na = {"kb_grounding": "fail", "tool_use_correct": "na"}
    repeats = [
        {0: ok, 1: ok, 2: kb_fail_na, 3: ok},
        {0: ok, 1: tool_fail, 2: kb_fail_na},  # turn 3 missing in this repeat
        {0: ok, 1: ok, 2: {"kb_grounding": "fail", "tool_use_correct": "fail"}, 3: ok},
        {0: ok, 1: tool_fail, 2: kb_fail_na, 3: ok},
    ]
    by_turn = {c.turn_index: c for c in turn_consistency(repeats)}
    assert sorted(by_turn) == [0, 1, 2, 3]

    t0, t1, t2, t3 = (by_turn[i] for i in range(4))
    assert (t0.flips, t0.unstable, t0.always_fails, t0.metric_flips) == (0, False, False, {})
    assert t1.statuses == ("pass", "fail", "pass", "fail")
    assert (t1.flips, t1.pass_runs, t1.fail_runs, t1.metric_flips) == (3, 2, 2, {"tool_use_correct": 3})
    assert t1.pattern == "1:pass|2:fail|3:pass|4:fail"
    # always fails; tool_use_correct is na in three repeats, so it has nothing to flip between
    assert (t2.always_fails, t2.flips, t2.metric_flips) == (True, 0, {})
    assert t3.statuses == ("pass", "missing", "pass", "pass")
    # a missing repeat is no verdict: pass, ·, pass, pass never flips (the "10/10 turns flip")
    assert (t3.flips, t3.unstable, t3.missing_runs, t3.always_fails) == (0, False, 1, False)


def test_a_flip_is_between_two_verdicts_that_exist() -> None:
    ok, bad = {"kb_grounding": "pass"}, {"kb_grounding": "fail"}
    (c,) = turn_consistency([{0: ok}, {}, {0: bad}, {0: None}, {0: bad}, {0: ok}])
    assert c.statuses == ("pass", "missing", "fail", "missing", "fail", "pass")
    assert (c.flips, c.unstable, c.metric_flips) == (2, True, {"kb_grounding": 2})


def test_never_judged_turn_is_not_an_always_failing_turn() -> None:
    (c,) = turn_consistency([{5: None}, {5: {}}])
    assert c.statuses == ("missing", "missing") and not c.always_fails and not c.unstable
