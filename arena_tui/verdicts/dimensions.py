"""The judge's dimensions and a turn's verdict on them: which dimensions there are and in what
order (`DIMENSIONS`), how each reads on every surface (`NAMES`, `named`), what a turn is judged
on (`judged_dimensions`), a score's verdict, and the two row rules: the strict one (`row_passes`,
`STRICT`: none fails) and the original eval's (`original_row_passes`, `ORIGINAL`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from arena_tui.spine.benchmark import CORE_DIMENSIONS

TURN_TAKING = "turn_taking"
TOOL = "tool_use_correct"
#: the two turn passes, named once for every surface (CSV columns keep their own names, docs/reports.md)
STRICT = "strict pass"  # every scored dimension passes, turn_taking included (`row_passes`)
ORIGINAL = "tool+IF+KB pass"  # the original eval's: tool use, instruction following, KB grounding (`original_row_passes`)


@dataclass(frozen=True)
class Named:
    """How one dimension reads on every surface."""

    label: str  # a column's header where a column has room (the leaderboard, report tables)
    code: str  # two letters, where many share a line (the turn table, lists; a legend spells it out)
    words: str  # the legend's words for the code, and the report's header


@dataclass(frozen=True)
class Dimension:
    """One dimension: how it reads (`named`); whether the judge LLM scores it (`judge`: every judge
    reply carries each such one, "na" where not scored; else code does, from the run's timeline);
    whether it is one of the original eval's turn pass (`original`); its place among the reference's
    metric columns (`reference`, its SCORE_COLUMNS order); how the offline judge scores it (`offline`:
    the answer `grounded` in the golden one's words and numbers, `engaged` with them, or its `calls`
    matched); and what the judge is told it means (`rubric`, `judge.rubric.RUBRIC`)."""

    name: str
    named: Named
    judge: bool
    original: bool
    reference: int
    offline: Literal["grounded", "engaged", "calls"] | None
    rubric: str


#: every dimension, in the order they are shown and summed: a new dimension is its row here (and its
#: field of the judge's reply, `judge.schema`, made from this table), its row in docs/judging.md
DIMENSION_TABLE: tuple[Dimension, ...] = (
    Dimension("kb_grounding", Named("KB", "KB", "knowledge base"), judge=True, original=True,
              reference=3, offline="grounded", rubric=(
              "every fact the assistant states agrees with what it could know at that point: the\n"
              "  prompt-visible KB, the conversation, and what its calls returned (once it has looked an item up, the\n"
              "  full KB as well). Fail only a clear contradiction (a wrong date, time, place, name, price or count) or\n"
              "  an added detail that materially changes the facts. Correct extra detail and light commentary that\n"
              "  contradicts nothing pass. Lacking a tool-only fact it has not looked up is not a grounding failure\n"
              "  (\"I don't have the bouquet's details on hand\"); a false claim about it is (\"we don't sell bouquets\").")),
    Dimension("instruction_following", Named("Instr", "IF", "instructions"), judge=True, original=True,
              reference=2, offline="engaged", rubric=(
              "the assistant answers, or advances the task (asking a relevant question counts;\n"
              "  so does politely declining a question outside what it is there for). Fail it for: no engagement; a\n"
              "  partial answer to a multi-part request; leaving out what the golden answer treats as essential (an\n"
              "  updated total, a breakdown, the arithmetic asked for); wrong arithmetic or counting; and, after a call\n"
              "  that succeeded, narration that says it failed, asks permission for what was just done, or ignores or\n"
              "  denies the data it returned (tool_use_correct keeps the call's credit: this is not rule 6). Confirming\n"
              "  what was done and then offering a new next step is fine. On every turn with a call, before passing\n"
              "  it, read what was said once more against what each call returned: words that contradict, ignore or\n"
              "  undercut the result fail. A missed or wrong call is never by itself an instruction_following failure\n"
              "  (rule 3).")),
    Dimension("tool_use_correct", Named("Tool✓", "TU", "tool use"), judge=True, original=True,
              reference=1, offline="calls", rubric=(
              "scored when the turn expects a call or the assistant made one. Pass when every\n"
              "  expected call was made with equivalent arguments (rule 2); fail when one was missed or wrong, or when\n"
              "  a call was made on a turn that expects none. A call beside the expected ones fails it only when it\n"
              "  is wrong for the task (it acts on the wrong item or changes what the user asked); a harmless extra\n"
              "  lookup, such as one the turn's guidance says is not required, does not.")),
    Dimension("state_tracking", Named("State", "ST", "state"), judge=True, original=False,
              reference=5, offline="grounded", rubric=(
              "the assistant keeps what earlier turns established (facts, choices, corrections,\n"
              "  completed and cancelled actions) straight, recalling it when asked and acting on the current state;\n"
              "  fail when it forgets or misstates what was said or done, or claims an action that never ran.")),
    Dimension("ambiguity_handling", Named("Ambig", "AH", "ambiguity"), judge=True, original=False,
              reference=4, offline="grounded", rubric=(
              "when two readings are really open (two people of one name), asking which is right\n"
              "  and guessing fails; when the context settles it, answering directly is right and asking again is\n"
              "  over-clarification, which fails; noticing and telling near-namesakes apart passes.")),
    Dimension("turn_taking", Named("Taking", "TT", "turn-taking"), judge=False, original=False,
              reference=0, offline=None, rubric=""),  # decided in code (`judge.rubric.turn_taking`), never asked of the judge
)
#: Scored by the LLM (every judge reply carries all of them, "na" where not scored).
LLM_DIMENSIONS: list[str] = [d.name for d in DIMENSION_TABLE if d.judge]
#: Every dimension, in the order they are shown and summed.
DIMENSIONS: list[str] = [d.name for d in DIMENSION_TABLE]
#: The original eval's turn pass: these three, none failing (see "The original eval's turn pass"), in the reference's order
ORIGINAL_DIMENSIONS: tuple[str, ...] = tuple(d.name for d in sorted(DIMENSION_TABLE, key=lambda d: d.reference) if d.original)
#: the reference's metric columns (its SCORE_COLUMNS), in its order
REFERENCE_ORDER: list[str] = [d.name for d in sorted(DIMENSION_TABLE, key=lambda d: d.reference)]
NAMES: dict[str, Named] = {d.name: d.named for d in DIMENSION_TABLE}
assert LLM_DIMENSIONS[:len(CORE_DIMENSIONS)] == CORE_DIMENSIONS  # (every turn's, the benchmark data's default)


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
