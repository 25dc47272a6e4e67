"""The cause of every failed turn (`arena_tui.judge.causes`, the list `arena_tui.spine.causes`,
docs/judging.md "Causes"): code decides what the run knows, the judge names the rest in its
structured output, the heuristic says only what word overlap tells; every failed turn of a run
with every simulator fault gets one, through the real engine, simulator, judge and store.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from arena_tui.compare.stored import load_runs
from arena_tui.judge import JudgeWorker
from arena_tui.judge.causes import mix, run_causes
from arena_tui.judge.heuristic import HeuristicJudge
from arena_tui.judge.rubric import RUBRIC, turn_taking, turn_taking_issues
from arena_tui.judge.schema import JUDGE_SCHEMA, RUN_SCHEMA, Cause, JudgeOutput
from arena_tui.spine import causes as vocabulary
from arena_tui.spine.bus import EventBus
from arena_tui.spine.events import Latencies, ReplaySummary, SessionRotated
from arena_tui.store import Store
from benchmarks.registry import load_benchmark

from .judge_helpers import bench, call, judged, result, turn

KB, IF, TOOL, TT = "kb_grounding", "instruction_following", "tool_use_correct", "turn_taking"
REPO = Path(__file__).resolve().parent.parent


def test_the_list_is_one_module_the_schema_offers_the_judges_and_the_docs_list_every_one() -> None:
    assert get_args(Cause) == tuple(vocabulary.JUDGE)
    assert JUDGE_SCHEMA["properties"]["causes"]["items"]["enum"] == list(vocabulary.JUDGE)
    assert RUN_SCHEMA["properties"]["final_judgments"]["items"]["properties"]["causes"] == JUDGE_SCHEMA["properties"]["causes"]
    assert all(c in RUBRIC for c in vocabulary.JUDGE)  # the rubric says when to use each
    doc = (REPO / "docs" / "judging.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Causes"):doc.index("\n## ", doc.index("## Causes"))]
    assert re.findall(r"^\| `(\w+)` \|", section, re.M) == list(vocabulary.CAUSES)
    # every reason turn_taking fails is a cause, and the words are the same as before
    r = result(0, text="hi", latencies=Latencies(voice_to_voice_ms=-300.0, leading_silence_ms=6000.0), overlap_ms=400.0,
               reconnects=1)
    assert [c for c, _ in turn_taking_issues(r)] == ["barge_in", "overlap", "reconnected", "slow_start"]
    assert turn_taking(r).reasoning == ("negative voice_to_voice_ms (-300 ms); user/bot overlap 400 ms >= 100 ms; "
                                        "reconnected mid-turn (1x); leading silence 6.0 s > 5 s")
    assert set(c for c, _ in turn_taking_issues(r)) <= set(vocabulary.CODE)


def test_code_decides_what_the_run_knows_and_the_judge_the_rest() -> None:
    b = bench(turn(0, [{"name": "f", "args": {"a": 1}}]), turn(1), turn(2, [{"name": "g", "args": {}}]), turn(3),
              turn(4))
    results = [
        result(0, call("f", "c0", a=2)),  # wrong arguments
        result(1, call("f", "c1", a=9)),  # a call nothing asked for
        result(2, text="", status="no_response"),  # silence, and g never made
        result(3, text="cut", interrupted=True),  # truncated, no barge-in
        result(4, session=2),  # a session whose rotation dropped history
    ]
    fails = {KB: "pass", IF: "pass", TOOL: "fail"}
    judgements = [judged(0, fails), judged(1, fails), judged(2, {KB: "pass", IF: "fail", TOOL: "fail"}),
                  judged(3, {KB: "fail", IF: "pass", TOOL: "na"}).model_copy(update={"causes": ["partial_answer"]}),
                  judged(4, {KB: "pass", IF: "fail", TOOL: "na"}, words=True)]
    lossy = SessionRotated(run_id="run1", t_ms=0.0, reason="context_budget", from_session=1, to_session=2,
                           replayed=ReplaySummary(strategy="tool_priority", dropped_messages=3))
    got = run_causes(b, results, judgements, rotations=[lossy])
    assert got == {0: ("wrong_arguments",), 1: ("unsolicited_call",), 2: ("no_answer", "missed_call"),
                   3: ("truncated", "partial_answer"), 4: ("rotation_lost_context", "words_contradict_actions")}
    # a failure nobody named: an LLM's says so, the heuristic's is its word-overlap reading (a code cause is one)
    assert run_causes(b, results[3:4], [judged(3, {KB: "fail", IF: "pass"})]) == {3: ("truncated",)}
    plain = [result(4)]
    assert run_causes(b, plain, [judged(4, {KB: "fail"})]) == {4: ("no_cause_given",)}
    heur = judged(4, {KB: "fail"}).model_copy(update={"heuristic": True})
    assert run_causes(b, plain, [heur]) == {4: ("golden_mismatch",)}
    # a turn that passes has none; one lost to our machine's pace is shown, never counted as a failure
    assert run_causes(b, [result(4), result(3, status="lost_pace")], [judged(4, {KB: "pass"})]) == {3: ("lost_pace",)}
    assert mix([got, {3: ("lost_pace",)}]) == {"wrong_arguments": 1, "unsolicited_call": 1, "no_answer": 1,
                                                "missed_call": 1, "truncated": 1, "rotation_lost_context": 1,
                                                "partial_answer": 1, "words_contradict_actions": 1}


def test_the_judges_causes_are_parsed_from_its_structured_output() -> None:
    from arena_tui.judge.schema import judgement_flags

    out = JudgeOutput.model_validate({
        "scores": {d: {"reasoning": "r", "verdict": "pass"} for d in ("kb_grounding", "instruction_following",
                                                                      "tool_use_correct", "state_tracking",
                                                                      "ambiguity_handling")},
        "root_cause": "none", "fabricated_action": False, "unexecuted_reference": False,
        "words_contradict_actions": False, "call_verdicts": [], "causes": ["wrong_arithmetic", "partial_answer"]})
    assert judgement_flags(out, heuristic=False)["causes"] == ["wrong_arithmetic", "partial_answer"]
    with pytest.raises(ValueError):
        JudgeOutput.model_validate({**out.model_dump(), "causes": ["missed_call"]})  # code's, never the judge's


# --- every fault the simulator has, through a real run ------------------------------------------

FAULTS = ("0:no_response*,1:early_call,2:barge_in=300,3:late_call,4:slow_first_audio=2500,5:wrong_call,"
          "6:empty_response*,7:wrong_call,8:disconnect=0.4,9:truncated=0.3")


async def test_every_failed_turn_of_a_run_with_every_fault_has_a_cause(tmp_path: Path, quiet_pipecat) -> None:
    from arena_tui.spine.settings import RunSettings  # deferred: the engine (Pipecat) loads only for this test
    from runners.engine import run_benchmark  # deferred: the engine (Pipecat) loads only for this test
    from runners.simulator import SimulatorServer  # deferred: the engine (Pipecat) loads only for this test
    from arena_tui.spine.faults import FAULT_KINDS, parse_faults  # deferred: the engine (Pipecat) loads only for this test

    # every kind, once at least (but `yield`, which acts on a turn's duplex cues only: demo_bench has none;
    # tests/test_duplex_engine.py fails turns with it)
    assert {f.kind for f in parse_faults(FAULTS).turns.values()} == set(FAULT_KINDS) - {"yield"}
    demo = load_benchmark("demo_bench")
    sim = SimulatorServer(demo, faults=FAULTS)
    url = await sim.start()
    try:
        async with await Store.open(tmp_path / "arena.db") as store:
            bus = EventBus()
            store.start_recording(bus)
            worker = JudgeWorker(demo, HeuristicJudge(), bus, "faults")
            judging = worker.start()
            config = RunSettings(model="sim", base_url=url, speed=10.0, faults=FAULTS,
                               watchdog={"extra_ms": 4000, "min_wall_ms": 3000})
            await run_benchmark(demo, config, bus, "faults")
            await judging
            await store.flush()
            [run] = await load_runs(store, ["faults"], lambda name: load_benchmark(name))
    finally:
        await sim.stop()
    failed = [t for t, ok in run.tally.rows.items() if not ok]
    statuses = {t: r.status for t, r in run.results.items()}
    assert len(failed) >= 5, (run.tally.rows, statuses)  # the faults did fail turns
    assert all(run.causes.get(t) for t in failed), {t: run.causes.get(t) for t in failed}
    assert not [t for t in failed if run.causes[t] == (vocabulary.NO_CAUSE_GIVEN,)], run.causes
    assert set(run.causes) <= {*failed, *(t for t, s in statuses.items() if s == "lost_pace")}
    assert "no_answer" in run.causes[0] and "empty_reply" in run.causes[6], run.causes
    assert "golden_mismatch" not in run.causes[0] + run.causes[6]  # silence explains it, not word overlap
    assert "unsolicited_call" not in run.causes.get(5, ())  # both its calls are its expected ones, made wrong
    for t, cause in ((5, "wrong_arguments"), (7, "unsolicited_call"), (3, "late_call"), (9, "truncated")):
        if t in failed:  # the code rules decide these when the turn fails
            assert cause in run.causes[t], (t, run.causes[t])


def test_a_calls_fault_is_a_cause_only_where_it_was_charged() -> None:
    """A harmless extra lookup the judge passed, on a turn that fails state tracking for something else,
    is no `unsolicited_call`; a late call whose expecting turn the judge excused is no `late_call` on
    a turn failing ambiguity handling for a guess; an absorbed missed call still is `missed_call`."""
    ST, AH = "state_tracking", "ambiguity_handling"
    upd = {"name": "upd", "args": {"n": 1}}
    b = bench(turn(0, [upd], dims=[KB, IF, TOOL, ST]), turn(1, [{"name": "reg", "args": {"s": "S1"}}], dims=[KB, IF, TOOL, AH]),
              turn(2), turn(3, [{"name": "reg", "args": {"s": "S3"}}], dims=[KB, IF, TOOL, ST]))
    results = [result(0, call("lookup", "x", q="flour"), call("upd", "u", n=1)), result(1, text="Which one?"),
               result(2, call("reg", "r", s="S1")), result(3, text="Sorry, your name again?")]
    judgements = [judged(0, {KB: "pass", IF: "pass", TOOL: "pass", ST: "fail"}).model_copy(update={"causes": ["forgotten_state"]}),
                  judged(1, {KB: "pass", IF: "pass", TOOL: "pass", AH: "fail"}).model_copy(update={"causes": ["other"]}),
                  judged(2, {KB: "pass", IF: "pass", TOOL: "na"}),
                  judged(3, {KB: "pass", IF: "pass", TOOL: "pass", ST: "fail"}, root="forgotten_state")]
    assert run_causes(b, results, judgements) == {0: ("forgotten_state",), 1: ("other",),
                                                  3: ("missed_call", "forgotten_state")}
