"""Scripted judge answers: what a well-behaved judge model would return for a request.

A one-turn request (`# Target turn N` in its last message) gets a `JudgeOutput`; a whole-run
request (`# The run`, each turn under `## Turn N`) gets a `RunJudgeOutput` with one entry per
turn, each turn answered as a one-turn request would be.
"""

from __future__ import annotations

import re
from typing import Any, Callable

DIMS = ["kb_grounding", "instruction_following", "tool_use_correct", "state_tracking", "ambiguity_handling"]
RUN_HEADER = "# The run"
_TURN = re.compile(r"^# Target turn (-?\d+)", re.M)
_BLOCK = re.compile(r"^## Turn (-?\d+)$", re.M)
_SCORED = re.compile(r"^scored dimensions: (.*)$", re.M)
_EXPECTS = re.compile(r"^expected calls: (.*)$", re.M)
_CALLS = re.compile(r"^actual calls: none$", re.M)


def target_turn(text: str) -> int:
    m = _TURN.search(text)
    return int(m.group(1)) if m else -999


def scored(text: str) -> list[str]:
    m = _SCORED.search(text)
    return [d.strip() for d in m.group(1).split(",")] if m else []


def run_blocks(text: str) -> dict[int, str]:
    """A whole-run request's turns: turn -> its block."""
    found = list(_BLOCK.finditer(text))
    return {int(m.group(1)): text[m.end(): found[k + 1].start() if k + 1 < len(found) else len(text)]
            for k, m in enumerate(found)}


def turn_answer(text: str, turn: int, overrides: dict[int, dict[str, Any]] | None = None,
                verdict: str = "pass") -> dict[str, Any]:
    """`verdict` on scored dims (tool_use_correct na when the turn expects and makes no call)."""
    dims = scored(text)
    expects = _EXPECTS.search(text)
    no_call = bool(expects and expects.group(1) == "none" and _CALLS.search(text))
    out: dict[str, Any] = {
        "scores": {
            d: {
                "reasoning": "fake judge",
                "verdict": ("na" if d == "tool_use_correct" and no_call else verdict) if d in dims else "na",
            }
            for d in DIMS
        },
        "root_cause": "none",
        "fabricated_action": False,
        "unexecuted_reference": False,
        "words_contradict_actions": False,
        "call_verdicts": [],
    }
    extra = (overrides or {}).get(turn)
    if extra:
        for k, v in extra.items():
            if k == "scores":
                out["scores"].update(v)
            else:
                out[k] = v
    return out


def run_answer(text: str, overrides: dict[int, dict[str, Any]] | None = None, verdict: str = "pass") -> dict[str, Any]:
    """One entry per `## Turn N` block, each as `turn_answer` would answer it alone."""
    judgments = []
    for turn, block in run_blocks(text).items():
        one = turn_answer(block, turn, overrides, verdict)
        scores = one.pop("scores")
        judgments.append({"turn": turn, "reasoning": "fake judge",
                          **{d: scores[d]["verdict"] for d in DIMS}, **one})
    return {"realignment_notes": "fake judge: nothing realigned", "function_call_tracking": [],
            "final_judgments": judgments}


def all_pass(text: str, overrides: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    if text.startswith(RUN_HEADER):
        return run_answer(text, overrides)
    return turn_answer(text, target_turn(text), overrides)


def all_fail(text: str) -> dict[str, Any]:
    """A judge that fails every dimension of every turn it is asked about."""
    if text.startswith(RUN_HEADER):
        return run_answer(text, verdict="fail")
    return turn_answer(text, target_turn(text), verdict="fail")


def scripted(overrides: dict[int, dict[str, Any]] | None = None) -> Callable[[str], dict[str, Any]]:
    return lambda text: all_pass(text, overrides)


def wordy(tokens_a_turn: int) -> Callable[[str], dict[str, Any]]:
    """A judge that passes every turn and writes ~`tokens_a_turn` tokens of commentary on each
    (~4 characters a token, as the fakes count)."""
    words = ("The assistant's reply matches the golden answer's core facts and the call made is the one "
             "expected; nothing contradicts the knowledge base. ")

    def answer(text: str) -> dict[str, Any]:
        out = all_pass(text)
        for j in out.get("final_judgments", []):
            j["reasoning"] = (words * (tokens_a_turn * 4 // len(words) + 1))[: tokens_a_turn * 4]
        return out

    return answer
