"""Which dimensions a turn is scored on, turn-taking in code, and the judge prompt.

The prompt is split so providers can cache it: `PromptBuilder.prefix` (rubric, knowledge
base, tools, expected-call summary) is byte-identical for every turn of a benchmark; the
conversation so far is rendered append-only, so turn N's history starts with turn N-1's;
the target turn comes last.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from arena_tui.spine.benchmark import Benchmark, Turn

from arena_tui.spine.events import EMPTY_RESPONSE, DimensionScore, TurnResult
from ..verdicts import LLM_DIMENSIONS, judged_dimensions

#: the version of our judging rules (rubric, prompt shape, code rules) a judgement was made by; stored
#: with every judgement, so figures judged by different rules are never mistaken for one another
JUDGE_VERSION = "arena-judge/1"
OVERLAP_FAIL_MS = 100.0
LEADING_SILENCE_FAIL_MS = 5000.0
_NO_ANSWER = {"no_response", "empty_response", "error", "ended_early"}


def dimensions_for(turn: Turn, *, audio: bool) -> list[str]:
    """The turn's own `dimensions` (the data switches category dimensions on) + turn_taking for audio."""
    return judged_dimensions(turn.dimensions, audio=audio)


def turn_taking(result: TurnResult) -> DimensionScore:
    """Decided from the run engine's timeline, never by the LLM."""
    issues: list[str] = []
    lat = result.latencies
    if result.status in _NO_ANSWER or result.sentinel == EMPTY_RESPONSE:
        issues.append(f"no usable response ({result.status})")
    elif result.no_audio:
        issues.append("the reply had text but no audio")
    elif lat.pipeline_ttfb_ms is None and lat.voice_to_voice_ms is None:
        issues.append("missing timing")
    for name in ("pipeline_ttfb_ms", "voice_to_voice_ms"):
        value = getattr(lat, name)
        if value is not None and value < 0:
            issues.append(f"negative {name} ({value:.0f} ms)")
    if result.overlap_ms >= OVERLAP_FAIL_MS:
        issues.append(f"user/bot overlap {result.overlap_ms:.0f} ms >= {OVERLAP_FAIL_MS:.0f} ms")
    if result.reconnects > 0:
        issues.append(f"reconnected mid-turn ({result.reconnects}x)")
    if lat.leading_silence_ms is not None and lat.leading_silence_ms > LEADING_SILENCE_FAIL_MS:
        issues.append(f"leading silence {lat.leading_silence_ms / 1000:.1f} s > 5 s")
    if issues:
        return DimensionScore(verdict="fail", reasoning="; ".join(issues))
    return DimensionScore(verdict="pass", reasoning="timing present, no overlap, no reconnect")


RUBRIC = """You are the judge of a spoken-dialogue benchmark. A voice assistant was run turn by turn
against scripted user turns. You score ONE target turn at a time, given the knowledge base, the
assistant's tools, the expected calls of the whole run, the conversation so far, and the target turn.

Score each dimension "pass", "fail" or "na" with one or two sentences of reasoning. Score ONLY the
dimensions listed as scored for the target turn; put "na" on every other one.

- kb_grounding: facts stated agree with the knowledge base and the tool results actually returned;
  nothing invented. Judge content, not wording; the golden text is one correct answer, not the only one.
- instruction_following: the assistant does what was asked and what it says matches what it did.
  Fail when words and actions contradict (says it will wait but calls; claims failure after success;
  claims success of a call that failed), on partial answers, wrong arithmetic, or no engagement.
  A missing or wrong function call is NOT an instruction_following failure (strict separation).
- tool_use_correct: only on turns that expect a call or where an unsolicited call was made
  (an unsolicited call scores fail); "na" otherwise. Pass when the expected calls were made with
  equivalent arguments.
- state_tracking: the assistant keeps facts, corrections and actions from earlier turns straight.
- ambiguity_handling: on an ambiguous request the assistant resolves it correctly (asks when it
  must, does not ask when context already decides).

Argument equivalence: arguments may differ in form but not meaning: 12 h vs 24 h time, a broader
search query, letter case or articles in free text, list order. IDs must match exactly. For every
actual call that is not an exact match of an expected call (of this or any turn), add a
call_verdicts entry (call_id, expected_turn, expected_index, equivalent, reasoning).

root_cause: if an expected call of the target turn was missed or wrong, say why: over_clarification
(asked for information it already had), forgotten_state (lost a fact from earlier turns),
genuine_ambiguity (the request really was ambiguous), unnecessary_confirmation (asked to confirm
instead of acting), wrong_call (called, but with the wrong function or arguments); otherwise "none".
fabricated_action: true when the assistant claims an action happened that never executed.
unexecuted_reference: true when the user's turn asks about or builds on an earlier action that
never executed (so the assistant cannot honestly confirm it).
Early/late calls, absorption of penalties and cascades are applied afterwards in code: score what
you see on the target turn."""


def _json(value: Any) -> str:
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
                f"# Knowledge base\n{b.knowledge_base.strip() or '(none)'}\n\n"
                f"# Tools available to the assistant\n{_json(tools)}\n\n"
                f"# Expected calls of the whole run (turns not listed expect no call)\n{summary or '(none)'}\n"
            )
        return self._prefix

    def history(self, earlier: Iterable[TurnResult]) -> str:
        body = "".join(render_exchange(r) for r in sorted(earlier, key=lambda r: r.turn_index))
        return "# Conversation so far\n\n" + (body or "(this is the first turn)\n")

    def target(self, turn: Turn, result: TurnResult, dims: list[str]) -> str:
        scored = [d for d in dims if d in LLM_DIMENSIONS]
        lines = [
            f"# Target turn {turn.turn_index}",
            f"categories: {', '.join(turn.categories) or 'none'}",
        ]
        if turn.subcategory:
            lines.append(f"subcategory: {turn.subcategory}")
        lines += [
            f"scored dimensions: {', '.join(scored)}",
            f"user said: {result.user_text}",
        ]
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
                lines.append(f"  call {c.call_id}: {c.name}({_json(c.args)}){dup} -> {c.status}: {_json(c.response)}")
        else:
            lines.append("actual calls: none")
        lines.append(f"turn status: {result.status}" + (f" (recorded as {result.sentinel})" if result.sentinel else ""))
        lines.append(f"assistant said: {result.assistant_text or '(no speech)'}")
        return "\n".join(lines) + "\n"
