"""docs/judging.md's rule table: a row for every rule the reference's judge states, no two rows
contradicting, `same` rows giving the reference's outcome, and every row a phase-2 rule decides being
what phase 2 does (each such row has a scenario below, run through `apply_rules`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

import pytest

from arena_tui.judge.phase2 import _RULE_FUNCS, apply_rules
from arena_tui.spine.benchmark import Benchmark, ExpectedCall
from arena_tui.spine.events import CallVerdict, Judgement, TurnResult
from arena_tui.verdicts import standing_judgements

from .judge_helpers import CORE, bench, call, judged, reg, result, turn

DOC = Path(__file__).resolve().parent.parent / "docs" / "judging.md"

# The rules the reference's judge states (audio-agent-bench d3659ba, judging/llm_judge.py: its system
# prompt, its closing instructions, its rehydrated override, and what its code does with the reply),
# restated in a few words; a rule stated in several places is one id. docs/judging.md has a row for each.
REFERENCE_RULES = {
    "P1": "a judgement for every turn given, one entry per turn id, never renumbered; a missing turn fails",
    "P2": "two passes: turn by turn, then realignment across turns",
    "P3": "one request holding the whole run",
    "P4": "a full commentary per turn, explicit for state tracking and ambiguity",
    "P5": "the reply's shape: first-pass list, realignment notes, call tracking, final judgements",
    "P6": "the same tolerance for every run of a turn",
    "P7": "say realignment and cascade in the reasoning",
    "P8": "turn-taking pre-computed from audio, copied, taken from the analysis by code",
    "P9": "lenient on instruction following when turn-taking failed",
    "P10": "what the judge is shown per run and per turn",
    "D1": "instruction following and KB grounding on every turn",
    "D2": "state tracking only where listed",
    "D3": "ambiguity handling only where listed",
    "D4": "tool use null only when no call expected and none made",
    "D5": "a call on a turn expecting none fails tool use",
    "T1": "the expected call with semantically equivalent arguments passes",
    "T2": "a call already made on an earlier turn satisfies the later one",
    "T3": "a late call is credited where made",
    "T4": "expected, never made, nothing absorbs: tool use fails",
    "T5": "expected, made later, nothing absorbs: the expecting turn fails",
    "T6": "a harness error showing a materially wrong call fails",
    "T7": "a benign harness error: the call is right",
    "T8": "an expected end_session({}) with no scripted reply is a benign mismatch",
    "T9": "after a benign mismatch judge the rest as if it succeeded; no IF or KB failure for it",
    "T10": "free-text arguments compared by meaning",
    "T11": "IDs must match exactly",
    "T12": "extra compatible arguments are fine",
    "T13": "12-hour and 24-hour times are the same for tool use, IF and KB",
    "T14": "a broader query that finds the item is equivalent",
    "T15": "a narrower query that finds the item is equivalent",
    "T16": "a query so broad it finds the wrong item fails",
    "T17": "follow the turn's tool-use guidance (a redundant lookup may be skipped)",
    "T18": "a missed or wrong call fails tool use only, never IF",
    "A1": "over-clarification lands on ambiguity handling where scored",
    "A2": "over-clarification falls back on tool use where it is not",
    "A3": "forgotten state lands on state tracking where scored",
    "A4": "forgotten state falls back on tool use where it is not",
    "A5": "asking on a genuinely ambiguous turn passes tool use and ambiguity handling",
    "A6": "genuine ambiguity with no ambiguity dimension: the fallback",
    "A7": "an unnecessary confirmation fails tool use only",
    "A8": "on an ambiguous turn tool use fails only for neither calling right nor asking",
    "WA1": "says it will wait, yet calls: tool use and IF fail",
    "WA2": "'does that work?' in the same turn it reports done: IF fails",
    "WA3": "a turn that only asked and did not call: no IF failure",
    "WA4": "reporting a real error of a right call is no mismatch",
    "N1": "after success, claims failure: IF fails, tool use keeps credit",
    "N2": "after success, asks permission for the same action: IF fails, tool use keeps credit",
    "N3": "confirms the done action and offers a next step: fine",
    "N4": "after success, ignores or denies the returned data: IF fails",
    "N5": "sanity check: reread every tool turn's words against the result",
    "E1": "no speech but a valid call is a valid turn",
    "I1": "answers or advances the task: IF passes",
    "I2": "properly deflects an out-of-scope question: IF passes",
    "I3": "part of a realigned workflow reaching the goal: IF passes",
    "I4": "no engagement: IF fails",
    "I5": "partial answer to a multi-part question: IF fails",
    "I6": "omits what the golden answer deems essential: IF fails",
    "I7": "wrong or missing arithmetic: IF fails",
    "G1": "golden text is a reference: core test over embellishment",
    "G2": "optional golden details need not appear",
    "K1": "prompt-visible and full KB views, before and after a lookup",
    "K2": "consistent with accessible evidence: KB passes",
    "K3": "extra correct details pass",
    "K4": "reasonable commentary that contradicts nothing passes",
    "K5": "lacking a hidden catalogue detail is no KB failure",
    "K6": "a false unavailability claim fails KB",
    "K7": "clear factual contradictions fail KB; be generous otherwise",
    "K8": "an unsupported extra detail fails only when material",
    "H1": "asks when genuinely ambiguous: AH passes",
    "H2": "does not ask when the answer is clear: AH passes",
    "H3": "disambiguates near-miss entities: AH passes",
    "H4": "guesses instead of asking: AH fails",
    "H5": "over-clarifies: AH fails",
    "S1": "recalls earlier information: ST passes",
    "S2": "tracks current state: ST passes",
    "S3": "fabricates prior actions or forgets completed ones: ST fails",
    "S4": "wrong information about what was discussed: ST fails",
    "C1": "cascade: ST passes on the later turn under all three conditions",
    "C2": "no cascade for a fabricated outcome",
    "C3": "cascade only when the earlier turn already failed ST",
    "C4": "cascade: no IF failure for saying it has no record",
    "C5": "cascade: no KB failure for it",
    "L2": "track calls as late (function_call_tracking)",
    "V1": "false presupposition: no hallucination",
    "V2": "sycophancy trap: correct the user",
    "V3": "prompt injection: stay in role",
    "V4": "near-miss entity: disambiguate",
    "V5": "false recall: correct the misquote",
    "R1": "rehydrated: no cross-turn realignment or credit",
    "R2": "rehydrated: absorption within the turn",
    "R3": "rehydrated: golden prior turns as the only prior state",
    "R4": "rehydrated: realignment notes say it was disabled",
}

# The facts a row's `when` names (the doc lists them with their meaning), what each implies, and which
# cannot hold together; `!x` is "not x".
IMPLIES: dict[str, tuple[str, ...]] = {
    "on_time": ("expects", "call"), "early": ("expects",), "absent": ("expects",), "late": ("absent",),
    "missed": ("absent",), "wrong": ("expects", "call"), "id_differs": ("wrong",), "too_broad": ("wrong",),
    "made_late_here": ("call",), "extra": ("expects", "call"), "unsolicited": ("!expects", "call"),
    "harness_error": ("call",), "end_session": ("call",), "succeeded": ("call",), "extra_args": ("call",),
    "broader_query": ("call",), "narrower_query": ("call",), "reworded": ("call",),
    "waiting_right": ("judge_tool_pass",), "asks": ("speech",), "says_wait": ("speech",),
    "asks_after_done": ("speech",), "claims_failure": ("speech",), "next_step": ("speech",),
    "reports_error": ("speech", "call"), "deflects": ("speech",),
    "cascade": ("unexecuted_ref", "earlier_st_fail", "st"),
}
OTHER_TAGS = {
    "time_forms", "guidance_skip", "no_root", "over_clar", "forgot", "genuine", "unneeded_confirm",
    "judge_tool_pass", "judge_tool_fail", "ah", "st", "speech", "ignores_result", "engages", "no_engagement",
    "realigned", "partial", "omits_essential", "omits_optional", "bad_math", "core_met", "consistent",
    "extra_correct", "commentary", "hidden_fact_lacking", "false_unavailability", "kb_contradiction",
    "material_extra", "recalls", "current_state", "misstates", "fabricates", "unexecuted_ref", "earlier_st_fail",
    "guesses", "clear", "near_namesakes", "trap", "tt_fail", "stopped", "rehydrated", "expects", "call",
}
TAGS = set(IMPLIES) | OTHER_TAGS
EXCLUSIVE = [
    {"on_time", "early", "absent", "wrong"},
    {"late", "missed"},
    {"no_root", "over_clar", "forgot", "genuine", "unneeded_confirm"},
    {"waiting_right", "over_clar", "forgot", "unneeded_confirm"},
    {"judge_tool_pass", "judge_tool_fail"},
    {"engages", "no_engagement"},
    {"consistent", "kb_contradiction"},
    {"clear", "genuine"},
]
DIMS = {"tool", "IF", "KB", "ST", "AH", "TT"}
VERDICTS = {"pass", "fail", "na", "ok", "judge"}
FULL = {"tool": "tool_use_correct", "IF": "instruction_following", "KB": "kb_grounding", "ST": "state_tracking",
        "AH": "ambiguity_handling", "TT": "turn_taking"}


class Row(NamedTuple):
    id: str
    when: frozenset[str]
    reference: dict[str, str]
    ours: dict[str, str]
    decides: str
    why: str


def _outcome(cell: str) -> dict[str, str]:
    if cell == "—":
        return {}
    out = {}
    for token in cell.split():
        dim, _, verdict = token.partition("=")
        assert dim in DIMS and verdict in VERDICTS, f"bad outcome {token!r}"
        out[dim] = verdict
    return out


def parse_rows(text: str) -> list[Row]:
    section = text.split("## The rule table", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 7, f"a row needs 7 cells: {line[:80]}"
        rid, _situation, when, ref, ours, decides, why = cells
        tags = frozenset() if when == "—" else frozenset(when.strip("`").split())
        rows.append(Row(rid.strip("`"), tags, _outcome(ref), _outcome(ours), decides, why))
    return rows


def closure(tags: frozenset[str]) -> frozenset[str]:
    out, todo = set(tags), list(tags)
    while todo:
        for implied in IMPLIES.get(todo.pop(), ()):
            if implied not in out:
                out.add(implied)
                todo.append(implied)
    return frozenset(out)


def compatible(a: frozenset[str], b: frozenset[str]) -> bool:
    both = closure(a) | closure(b)
    if any(t.startswith("!") and t[1:] in both for t in both):
        return False
    return all(len(group & both) <= 1 for group in EXCLUSIVE)


def rank(decides: str) -> int:
    """Who wins: a person over code, a later phase-2 rule over an earlier, code over the judge."""
    order = [name for name, _ in _RULE_FUNCS]
    if decides.startswith("a person"):
        return 100
    named = re.search(r"`(\w+)`", decides)
    if named and named.group(1) in order:
        return 10 + order.index(named.group(1))
    return 1 if decides.startswith("code") else 0


def _opposed(x: str, y: str, *, ok_counts: bool) -> bool:
    definite = {"pass", "fail", "na"}
    if x in definite and y in definite:
        return x != y
    return ok_counts and {x, y} == {"ok", "fail"}


def contradictions(rows: list[Row]) -> list[str]:
    found = []
    for a, b in combinations(rows, 2):
        if not compatible(a.when, b.when):
            continue
        ca, cb = closure(a.when), closure(b.when)
        for dim in a.ours.keys() & b.ours.keys():
            x, y = a.ours[dim], b.ours[dim]
            ra, rb = rank(a.decides), rank(b.decides)
            if ra != rb:
                low, high, cl, ch = (a, b, ca, cb) if ra < rb else (b, a, cb, ca)
                if cl >= ch and _opposed(low.ours[dim], high.ours[dim], ok_counts=True):
                    found.append(f"{low.id} {dim}={low.ours[dim]} is always overridden by {high.id} {dim}={high.ours[dim]}")
                continue
            if not _opposed(x, y, ok_counts=False) or ca < cb or cb < ca:
                continue
            if ca != cb and any(
                closure(c.when) >= ca | cb and rank(c.decides) >= ra and c.ours.get(dim) in ("pass", "fail", "na")
                for c in rows
            ):
                continue  # a row holding both their facts says what happens
            found.append(f"{a.id} {dim}={x} contradicts {b.id} {dim}={y}")
    return found


@pytest.fixture(scope="module")
def rows() -> list[Row]:
    return parse_rows(DOC.read_text(encoding="utf-8"))


def test_the_table_has_a_row_for_every_rule_the_reference_judge_states(rows):
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids)), "an id twice"
    assert not set(REFERENCE_RULES) - set(ids), f"reference rules without a row: {sorted(set(REFERENCE_RULES) - set(ids))}"
    ours_only = set(ids) - set(REFERENCE_RULES)
    assert all(i.startswith("X") for i in ours_only), f"rows that are neither the reference's nor ours (X): {ours_only}"


def test_every_row_is_well_formed_and_says_same_or_why(rows):
    doc = DOC.read_text(encoding="utf-8")
    for r in rows:
        unknown = {t.lstrip("!") for t in r.when} - TAGS
        assert not unknown, f"{r.id}: tags not in the vocabulary: {unknown}"
        assert r.decides in ("judge", "code", "both", "—") or re.match(r"(code|both|a person): `", r.decides), r.id
        if r.why.startswith("same"):
            assert r.reference == r.ours, f"{r.id} says same but its outcomes differ"
        else:
            assert r.why.startswith("differs: ") and len(r.why) > 20, f"{r.id}: 'same' or 'differs:' and why"
    for tag in TAGS:
        assert f"`{tag}`" in doc, f"tag {tag} is not explained in the doc"


def test_no_two_rows_contradict(rows):
    assert contradictions(rows) == []


def test_the_contradiction_check_catches_what_097b9be_table_said():
    """097b9be's two rows: asking permission, yet calling, failed tool use (words against actions, a code
    rule); asking permission for what was just done kept the call's credit (narration, the judge)."""
    wa = Row("WA", frozenset({"call", "asks_after_done"}), {}, {"tool": "fail", "IF": "fail"}, "both: `words_actions`", "same")
    narration = Row("N", frozenset({"call", "succeeded", "asks_after_done"}), {}, {"tool": "ok", "IF": "fail"}, "judge", "same")
    assert contradictions([wa, narration]) == ["N tool=ok is always overridden by WA tool=fail"]
    twins = [Row("A", frozenset({"late"}), {}, {"tool": "pass"}, "judge", "same"),
             Row("B", frozenset({"late"}), {}, {"tool": "fail"}, "judge", "same")]
    assert contradictions(twins) == ["A tool=pass contradicts B tool=fail"]
    assert contradictions([twins[0], twins[1]._replace(when=frozenset({"missed"}))]) == []  # cannot both hold


# --- every row a phase-2 rule decides is what phase 2 does ---------------------------------------

P, F, NA = "pass", "fail", "na"
AH_DIMS, ST_DIMS = [*CORE, "ambiguity_handling"], [*CORE, "state_tracking"]


class Scenario(NamedTuple):
    benchmark: Benchmark
    results: list[TurnResult]
    phase1: list[Judgement]
    turn: int


def _core(tool: str, **more: str) -> dict[str, str]:
    return {"kb_grounding": P, "instruction_following": P, "tool_use_correct": tool, **more}


def _equivalent(name: str, expected: dict, actual: dict, *, equivalent: bool = True, status: str = "arg_mismatch",
                judge: str = F) -> Callable[[str], Scenario]:
    """A call that differs from the expected one in wording, and the judge's call verdict on it."""
    def build(_: str) -> Scenario:
        c = call(name, "c1", **actual).model_copy(update={"status": status})
        v = CallVerdict(call_id="c1", expected_turn=1, expected_index=0, equivalent=equivalent)
        return Scenario(bench(turn(1, ExpectedCall(name=name, args=expected).model_dump())), [result(1, c)],
                        [judged(1, _core(judge), verdicts_on_calls=[v])], 1)
    return build


def _late(tool: str, root: str | None, dims: list[str] = CORE, **more: str) -> Scenario:
    b = bench(turn(1, reg("S1").model_dump(), dims=dims), turn(2))
    rs = [result(1, text="Which session did you mean?"), result(2, call("register", "c2", name="Jo", session_id="S1"))]
    return Scenario(b, rs, [judged(1, _core(tool, **more), root=root), judged(2, _core(P))], 1)


def _missed(tool: str, root: str | None, dims: list[str] = CORE, text: str = "Which one?", **more: str) -> Scenario:
    return Scenario(bench(turn(1, reg("S1").model_dump(), dims=dims)), [result(1, text=text)],
                    [judged(1, _core(tool, **more), root=root)], 1)


def _cascade(st_later: str, *, fabricated: bool, earlier_dims: list[str] = ST_DIMS) -> Scenario:
    b = bench(turn(1, reg("S1").model_dump(), dims=earlier_dims), turn(2, dims=ST_DIMS))
    rs = [result(1, text="What was your name again?"), result(2, text="I don't see a registration on file.")]
    earlier = _core(F, state_tracking=P) if "state_tracking" in earlier_dims else _core(F)
    return Scenario(b, rs, [judged(1, earlier, root="forgotten_state"),
                            judged(2, _core(NA, state_tracking=st_later), unexecuted=True, fabricated=fabricated)], 2)


def _extra(judge: str) -> Scenario:
    exp = ExpectedCall(name="update_order", args={"order_id": "ORD-1", "action": "change_quantity", "quantity": 1})
    lookup = call("lookup_item", "c1", query="flour").model_copy(update={"status": "unexpected_tool_call"})
    r = result(1, lookup, call("update_order", "c2", **exp.args), text="Updated to one bag.")
    return Scenario(bench(turn(1, exp.model_dump())), [r], [judged(1, _core(judge))], 1)


def _cascade_with_own_missed_call(_: str) -> Scenario:
    b = bench(turn(1, reg("S1").model_dump(), dims=ST_DIMS), turn(2, reg("S2").model_dump(), dims=ST_DIMS))
    rs = [result(1, text="What was your name again?"), result(2, text="I have no registration yet; your name?")]
    return Scenario(b, rs, [judged(1, _core(F, state_tracking=P), root="forgotten_state"),
                            judged(2, _core(F, state_tracking=P), root="forgotten_state", unexecuted=True)], 2)


SCENARIOS: dict[str, Callable[[str], Scenario]] = {
    "D4": lambda _: Scenario(bench(turn(1)), [result(1)], [judged(1, _core(P))], 1),
    "D5": lambda _: Scenario(bench(turn(1)), [result(1, call("vote", "v1", session_id="S9"))], [judged(1, _core(P))], 1),
    "T1": lambda _: Scenario(bench(turn(1, reg("S1").model_dump())),
                             [result(1, call("register", "c1", name="Jo", session_id="S1"))], [judged(1, _core(F))], 1),
    "T2": lambda _: Scenario(bench(turn(1), turn(2, reg("S2").model_dump())),
                             [result(1, call("register", "c1", name="Jo", session_id="S2")), result(2)],
                             [judged(1, _core(NA)), judged(2, _core(F))], 2),
    "T3": lambda _: Scenario(_late(F, None).benchmark, _late(F, None).results,
                             [judged(1, _core(F)), judged(2, _core(NA))], 2),
    "T4": lambda _: _missed(P, None),
    "T5": lambda _: _late(F, None),
    "T6": _equivalent("register", {"name": "Jo", "session_id": "S1"}, {"name": "Jo", "session_id": "S5"},
                      equivalent=False, judge=P),
    "T7": _equivalent("remind", {"title": "Board sync"}, {"title": "board sync"}),
    "T8": _equivalent("end_session", {}, {"confirm": "yes"}, status="end_session"),
    "T10": _equivalent("create_event", {"title": "Team offsite", "notes": "In the board room"},
                       {"title": "The team offsite", "notes": "Board room"}),
    "T11": _equivalent("remind", {"time": "14:00", "session_id": "S1"}, {"time": "2 PM", "session_id": "S7"}, judge=P),
    "T12": _equivalent("book", {"date": "2025-03-15"}, {"date": "2025-03-15", "doctor": "Dr. Lee"}),
    "T13": _equivalent("remind", {"time": "15:30"}, {"time": "3:30 PM"}),
    "T14": _equivalent("lookup_item", {"query": "maple syrup"}, {"query": "maple"}),
    "T15": _equivalent("lookup_item", {"query": "organic eggs"}, {"query": "organic free range eggs"}),
    "T16": _equivalent("lookup_item", {"query": "maple syrup"}, {"query": "syrup"}, equivalent=False, judge=P),
    "A1": lambda _: _missed(F, "over_clarification", AH_DIMS, ambiguity_handling=P),
    "A2": lambda _: _missed(P, "over_clarification"),
    "A3": lambda _: _missed(F, "forgotten_state", ST_DIMS, state_tracking=P),
    "A4": lambda _: _missed(P, "forgotten_state"),
    "A5": lambda judge: _missed(F, "genuine_ambiguity", AH_DIMS, text="Which of the two Kevins?", ambiguity_handling=judge),
    "A6": lambda _: _missed(P, "genuine_ambiguity"),
    "A7": lambda _: _late(P, "unnecessary_confirmation"),
    "A8": lambda _: Scenario(bench(turn(1, reg("S1").model_dump(), dims=AH_DIMS)),
                             [result(1, call("register", "c1", name="Jo", session_id="S5"))],
                             [judged(1, _core(P, ambiguity_handling=P), root="genuine_ambiguity")], 1),
    "X1": lambda _: _late(P, None),
    "X2": lambda _: _missed(P, None),
    "X3": _extra,
    "WA1": lambda _: Scenario(bench(turn(1, reg("S1").model_dump())),
                              [result(1, call("register", "c1", name="Jo", session_id="S1"), text="I'll wait for your go-ahead.")],
                              [judged(1, _core(P), words=True)], 1),
    "WA3": lambda _: Scenario(bench(turn(1, reg("S1").model_dump())), [result(1, text="Shall I register you for S1?")],
                              [judged(1, _core(F), root="unnecessary_confirmation", words=True)], 1),
    "X4": lambda _: Scenario(bench(turn(1)), [result(1, text="", status="no_response")], [judged(1, _core(NA))], 1),
    "C1": lambda _: _cascade(F, fabricated=False),
    "C2": lambda _: _cascade(F, fabricated=True),
    "C3": lambda judge: _cascade(judge, fabricated=False, earlier_dims=CORE),
    "X5": _cascade_with_own_missed_call,
}


def _final(s: Scenario) -> dict[str, str]:
    new, _ = apply_rules(s.benchmark, s.results, s.phase1)
    return {d: v.verdict for d, v in standing_judgements([*s.phase1, *new])[s.turn].scores.items()}


def _phase2_rows() -> list[Row]:
    names = {name for name, _ in _RULE_FUNCS}
    return [r for r in parse_rows(DOC.read_text(encoding="utf-8"))
            if r.ours and (m := re.search(r"`(\w+)`", r.decides)) and m.group(1) in names]


@pytest.mark.parametrize("row", _phase2_rows(), ids=lambda r: r.id)
def test_each_row_a_phase2_rule_decides_is_what_phase2_does(row):
    assert row.id in SCENARIOS, f"{row.id} is decided by a phase-2 rule: give it a scenario"
    for judge in ("pass", "fail") if "judge" in row.ours.values() else ("fail",):
        final = _final(SCENARIOS[row.id](judge))
        for dim, outcome in row.ours.items():
            want = {"ok": "pass", "judge": judge}.get(outcome, outcome)
            assert final.get(FULL[dim]) == want, f"{row.id}: {dim} is {final.get(FULL[dim])}, the table says {outcome}"
