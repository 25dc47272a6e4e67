"""The judge's structured output is one declaration: the pydantic models that check a reply
(`arena_tui.judge.schema`) make the JSON Schema a provider is asked to answer in, and the
dimensions in both come from the one dimension table (`verdicts.DIMENSION_TABLE`), as do the
rubric's list, the offline judge's scores and the reference's metric columns."""

from __future__ import annotations

from typing import Any

from arena_tui.compare.tables import METRICS
from arena_tui.judge.heuristic import HeuristicJudge
from arena_tui.judge.rubric import RUBRIC
from arena_tui.judge.schema import JUDGE_SCHEMA, ROOT_CAUSES, RUN_SCHEMA, JudgeOutput, RunJudgeOutput
from arena_tui.spine.causes import JUDGE as JUDGE_CAUSES
from arena_tui.spine.events import TurnResult
from arena_tui.verdicts import DIMENSION_TABLE, LLM_DIMENSIONS, ORIGINAL_DIMENSIONS

# The schemas as they were written by hand beside the models, before they were made from them:
# the made ones are these, key for key and in the same order (a provider caches the schema with the prompt).

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

WRITTEN_JUDGE_SCHEMA: dict[str, Any] = _obj({"scores": _obj({d: _SCORE for d in LLM_DIMENSIONS}), **_FLAGS})


_VERDICT = {"type": "string", "enum": ["pass", "fail", "na"]}

WRITTEN_RUN_SCHEMA: dict[str, Any] = _obj(
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


def test_the_schemas_are_made_from_the_models_as_they_were_written() -> None:
    import json

    assert json.dumps(JUDGE_SCHEMA) == json.dumps(WRITTEN_JUDGE_SCHEMA)
    assert json.dumps(RUN_SCHEMA) == json.dumps(WRITTEN_RUN_SCHEMA)


def test_a_reply_the_schema_describes_is_one_the_model_takes() -> None:
    scores = {d: {"reasoning": "r", "verdict": "pass"} for d in LLM_DIMENSIONS}
    reply = JudgeOutput.model_validate({"scores": scores, "root_cause": "none", "fabricated_action": False,
                                        "unexecuted_reference": False})  # (an older reply: no flags, no causes)
    assert reply.words_contradict_actions is False and reply.causes == [] and reply.call_verdicts == []
    run = RunJudgeOutput.model_validate({"realignment_notes": "", "function_call_tracking": [], "final_judgments": [
        {"turn": 0, "reasoning": "r", **{d: "na" for d in LLM_DIMENSIONS}, "root_cause": "none", "fabricated_action": False,
         "unexecuted_reference": False, "words_contradict_actions": False}]})
    assert [getattr(run.final_judgments[0], d) for d in LLM_DIMENSIONS] == ["na"] * len(LLM_DIMENSIONS)


def test_every_surface_reads_the_one_dimension_table(demo) -> None:
    judged = [d for d in DIMENSION_TABLE if d.judge]
    assert all(f"\n{d.name}: {d.rubric}\n" in RUBRIC for d in judged)  # the rubric says each, in order
    positions = [RUBRIC.index(f"\n{d.name}: ") for d in judged]
    assert positions == sorted(positions)
    assert sorted(METRICS) == sorted(d.name for d in DIMENSION_TABLE) and METRICS[0] == "turn_taking"
    assert ORIGINAL_DIMENSIONS == ("tool_use_correct", "instruction_following", "kb_grounding")
    turn = demo.turn(0)
    out = HeuristicJudge().score(turn, TurnResult(turn_index=0, status="ok", user_text=turn.input, assistant_text=turn.golden_text),
                                 list(LLM_DIMENSIONS))
    assert {d: getattr(out.scores, d).verdict for d in LLM_DIMENSIONS} == \
        {d: "na" if d == "tool_use_correct" and not turn.expected_calls else "pass" for d in LLM_DIMENSIONS}
