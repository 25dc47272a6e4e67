"""The judge's prompt, in three parts a provider can cache: prefix, history, target.

`PromptBuilder.prefix` (the rules, the benchmark, its knowledge base with the tool-only stretches
marked, the tools, the run's expected calls) is byte-identical for every request about a benchmark,
whichever way it judges, so a live run's whole-run request at its end reuses the cache its per-turn
requests built. The rest depends on the way of judging:

- one turn (live, `--turn N`): history = the conversation so far, append-only (turn N's starts with
  turn N-1's); target = `TURN_TASK` and the target turn;
- a rehydrated turn in isolation: history = the golden turns before it; target = `ISOLATED_TASK`
  and the target turn;
- the whole run: history = `RUN_TASK`; target = every turn in full, then the turns to judge;
- a part of a whole run too long for one request (`whole_run.plan_parts`): history = `RUN_TASK`,
  `PART_TASK` and the judgeable turns before the part as the conversation so far; target = the
  part's turns in full, then those turns to judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import DimensionScore, ToolCallRecord, TurnResult
from ..verdicts import LLM_DIMENSIONS
from .knowledge import knowledge_section
from .rubric import ISOLATED_TASK, RUBRIC, RUN_TASK, TURN_TASK

RUN_HEADER = "# The run"
#: a part of a whole run judged in consecutive requests: what it sees of the turns before it
PART_TASK = """This run is judged in {parts} requests, one after another; this is request {part}: {turns}.
The conversation before these turns is shown first, as it ran, for what it tells about them (a call
made there may be an expected call of a turn here; what was said there is the state here). Give
final_judgments and call tracking for the turns under "# The run" only, never for the turns before."""


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def _calls_text(turn: Turn) -> str:
    calls = turn.expected_calls
    if not calls:
        return "none"
    parts = []
    for i, c in enumerate(calls):
        flex = f" (flexible: {', '.join(c.flexible_args)})" if c.flexible_args else ""
        parts.append(f"[{i}] {c.name}({_json(c.args)}){flex}")
    return "; ".join(parts)


def render_exchange(result: TurnResult) -> str:
    """One earlier turn as the judge sees it in the conversation so far (stable bytes)."""
    lines = [f"[turn {result.turn_index}]", f"user: {result.user_text}"]
    for c in result.tool_calls:
        dup = " (duplicate)" if c.is_duplicate else ""
        lines.append(f"call {c.call_id}: {c.name}({_json(c.args)}){dup} -> {c.status}: {_json(c.response)}")
    lines.append(f"assistant: {result.assistant_text or '(no speech)'}")
    return "\n".join(lines) + "\n\n"


def render_golden(turn: Turn) -> str:
    """One golden turn, as a rehydrated session was seeded with it."""
    lines = [f"[turn {turn.turn_index}]", f"user: {turn.input}"]
    for c, response in zip(turn.expected_calls, turn.expected_responses):
        lines.append(f"call: {c.name}({_json(c.args)}) -> {_json(response if response is not None else {'status': 'success'})}")
    lines.append(f"assistant: {turn.golden_text}")
    return "\n".join(lines) + "\n\n"


def _maker(c: ToolCallRecord) -> str:
    """Which of a delegating model's two models made a call (` [made by the backend model gpt-5.4-mini]`);
    nothing for a model that is one model."""
    if c.made_by is None:
        return ""
    who = "the backend model" if c.made_by == "back" else "the front (conversational) model"
    return f" [made by {who}{' ' + c.made_by_model if c.made_by_model else ''}]"


def render_turn(header: str, turn: Turn, result: TurnResult, dims: list[str],
                turn_taking: DimensionScore | None = None) -> str:
    """A turn to judge, in full: what was asked of the assistant, what it did, what code measured."""
    scored = [d for d in dims if d in LLM_DIMENSIONS]
    lines = [header, f"categories: {', '.join(turn.categories) or 'none'}"]
    if turn.subcategory:
        lines.append(f"subcategory: {turn.subcategory}")
    lines += [f"scored dimensions: {', '.join(scored)}", f"user said: {result.user_text}"]
    if result.user_transcript and result.user_transcript.strip() != result.user_text.strip():
        lines.append(f"assistant heard (provider transcript): {result.user_transcript}")
    lines.append(f"expected calls: {_calls_text(turn)}")
    if turn.tool_use_guidance:
        lines.append(f"tool-use guidance: {turn.tool_use_guidance}")
    lines.append(f"golden answer: {turn.golden_text}")
    if result.tool_calls:
        lines.append("actual calls (with the payload returned to the assistant):")
        for c in result.tool_calls:
            dup = " (duplicate, skipped)" if c.is_duplicate else ""
            lines.append(f"  call {c.call_id}: {c.name}({_json(c.args)}){dup}{_maker(c)} -> {c.status}: {_json(c.response)}")
    else:
        lines.append("actual calls: none")
    lines.append(f"turn status: {result.status}" + (f" (recorded as {result.sentinel})" if result.sentinel else ""))
    if turn_taking is not None:  # its reasons only when it failed: a pass says nothing the judge needs
        why = f": {turn_taking.reasoning}" if turn_taking.verdict == "fail" else ""
        lines.append(f"turn-taking (measured in code): {turn_taking.verdict}{why}")
    lines.append(f"assistant said: {result.assistant_text or '(no speech)'}")
    return "\n".join(lines) + "\n"


class PromptBuilder:
    """Builds the three parts of a judge request for one benchmark."""

    def __init__(self, benchmark: Benchmark) -> None:
        self.benchmark = benchmark
        self._prefix: str | None = None

    @property
    def prefix(self) -> str:
        if self._prefix is None:
            b = self.benchmark
            tools = [t.model_dump() for t in b.tools]
            summary = "\n".join(
                f"turn {t.turn_index}: {_calls_text(t)}" for t in b.turns if t.expected_calls
            )
            self._prefix = (
                f"{RUBRIC}\n\n# Benchmark\n{b.name}: {b.meta.description}\n\n"
                f"{knowledge_section(b)}\n"
                f"# Tools available to the assistant\n{_json(tools)}\n\n"
                f"# Expected calls of the whole run (turns not listed expect no call)\n{summary or '(none)'}\n"
            )
        return self._prefix

    def history(self, earlier: Iterable[TurnResult]) -> str:
        body = "".join(render_exchange(r) for r in sorted(earlier, key=lambda r: r.turn_index))
        return "# Conversation so far\n\n" + (body or "(this is the first turn)\n")

    def golden_history(self, before: int) -> str:
        """A rehydrated turn's history: the golden turns its session was seeded with."""
        body = "".join(render_golden(t) for t in sorted(self.benchmark.turns, key=lambda t: t.turn_index)
                       if t.turn_index < before)
        return "# Conversation so far (the golden turns this turn's session was seeded with)\n\n" + (
            body or "(this is the first turn)\n")

    def target(self, turn: Turn, result: TurnResult, dims: list[str], turn_taking: DimensionScore | None = None,
               *, isolated: bool = False) -> str:
        task = ISOLATED_TASK if isolated else TURN_TASK
        return f"{task}\n\n" + render_turn(f"# Target turn {turn.turn_index}", turn, result, dims, turn_taking)

    def run_task(self, earlier: Iterable[TurnResult] = (), part: tuple[int, int] | None = None, turns: str = "") -> str:
        """The whole run's task; for part `part` = (i, n) of a split run, what the part is and the
        turns before it (`earlier`) as the conversation so far."""
        if part is None:
            return RUN_TASK + "\n"
        earlier = list(earlier)
        text = RUN_TASK + "\n\n" + PART_TASK.format(parts=part[1], part=part[0], turns=turns) + "\n"
        return text + ("\n" + self.history(earlier) if earlier else "")

    def run_target(self, results: Iterable[tuple[Turn, TurnResult]], dims: Mapping[int, list[str]],
                   turn_taking: Mapping[int, DimensionScore]) -> str:
        """Every turn of the run in full, in turn order, then which turns to answer for."""
        pairs = sorted(results, key=lambda tr: tr[0].turn_index)
        parts = [render_turn(f"## Turn {t.turn_index}", t, r, dims[t.turn_index], turn_taking.get(t.turn_index))
                 for t, r in pairs]
        ids = ", ".join(str(t.turn_index) for t, _ in pairs)
        return RUN_HEADER + "\n\n" + "\n".join(parts) + f"\nJudge exactly these turns, one entry each: [{ids}]\n"
