"""The judge LLM's structured output: the JSON schemas asked for and the pydantic models that check them.

One turn (`JudgeOutput`, `JUDGE_SCHEMA`) and a whole run (`RunJudgeOutput`, `RUN_SCHEMA`: one entry
per turn, the judge's realignment notes and its call tracking). Each schema is identical for every
request of its kind (all judged dimensions always present, "na" where not scored) because providers
cache the response schema as part of the prompt prefix. Code decides afterwards which dimensions count.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from arena_tui.spine.causes import JUDGE as JUDGE_CAUSES
from arena_tui.spine.events import CallVerdict
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
#: why a turn failed, as the judge may name it (`spine.causes.JUDGE`; the causes code decides are not asked for)
Cause = Literal[
    "invented_fact", "kb_contradiction", "words_contradict_actions", "partial_answer", "wrong_arithmetic",
    "over_clarification", "unnecessary_confirmation", "forgotten_state", "misreported_result", "fell_for_trap", "other",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Score(_Strict):
    reasoning: str
    verdict: Literal["pass", "fail", "na"]


# One required field per LLM dimension (`turn_taking` is computed in code and never asked for).
Scores = create_model("Scores", __base__=_Strict, **{d: (Score, ...) for d in LLM_DIMENSIONS})  # type: ignore[call-overload]  # pydantic's create_model takes field definitions as keywords


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
    words_contradict_actions: bool = False  # (a reply from before the flag was asked for lacks it)
    call_verdicts: list[CallEquivalence] = Field(default_factory=list)
    causes: list[Cause] = Field(default_factory=list)  # (a reply from before causes were asked for lacks them)


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}


_SCORE = _obj(
    {
        "reasoning": {"type": "string", "description": "one or two sentences: why"},
        "verdict": {"type": "string", "enum": ["pass", "fail", "na"]},
    }
)

# What the judge says about a turn beyond its verdicts: the inputs of the code rules (`phase2`).
_FLAGS: dict[str, Any] = {
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
    "words_contradict_actions": {
        "type": "boolean",
        "description": "its words say it will wait for the user or not act yet, yet it made that call in the same "
                       "turn (not: asking permission for what it already did)",
    },
    "causes": {
        "type": "array",
        "description": "why the turn fails, one or more for every dimension that fails; empty when none fails",
        "items": {"type": "string", "enum": list(JUDGE_CAUSES)},
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

JUDGE_SCHEMA: dict[str, Any] = _obj({"scores": _obj({d: _SCORE for d in LLM_DIMENSIONS}), **_FLAGS})
SCHEMA_NAME = "turn_judgement"


# --- a whole run in one request ---------------------------------------------------------------

Verdict = Literal["pass", "fail", "na"]
TrackStatus = Literal["on_time", "early", "late", "missing"]


class TurnVerdicts(_Strict):
    """One turn of a whole-run reply: its verdicts, one commentary, and the flags of `JudgeOutput`."""

    turn: int
    reasoning: str
    kb_grounding: Verdict
    instruction_following: Verdict
    tool_use_correct: Verdict
    state_tracking: Verdict
    ambiguity_handling: Verdict
    root_cause: RootCause
    fabricated_action: bool
    unexecuted_reference: bool
    words_contradict_actions: bool
    call_verdicts: list[CallEquivalence] = Field(default_factory=list)
    causes: list[Cause] = Field(default_factory=list)


class CallTrack(_Strict):
    """Where the judge found an expected call made (the reference's function_call_tracking)."""

    name: str
    expected_turn: int
    actual_turn: int | None
    status: TrackStatus


class RunJudgeOutput(_Strict):
    """What one whole-run judge call must return."""

    realignment_notes: str
    function_call_tracking: list[CallTrack]
    final_judgments: list[TurnVerdicts]


_VERDICT = {"type": "string", "enum": ["pass", "fail", "na"]}

RUN_SCHEMA: dict[str, Any] = _obj(
    {
        "realignment_notes": {"type": "string", "description": "early/late calls found and how they were credited"},
        "function_call_tracking": {
            "type": "array",
            "items": _obj(
                {
                    "name": {"type": "string"},
                    "expected_turn": {"type": "integer"},
                    "actual_turn": {"type": ["integer", "null"]},
                    "status": {"type": "string", "enum": ["on_time", "early", "late", "missing"]},
                }
            ),
        },
        "final_judgments": {
            "type": "array",
            "description": "exactly one entry per turn asked for, with its own turn number",
            "items": _obj(
                {
                    "turn": {"type": "integer"},
                    "reasoning": {"type": "string", "description": "why each verdict: tool use, IF and KB, state, ambiguity"},
                    **{d: _VERDICT for d in LLM_DIMENSIONS},
                    **_FLAGS,
                }
            ),
        },
    }
)
RUN_SCHEMA_NAME = "run_judgement"


def judgement_flags(out: JudgeOutput | TurnVerdicts, *, heuristic: bool) -> dict[str, Any]:
    """The judge's flags on a turn as `Judgement` fields (the inputs of the code rules) and the
    causes it named; an offline judge's fabricated/unexecuted/contradiction flags are unknown, so None."""
    return dict(
        root_cause=None if out.root_cause == "none" else out.root_cause,
        fabricated_action=None if heuristic else out.fabricated_action,
        unexecuted_reference=None if heuristic else out.unexecuted_reference,
        words_contradict_actions=None if heuristic else out.words_contradict_actions,
        call_verdicts=[CallVerdict(**c.model_dump()) for c in out.call_verdicts],
        causes=list(dict.fromkeys(out.causes)),
    )
