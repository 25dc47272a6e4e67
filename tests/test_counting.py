"""One counting rule for every figure (`arena_tui.verdicts` for pass rates, `arena_tui.timing` for
latency), read back from every place a figure is shown. Each case below was a defect on main
(1a55c4a): a turn never played charged as a model failure (`KB 30 ST 0 AH 0` beside `TT 67`), a
turn stopped with `S` judged FAIL, a run whose endpoint never answered scored 0/4, one late turn
dropping a whole run's latencies, a resumed run's idle time counted as its duration, a stopped or
lost turn counted as done, and four names for one figure.

The runs are tests/counting_runs.py's, recorded through the real Store.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
from pathlib import Path

import pytest

from arena_tui.campaign import records
from arena_tui.campaign.spec import Cell, build_spec
from arena_tui.cli import main
from arena_tui.compare.leaderboard import build_leaderboard, run_figures
from arena_tui.compare.stored import load_runs, run_tally
from arena_tui.compare.pair import compare_runs
from arena_tui.judge import JudgeWorker, summarize
from arena_tui.judge.heuristic import HeuristicJudge
from arena_tui.orchestration.headless import Progress, Recorded
from arena_tui.run_view import RunState
from arena_tui.spine.bus import EventBus
from arena_tui.spine.times import duration_text
from arena_tui.store import Store
from arena_tui.stats import median
from arena_tui.timing import UntrustedTurns, v2v_values
from arena_tui.verdicts import STRICT, counts, tally
from arena_tui.widgets.dimensions import cell_strict
from arena_tui.widgets.run_header import figures_text
from arena_tui.widgets.turn_table import row_cells
from benchmarks.registry import load_benchmark

from .counting_runs import (
    interrupted_run,
    paced_run,
    record,
    resumed_run,
    sim_run,
    started,
    unanswered_run,
    ended,
)

KB, TT = "kb_grounding", "turn_taking"


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


async def stored(db: Path, *run_ids: str) -> list:
    async with await Store.open(db) as store:
        return await load_runs(store, list(run_ids), lambda name: load_benchmark(name))


def state_of(events: list) -> RunState:
    state = RunState(events[0].run_id)
    state.apply_all(events)
    return state


# --- turns the model never got: counted apart, never its failure nor its pass ---------------------


def test_unplayed_and_stopped_turns_are_counted_apart_on_every_surface(tmp_path: Path, capsys) -> None:
    """Ten turns planned, three played and judged, the fourth stopped with `S` (judged FAIL by a judge
    that did not skip it), six never played: every figure is over the three played turns, the
    same for every dimension, and every surface says `6 not played · 1 stopped`."""
    db = tmp_path / "arena.db"
    events = interrupted_run("stopped")
    asyncio.run(record(db, events))
    [run] = asyncio.run(stored(db, "stopped"))
    t = run_tally(run)
    assert t.strict == (2, 3) and t.dimensions[KB] == (2, 3) and t.dimensions[TT] == (3, 3)
    assert t.apart == {"not_played": [4, 5, 6, 7, 8, 9], "interrupted": [3]}
    apart = "6 not played · 1 stopped"
    assert t.apart_text() == apart

    bench = load_benchmark("demo_bench")
    results = [ev.result for ev in events if ev.kind == "turn_ended"]
    s = summarize(bench, results, [ev for ev in events if ev.kind == "judgement"], list(range(10)))
    assert (s.strict.passes, s.strict.denominator) == (2, 3) and s.apart == t.apart
    assert (s.dimensions[KB].denominator, s.dimensions[TT].denominator) == (3, 3)
    state = state_of(events)
    assert state.tally().strict == (2, 3) and state.turns_done == 3
    assert figures_text(state).plain == f"{STRICT} 2/3 · counted apart: {apart}"
    verdicts = [row_cells(state.turns[i], state.dimensions)[2].plain for i in (3, 4)]
    assert verdicts == ["STOPPED", "NOT PLAYED"]  # never FAIL

    board = build_leaderboard([run])
    [row] = board.rows
    assert (row.strict.passes, row.strict.n, row.dimensions[KB].n, row.dimensions[TT].n) == (2, 3, 3, 3)
    assert row.apart_text == apart

    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "stopped", str(out)]) == 0
    [csv_row] = read_csv(out / "run_results.csv")
    assert (csv_row["turns_scored"], csv_row["kb_grounding_applicable"], csv_row["turn_taking_applicable"]) == ("3",) * 3
    assert (csv_row["turns_not_played"], csv_row["turns_interrupted"], csv_row["fail_rows"]) == ("6", "1", "1")
    assert apart in (out / "summary.md").read_text() and apart in (out / "report.html").read_text()

    async def campaign() -> str:
        spec = build_spec({}, {"benchmarks": "demo_bench", "models": "gpt-realtime", "repeats": 1})
        async with await Store.open(db) as store:
            await records.create(store, "camp", spec)
            await records.set_cell(store, "camp", Cell("demo_bench", "gpt-realtime", 1), status="done", run_id="stopped")
            [view] = (await records.campaign_view(store, "camp")).cells
            return cell_strict(view).plain

    assert asyncio.run(campaign()) == f" 67% 2/3 · {apart}"  # as the campaign screen and `campaign show` say it
    capsys.readouterr()
    assert main(["--db", str(db), "runs"]) == 0
    listed = capsys.readouterr().out
    assert "3/10" in listed and " 2/3 " in listed and apart in listed


def test_the_judge_never_judges_a_turn_the_model_did_not_get(tmp_path: Path) -> None:
    """The live judge skips a stopped turn (and one lost to the infrastructure) as it skips a lost-pace
    one; `judge --turn` refuses to judge it, saying why."""
    bench = load_benchmark("demo_bench")

    async def judge_live() -> list:
        bus = EventBus()
        worker = JudgeWorker(bench, HeuristicJudge(), bus, "live", phase2=False)
        judgements = bus.subscribe(lambda e: e.kind == "judgement")
        task = worker.start()
        for ev in [started("live", [0, 1, 2]), ended("live", 0), ended("live", 1, "interrupted"),
                   ended("live", 2, "infra_error", v2v=None, error="HTTP 503 from the provider")]:
            bus.publish(ev)
        bus.publish(interrupted_run("live")[-1])  # run_ended
        await task
        bus.close()
        return [ev.turn_index async for ev in judgements]

    assert asyncio.run(judge_live()) == [0]
    db = tmp_path / "arena.db"
    asyncio.run(record(db, interrupted_run("stopped")))
    assert main(["--db", str(db), "judge", "stopped", "--turn", "3", "--judge", "heuristic"]) == 2


def test_a_run_the_model_never_got_has_no_scored_row_one_it_never_answered_counts(tmp_path: Path, capsys) -> None:
    """An unreachable endpoint (every turn `infra_error`): the model got no turn, no leaderboard
    row, no report row, `no answer` in the runs list. A model that never replied (every turn
    `no_response`) got them: its own row counts each turn failed, and says it never answered
    (tests/test_verdict_rows.py, on every surface); the run beside them keeps its row."""
    db = tmp_path / "arena.db"
    asyncio.run(record(db, unanswered_run("down"), unanswered_run("mute", "no_response"), paced_run("fine")))
    runs = asyncio.run(stored(db, "down", "mute", "fine"))
    board = build_leaderboard(runs)
    assert [f.run.run_id for f in board.runs] == ["fine", "mute"]
    assert [r.model for r in board.rows] == ["gpt-realtime", "local:llama3.2 [heuristic judge]"]
    assert board.unscored == {"down": "the model got no turn: 4 infra failure"} and board.never_answered == ["mute"]
    assert (board.rows[1].strict.passes, board.rows[1].strict.n) == (0, 4)
    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "all", str(out)]) == 0
    assert [r["run_id"] for r in read_csv(out / "run_results.csv")] == ["fine", "mute"]
    md = (out / "summary.md").read_text()
    assert "not scored down: the model got no turn: 4 infra failure" in md and "| local:llama3.2 [heuristic judge] |" in md
    capsys.readouterr()
    assert main(["--db", str(db), "runs"]) == 0
    listed = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()[1:]}
    assert "no answer" in listed["down"] and "4 infra failure" in listed["down"] and "0/4" in listed["down"]
    assert "0/4 never answered — check the setup" in listed["mute"] and "no answer" not in listed["fine"]


# --- latency: one late turn is left out, the run's other turns count ----------------------------


def test_an_untrusted_latency_is_marked_and_left_out_alone(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    events = paced_run("paced")
    asyncio.run(record(db, events, paced_run("other")))
    runs = {r.run_id: r for r in asyncio.run(stored(db, "paced", "other"))}
    run = runs["paced"]
    assert run.untrusted == {1} and run.latency_excluded is None  # the run counts, its turn 1 does not
    f = run_figures(run)
    assert (f.v2v, f.untrusted, f.strict.n) == ([1000.0, 1200.0], 1, 3)  # its verdict stands
    [row] = build_leaderboard(list(runs.values())).rows
    assert (row.v2v.n, row.v2v.p50, row.untrusted) == (4, 1100.0, 2)  # each run's 1000 and 1200 count, 1584 not
    assert compare_runs(run, runs["other"])[1].a.voice_to_voice_ms is None

    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "paced", str(out)]) == 0
    [csv_row] = read_csv(out / "run_results.csv")
    assert (csv_row["voice_to_voice_n"], csv_row["latency_untrusted_turns"], csv_row["latency_excluded"]) == ("2", "1", "")

    state = state_of(events)
    assert [state.turns[i].untrusted for i in range(3)] == [False, True, False]
    assert row_cells(state.turns[1], state.dimensions)[4].plain == "1584!"  # marked where shown
    printed = io.StringIO()
    Progress(3, printed).summary(printed, None, recorded=Recorded([e.result for e in events if e.kind == "turn_ended"],
                                                                   untrusted={1}))
    text = printed.getvalue()
    assert re.search(r"^ +1  ok +1584! ", text, re.M) and "latency untrusted" in text
    assert "median v2v 1,100 ms over 2 turn(s), 1 untrusted left out" in text


def test_an_earlier_takes_pacing_notice_leaves_a_later_take_trusted() -> None:
    assert UntrustedTurns.of([("error", 1, "pacing"), ("turn_ended", 1, None)]) == {1}
    assert UntrustedTurns.of([("error", 1, "pacing"), ("turn_ended", 1, None), ("turn_ended", 1, None)]) == set()
    assert UntrustedTurns.of([("error", 1, "provider"), ("turn_ended", 1, None)]) == set()


def test_the_readme_states_the_pace_thresholds_the_code_uses() -> None:
    from runners.pace import PACE_LOST_MS, TURN_INVALID_MS

    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    assert f"{PACE_LOST_MS:.0f} ms (wall) late or more, its latencies are untrusted" in readme
    assert f"{TURN_INVALID_MS:.0f} ms (wall) late or more, the turn is recorded `lost_pace`" in readme


# --- what a row is: the judge kind and injected faults are part of it ----------------------------


def test_faults_and_the_judge_kind_are_part_of_a_rows_identity(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    asyncio.run(record(db, sim_run("clean"), sim_run("faulty", faults="1:no_response*"), sim_run("llm", judge="openai:x"),
                       sim_run("both", mixed=True)))
    runs = asyncio.run(stored(db, "clean", "faulty", "llm", "both"))
    board = build_leaderboard(runs)
    # "both": judged by the heuristic, one of its two turns again by an LLM: one judge counts, the one
    # that judged the run (`verdicts.run_judge`), never a blend of the two
    assert {r.model: len(r.runs) for r in board.rows} == {
        "sim [simulator, heuristic judge]": 2, "sim [simulator, heuristic judge, faults: 1:no_response*]": 1,
        "sim [simulator]": 1}
    both = next(r for r in runs if r.run_id == "both")
    assert both.judge == "heuristic" and both.tally.strict == (2, 2) and both.identity == runs[0].identity
    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "all", str(out)]) == 0
    kinds = {(r["turn"], r["judge"]): r["runs"] for r in read_csv(out / "consistency_turn_summary.csv")}
    # the reference pools every run of a benchmark turn; never across judges here
    assert kinds == {(t, k): n for t in ("0", "1") for k, n in (("openai:x", "1"), ("heuristic", "3"))}


# --- durations, progress, names --------------------------------------------------------------


def test_a_resumed_runs_duration_is_the_time_it_ran(tmp_path: Path, capsys) -> None:
    """0:37, ten idle minutes, 1:50: it ran 2:27, not 12:27, in `runs`, the runs list and the header."""
    db = tmp_path / "arena.db"
    events = resumed_run("resumed")
    asyncio.run(record(db, events))

    async def row():
        async with await Store.open(db) as store:
            return await store.get_run("resumed")

    assert duration_text(asyncio.run(row()).active_s() * 1000) == "02:27"
    assert duration_text(state_of(events).elapsed_ms()) == "02:27"
    assert main(["--db", str(db), "runs"]) == 0
    assert " 02:27" in capsys.readouterr().out


def test_a_stopped_or_lost_turn_is_not_done(tmp_path: Path, capsys) -> None:
    db = tmp_path / "arena.db"
    evs = [started("r", [0, 1, 2, 3]), ended("r", 0), ended("r", 1, "lost_pace"), ended("r", 2, "interrupted")]
    asyncio.run(record(db, [*evs, interrupted_run("r")[-1]]))
    assert main(["--db", str(db), "runs"]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert " 1/4 " in line and "1 not played · 1 stopped · 1 lost pace" in line
    assert state_of(evs).turns_done == 1 and not counts("lost_pace") and not counts("interrupted")


def test_one_name_for_the_strict_figure_everywhere(tmp_path: Path, capsys) -> None:
    """`strict (all dims pass)`, `pass (all)`, `turn pass (all dimensions, ours)` and `strict pass`
    were one figure; `pass (t∧i∧kb)` was cryptic. One name each, from `verdicts`, on every surface."""
    from arena_tui.judge.summary import render_text
    from arena_tui.compare.columns import board_columns

    db = tmp_path / "arena.db"
    asyncio.run(record(db, paced_run("p")))
    out = tmp_path / "report"
    assert main(["--db", str(db), "report", "p", str(out)]) == 0
    assert "| strict pass | tool+IF+KB pass |" in (out / "summary.md").read_text()
    assert [c.label for c in board_columns([])[2:4]] == ["strict pass", "tool+IF+KB pass"]
    events = paced_run("p")
    s = summarize(load_benchmark("demo_bench"), [e.result for e in events if e.kind == "turn_ended"],
                  [e for e in events if e.kind == "judgement"])
    assert "\nstrict pass " in render_text(s)
    capsys.readouterr()
    assert main(["--db", str(db), "runs"]) == 0 and "STRICT PASS" in capsys.readouterr().out
    old = ("strict (all dims", "pass (all)", "turn pass (all dimensions", "t∧i∧kb", "miss/unj")
    root = Path(__file__).parents[1] / "arena_tui"
    said = [(p.name, o) for p in root.rglob("*.py") for o in old if o in p.read_text()]
    assert said == []


def test_judgements_alone_and_the_statuses_agree() -> None:
    """The tally of a run whose turns all count equals the tally of its judgements alone."""
    events = paced_run("x")
    judgements = [e for e in events if e.kind == "judgement"]
    with_rows = tally(judgements, {i: "ok" for i in range(3)}, [0, 1, 2])
    assert with_rows.strict == tally(judgements).strict == (3, 3) and with_rows.apart == {}


@pytest.mark.parametrize("status", ["infra_error", "error", "lost_pace", "interrupted"])
def test_every_status_not_the_models_is_said_apart(status: str) -> None:
    t = tally([], {0: "ok", 1: status}, [0, 1, 2])
    assert t.apart == {"not_played": [2], status: [1], "unjudged": [0]} and t.strict == (0, 0)


# --- the resume summary: the whole run, as the report counts it ----------------------------------


async def _stop_at_turn_2(db: Path) -> None:
    """A simulator run of demo_bench's turns 0-3 at speed 20, judged, stopped while turn 2 plays."""
    from arena_tui.spine.settings import RunSettings

    from .test_resume import stop_at_turn

    bench = load_benchmark("demo_bench")
    async with await Store.open(db) as store:
        bus = EventBus()
        rec = store.start_recording(bus)
        judging = JudgeWorker(bench, HeuristicJudge(), bus, "resumed-run").start()
        config = RunSettings(model="sim", speed=20.0, greeting={"enabled": False}, turns=[0, 1, 2, 3])
        await stop_at_turn(bench, config, bus, "resumed-run", 2)
        await judging
        bus.close()
        await rec


def test_the_resume_summary_counts_the_whole_run_as_the_report_does(tmp_path: Path, capsys) -> None:
    """It said `turns 2/2 … median v2v` of the resumed turns alone and printed no per-dimension
    table; now its summary is the whole run's, the report's figures."""
    db = tmp_path / "arena.db"
    asyncio.run(_stop_at_turn_2(db))
    capsys.readouterr()
    assert main(["--db", str(db), "resume", "resumed-run", "--judge", "heuristic"]) == 0
    out = capsys.readouterr().out
    runs = asyncio.run(stored(db, "resumed-run"))
    t = run_tally(runs[0])
    lost = t.uncounted.get("lost_pace", [])
    if lost:  # a loaded machine: the resumed turn is no measurement, said apart (scripts/test.sh reruns)
        pytest.fail(f"turn(s) {lost} lost pace on this loaded machine")
    assert "turns 4/4 done: " in out  # the whole run, not the two resumed turns
    whole = median(v2v_values(runs[0].results.values(), runs[0].untrusted))  # every turn of the run (speed 20)
    assert f"median v2v {whole:,.0f} ms (20× — not comparable)" in out
    passed, n = t.strict
    assert re.search(rf"^strict pass +{passed}/{n} ", out, re.M), out  # the per-dimension table, the report's counts
    for dim, (k, m) in t.dimensions.items():
        assert re.search(rf"^{dim} +{k}/{m} ", out, re.M), (dim, out)
