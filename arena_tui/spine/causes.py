"""Why a turn failed, in words one can count: the fixed list of causes (docs/judging.md, "Causes").

A failed turn gets one or more of these. Code decides the ones the run knows (`CODE`: what the turn
recorded, the call alignment of phase 2, the turn-taking facts); the judge names the rest in its
structured output (`JUDGE`: the schema offers exactly these); a person's verdict may name any.
Two say what is left when nobody could tell (`HEURISTIC`, `NO_CAUSE_GIVEN`). `lost_pace` is the
cause of a turn counted apart (our machine's, never the model's): shown, never counted as a
failure. Which turn gets which is `arena_tui.judge.causes`; this module is only the vocabulary,
so the event model, the judge's schema and every surface share one spelling.
"""

from __future__ import annotations

from collections.abc import Iterable

#: decided in code from the turn's record, phase 2's call alignment and the turn-taking facts
CODE: dict[str, str] = {
    "no_answer": "no answer: neither speech nor a call",
    "empty_reply": "empty reply: a response with no speech",
    "no_audio": "no audio: the reply had words but no sound",
    "barge_in": "barge-in: the bot spoke before the user had finished",
    "overlap": "overlap: user and bot spoke over each other (>= 100 ms)",
    "truncated": "truncated: the reply was cut off",
    "slow_start": "slow start: more than 5 s of silence before the reply's speech",
    "reconnected": "reconnected: the session dropped during the turn",
    "timing_missing": "no timing: no latency could be measured for the reply",
    "lost_pace": "lost pace: our machine sent the user's audio late (counted apart, never the model's)",
    "missed_call": "missed call: an expected call was never made",
    "wrong_arguments": "wrong arguments: the expected call was made with other arguments",
    "unsolicited_call": "unsolicited call: a call nothing asked for",
    "late_call": "late call: the expected call came on a later turn",
    "early_call": "early call: a call made a turn before it was asked for",
    "ended_early": "ended early: the model had ended the session before this turn",
    "rotation_lost_context": "rotation lost context: a new session was given less than the history",
}
#: named by the judge in its structured output (`causes`), for what only reading the words tells
JUDGE: dict[str, str] = {
    "invented_fact": "invented fact: states or claims something that did not happen or does not exist",
    "kb_contradiction": "contradicts the knowledge base (a wrong date, time, price, name or count)",
    "words_contradict_actions": "words contradict actions: says it will wait for the user, yet makes the call",
    "partial_answer": "partial answer: part of the request, or what the golden answer treats as essential, left out",
    "wrong_arithmetic": "wrong arithmetic or counting",
    "over_clarification": "over-clarification: asked for what the conversation already settled",
    "unnecessary_confirmation": "asked to confirm what needed no confirmation",
    "forgotten_state": "forgotten state: lost or misstated what earlier turns established",
    "misreported_result": "misreported a call's result: said it failed, or ignored or denied what it returned",
    "fell_for_trap": "fell for an adversarial turn: a false premise, an injected instruction, a near-namesake",
    "other": "another failure: the judge's reasons say which",
}
#: what the offline heuristic judge can honestly tell about a failure, and nothing more
HEURISTIC: dict[str, str] = {
    "golden_mismatch": "far from the golden answer: too few of its words or numbers (the offline heuristic's reading)",
}
NO_CAUSE_GIVEN = "no_cause_given"  # a verdict that failed with no cause (a judge before causes, an import, a person)
#: every cause, in the order they are listed
CAUSES: dict[str, str] = {**CODE, **JUDGE, **HEURISTIC, NO_CAUSE_GIVEN: "no cause given: the verdict came without one"}
#: a cause of a turn counted apart: shown with the turn, never a failure of the model's
APART_CAUSES: frozenset[str] = frozenset({"lost_pace"})


def label(cause: str) -> str:
    """How a cause reads in a list: its name with spaces (`missed call`)."""
    return cause.replace("_", " ")


def ordered(causes: Iterable[str]) -> tuple[str, ...]:
    """Known causes in `CAUSES` order (repeats dropped), then unknown ones by name."""
    seen = set(causes)
    known = [c for c in CAUSES if c in seen]
    return (*known, *sorted(c for c in seen if c not in CAUSES))
