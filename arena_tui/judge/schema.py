"""The judge LLM's structured output: one fixed JSON schema and the pydantic model that checks it.

The schema is identical for every turn (all judged dimensions always present, "na" where not
scored) because providers cache the response schema as part of the prompt prefix; a per-turn
schema would break prefix caching. Code decides afterwards which dimensions count.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..verdicts import LLM_DIMENSIONS

ROOT_CAUSES = [
    "none",
    "over_clarification",
    "forgotten_state",
    "genuine_ambiguity",
    "unnecessary_confirmation",
    "wrong_call",
]
RootCause = Literal[
    "none", "over_clarification", "forgotten_state", "genuine_ambiguity", "unnecessary_confirmation", "wrong_call"
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Score(_Strict):
    reasoning: str
    verdict: Literal["pass", "fail", "na"]


# One required field per LLM dimension (`turn_taking` is computed in code and never asked for).
Scores = create_model("Scores", __base__=_Strict, **{d: (Score, ...) for d in LLM_DIMENSIONS})  # type: ignore[call-overload]


class CallEquivalence(_Strict):
    call_id: str
    expected_turn: int
    expected_index: int
    equivalent: bool
    reasoning: str


class JudgeOutput(_Strict):
    """What one judge call must return for one turn."""

    scores: Scores
    root_cause: RootCause
    fabricated_action: bool
    unexecuted_reference: bool
    call_verdicts: list[CallEquivalence] = Field(default_factory=list)


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


_SCORE = _obj(
    {
        "reasoning": {"type": "string", "description": "one or two sentences: why"},
        "verdict": {"type": "string", "enum": ["pass", "fail", "na"]},
    }
)

JUDGE_SCHEMA: dict[str, Any] = _obj(
    {
        "scores": _obj({d: _SCORE for d in LLM_DIMENSIONS}),
        "root_cause": {
            "type": "string",
            "enum": ROOT_CAUSES,
            "description": "why an expected call was missed or wrong on this turn; 'none' otherwise",
        },
        "fabricated_action": {
            "type": "boolean",
            "description": "the assistant claims an action happened that never executed",
        },
        "unexecuted_reference": {
            "type": "boolean",
            "description": "the user asks about or builds on an earlier action that never executed",
        },
        "call_verdicts": {
            "type": "array",
            "description": "for actual calls that differ from an expected call only in wording",
            "items": _obj(
                {
                    "call_id": {"type": "string"},
                    "expected_turn": {"type": "integer"},
                    "expected_index": {"type": "integer"},
                    "equivalent": {"type": "boolean"},
                    "reasoning": {"type": "string"},
                }
            ),
        },
    }
)
SCHEMA_NAME = "turn_judgement"
