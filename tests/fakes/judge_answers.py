"""Scripted judge answers: what a well-behaved judge model would return for a target turn."""

from __future__ import annotations

import re
from typing import Any, Callable

DIMS = ["kb_grounding", "instruction_following", "tool_use_correct", "state_tracking", "ambiguity_handling"]
_TURN = re.compile(r"^# Target turn (-?\d+)", re.M)
_SCORED = re.compile(r"^scored dimensions: (.*)$", re.M)
_EXPECTS = re.compile(r"^expected calls: (.*)$", re.M)
_CALLS = re.compile(r"^actual calls: none$", re.M)


def target_turn(text: str) -> int:
    m = _TURN.search(text)
    return int(m.group(1)) if m else -999


def scored(text: str) -> list[str]:
    m = _SCORED.search(text)
    return [d.strip() for d in m.group(1).split(",")] if m else []


def all_pass(text: str, overrides: dict[int, dict[str, Any]] | None = None) -> dict[str, Any]:
    """pass on scored dims (tool_use_correct na when the turn expects and makes no call)."""
    dims = scored(text)
    no_call = bool(_EXPECTS.search(text) and _EXPECTS.search(text).group(1) == "none" and _CALLS.search(text))  # type: ignore[union-attr]
    out: dict[str, Any] = {
        "scores": {
            d: {
                "reasoning": "fake judge",
                "verdict": ("na" if d == "tool_use_correct" and no_call else "pass") if d in dims else "na",
            }
            for d in DIMS
        },
        "root_cause": "none",
        "fabricated_action": False,
        "unexecuted_reference": False,
        "call_verdicts": [],
    }
    extra = (overrides or {}).get(target_turn(text))
    if extra:
        for k, v in extra.items():
            if k == "scores":
                out["scores"].update(v)
            else:
                out[k] = v
    return out


def scripted(overrides: dict[int, dict[str, Any]] | None = None) -> Callable[[str], dict[str, Any]]:
    return lambda text: all_pass(text, overrides)
