"""The judge's dimensions and a turn's verdict on them: which dimensions there are and in what
order (`DIMENSIONS`), how each reads on every surface (`NAMES`, `named`), what a turn is judged
on (`judged_dimensions`), a score's verdict, and the two row rules: the strict one (`row_passes`,
`STRICT`: none fails) and the original eval's (`original_row_passes`, `ORIGINAL`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from arena_tui.spine.benchmark import CORE_DIMENSIONS

TURN_TAKING = "turn_taking"
TOOL = "tool_use_correct"
# The original eval's turn pass: these three, none failing (see "The original eval's turn pass")
ORIGINAL_DIMENSIONS: tuple[str, ...] = (TOOL, "instruction_following", "kb_grounding")
# Scored by the LLM (every judge reply carries all of them, "na" where not scored).
LLM_DIMENSIONS: list[str] = [*CORE_DIMENSIONS, "state_tracking", "ambiguity_handling"]
# Every dimension, in the order they are shown and summed.
DIMENSIONS: list[str] = [*LLM_DIMENSIONS, TURN_TAKING]
#: the two turn passes, named once for every surface (CSV columns keep their own names, docs/reports.md)
STRICT = "strict pass"  # every scored dimension passes, turn_taking included (`row_passes`)
ORIGINAL = "tool+IF+KB pass"  # the original eval's: tool use, instruction following, KB grounding (`original_row_passes`)


@dataclass(frozen=True)
class Named:
    """How one dimension reads on every surface."""

    label: str  # a column's header where a column has room (the leaderboard, report tables)
    code: str  # two letters, where many share a line (the turn table, lists; a legend spells it out)
    words: str  # the legend's words for the code, and the report's header


#: every dimension in one row: a new dimension is its name in the lists above and one line here
NAMES: dict[str, Named] = {
    "kb_grounding": Named("KB", "KB", "knowledge base"),
    "instruction_following": Named("Instr", "IF", "instructions"),
    "tool_use_correct": Named("Tool✓", "TU", "tool use"),
    "state_tracking": Named("State", "ST", "state"),
    "ambiguity_handling": Named("Ambig", "AH", "ambiguity"),
    TURN_TAKING: Named("Taking", "TT", "turn-taking"),
}


def named(dim: str) -> Named:
    """The dimension's row; one the table lacks (a judge's own) reads from its name."""
    return NAMES.get(dim) or Named(dim[:6], dim[:2].upper(), dim.replace("_", " "))


def field_of(obj: object, name: str, default: object = None) -> Any:
    """A field of a judgement given as an object or a dict (as read from rows)."""
    return obj.get(name, default) if isinstance(obj, Mapping) else getattr(obj, name, default)


def verdict_of(score: object) -> str:
    """"pass" | "fail" | "na" from a DimensionScore, a {"verdict": ...} dict or the bare string."""
    return score if isinstance(score, str) else str(field_of(score, "verdict"))


def ordered(dims: Iterable[str]) -> list[str]:
    """Known dimensions in `DIMENSIONS` order, then any others (benchmark-specific) by name."""
    seen = list(dict.fromkeys(dims))
    return sorted(seen, key=lambda d: (DIMENSIONS.index(d), "") if d in DIMENSIONS else (len(DIMENSIONS), d))


def judged_dimensions(dimensions: Iterable[str], *, audio: bool) -> list[str]:
    """What a turn is judged on: its own dimensions the LLM scores, plus turn_taking for audio."""
    dims = [d for d in dimensions if d in LLM_DIMENSIONS]
    return dims + [TURN_TAKING] if audio else dims


def must_judge(dimensions: Iterable[str], *, calls: bool) -> list[str]:
    """The dimensions a judge must answer pass or fail on a turn judged on `dimensions`: each the
    LLM scores (instruction following and KB grounding on every turn, state tracking and ambiguity
    handling where the turn's data lists them), but tool use only where the turn expects a call or
    the model made one (`calls`: the rubric's rule; elsewhere "na" is its right answer)."""
    return [d for d in dimensions if d in LLM_DIMENSIONS and (d != TOOL or calls)]


def left_unjudged(scores: Mapping[str, Any], required: Iterable[str]) -> list[str]:
    """The dimensions of `required` (`must_judge`) a judge's verdicts leave "na" (or out): the judge did
    not judge them, so its reply is no verdict on the turn (a judge error), never a pass nor "not scored"."""
    return [d for d in required if verdict_of(scores.get(d, "na")) == "na"]


def judges_turn_taking(config: Mapping[str, Any] | None) -> bool:
    """Whether a run with this recorded config can be scored on turn_taking: not a text-model run
    (`modality: text`), nor one that says it has no turn-taking to score (a rehydrated run)."""
    config = config if isinstance(config, Mapping) else {}
    return config.get("modality") != "text" and config.get("turn_taking_supported") is not False


def scores_of(judgement: object) -> dict[str, str]:
    """dimension -> verdict of one judgement (an errored one carries only code-computed scores)."""
    return {d: verdict_of(s) for d, s in (field_of(judgement, "scores") or {}).items()}


def row_verdict(scores: Mapping[str, Any]) -> str:
    """"fail" if any scored dimension fails, "pass" if some pass and none fails, else "na"."""
    verdicts = [verdict_of(s) for s in scores.values()]
    if "fail" in verdicts:
        return "fail"
    return "pass" if "pass" in verdicts else "na"


def row_passes(scores: Mapping[str, Any]) -> bool:
    """The strict row rule: every scored dimension passes (none fails)."""
    return row_verdict(scores) != "fail"


def original_row_passes(scores: Mapping[str, Any]) -> bool:
    """The original eval's turn pass: tool use, instruction following and KB grounding, none failing."""
    return row_passes({d: s for d, s in scores.items() if d in ORIGINAL_DIMENSIONS})
