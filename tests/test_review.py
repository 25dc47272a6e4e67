"""A person's verdict (`arena-tui review`, `arena_tui.judge.human`): a judgement revision that wins
over the judge's on its dimensions, in every figure, also over a later judging, until withdrawn;
marked as a person's; kept by export → import. The rule is `verdicts.standing`; each surface is
read back the way it reads a run. The runs are tests/counting_runs.py's, recorded through the real Store.
"""

from __future__ import annotations

import asyncio
import csv
import json
from html import escape
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.compare.leaderboard import build_leaderboard
from arena_tui.compare.stored import load_runs, run_tally
from arena_tui.compare.pair import compare_runs
from arena_tui.interop import export_run, import_run
from arena_tui.judge import summarize
from arena_tui.judge.human import ReviewError, record_verdict, withdraw
from arena_tui.judge.phase2 import apply_rules
from arena_tui.run_view import RunState
from arena_tui.spine.events import DimensionScore, Judgement, Review, RunEnded
from arena_tui.store import Store
from arena_tui.verdicts import STRICT, standing, tally
from arena_tui.widgets.run_header import figures_text
from benchmarks.registry import load_benchmark

from .counting_runs import ended, judged, record, started
from .judge_helpers import bench, judged as judged1, result, turn

KB, IF = "kb_grounding", "instruction_following"


def passing_run(run_id: str = "r1") -> list:
    """demo_bench turns 0-2, each judged passing by an LLM, the run completed."""
    evs: list = [started(run_id, [0, 1, 2])]
    for t in range(3):
        evs += [ended(run_id, t), judged(run_id, t)]
    return [*evs, RunEnded(run_id=run_id, t_ms=5000.0, status="completed")]


def review(run_id: str, *, turn: int = 1, revision: int = 2, withdraw: bool = False,
           **verdicts: str) -> Judgement:
    return Judgement(run_id=run_id, t_ms=1.0, turn_index=turn, judge="human:ann", revision=revision,
                     scores={d: DimensionScore(verdict=v, reasoning="why", by="ann") for d, v in verdicts.items()},  # type: ignore[arg-type]
                     review=Review(by="ann", reason="why", withdraw=withdraw))


# --- the rule ------------------------------------------------------------------------------------


def test_a_persons_verdict_wins_over_later_judgings_until_withdrawn() -> None:
    llm = judged1(0, {KB: "pass", IF: "pass"})
    person = review("run1", turn=0, revision=2, kb_grounding="fail")
    rejudged = judged1(0, {KB: "pass", IF: "fail"}, revision=3)  # the judge again, after the person
    st = standing([llm, person, rejudged])[0]
    # the person's verdict on kb stands over the newer judging; the judge's IF (its newest) counts
    assert st.scores == {KB: "fail", IF: "fail"} and st.human == (KB,)
    assert st.machine is rejudged and st.judgement.scores[KB].by == "ann" and st.judgement.review.by == "ann"
    t = tally([llm, person, rejudged])
    assert t.dimensions[KB] == (0, 1) and t.human == {0: [KB]} and t.human_verdicts == 1
    assert not t.heuristic and t.judge == ("fake", "")  # a person is not a judge: the run's judge is unchanged
    gone = review("run1", turn=0, revision=4, withdraw=True)
    st = standing([llm, person, rejudged, gone])[0]
    assert st.scores == {KB: "pass", IF: "fail"} and st.human == () and st.judgement is rejudged
    again = review("run1", turn=0, revision=5, instruction_following="pass")  # a later review, after the withdrawal
    assert standing([llm, person, rejudged, gone, again])[0].scores == {KB: "pass", IF: "pass"}


def test_a_persons_verdict_counts_where_every_judging_errored_and_phase2_never_revises_it() -> None:
    err = judged1(0, {}, error="judge_error: HTTP 500")
    person = review("run1", turn=0, revision=2, kb_grounding="pass", instruction_following="pass")
    st = standing([err, person])[0]
    assert st.verdict == "pass" and st.error == "judge_error: HTTP 500" and st.judging is err
    assert tally([err, person]).rows == {0: True}
    # the code rules revise the judge's verdict, never the person's: no answer fails IF underneath,
    # and the person's pass still counts over it
    b = bench(turn(0))
    silent = result(0, text="", status="no_response")
    llm = judged1(0, {KB: "pass", IF: "pass", "tool_use_correct": "na"})
    person = review("run1", turn=0, revision=2, instruction_following="pass")
    new, _ = apply_rules(b, [silent], [llm, person])
    assert [j.rule for j in new] == ["no_answer"] and all(j.review is None for j in new)
    assert standing([llm, person, *new])[0].scores[IF] == "pass"
    assert standing([llm, person, *new])[0].machine.scores[IF].verdict == "fail"


async def test_review_refuses_what_no_one_may_judge(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    evs = [started("r", [0, 1, 2]), ended("r", 0), judged("r", 0), ended("r", 1, "lost_pace")]
    await record(db, evs)
    demo = load_benchmark("demo_bench")
    async with await Store.open(db) as store:
        with pytest.raises(ReviewError, match="turn 1 is lost pace: no verdict on the model"):
            await record_verdict(store, "r", 1, {KB: "fail"}, "x", "ann")
        with pytest.raises(ReviewError, match="turn 2 is not played"):
            await record_verdict(store, "r", 2, {KB: "fail"}, "x", "ann")
        with pytest.raises(ReviewError, match="not judged on state_tracking"):
            await record_verdict(store, "r", 0, {"state_tracking": "fail"}, "x", "ann", benchmark=demo)
        with pytest.raises(ReviewError, match="say why"):
            await record_verdict(store, "r", 0, {KB: "fail"}, "  ", "ann")
        with pytest.raises(ReviewError, match="with a fail verdict"):
            await record_verdict(store, "r", 0, {KB: "pass"}, "x", "ann", causes=["invented_fact"])
        with pytest.raises(ReviewError, match="no person's verdict to withdraw"):
            await withdraw(store, "r", 0, "x", "ann")
        assert len(await store.judgements("r")) == 1  # nothing recorded by any of them


# --- every surface -------------------------------------------------------------------------------


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_a_persons_verdict_changes_every_figure_identically_and_survives_export_and_import(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    asyncio.run(record(db, passing_run("r1"), passing_run("r2")))
    data = ["--db", str(db)]
    assert main([*data, "review", "r1", "--turn", "1", "kb_grounding=fail", "--reason", "the price is wrong",
                 "--by", "ann", "--cause", "kb_contradiction"]) == 0
    out = capsys.readouterr().out
    assert "turn 1 r2 human:ann: kb_grounding=fail" in out and "kb_grounding=fail (person)" in out
    assert "1 verdict on 1 turn is a person's, not the judge's (turn 1: kb_grounding)" in out
    # the judge judges turn 1 again, passing it: the person's verdict still stands
    asyncio.run(record(db, [judged("r1", 1).model_copy(update={"revision": 3})]))

    async def read(run_id: str = "r1"):
        async with await Store.open(db) as store:
            [run] = await load_runs(store, [run_id], lambda name: load_benchmark(name))
            state = RunState(run_id)
            async for ev in store.replay(run_id):
                state.apply(ev)
            return run, state, await store.turn_results(run_id), await store.judgements(run_id)

    run, state, results, judgements = asyncio.run(read())
    expected = {"strict": (2, 3), KB: (2, 3), "human": {1: [KB]}}
    t = run_tally(run)
    assert (t.strict, t.dimensions[KB], t.human) == tuple(expected.values())
    s = summarize(load_benchmark("demo_bench"), results, judgements, [0, 1, 2])
    assert ((s.strict.passes, s.strict.denominator), (s.dimensions[KB].passes, s.dimensions[KB].denominator),
            s.human) == tuple(expected.values())
    st = state.tally()
    assert (st.strict, st.dimensions[KB], st.human) == tuple(expected.values())
    assert figures_text(state).plain == f"{STRICT} 2/3"
    assert run.causes == {1: ("kb_contradiction",)}  # the person's cause
    [pair_row] = [r for r in compare_runs(run, asyncio.run(read("r2"))[0]) if r.turn_index == 1]
    assert pair_row.a.verdict == "fail" and KB in pair_row.differences
    board = build_leaderboard([run])
    assert board.human == (1, 1) and board.rows[0].strict.passes == 2

    report = tmp_path / "report"
    assert main([*data, "report", "r1", str(report)]) == 0
    [row] = read_csv(report / "run_results.csv")
    assert (row["pass_rows"], row["kb_grounding_passes"], row["human_verdicts"]) == ("2", "2", "1")
    assert [(r["cause"], r["turns"]) for r in read_csv(report / "failure_causes.csv")] == [("kb_contradiction", "1")]
    line = "1 verdict on 1 turn is a person's, not the judge's (arena-tui review)"
    assert line in (report / "summary.md").read_text() and escape(line) in (report / "report.html").read_text()
    capsys.readouterr()
    assert main([*data, "runs"]) == 0
    assert " 2/3 " in [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("r1")][0]

    # export → import: the reference's scores are the person's, our field keeps every revision
    async def round_trip() -> Path:
        async with await Store.open(db) as store:
            folder = await export_run(store, "r1", tmp_path / "exp", benchmark=load_benchmark("demo_bench"))
        async with await Store.open(tmp_path / "other.db") as other:
            await import_run(other, folder)
        return folder

    folder = asyncio.run(round_trip())
    rows = {r["turn"]: r for r in map(json.loads, (folder / "openai_gpt-5-mini_judged.jsonl").read_text().splitlines())}
    assert rows[1]["scores"][KB] is False and rows[1]["human_verdicts"][KB] == {"verdict": False, "by": "ann",
                                                                               "reason": "the price is wrong"}
    assert rows[1]["arena_tui"]["judgement"]["scores"][KB]["verdict"] == "pass"  # the judge's own, kept
    assert json.loads((folder / "openai_gpt-5-mini_summary.json").read_text())["human_verdicts"] == 1
    async def imported():
        async with await Store.open(tmp_path / "other.db") as store:
            [r] = await load_runs(store, ["r1"], lambda name: load_benchmark(name))
            return r
    again = asyncio.run(imported())
    assert (again.tally.strict, again.tally.human, again.causes) == ((2, 3), {1: [KB]}, {1: ("kb_contradiction",)})

    # withdrawn: the judge's verdict counts again, everywhere, and nothing was overwritten
    assert main([*data, "review", "r1", "--turn", "1", "--withdraw", "--reason", "misread", "--by", "ann"]) == 0
    run, state, _, judgements = asyncio.run(read())
    assert run_tally(run).strict == state.tally().strict == (3, 3) and run_tally(run).human == {}
    assert [j.rule for j in judgements if j.turn_index == 1] == [None, "review", None, "withdraw"]


# --- two at once ---------------------------------------------------------------------------------


async def test_two_processes_reviewing_one_turn_at_once_never_share_a_revision(tmp_path: Path) -> None:
    """Issue 41 item 8: each reviewer numbers its revision `newest + 1` from what it read; two processes
    that read before either wrote both said r2 (r15-r18 twice each, measured). The store numbers a
    revision after every one of its turn already recorded, in the write's own transaction: r2, r3."""
    db = tmp_path / "arena.db"
    await record(db, passing_run())
    async with await Store.open(db) as first, await Store.open(db) as second:  # two connections, as two processes
        ann, bob = review("r1", revision=2, **{KB: "fail"}), review("r1", revision=2, **{KB: "pass"})
        bob = bob.model_copy(update={"judge": "human:bob", "review": Review(by="bob", reason="why not")})
        first.submit(ann)
        await first.flush()
        second.submit(bob)
        await second.flush()
        revs = await second.judgements("r1", 1)
    assert [(j.judge, j.revision) for j in revs] == [("openai:gpt-5-mini", 1), ("human:ann", 2), ("human:bob", 3)], revs
    assert standing(revs)[1].scores[KB] == "pass"  # the later review stands, and says the number it was stored as


def test_review_refuses_one_dimension_given_two_verdicts(tmp_path: Path, capsys) -> None:
    """Issue 41 item 8: `kb_grounding=pass kb_grounding=fail` was taken silently, the last winning."""
    db = tmp_path / "arena.db"
    asyncio.run(record(db, passing_run()))
    code = main(["--db", str(db), "review", "r1", "--turn", "1", f"{KB}=pass", f"{KB}=fail", "--reason", "x", "--by", "ann"])
    err = capsys.readouterr().err
    assert code == 2 and f"{KB}=pass and {KB}=fail both given" in err, err
    async def count() -> int:
        async with await Store.open(db) as store:
            return len(await store.judgements("r1", 1))
    assert asyncio.run(count()) == 1  # nothing recorded
