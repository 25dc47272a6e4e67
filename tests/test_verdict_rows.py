"""What a row of a comparison is and what it counts (issue 40): a run the model heard and never
answered counts in its row and is said on every surface; a run is judged by one judge (and rules
version), so two judges are two rows and a re-judge that gave no verdict changes nothing; a judge's
"na" on a dimension the turn is judged on is no verdict; an export carries no scores for turns
counted apart; judge agreement counts the judge's own verdicts; a person's verdict is marked
everywhere. Each case was a defect on main (097b9be). The runs are recorded through the real Store.
"""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import io
import json
import socket
from pathlib import Path
from typing import Any

from arena_tui.cli import main
from arena_tui.compare.leaderboard import build_leaderboard
from arena_tui.compare.pair import compare_runs
from arena_tui.compare.stored import load_runs
from arena_tui.judge import HeuristicJudge, rejudge_turn, summarize
from arena_tui.judge.agreement import run_agreement
from arena_tui.judge.backends import RetryPolicy
from arena_tui.judge.openai_judge import OpenAIJudge
from arena_tui.judge.summary import render_text
from arena_tui.orchestration.headless import Progress
from arena_tui.run_view import RunState
from arena_tui.screens.runs import run_cells
from arena_tui.interop import export_run
from arena_tui.spine.events import RunEnded, ToolCallRecord, TurnResult
from arena_tui.store import Store
from arena_tui.verdicts import NEVER_ANSWERED, TOOL, standing
from arena_tui.widgets.run_header import figures_text
from arena_tui.widgets.turn_table import row_cells
from benchmarks.registry import load_benchmark

from .counting_runs import BENCH, LLM, PASSING, ended, judged, record, started, unanswered_run
from .fakes.judge_answers import DIMS, all_pass, run_answer
from .fakes.anthropic_messages import FakeAnthropic
from .fakes.openai_chat import FakeOpenAI
from .test_judge_agreement import KEY, judge_cli
from .test_judge_worker import RUN, record_run
from .test_judge_worker import conv as conv  # noqa: F401 - conversation_bench, the module's fixture

KB, IF, TT = "kb_grounding", "instruction_following", "turn_taking"
FAIL_KB = {**PASSING, KB: "fail"}
FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.02)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


async def stored(db: Path, *run_ids: str) -> list:
    async with await Store.open(db) as store:
        return await load_runs(store, list(run_ids), lambda name: load_benchmark(name))


def run_of(run_id: str, verdicts: list[dict[str, str]], *, judge: str = LLM, heuristic: bool = False,
           turns: list[int] | None = None) -> list:
    """demo_bench turns 0..n-1 (or `turns`), each ended ok and judged with its verdicts, the run completed."""
    turns = turns or list(range(len(verdicts)))
    evs: list = [started(run_id, turns)]
    for t, v in zip(turns, verdicts, strict=True):
        evs += [ended(run_id, t), judged(run_id, t, v, judge=judge, heuristic=heuristic)]
    return [*evs, RunEnded(run_id=run_id, t_ms=1000.0 * (max(turns) + 3), status="completed")]


def state_of(events: list) -> RunState:
    state = RunState(events[0].run_id)
    state.apply_all(events)
    return state


# --- 1. a run the model heard and never answered counts, and every surface says so ---------------


def test_a_run_the_model_never_answered_counts_in_its_row_and_every_surface_says_so(tmp_path: Path, capsys) -> None:
    """Two answered runs: 4/6 and 2/5 strict, 6/11 = 54.5 %. A third of the same model and judge
    whose four turns all ended `no_response` (the model heard each turn and said nothing) was "not
    scored" and in no figure; it counts now, each turn the model's failure: 6/15 = 40.0 %, and every
    surface says `never answered — check the setup`. An unreachable endpoint (every turn
    `infra_error`) stays apart: the model got no turn, no row."""
    db = tmp_path / "arena.db"
    mute = [ev.model_copy(update={"model": "gpt-realtime"}) if ev.kind == "run_started"  # the same model and judge
            else ev.model_copy(update={"judge": LLM, "heuristic": False}) if ev.kind == "judgement" else ev
            for ev in unanswered_run("mute", "no_response")]  # as the answered runs: one row
    asyncio.run(record(db, run_of("a", [PASSING] * 4 + [FAIL_KB] * 2), run_of("b", [PASSING] * 2 + [FAIL_KB] * 3),
                       mute, unanswered_run("down")))
    runs = asyncio.run(stored(db, "a", "b", "mute", "down"))
    board = build_leaderboard(runs)
    [row] = board.rows
    assert (row.strict.passes, row.strict.n) == (6, 15) and f"{100 * row.strict.rate:.1f}" == "40.0"
    assert row.never_answered == ["mute"] and board.never_answered == ["mute"]
    assert board.unscored == {"down": "the model got no turn: 4 infra failure"}  # the endpoint: never the model's

    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "all", str(out)]) == 0
    by_run = {r["run_id"]: r for r in read_csv(out / "run_results.csv")}
    assert set(by_run) == {"a", "b", "mute"}
    assert (by_run["mute"]["turns_scored"], by_run["mute"]["pass_rows"], by_run["mute"]["never_answered"]) == ("4", "0", "True")
    assert by_run["a"]["never_answered"] == "False"
    [summary_row] = read_csv(out / "model_summary.csv")
    assert (summary_row["turn_pass_strict_passes"], summary_row["turn_pass_strict_applicable"],
            summary_row["never_answered_runs"]) == ("6", "15", "1")
    for name in ("summary.md", "report.html"):
        assert f"mute: {NEVER_ANSWERED}" in (out / name).read_text(), name

    capsys.readouterr()
    assert main(["--db", str(db), "runs"]) == 0
    listed = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()[1:] if ln.strip()}
    assert f"0/4 {NEVER_ANSWERED}" in listed["mute"] and "no answer" in listed["down"]
    assert NEVER_ANSWERED not in listed["a"]

    [mute_run] = [r for r in runs if r.run_id == "mute"]
    now = dt.datetime(2026, 3, 1, 10, tzinfo=dt.UTC)
    cells = run_cells({"status": "failed", "tally": mute_run.tally, "rates": mute_run.tally.dimensions}, now, [KB], "mute")
    assert cells[5].plain.startswith("  0% 0/4") and cells[-1].plain == NEVER_ANSWERED  # the runs list
    assert f"strict pass 0/4 · {NEVER_ANSWERED}" in figures_text(state_of(mute)).plain  # the run's header
    assert NEVER_ANSWERED in render_text(summarize(load_benchmark(BENCH), [ev.result for ev in mute if ev.kind == "turn_ended"],
                                                   [ev for ev in mute if ev.kind == "judgement"]))  # `judge`
    silent = [TurnResult(turn_index=t, status="no_response", user_text="u") for t in range(4)]
    printed = io.StringIO()  # the headless run's own summary
    progress = Progress(4, printed)
    progress.results = silent
    progress.summary(printed, None)
    assert f"{NEVER_ANSWERED}: the model heard every turn it got and answered none" in printed.getvalue()


# --- 2. one judge per run: two judges are two rows; a failed re-judge changes nothing --------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_judges_are_two_rows_and_a_run_is_in_exactly_one(tmp_path: Path) -> None:
    """Runs judged by `openai:gpt-5.2` and by `local:llama3.2` made one row (6/6, judge "several");
    a run judged by the heuristic and then wholly by an LLM made a "heuristic + LLM judges" row
    blending both. Now each run's judge is one judge and rules version (the newest whole judging):
    two rows of the same model, each named with its judge; the re-judged run is the LLM's alone."""
    db = tmp_path / "arena.db"
    gpt, llama = "openai:gpt-5.2", "local:llama3.2"
    twice = run_of("twice", [FAIL_KB] * 3, judge="heuristic", heuristic=True)
    twice[-1:-1] = [judged("twice", t, judge=LLM).model_copy(update={"revision": 2}) for t in range(3)]
    asyncio.run(record(db, run_of("g", [PASSING] * 3, judge=gpt), run_of("l", [PASSING] * 3, judge=llama), twice))
    runs = {r.run_id: r for r in asyncio.run(stored(db, "g", "l", "twice"))}
    board = build_leaderboard(list(runs.values()))
    rows = {r.model: r for r in board.rows}
    assert sorted(rows) == sorted(["gpt-realtime [judge local:llama3.2]", "gpt-realtime [judge openai:gpt-5.2]",
                                   f"gpt-realtime [judge {LLM}]"])
    assert [(r.strict.passes, r.strict.n, len(r.runs)) for r in rows.values()] == [(3, 3, 1)] * 3
    assert rows["gpt-realtime [judge openai:gpt-5.2]"].judge == gpt and runs["l"].judge == llama
    assert runs["twice"].judge == LLM and runs["twice"].tally.dimensions[KB] == (3, 3)  # the heuristic's 0/3 not blended
    assert sum(len(r.runs) for r in board.rows) == len(runs)  # each run in exactly one row

    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "all", str(out)]) == 0
    judges = {r["model_name"]: r["judge"] for r in read_csv(out / "model_summary.csv")}
    assert judges == {"gpt-realtime [judge local:llama3.2]": llama, "gpt-realtime [judge openai:gpt-5.2]": gpt,
                      f"gpt-realtime [judge {LLM}]": LLM}
    pools = {r["judge"] for r in read_csv(out / "consistency_turn_summary.csv")}
    assert pools == {gpt, llama, LLM}  # the reference pools every run of a turn; never across judges here


def test_a_failed_rejudge_leaves_the_runs_verdicts_row_and_turns_as_they_were(tmp_path: Path) -> None:
    """A heuristic-judged run re-judged by an LLM whose server is down (every turn errors, no verdict):
    the run moved to a "heuristic + LLM judges" row and every turn read `PASS +ERR`. Now nothing
    moves: the same figures, the same row, no `+ERR`; the judge's summary says the judging was set aside."""
    db = tmp_path / "arena.db"
    # turns that expect no call: the code rules a re-judge applies again change nothing of them
    evs = run_of("h", [PASSING, FAIL_KB, PASSING], judge="heuristic", heuristic=True, turns=[0, 1, 6])
    asyncio.run(record(db, evs))
    [before] = asyncio.run(stored(db, "h"))

    async def rejudge() -> list:
        backend = OpenAIJudge("llama3.2", base_url=f"http://127.0.0.1:{closed_port()}/v1", api_key="sk-test")
        async with await Store.open(db) as store:
            out = await rejudge_turn(store, "h", None, backend, benchmark=load_benchmark(BENCH), run_policy=FAST)
            judgements = await store.judgements("h")
        await backend.aclose()
        return [out, judgements]

    latest, judgements = asyncio.run(rejudge())
    assert all(j.error and "cannot reach" in j.error for j in latest)  # no server, no verdict
    [after] = asyncio.run(stored(db, "h"))
    assert [r.model for r in build_leaderboard([after]).rows] == [r.model for r in build_leaderboard([before]).rows]
    assert after.tally.strict == before.tally.strict == (2, 3) and after.tally.dimensions == before.tally.dimensions
    assert after.tally.rejudge_errors == [] and after.judge == "heuristic" and after.identity == before.identity
    state = state_of([*evs, *judgements])
    verdicts = [row_cells(state.turns[t], state.dimensions)[2].plain for t in (0, 1, 6)]
    assert all("ERR" not in v for v in verdicts) and [v.split()[0] for v in verdicts] == ["PASS", "FAIL", "PASS"]
    text = render_text(summarize(load_benchmark(BENCH), [ev.result for ev in evs if ev.kind == "turn_ended"], judgements))
    assert "judged by heuristic" in text and "set aside" in text and "openai:llama3.2" in text and "no verdict" in text


# --- 3. "na" on a dimension the turn is judged on is no verdict, never a pass ------------------------




def judged_by(db: Path, run_id: str, answer: Any) -> Any:
    """The run judged as a whole by an LLM (OpenAI's wire fake answering `answer(prompt)`): its tally."""
    server = FakeOpenAI(answer).start()

    async def go() -> None:
        backend = OpenAIJudge("gpt-test", base_url=server.base_url, api_key="sk-test")
        async with await Store.open(db) as store:
            await rejudge_turn(store, run_id, None, backend, benchmark=load_benchmark(BENCH), run_policy=FAST)
        await backend.aclose()

    try:
        asyncio.run(go())
    finally:
        server.stop()
    [run] = asyncio.run(stored(db, run_id))
    return run


def test_na_on_a_dimension_the_turn_is_judged_on_is_a_judge_error_never_a_pass(tmp_path: Path) -> None:
    """KB grounding and instruction following are judged on every turn. A passing judge that said
    "na" on turn 1's KB read KB 2/2 and strict 3/3 (the turn a pass); a failing judge that said "na" on
    every dimension of turn 1 made it a strict pass (turn_taking alone, decided in code). Now that
    reply is no verdict on the turn: a judge error, counted apart and said, in no figure."""
    db = tmp_path / "arena.db"
    turns = [0, 1, 6]  # no call expected: tool use's "na" is the judge's right answer there
    live = {"judge": "heuristic", "heuristic": True}  # judged live offline (turn_taking scored), then by an LLM
    asyncio.run(record(db, run_of("p", [PASSING] * 3, turns=turns, **live), run_of("f", [PASSING] * 3, turns=turns, **live)))
    na_kb = {1: {"scores": {KB: {"verdict": "na", "reasoning": "nothing to ground"}}}}
    passing = judged_by(db, "p", lambda text: all_pass(text, na_kb))
    t = passing.tally
    assert (t.strict, t.dimensions[KB], t.dimensions[IF], t.judge_errors) == ((2, 2), (2, 2), (2, 2), [1])
    assert passing.tally.apart_text() == "1 judge error"
    error = passing.standing[1].shown.error
    assert error and "left kb_grounding unjudged (na)" in error and "instruction_following pass" in error
    dodged = {1: {"scores": {d: {"verdict": "na", "reasoning": "cannot tell"} for d in DIMS}}}
    failing = judged_by(db, "f", lambda text: run_answer(text, dodged, verdict="fail"))
    assert (failing.tally.strict, failing.tally.judge_errors) == ((0, 2), [1])  # never a pass
    assert failing.verdict(1) == "judge_error" and failing.tally.dimensions[TT] == (2, 2) and failing.judge == "openai:gpt-test"


# --- 6. an export carries no scores for turns counted apart ---------------------------------------


def test_an_export_carries_no_scores_for_turns_counted_apart(tmp_path: Path) -> None:
    """Eight turns planned: 0-2 played and judged (2 made its expected call), 3 stopped, 4 lost pace
    and 5 lost to the infrastructure (each judged by a judge that did not skip them), 6-7 never played.
    The export wrote six judged rows with scores, `turns_scored: 6` where the app counts 3, and
    listed turns 3-5's expected calls as `missing`. Now it writes what the app counts."""
    bench = load_benchmark(BENCH)
    exp = bench.turn(2).expected_calls[0]
    call = ToolCallRecord(call_id="c2", name=exp.name, args=exp.args, status="matched", response={"ok": True})
    evs: list = [started("x", list(range(8)))]
    for t, status in enumerate(["ok", "ok", "ok", "interrupted", "lost_pace", "infra_error"]):
        ev = ended("x", t, status)
        if t == 2:
            ev = ev.model_copy(update={"result": ev.result.model_copy(update={"tool_calls": [call]})})
        evs += [ev, judged("x", t, {**PASSING, "tool_use_correct": "pass"} if t >= 2 else PASSING)]
    evs.append(RunEnded(run_id="x", t_ms=9000.0, status="interrupted"))
    db = tmp_path / "arena.db"
    asyncio.run(record(db, evs))
    [run] = asyncio.run(stored(db, "x"))
    assert sorted(run.tally.rows) == [0, 1, 2]

    async def export() -> Path:
        async with await Store.open(db) as store:
            return await export_run(store, "x", tmp_path / "out", benchmark=bench)

    folder = asyncio.run(export())
    rows = [json.loads(line) for line in next(folder.glob("*_judged.jsonl")).read_text().splitlines()]
    summary = json.loads(next(folder.glob("*_summary.json")).read_text())
    assert [r["turn"] for r in rows] == [0, 1, 2]
    assert summary["turns_scored"] == len(run.tally.rows) == 3
    assert summary["function_tracking"] == {"check_repair_slots_1": {"expected_turn": 2, "actual_turn": 2,
                                                                     "status": "on_time"}}
    assert [t["expected_turn"] for t in summary["arena_tui"]["tracking"]] == [2]
    assert summary["category_totals"][KB] == 3


# --- 7. judge agreement counts the judge's own verdicts, never the code rules' ----------------------


def test_judge_agreement_counts_the_judges_own_verdicts_not_the_code_rules(conv, tmp_path, shared_data, capsys,  # noqa: F811
                                                                            monkeypatch) -> None:
    """conversation_bench turns 8-11, judged 3 times by Claude (its fake), phase 2 on: on turn 11 the
    model missed the expected call and the judge said tool use pass, fail, pass. Realignment (code)
    fails it every time, and the figure counted that as the judge agreeing 3 of 3. Now the judge's own
    verdicts count: 2 of 3 on that dimension; the verdict that counts is still the code rules' over
    the majority."""
    db = tmp_path / "a.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    asked = [0]

    def answer(text: str) -> dict[str, Any]:  # a whole-run request each time: its tool-use verdict on turn 11 flips
        k, asked[0] = asked[0], asked[0] + 1
        return all_pass(text, {11: {"scores": {TOOL: {"verdict": ["pass", "fail", "pass"][k], "reasoning": "r"}}}})

    server = FakeAnthropic(answer).start()
    try:
        code = judge_cli(db, shared_data, server, "--repeat", "3")
    finally:
        server.stop()
    out = capsys.readouterr().out
    assert code == 0 and asked[0] == 3, out

    async def judgements() -> list:
        async with await Store.open(db) as store:
            return await store.judgements(RUN)

    revisions = asyncio.run(judgements())
    majority = standing(revisions, phase=1)[11].machine
    assert majority.rule == "majority" and majority.agreement.agree[TOOL] == 2  # the judge's own: 2 of 3
    fig = run_agreement(revisions)
    judged_dims = fig.verdicts // 3
    assert fig.agree == fig.verdicts - 1 and f"judge agreement {fig.text()}" in out  # one dissent: turn 11's tool use
    assert standing(revisions)[11].scores[TOOL] == "fail"  # what counts: code's realignment over the majority
    assert judged_dims >= 4 * 2  # IF and KB on each of the four turns at least


# --- 8. a person's verdict is marked everywhere --------------------------------------------------


def test_a_persons_verdict_is_marked_on_every_surface(tmp_path: Path, capsys) -> None:
    """A person failed turn 1's KB grounding, naming the cause. The runs list and `arena-tui runs`
    showed the rate with no mark, compare printed the person's reason as the judge's, report.html's
    rows carried no mark and failure_causes.csv said the judge named the cause."""
    db = tmp_path / "arena.db"
    asyncio.run(record(db, run_of("r", [PASSING] * 3), run_of("s", [PASSING] * 3)))
    assert main(["--db", str(db), "review", "r", "--turn", "1", "kb_grounding=fail", "--reason", "the price is wrong",
                 "--by", "ann", "--cause", "kb_contradiction"]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "runs"]) == 0
    printed = capsys.readouterr().out
    listed = {ln.split()[0]: ln for ln in printed.splitlines()[1:] if ln.strip()}
    assert " 2/3 ✎1" in listed["r"] and "✎" not in listed["s"] and "✎N: N verdicts" in printed

    runs = {r.run_id: r for r in asyncio.run(stored(db, "r", "s"))}
    now = dt.datetime(2026, 3, 1, 10, tzinfo=dt.UTC)
    cells = run_cells({"status": "completed", "tally": runs["r"].tally, "rates": runs["r"].tally.dimensions}, now, [KB], "r")
    assert cells[5].plain.endswith("2/3 ✎")  # the runs list's strict pass; its legend says what ✎ is
    turn1 = compare_runs(runs["r"], runs["s"])[1]
    assert turn1.a.human == (KB,) and turn1.a.reasons == {KB: "✎ a person (ann): the price is wrong"}

    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "r", "s", str(out)]) == 0
    html = (out / "report.html").read_text()
    assert "gpt-realtime ✎1 a person&#x27;s" in html  # its leaderboard row and its run's row
    [cause] = [r for r in read_csv(out / "failure_causes.csv") if r["cause"] == "kb_contradiction"]
    assert cause["decided_by"] == "person"
