"""Phase-2 rules, one behaviour per test (pure functions over results and judgements)."""

from __future__ import annotations

from arena_tui.spine.events import EMPTY_RESPONSE, CallVerdict
from arena_tui.judge.backends import RetryPolicy
from arena_tui.judge.openai_judge import OpenAIJudge
from arena_tui.judge.phase2 import align, apply_rules
from arena_tui.judge.rubric import RUBRIC
from arena_tui.judge.schema import JUDGE_SCHEMA
from arena_tui.judge.whole_run import judge_run
from arena_tui.verdicts import standing_judgements
from arena_tui.judge.summary import summarize
from arena_tui.spine.benchmark import ExpectedCall
from benchmarks.registry import load_benchmark
from runners.tools import ToolResolver

from .fakes.openai_chat import FakeOpenAI
from .judge_helpers import bench, call, judged, reg, result, turn

P, F, NA = "pass", "fail", "na"
FAST = RetryPolicy(attempts=2, base_delay_s=0.01, max_delay_s=0.02)


def final(judgements, new):
    return {i: {d: s.verdict for d, s in j.scores.items()} for i, j in standing_judgements([*judgements, *new]).items()}


def test_early_call_satisfies_the_later_expecting_turn():
    b = bench(turn(1), turn(2, reg("S2").model_dump()))
    results = [result(1, call("register", "c1", name="Jo", session_id="S2")), result(2)]
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F}),
              judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F})]
    new, al = apply_rules(b, results, phase1)
    assert [(lk.expected_turn, lk.actual_turn, lk.status) for lk in al.links] == [(2, 1, "early")]
    scores = final(phase1, new)
    assert scores[2]["tool_use_correct"] == P
    assert scores[1]["tool_use_correct"] == NA  # not unsolicited: it was the later turn's call
    assert {j.rule for j in new} == {"tool_use_applicability", "realignment"}
    assert all(j.phase == 2 and j.revision == 2 for j in new)


def test_late_call_credited_where_made_and_one_failure_where_expected():
    b = bench(turn(1, reg("S1").model_dump()), turn(2), turn(3))
    results = [result(1, text="Which session?"), result(2, call("register", "c9", name="Jo", session_id="S1")), result(3)]
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F}),
              judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F}),
              judged(3, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": NA})]
    new, al = apply_rules(b, results, phase1)
    assert [(lk.expected_turn, lk.actual_turn, lk.status) for lk in al.links] == [(1, 2, "late")]
    scores = final(phase1, new)
    assert scores[1]["tool_use_correct"] == F and scores[2]["tool_use_correct"] == P
    s = summarize(b, results, [*phase1, *new])
    tool = s.dimensions["tool_use_correct"]
    assert (tool.passes, tool.denominator) == (1, 2)  # exactly one failure
    assert [(r.expected_turn, r.actual_turn, r.status) for r in s.tracking] == [(1, 2, "late")]


def test_over_clarification_absorbed_by_ambiguity_handling_only_where_scored():
    b = bench(
        turn(1, reg("S1").model_dump(), dims=["kb_grounding", "instruction_following", "tool_use_correct", "ambiguity_handling"]),
        turn(2, reg("S2").model_dump()),
    )
    results = [result(1, text="Which Jo?"), result(2, text="Which one?")]
    phase1 = [
        judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "ambiguity_handling": P},
               root="over_clarification"),
        judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F}, root="over_clarification"),
    ]
    new, _ = apply_rules(b, results, phase1)
    scores = final(phase1, new)
    assert scores[1]["ambiguity_handling"] == F and scores[1]["tool_use_correct"] == P
    assert scores[2]["tool_use_correct"] == F and "ambiguity_handling" not in scores[2]
    assert [j.rule for j in new if j.turn_index == 1] == ["penalty_absorption"]
    assert not [j for j in new if j.turn_index == 2]


def test_forgotten_state_absorbed_by_state_tracking():
    dims = ["kb_grounding", "instruction_following", "tool_use_correct", "state_tracking"]
    b = bench(turn(4, reg("S4").model_dump(), dims=dims))
    phase1 = [judged(4, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "state_tracking": P},
                     root="forgotten_state")]
    new, _ = apply_rules(b, [result(4, text="What was your name again?")], phase1)
    scores = final(phase1, new)
    assert scores[4]["state_tracking"] == F and scores[4]["tool_use_correct"] == P
    s = summarize(b, [result(4)], [*phase1, *new])
    assert s.dimensions["state_tracking"].passes == 0 and s.dimensions["tool_use_correct"].passes == 1


def test_wrong_call_is_not_absorbed():
    dims = ["kb_grounding", "instruction_following", "tool_use_correct", "state_tracking"]
    b = bench(turn(4, reg("S4").model_dump(), dims=dims))
    phase1 = [judged(4, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "state_tracking": P},
                     root="forgotten_state")]
    new, al = apply_rules(b, [result(4, call("register", "x", name="Jo", session_id="S5"))], phase1)
    assert al.links[0].status == "wrong" and new == []


ST_DIMS = ["kb_grounding", "instruction_following", "tool_use_correct", "state_tracking"]


def test_cascade_passes_state_tracking_only_after_the_earlier_turn_took_it_and_only_unfabricated():
    """The reference's cascade: a later turn asking about a call that never ran passes state_tracking
    when the turn that missed it already failed state_tracking, and the assistant invents nothing.
    Nothing else is passed (main passed every failing dimension after any missed call)."""
    b = bench(turn(1, reg("S1").model_dump(), dims=ST_DIMS), turn(2, dims=ST_DIMS), turn(3, dims=ST_DIMS))
    results = [result(1, text="What was your name?"), result(2, text="I don't see a registration yet."),
               result(3, text="Yes, you're registered!")]
    phase1 = [
        judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "state_tracking": P},
               root="forgotten_state"),
        judged(2, {"kb_grounding": F, "instruction_following": F, "tool_use_correct": NA, "state_tracking": F},
               unexecuted=True),
        judged(3, {"kb_grounding": F, "instruction_following": F, "tool_use_correct": NA, "state_tracking": F},
               unexecuted=True, fabricated=True),
    ]
    new, _ = apply_rules(b, results, phase1)
    scores = final(phase1, new)
    assert scores[1]["state_tracking"] == F and scores[1]["tool_use_correct"] == P  # absorbed there
    assert scores[2] == {"kb_grounding": F, "instruction_following": F, "tool_use_correct": NA, "state_tracking": P}
    assert scores[3]["state_tracking"] == F  # fabricated: still failed
    assert [(j.turn_index, j.rule) for j in new] == [(1, "penalty_absorption"), (2, "cascade")]


def test_no_cascade_when_the_earlier_turn_took_no_state_tracking_failure():
    b = bench(turn(1, reg("S1").model_dump()), turn(2, dims=ST_DIMS))
    results = [result(1, text="Sure."), result(2, text="I don't see a registration yet.")]
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F}),
              judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": NA, "state_tracking": F},
                     unexecuted=True)]
    new, _ = apply_rules(b, results, phase1)
    assert final(phase1, new)[2]["state_tracking"] == F and new == []


def test_cascade_needs_an_action_that_really_never_executed():
    b = bench(turn(1, reg("S1").model_dump()), turn(2))
    results = [result(1, call("register", "c1", name="Jo", session_id="S1")), result(2)]
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": P}),
              judged(2, {"kb_grounding": F, "instruction_following": P, "tool_use_correct": NA}, unexecuted=True)]
    new, _ = apply_rules(b, results, phase1)
    assert new == []


def test_unsolicited_call_on_a_no_call_turn_counts_as_tool_failure_in_denominator():
    b = bench(turn(0), turn(1), turn(2, reg("S2").model_dump()))
    results = [result(0), result(1, call("vote", "v1", session_id="S9")), result(2, call("register", "r", name="Jo", session_id="S2"))]
    phase1 = [judged(0, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": NA}),
              judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": NA}),
              judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": P})]
    new, al = apply_rules(b, results, phase1)
    assert al.unsolicited == {1: ["v1"]}
    assert [(j.turn_index, j.rule, j.scores["tool_use_correct"].verdict) for j in new] == [
        (1, "tool_use_applicability", F)]
    tool = summarize(b, results, [*phase1, *new]).dimensions["tool_use_correct"]
    assert (tool.passes, tool.denominator) == (1, 2)


def test_sparse_turn_ids_never_renumbered():
    b = bench(turn(0), turn(3, reg("A").model_dump()), turn(7), turn(12, reg("B").model_dump()))
    results = [result(0), result(3), result(7, call("register", "k", name="Jo", session_id="A")), result(12)]
    tool = {0: NA, 3: F, 7: NA, 12: P}
    phase1 = [judged(i, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": tool[i]}) for i in (0, 3, 7, 12)]
    new, al = apply_rules(b, results, phase1)
    assert [(lk.expected_turn, lk.actual_turn, lk.status) for lk in al.links] == [(3, 7, "late"), (12, None, "missed")]
    assert sorted({j.turn_index for j in new}) == [7, 12]  # 7 credited, 12 missed; 3 the judge already failed
    s = summarize(b, results, [*phase1, *new])
    assert [r.expected_turn for r in s.tracking] == [3, 12] and s.turns == 4


def test_out_of_order_transcripts_sorted():
    b = bench(turn(1, reg("A").model_dump()), turn(2), turn(3, reg("B").model_dump()))
    ordered = [result(1), result(2, call("register", "x", name="Jo", session_id="A")),
               result(3, call("register", "y", name="Jo", session_id="B"))]
    phase1 = [judged(i, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": P}) for i in (1, 2, 3)]
    a1, b1 = apply_rules(b, ordered, phase1)
    a2, b2 = apply_rules(b, list(reversed(ordered)), list(reversed(phase1)))
    assert b1 == b2 and a1 == a2
    assert [lk.status for lk in b1.links] == ["late", "matched"]


def test_list_shaped_expected_calls_matched_order_free():
    exp = [ExpectedCall(name="register", args={"name": "Jo", "session_id": s}).model_dump() for s in ("A", "B")]
    exp.append(ExpectedCall(name="conflict", args={"session_id_1": "A", "session_id_2": "B"}).model_dump())
    b = bench(turn(5, exp))
    r = result(5, call("conflict", "c3", session_id_1="A", session_id_2="B"),
               call("register", "c2", name="Jo", session_id="B"), call("register", "c1", name=" Jo", session_id="A"))
    al = align(b, [r])
    assert [(lk.expected_index, lk.call_id, lk.status) for lk in al.links] == [
        (0, "c1", "matched"), (1, "c2", "matched"), (2, "c3", "matched")]
    assert al.extra == {}


def test_judge_equivalence_allowed_for_wording_but_ids_must_match_exactly():
    exp = ExpectedCall(name="remind", args={"time": "14:00", "session_id": "S1"})
    b = bench(turn(1, exp.model_dump()), turn(2, exp.model_dump()))
    results = [result(1, call("remind", "a", time="2 PM", session_id="S1")),
               result(2, call("remind", "b", time="2 PM", session_id="S7"))]
    verdicts = [CallVerdict(call_id="a", expected_turn=1, expected_index=0, equivalent=True),
                CallVerdict(call_id="b", expected_turn=2, expected_index=0, equivalent=True)]
    al = align(b, results, verdicts)
    assert [(lk.expected_turn, lk.status, lk.via) for lk in al.links] == [(1, "matched", "judge"), (2, "wrong", None)]
    al_no = align(b, results, [])
    assert [lk.status for lk in al_no.links] == ["wrong", "wrong"]


def test_code_is_never_lenient_on_instruction_following():
    """Leniency for failed turn-taking is the judge's (prompted, about garbled words): code never
    turns a judge's instruction_following fail into a pass (main did, silence included)."""
    b = bench(turn(1))
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": F, "tool_use_correct": NA, "turn_taking": F})]
    new, _ = apply_rules(b, [result(1, overlap_ms=400.0)], phase1)
    assert new == []


def test_a_turn_with_no_answer_fails_instruction_following_whatever_the_judge_said():
    b = bench(turn(1), turn(2, reg("S2").model_dump()))
    silent = result(1, text="", status="no_response", sentinel=EMPTY_RESPONSE)
    call_only = result(2, call("register", "c2", name="Jo", session_id="S2"), text="")
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": NA, "turn_taking": F}),
              judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": P, "turn_taking": P})]
    new, _ = apply_rules(b, [silent, call_only], phase1)
    assert [(j.turn_index, j.rule) for j in new] == [(1, "no_answer")]
    assert new[0].scores["instruction_following"].verdict == F
    assert "no answer" in new[0].scores["instruction_following"].reasoning
    assert final(phase1, new)[2]["instruction_following"] == P  # a call without speech is an answer


def test_words_against_actions_fail_tool_use_and_instruction_following_under_failed_turn_taking():
    """Says it will wait for a confirmation, yet registers in the same turn, while talking over the
    user: tool use and instruction following both fail (main: instruction following alone, then
    passed by its turn-taking leniency)."""
    b = bench(turn(1, reg("S1").model_dump()))
    r = result(1, call("register", "c1", name="Jo", session_id="S1"), text="I'll wait for your go-ahead.",
               overlap_ms=400.0)
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": F, "tool_use_correct": P, "turn_taking": F},
                     words=True)]
    new, _ = apply_rules(b, [r], phase1)
    scores = final(phase1, new)
    assert scores[1] == {"kb_grounding": P, "instruction_following": F, "tool_use_correct": F, "turn_taking": F}
    assert [j.rule for j in new] == ["words_actions"]


def test_phase2_is_idempotent_and_skips_judge_errors():
    b = bench(turn(1), turn(2, reg("S").model_dump()))
    results = [result(1, call("register", "u", name="Jo", session_id="Z")), result(2)]
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": NA}),
              judged(2, {}, error="judge_error after 4 attempts: HTTP 500")]
    new, _ = apply_rules(b, results, phase1)
    assert [j.turn_index for j in new] == [1]
    again, _ = apply_rules(b, results, [*phase1, *new])
    assert again == []
    s = summarize(b, results, [*phase1, *new])
    assert s.judge_errors == [2] and s.strict.passes == 0 and s.strict.denominator == 1  # the judge error apart
    assert s.apart == {"judge_error": [2]}
    assert s.dimensions["tool_use_correct"].denominator == 1  # the errored turn is in no figure


def test_genuine_ambiguity_passes_tool_use_and_keeps_the_judges_ambiguity_verdict():
    """Asking on a genuinely ambiguous request was right: tool use passes where ambiguity_handling is
    scored, and ambiguity_handling is the judge's: its pass stands, and so does its explicit fail
    (097b9be turned that fail into a pass); nothing absorbs it where ambiguity_handling is not scored."""
    dims = ["kb_grounding", "instruction_following", "tool_use_correct", "ambiguity_handling"]
    b = bench(turn(1, reg("S1").model_dump(), dims=dims), turn(2, reg("S2").model_dump()),
              turn(3, reg("S3").model_dump(), dims=dims))
    results = [result(1, text="Which of the two Kevins?"), result(2, text="Which one?"),
               result(3, text="There are two Kevin Zhangs; which one?")]
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "ambiguity_handling": F},
                     root="genuine_ambiguity"),
              judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F}, root="genuine_ambiguity"),
              judged(3, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "ambiguity_handling": P},
                     root="genuine_ambiguity")]
    new, _ = apply_rules(b, results, phase1)
    scores = final(phase1, new)
    assert scores[1]["tool_use_correct"] == P and scores[1]["ambiguity_handling"] == F  # the judge's fail stands
    assert scores[2]["tool_use_correct"] == F  # nothing to absorb it on this turn
    assert scores[3]["tool_use_correct"] == P and scores[3]["ambiguity_handling"] == P


def test_ids_compare_exactly_but_id_lists_order_free():
    from arena_tui.judge.matching import ids_equal

    exp = ExpectedCall(name="cart", args={"product_ids": ["P1", "P2"], "cart_id": "C9", "note": "x"})
    assert ids_equal(exp, {"product_ids": ["P2", "P1"], "cart_id": "C9", "note": "something else"})
    assert not ids_equal(exp, {"product_ids": ["P2", "P3"], "cart_id": "C9"})
    assert not ids_equal(exp, {"product_ids": ["P1", "P2"], "cart_id": "c9"})
    assert not ids_equal(exp, {"product_ids": ["P1", "P2"]})


# --- issue 40 item 5: where 097b9be differed from the reference's judge without a reason ---------


def test_words_against_actions_need_a_call_made_in_the_turn():
    """A turn that only asked to confirm and made no call: the reference fails tool use only. A judge
    that set the words-against-actions flag there anyway no longer makes code fail IF (097b9be did)."""
    b = bench(turn(1, reg("S1").model_dump()))
    asked = result(1, text="Just to confirm: register you for S1?")
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F},
                     root="unnecessary_confirmation", words=True)]
    new, _ = apply_rules(b, [asked], phase1)
    assert final(phase1, new)[1] == {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F}
    assert "words_actions" not in {j.rule for j in new}


def test_asking_permission_after_completing_the_action_keeps_the_calls_credit():
    """update_event succeeded, then "Shall I go ahead and move it to March 15th?": the reference keeps
    tool use TRUE and fails IF alone. Our judge now reads it as narration after success (rule 6 says it
    is not rule 6, the flag's description says so too): it fails IF and sets no flag, and code keeps the
    call's credit, also when the whole-run judge passes tool use by itself."""
    rule6 = RUBRIC.split("\n6. ", 1)[1].split("\n7. ", 1)[0]
    assert "says it will wait" in rule6 and "asks permission" not in rule6.split("Not this rule")[0]
    assert "asking permission for an\n   action it already completed in this turn" in rule6
    assert "not: asking permission for what it already did" in JUDGE_SCHEMA["properties"]["words_contradict_actions"]["description"]
    exp = ExpectedCall(name="update_event", args={"field": "date", "new_value": "2025-03-15"})
    b = bench(turn(1, exp.model_dump()))
    r = result(1, call("update_event", "c1", field="date", new_value="2025-03-15"),
               text="Would you like me to move the event to March 15th?")
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": F, "tool_use_correct": P})]
    new, _ = apply_rules(b, [r], phase1)
    assert new == [] and final(phase1, new)[1]["tool_use_correct"] == P


def test_a_judge_that_credits_a_late_call_naming_no_fault_is_not_overruled():
    """register expected on turn 1, made on turn 2; the judge passed turn 1 naming no root cause (the
    user had not yet said which session): its pass stands (097b9be overruled it to fail). A fault it
    names (an unnecessary confirmation) still fails the expecting turn, and a call never made fails
    whatever the judge said."""
    b = bench(turn(1, reg("S1").model_dump()), turn(2))
    rs = [result(1, text="Which session would you like?"), result(2, call("register", "c2", name="Jo", session_id="S1"))]
    ok = {"kb_grounding": P, "instruction_following": P, "tool_use_correct": P}
    phase1 = [judged(1, ok), judged(2, {**ok, "tool_use_correct": NA})]
    new, al = apply_rules(b, rs, phase1)
    assert [(lk.expected_turn, lk.actual_turn, lk.status) for lk in al.links] == [(1, 2, "late")]
    assert final(phase1, new)[1]["tool_use_correct"] == P and final(phase1, new)[2]["tool_use_correct"] == P
    faulted = [judged(1, ok, root="unnecessary_confirmation"), phase1[1]]
    assert final(faulted, apply_rules(b, rs, faulted)[0])[1]["tool_use_correct"] == F
    never = [rs[0], result(2)]
    assert final(phase1, apply_rules(b, never, phase1)[0])[1]["tool_use_correct"] == F


def test_an_extra_call_beside_the_expected_ones_keeps_the_judges_tool_verdict():
    """A harmless extra lookup the judge passed stands; one it failed fails; a call on a turn that
    expects none fails whatever the judge said (the reference's explicit rule)."""
    exp = ExpectedCall(name="update_order", args={"order_id": "ORD-5521", "action": "remove", "item_name": "Maple Candy"})
    b = bench(turn(1, exp.model_dump()), turn(2))
    rs = [result(1, call("lookup_item", "x", query="maple candy"), call("update_order", "u", **exp.args)),
          result(2, call("lookup_item", "y", query="flour"))]
    for judge in (P, F):
        phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": judge}),
                  judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": P})]
        scores = final(phase1, apply_rules(b, rs, phase1)[0])
        assert scores[1]["tool_use_correct"] == judge and scores[2]["tool_use_correct"] == F


def test_a_cascade_never_passes_the_state_tracking_failure_of_the_turns_own_missed_call():
    """Turn 2 asks about turn 1's never-run registration (cascade) and itself misses its own expected
    call from forgotten state: that penalty lands on state_tracking and stays (097b9be's cascade then
    passed it, so the missed call counted nowhere)."""
    b = bench(turn(1, reg("S1").model_dump(), dims=ST_DIMS), turn(2, reg("S2").model_dump(), dims=ST_DIMS))
    rs = [result(1, text="What was your name again?"), result(2, text="I have no registration; your name?")]
    phase1 = [judged(1, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "state_tracking": P},
                     root="forgotten_state"),
              judged(2, {"kb_grounding": P, "instruction_following": P, "tool_use_correct": F, "state_tracking": P},
                     root="forgotten_state", unexecuted=True)]
    new, _ = apply_rules(b, rs, phase1)
    scores = final(phase1, new)
    assert scores[2]["state_tracking"] == F and scores[2]["tool_use_correct"] == P
    assert [(j.turn_index, j.rule) for j in new] == [(1, "penalty_absorption"), (2, "penalty_absorption")]


async def test_grocery_turn_24_a_harmless_extra_lookup_the_judge_passed_stays_passed(shared_data):
    """grocery_bench turn 24 ("go back to just one bag of flour"; its guidance: no lookup required). The
    model looks flour up anyway, then makes the expected update_order. A scripted judge server answers
    the whole-run request passing the turn; phase 2 keeps that pass (097b9be failed it as an extra call)."""
    grocery = load_benchmark(shared_data / "grocery_bench")
    t = grocery.turn(24)
    assert "Do not require a redundant lookup_item call" in (t.tool_use_guidance or "")
    resolver = ToolResolver(t)
    exp = t.expected_calls[0]
    calls = [resolver.resolve(name, args).record(cid, name, args)
             for cid, name, args in (("c1", "lookup_item", {"query": "flour"}), ("c2", exp.name, exp.args))]
    assert [c.status for c in calls] == ["unexpected_tool_call", "matched"]
    r = result(24, *calls, text="Updated to one bag of All-Purpose Flour. Your subtotal is now one sixty-two seventy.")
    server = FakeOpenAI().start()
    backend = OpenAIJudge("gpt-test", base_url=server.base_url, api_key="sk-test")
    try:
        out = await judge_run(grocery, [r], backend, run_id="g", policy=FAST)
    finally:
        await backend.aclose()
        server.stop()
    sent = server.chat_requests[0]["messages"][2]["content"]
    assert "tool-use guidance: Do not require a redundant lookup_item call" in sent and "lookup_item" in sent
    phase1 = [j for j in out if j.turn_index == 24]
    assert phase1[0].scores["tool_use_correct"].verdict == P
    new, al = apply_rules(grocery, [r], out)
    assert al.extra == {24: ["c1"]}
    assert final(phase1, new)[24]["tool_use_correct"] == P
