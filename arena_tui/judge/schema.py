"""The judge LLM's structured output: the JSON schemas asked for and the pydantic models that check them.

One turn (`JudgeOutput`, `JUDGE_SCHEMA`) and a whole run (`RunJudgeOutput`, `RUN_SCHEMA`: one entry
per turn, the judge's realignment notes and its call tracking). Each schema is identical for every
request of its kind (all judged dimensions always present, "na" where not scored) because providers
cache the response schema as part of the prompt prefix. Code decides afterwards which dimensions count.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, create_model

from arena_tui.spine.causes import JUDGE as JUDGE_CAUSES
from arena_tui.spine.events import CallVerdict
from ..verdicts import LLM_DIMENSIONS

RootCause = Literal[
    "none", "over_clarification", "forgotten_state", "genuine_ambiguity", "unnecessary_confirmation", "wrong_call"
]
ROOT_CAUSES = list(get_args(RootCause))
#: why a turn failed, as the judge may name it (`spine.causes.JUDGE`; the causes code decides are not asked for)
Cause = Literal[
    "invented_fact", "kb_contradiction", "words_contradict_actions", "partial_answer", "wrong_arithmetic",
    "over_clarification", "unnecessary_confirmation", "forgotten_state", "misreported_result", "fell_for_trap", "other",
]
assert list(get_args(Cause)) == list(JUDGE_CAUSES)  # (the schema offers exactly the judge's causes)
Verdict = Literal["pass", "fail", "na"]
TrackStatus = Literal["on_time", "early", "late", "missing"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Score(_Strict):
    reasoning: str = Field(description="one or two sentences: why")
    verdict: Verdict


# One required field per LLM dimension (`turn_taking` is computed in code and never asked for).
Scores = create_model("Scores", __base__=_Strict, **{d: (Score, ...) for d in LLM_DIMENSIONS})  # type: ignore[call-overload]  # pydantic's create_model takes field definitions as keywords


class CallEquivalence(_Strict):
    call_id: str
    expected_turn: int
    expected_index: int
    equivalent: bool
    reasoning: str


class Flags(_Strict):
    """What the judge says about a turn beyond its verdicts: the inputs of the code rules (`phase2`).
    (A reply from before a flag or the causes were asked for lacks them: their defaults.)"""

    root_cause: RootCause = Field(description="why an expected call was missed or wrong on this turn; 'none' otherwise")
    fabricated_action: bool = Field(description="the assistant claims an action happened that never executed")
    unexecuted_reference: bool = Field(
        description="the user asks about or builds on an earlier action that never executed")
    words_contradict_actions: bool = Field(
        False, description="its words say it will wait for the user or not act yet, yet it made that call in the same "
                           "turn (not: asking permission for what it already did)")
    causes: list[Cause] = Field(
        default_factory=list, description="why the turn fails, one or more for every dimension that fails; empty when none fails")
    call_verdicts: list[CallEquivalence] = Field(
        default_factory=list, description="for actual calls that differ from an expected call only in wording")


class _Scored(_Strict):
    scores: Scores


class JudgeOutput(Flags, _Scored):
    """What one judge call must return for one turn: its verdicts, then the flags."""


# --- a whole run in one request ---------------------------------------------------------------

#: one turn of a whole-run reply: its verdicts (a field per LLM dimension), one commentary, and the flags
class _Turn(_Strict):
    turn: int
    reasoning: str = Field(description="why each verdict: tool use, IF and KB, state, ambiguity")


_TurnVerdicts = create_model(  # type: ignore[call-overload]  # fields given as a dict, made from the dimension table
    "_TurnVerdicts", __base__=_Turn, **{d: (Verdict, ...) for d in LLM_DIMENSIONS})


class TurnVerdicts(Flags, _TurnVerdicts):
    """One turn of a whole-run reply: its verdicts, one commentary, and the flags of `JudgeOutput`."""


class CallTrack(_Strict):
    """Where the judge found an expected call made (the reference's function_call_tracking)."""

    name: str
    expected_turn: int
    actual_turn: int | None
    status: TrackStatus


class RunJudgeOutput(_Strict):
    """What one whole-run judge call must return."""

    realignment_notes: str = Field(description="early/late calls found and how they were credited")
    function_call_tracking: list[CallTrack]
    final_judgments: list[TurnVerdicts] = Field(
        description="exactly one entry per turn asked for, with its own turn number")


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema a provider is asked to answer in, made from the pydantic model that checks the
    answer: every property required (a default is for an older reply, never an invitation to leave it
    out), no other property, definitions inlined, only the fields' own descriptions kept. Identical for
    every request of its kind: providers cache the response schema as part of the prompt prefix."""
    full = model.model_json_schema()
    defs = full.get("$defs", {})

    def strict(node: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in node:
            extra = {k: v for k, v in node.items() if k == "description"}
            return {**strict(defs[node["$ref"].rsplit("/", 1)[1]]), **extra}
        if "anyOf" in node:  # `int | None`: a list of types
            return {"type": [strict(n)["type"] for n in node["anyOf"]], **_kept(node)}
        if node.get("type") == "object":
            props = {k: strict(v) for k, v in node.get("properties", {}).items()}
            return {"type": "object", "additionalProperties": False, "required": list(props), "properties": props}
        if node.get("type") == "array":
            return {"type": "array", **_kept(node), "items": strict(node["items"])}
        return {k: node[k] for k in ("type", "enum", "description") if k in node}  # (no title, no default)

    return strict(full)


def _kept(node: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in node.items() if k == "description"}


JUDGE_SCHEMA: dict[str, Any] = strict_schema(JudgeOutput)
SCHEMA_NAME = "turn_judgement"
RUN_SCHEMA: dict[str, Any] = strict_schema(RunJudgeOutput)
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
