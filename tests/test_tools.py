"""Tool-call resolution: canonical matching and the scripted answers, on made-up and real turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena_tui.spine.events import ToolCallRecord
from arena_tui.spine.benchmark import ExpectedCall, Turn
from arena_tui.spine.calls import args_match, canonical_args
from runners.tools import (
    ARG_MISMATCH,
    NOT_AVAILABLE_MESSAGE,
    UNEXPECTED_TOOL_CALL,
    UNPARSED_ARGS_KEY,
    Resolution,
    ToolResolver,
    duplicate_payload,
    error_payload,
    not_available_payload,
    parse_args,
    success_payload,
)




def real_turn(shared_data: Path, bench: str, index: int) -> Turn:
    for line in (shared_data / bench / "turns.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["turn_index"] == index:
            return Turn.model_validate(row)
    raise AssertionError(f"{bench} has no turn {index}")


def make_turn(rfc, resp=None, flexible=None) -> Turn:
    return Turn(
        turn_index=0,
        input="x",
        golden_text="y",
        required_function_call=rfc,
        function_call_response=resp,
        flexible_args=flexible or [],
    )


# ---------------------------------------------------------------- canonical_args


def test_canonical_strips_strings_recursively():
    got = canonical_args({"a": "  hi ", "b": {"c": [" x", {"d": "y  "}]}, "n": 3, "f": None})
    assert got == {"a": "hi", "b": {"c": ["x", {"d": "y"}]}, "n": 3, "f": None}


@pytest.mark.parametrize(
    ("raw", "want"),
    [("9:00", "09:00"), (" 9:15 ", "09:15"), ("10:30", "10:30"), ("9:00 AM", "9:00 AM"), ("9:60", "9:60"),
     ("at 9:00", "at 9:00"), ("19:05", "19:05"), ("9:5", "9:5")],
)
def test_canonical_time_only_when_exactly_a_time(raw, want):
    assert canonical_args({"time": raw}) == {"time": want}


def test_canonical_time_inside_nested_structures():
    assert canonical_args({"slots": [{"t": "7:45"}]}) == {"slots": [{"t": "07:45"}]}


def test_canonical_product_ids_order_free_only_for_that_key():
    assert canonical_args({"product_ids": ["X1940", " X1490"]}) == {"product_ids": ["X1490", "X1940"]}
    assert canonical_args({"add_ons": ["photographer", "dj"]}) == {"add_ons": ["photographer", "dj"]}
    nested = canonical_args({"filter": {"product_ids": ["b", "a"]}})
    assert nested == {"filter": {"product_ids": ["a", "b"]}}


def test_canonical_does_not_mutate_input():
    args = {"product_ids": ["b", "a"], "q": " x "}
    canonical_args(args)
    assert args == {"product_ids": ["b", "a"], "q": " x "}


# ---------------------------------------------------------------- args_match


def test_args_match_exact_and_case_sensitive():
    exp = ExpectedCall(name="f", args={"name": "Jennifer Smith", "session_id": "929703"})
    assert args_match(exp, {"name": " Jennifer Smith", "session_id": "929703 "})
    assert not args_match(exp, {"name": "jennifer smith", "session_id": "929703"})
    assert not args_match(exp, {"name": "Jennifer Smith"})


def test_args_match_type_sensitive_but_numbers_by_value():
    exp = ExpectedCall(name="f", args={"guest_count": 80, "discount": False})
    assert args_match(exp, {"guest_count": 80, "discount": False})
    assert args_match(exp, {"guest_count": 80.0, "discount": False})
    assert not args_match(exp, {"guest_count": "80", "discount": False})
    assert not args_match(exp, {"guest_count": 80, "discount": 0})
    assert not args_match(exp, {"guest_count": 80, "discount": None})


def test_args_match_extra_keys_are_a_mismatch():
    exp = ExpectedCall(name="update_order", args={"order_id": "ORD-5521", "action": "remove"})
    assert not args_match(exp, {"order_id": "ORD-5521", "action": "remove", "quantity": 1})
    nested = ExpectedCall(name="f", args={"item": {"id": "1"}})
    assert not args_match(nested, {"item": {"id": "1", "extra": 2}})


def test_args_match_nested_lists_in_order():
    exp = ExpectedCall(name="get_quote", args={"add_ons": ["dj", "photographer"]})
    assert args_match(exp, {"add_ons": ["dj", " photographer"]})
    assert not args_match(exp, {"add_ons": ["photographer", "dj"]})
    assert not args_match(exp, {"add_ons": ["dj"]})


def test_args_match_flexible_present_non_empty_not_compared():
    exp = ExpectedCall(name="lookup_item", args={"query": "honey"}, flexible_args=["query"])
    assert args_match(exp, {"query": "raw honey jar"})
    assert not args_match(exp, {"query": "   "})
    assert not args_match(exp, {"query": None})
    assert not args_match(exp, {"query": []})
    assert not args_match(exp, {})


def test_args_match_flexible_name_absent_from_expected_is_tolerated():
    exp = ExpectedCall(name="f", args={"to": "a@b.c"}, flexible_args=["subject"])
    assert args_match(exp, {"to": "a@b.c"})
    assert args_match(exp, {"to": "a@b.c", "subject": "Hi"})
    assert not args_match(exp, {"to": "a@b.c", "cc": "x"})


def test_args_match_time_and_product_ids(shared_data):
    turn = real_turn(shared_data, "product_bench", 4)
    (exp,) = turn.expected_calls
    assert exp.args["product_ids"] == ["X1490", "X1940"]
    assert args_match(exp, {"product_ids": ["X1940", "X1490"]})
    assert not args_match(exp, {"product_ids": ["X1940"]})
    (exp,) = real_turn(shared_data, "appointment_bench", 10).expected_calls
    assert exp.args["time"] == "09:15"
    assert args_match(exp, {**exp.args, "time": "9:15"})
    assert args_match(exp, {**exp.args, "time": " 9:15"})
    assert not args_match(exp, {**exp.args, "time": "9:30"})
    assert not args_match(exp, {**exp.args, "time": "9:15 AM"})


# ---------------------------------------------------------------- payloads


def test_payload_builders_shape():
    assert not_available_payload() == {"status": "not_available", "message": NOT_AVAILABLE_MESSAGE}
    assert success_payload() == {"status": "success"}
    assert duplicate_payload() == {"status": "duplicate_skipped"}
    exp = ExpectedCall(name="g", args={"a": 1})
    err = error_payload(ARG_MISMATCH, "g", {"a": 2}, exp)
    assert set(err) == {"status", "error_code", "message", "called_function", "called_args",
                        "expected_function", "expected_args"}
    assert (err["status"], err["error_code"], err["expected_function"], err["expected_args"]) == (
        "error", ARG_MISMATCH, "g", {"a": 1})
    none = error_payload(UNEXPECTED_TOOL_CALL, "h", {}, None)
    assert none["expected_function"] is None and none["expected_args"] is None


def test_parse_args():
    assert parse_args(None) == {} and parse_args("") == {}
    assert parse_args('{"a": 1}') == {"a": 1}
    assert parse_args({"a": 1}) == {"a": 1}
    assert parse_args("{not json") == {UNPARSED_ARGS_KEY: "{not json"}
    assert parse_args("[1]") == {UNPARSED_ARGS_KEY: "[1]"}


# ---------------------------------------------------------------- resolver: single call


def test_no_call_expected_is_not_available():
    r = ToolResolver(make_turn(None))
    res = r.resolve("lookup_item", {"query": "milk"})
    assert res.status == "not_available"
    assert res.response == {"status": "not_available", "message": NOT_AVAILABLE_MESSAGE}
    assert res.expected_index is None and not res.ends_session and not res.is_duplicate
    assert r.unmatched_expected() == []


def test_single_call_matched_gets_its_scripted_response():
    turn = make_turn({"name": "check", "args": {"id": "1"}}, {"status": "success", "x": [1]})
    r = ToolResolver(turn)
    res = r.resolve("check", {"id": " 1"})
    assert (res.status, res.expected_index, res.response) == ("matched", 0, {"status": "success", "x": [1]})
    assert r.unmatched_expected() == []
    # the payload is a copy: an engine mutating it cannot change the benchmark
    res.response["x"].append(2)
    assert turn.function_call_response == {"status": "success", "x": [1]}


def test_matched_without_scripted_response_is_success():
    r = ToolResolver(make_turn({"name": "check", "args": {}}))
    assert r.resolve("check", {}).response == {"status": "success"}


def test_wrong_name_is_unexpected_tool_call():
    r = ToolResolver(make_turn({"name": "check", "args": {"id": "1"}}, {"ok": 1}))
    res = r.resolve("other", {"q": 1})
    assert res.status == "unexpected_tool_call"
    assert res.response["error_code"] == UNEXPECTED_TOOL_CALL
    assert (res.response["called_function"], res.response["called_args"]) == ("other", {"q": 1})
    assert (res.response["expected_function"], res.response["expected_args"]) == ("check", {"id": "1"})
    assert res.expected_index is None
    assert r.unmatched_expected() == [0]


def test_wrong_args_is_arg_mismatch_then_right_args_still_match():
    r = ToolResolver(make_turn({"name": "check", "args": {"id": "1"}}, {"ok": 1}))
    bad = r.resolve("check", {"id": "2"})
    assert bad.status == "arg_mismatch" and bad.response["error_code"] == ARG_MISMATCH
    assert bad.response["called_args"] == {"id": "2"} and bad.response["expected_args"] == {"id": "1"}
    good = r.resolve("check", {"id": "1"})
    assert (good.status, good.response) == ("matched", {"ok": 1})


def test_duplicate_same_canonical_args():
    r = ToolResolver(make_turn({"name": "book", "args": {"time": "09:00"}}, {"status": "booked"}))
    first = r.resolve("book", {"time": "9:00"})
    again = r.resolve("book", {"time": " 09:00 "})
    assert first.status == "matched"
    assert (again.status, again.is_duplicate, again.response, again.expected_index) == (
        "duplicate_skipped", True, {"status": "duplicate_skipped"}, None)


def test_repeat_of_a_wrong_call_is_duplicate():
    r = ToolResolver(make_turn({"name": "check", "args": {"id": "1"}}, {"ok": 1}))
    assert r.resolve("check", {"id": "2"}).status == "arg_mismatch"
    assert r.resolve("check", {"id": "2"}).status == "duplicate_skipped"


def test_expected_call_again_with_new_args_after_consumed_is_unexpected():
    r = ToolResolver(make_turn({"name": "check", "args": {"id": "1"}}, {"ok": 1}))
    r.resolve("check", {"id": "1"})
    res = r.resolve("check", {"id": "9"})
    assert res.status == "unexpected_tool_call"
    assert res.response["expected_function"] is None and res.response["expected_args"] is None


def test_end_session_expected_without_response():
    r = ToolResolver(make_turn({"name": "end_session", "args": {}}))
    res = r.resolve("end_session", {})
    assert (res.status, res.response, res.ends_session, res.expected_index) == (
        "matched", {"status": "success"}, True, 0)
    assert r.unmatched_expected() == []
    assert r.resolve("end_session", {}).status == "duplicate_skipped"


def test_end_session_unexpected_still_ends():
    for turn in (make_turn(None), make_turn({"name": "check", "args": {}}, {"ok": 1})):
        r = ToolResolver(turn)
        res = r.resolve("end_session", {})
        assert (res.status, res.response, res.ends_session, res.expected_index) == (
            "end_session", {"status": "success"}, True, None)


def test_end_session_real_turns(shared_data):
    for bench, idx in [("grocery_bench", 29), ("conversation_bench", 74)]:
        r = ToolResolver(real_turn(shared_data, bench, idx))
        res = r.resolve("end_session", {})
        assert res.ends_session and res.status == "matched" and res.response == {"status": "success"}


def test_resolution_is_frozen_and_records():
    res = Resolution(status="matched", response={"a": 1}, expected_index=0)
    with pytest.raises(Exception):
        res.status = "arg_mismatch"  # type: ignore[misc]
    rec = res.record("call_1", "f", {"x": 1}, t_ms=12.5)
    assert isinstance(rec, ToolCallRecord)
    assert (rec.call_id, rec.status, rec.expected_index, rec.t_ms, rec.response) == (
        "call_1", "matched", 0, 12.5, {"a": 1})


def test_history_keeps_every_call():
    r = ToolResolver(make_turn(None))
    r.resolve("a", {"x": 1})
    r.resolve("a", {"x": 1})
    assert [(n, a, res.status) for n, a, res in r.history] == [
        ("a", {"x": 1}, "not_available"), ("a", {"x": 1}, "duplicate_skipped")]


# ---------------------------------------------------------------- resolver: real list-shaped turns


def test_grocery_16_each_lookup_gets_its_own_result_in_any_order(shared_data):
    turn = real_turn(shared_data, "grocery_bench", 16)
    r = ToolResolver(turn)
    vanilla = r.resolve("lookup_item", {"query": "vanilla extract"})
    honey = r.resolve("lookup_item", {"query": "Honey"})
    balsamic = r.resolve("lookup_item", {"query": "balsamic"})
    assert [x.expected_index for x in (vanilla, honey, balsamic)] == [2, 0, 1]
    assert vanilla.response["results"][0]["item_id"] == "1035"
    assert honey.response["results"][0]["item_id"] == "4030"
    assert balsamic.response["results"][0]["item_id"] == "4020"
    assert r.unmatched_expected() == []
    # now nothing is left: a fourth lookup that resembles an answered one is a duplicate
    again = r.resolve("lookup_item", {"query": "raw honey"})
    assert again.status == "duplicate_skipped" and again.is_duplicate


def test_grocery_16_near_duplicate_does_not_steal_another_response(shared_data):
    r = ToolResolver(real_turn(shared_data, "grocery_bench", 16))
    assert r.resolve("lookup_item", {"query": "honey"}).expected_index == 0
    res = r.resolve("lookup_item", {"query": "raw honey"})
    assert res.status == "duplicate_skipped"
    assert r.unmatched_expected() == [1, 2]
    assert r.resolve("lookup_item", {"query": "balsamic vinegar"}).expected_index == 1


def test_grocery_16_empty_query_is_arg_mismatch(shared_data):
    r = ToolResolver(real_turn(shared_data, "grocery_bench", 16))
    res = r.resolve("lookup_item", {"query": ""})
    assert res.status == "arg_mismatch"
    assert res.response["expected_args"] == {"query": "honey"}


def test_grocery_23_mixed_flexible_and_exact(shared_data):
    turn = real_turn(shared_data, "grocery_bench", 23)
    assert [c.flexible_args for c in turn.expected_calls] == [[], ["query"], [], []]
    r = ToolResolver(turn)
    lookup = r.resolve("lookup_item", {"query": "Dijon mustard"})
    assert lookup.expected_index == 1 and lookup.response["results"][0]["price"] == 4.49
    add = r.resolve("update_order", {"order_id": "ORD-5521", "action": "add", "item_name": "Dijon Mustard",
                                     "quantity": 1})
    assert (add.status, add.expected_index) == ("matched", 3)
    # wrong args among several same-name calls: the error names the first unconsumed one
    bad = r.resolve("update_order", {"order_id": "ORD-5521", "action": "remove", "item_name": "maple candy"})
    assert bad.status == "arg_mismatch"
    assert bad.response["expected_args"] == {"order_id": "ORD-5521", "action": "remove", "item_name": "Maple Candy"}
    rm2 = r.resolve("update_order", {"order_id": "ORD-5521", "action": "remove", "item_name": "Balsamic Vinegar"})
    assert rm2.expected_index == 2
    assert r.unmatched_expected() == [0]
    # extra key on a remove is a mismatch (keys are compared)
    extra = r.resolve("update_order", {"order_id": "ORD-5521", "action": "remove", "item_name": "Maple Candy",
                                       "quantity": 1})
    assert extra.status == "arg_mismatch"
    rm1 = r.resolve("update_order", {"order_id": "ORD-5521", "action": "remove", "item_name": "Maple Candy"})
    assert (rm1.status, rm1.expected_index, rm1.response) == ("matched", 0, {"status": "success"})
    assert r.unmatched_expected() == []


def test_assistant_6_flexible_subject_and_body(shared_data):
    turn = real_turn(shared_data, "assistant_bench", 6)
    (exp,) = turn.expected_calls
    assert set(exp.flexible_args) == {"subject", "body"}  # turn-level merged into the call
    r = ToolResolver(turn)
    wrong_to = r.resolve("send_email", {"to": "alex@meridian.com", "subject": "Agenda", "body": "Hi"})
    assert wrong_to.status == "arg_mismatch"
    no_body = r.resolve("send_email", {"to": "alex.reed@meridian.com", "subject": "Agenda"})
    assert no_body.status == "arg_mismatch"
    empty_subject = r.resolve("send_email", {"to": "alex.reed@meridian.com", "subject": " ", "body": "Hi"})
    assert empty_subject.status == "arg_mismatch"
    ok = r.resolve("send_email", {"to": "alex.reed@meridian.com", "subject": "Meeting in NYC",
                                  "body": "Hi Alex, see you Feb 3. Dana"})
    assert (ok.status, ok.response) == ("matched", {"status": "success", "message_id": "MSG-4401"})


def test_conversation_35_three_calls_any_order(shared_data):
    turn = real_turn(shared_data, "conversation_bench", 35)
    r = ToolResolver(turn)
    conflict = r.resolve("check_schedule_conflict", {"session_id_1": "929703", "session_id_2": "916303"})
    assert conflict.expected_index == 2 and conflict.response["conflict"] is False
    assert r.unmatched_expected() == [0, 1]
    reg2 = r.resolve("register_for_session", {"name": "Jennifer Smith", "session_id": "916303"})
    assert (reg2.expected_index, reg2.response) == (1, {"status": "success"})
    dup = r.resolve("register_for_session", {"session_id": "916303", "name": "Jennifer Smith "})
    assert dup.status == "duplicate_skipped"
    wrong = r.resolve("register_for_session", {"name": "Jennifer Smith", "session_id": "123"})
    assert wrong.status == "arg_mismatch"
    assert wrong.response["expected_args"] == {"name": "Jennifer Smith", "session_id": "929703"}
    other = r.resolve("get_session_details", {"session_id": "929703"})
    assert other.status == "unexpected_tool_call"
    assert other.response["expected_function"] == "register_for_session"
    reg1 = r.resolve("register_for_session", {"name": "Jennifer Smith", "session_id": "929703"})
    assert reg1.expected_index == 0
    assert r.unmatched_expected() == []
    late = r.resolve("check_schedule_conflict", {"session_id_1": "916303", "session_id_2": "929703"})
    assert late.status == "unexpected_tool_call" and late.response["expected_function"] is None


def test_fresh_resolver_per_attempt(shared_data):
    turn = real_turn(shared_data, "conversation_bench", 35)
    first = ToolResolver(turn)
    first.resolve("register_for_session", {"name": "Jennifer Smith", "session_id": "929703"})
    second = ToolResolver(turn)
    res = second.resolve("register_for_session", {"name": "Jennifer Smith", "session_id": "929703"})
    assert res.status == "matched" and second.unmatched_expected() == [1, 2]


def test_every_real_expected_call_matches_itself(shared_data):
    """Each scripted call, made verbatim, is matched and answered with its own scripted response."""
    count = 0
    for bench in sorted(p.name for p in shared_data.iterdir() if (p / "turns.jsonl").is_file()):
        for line in (shared_data / bench / "turns.jsonl").read_text().splitlines():
            turn = Turn.model_validate_json(line)
            r = ToolResolver(turn)
            for i, (call, resp) in enumerate(zip(turn.expected_calls, turn.expected_responses)):
                res = r.resolve(call.name, call.args)
                assert res.status == "matched", (bench, turn.turn_index, call.name)
                assert res.expected_index == i, (bench, turn.turn_index)
                assert res.response == (resp if resp is not None else {"status": "success"})
                count += 1
            assert r.unmatched_expected() == []
    assert count > 100
