"""How many output tokens a judge request asks for, whether it fits its model, and the error a
reply cut short becomes.

The output budget is sized from the turns a request asks verdicts for (`reply_tokens`): one
whole-run entry is 75 (compact JSON) to 110 (indented) o200k tokens of fields, and a ~90-word
commentary ~110 more (measured: `python -m scripts.judge_tokens`), so 200 a turn. Asked for: 1.5
times the estimate, plus what a reasoning model may think first (`ModelLimits.thinking`), never under
`FLOOR` and never over the model's cap.
A request whose budget cannot fit the cap, or whose prompt and budget cannot fit the window, is
split by `whole_run` into consecutive parts. Prompt tokens are estimated at 3 characters a token:
the prompts measure 3.6-3.9 with o200k, so the estimate errs towards a larger window.

A reply that reaches its budget is cut: retrying the same request cuts it again, so it is a
`Truncated` error (permanent), naming the backend, the budget and the turns.
"""

from __future__ import annotations

import json
import math
from typing import Any, Protocol

from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.events import TurnResult

from .errors import PermanentError
from .model_limits import ModelLimits


class JudgeRequest(Protocol):
    """What sizing reads of a `backends.JudgeRequest` (which imports this module): read only, as
    that frozen dataclass's fields are."""

    @property
    def prefix(self) -> str: ...
    @property
    def history(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def benchmark(self) -> Benchmark: ...
    @property
    def result(self) -> TurnResult | None: ...
    @property
    def results(self) -> list[TurnResult]: ...
    @property
    def schema(self) -> dict[str, Any]: ...
    @property
    def part(self) -> str: ...


CHARS_PER_TOKEN = 3.0  # below every judge prompt's measured 3.6-3.9 (o200k): prompts are over-, never under-counted
REPLY_TOKENS_PER_TURN = 200  # one final_judgments entry: 75-110 tokens of fields and ~90 words of commentary
REPLY_TOKENS_PER_CALL = 30  # one function_call_tracking entry (measured: 29)
REPLY_TOKENS_FIXED = 400  # the realignment notes and the reply's frame
ONE_TURN_REPLY_TOKENS = 800  # a one-turn request: five dimensions, each with its own reasoning
HEADROOM = 1.5  # asked for over the estimate: a wordier judge still fits
FLOOR = 4_096  # a small request never gets a stingy budget


class Truncated(PermanentError):
    """The reply reached its output budget (or the model's window) and was cut off."""


def prompt_tokens(request: JudgeRequest) -> int:
    """An upper estimate of the request's prompt: its three parts and its schema."""
    chars = len(request.prefix) + len(request.history) + len(request.target) + len(json.dumps(request.schema))
    return math.ceil(chars / CHARS_PER_TOKEN) + 64  # + message framing


def turns_of(request: JudgeRequest) -> list[int]:
    """The turns a request asks verdicts for."""
    if request.results:
        return [r.turn_index for r in request.results]
    return [request.result.turn_index] if request.result is not None else []


def reply_tokens(request: JudgeRequest) -> int:
    """What the reply is expected to need: per turn asked, per expected call of those turns it
    tracks, and its frame; one turn's reply is a fixed size."""
    if not request.results:
        return ONE_TURN_REPLY_TOKENS
    turns = set(turns_of(request))
    calls = sum(len(t.expected_calls) for t in request.benchmark.turns if t.turn_index in turns)
    return REPLY_TOKENS_FIXED + REPLY_TOKENS_PER_TURN * len(turns) + REPLY_TOKENS_PER_CALL * calls


def needed(request: JudgeRequest, limits: ModelLimits) -> int:
    """The least the request asks for: the reply's estimate with headroom, and the model's thinking."""
    return math.ceil(reply_tokens(request) * HEADROOM) + limits.thinking


def output_budget(request: JudgeRequest, limits: ModelLimits) -> int:
    """The output tokens to ask for: what the request needs, at least `FLOOR` where the window has
    room for it, never over the model's cap."""
    room = limits.context - prompt_tokens(request)
    return min(limits.output, max(needed(request, limits), min(FLOOR, room)))


def misfit(request: JudgeRequest, limits: ModelLimits) -> str | None:
    """Why the request cannot go in one piece to this model (what it needs over the output cap, or
    its prompt and that over the window), or None when it fits."""
    need = needed(request, limits)
    if need > limits.output:
        return f"its reply needs ~{need:,} output tokens, over the model's cap of {limits.output:,}"
    prompt = prompt_tokens(request)
    if prompt + need > limits.context:
        return (f"its prompt (~{prompt:,} tokens) and reply ({need:,}) are over the model's "
                f"{limits.context:,}-token window")
    return None


def turns_text(turns: list[int]) -> str:
    """`turn 5`, `turns 0-74` (consecutive), `turns 3, 7, 9`."""
    if len(turns) == 1:
        return f"turn {turns[0]}"
    if turns == list(range(turns[0], turns[0] + len(turns))):
        return f"turns {turns[0]}-{turns[-1]}"
    return "turns " + ", ".join(str(t) for t in turns)


def truncated(name: str, request: JudgeRequest, budget: int, stop: str) -> Truncated:
    """The error of a reply cut off at `budget` (`stop`: the provider's own word for it)."""
    turns = turns_of(request)
    part = f" ({request.part})" if request.part else ""
    return Truncated(f"{name} cut its reply off at the output budget of {budget:,} tokens ({stop}) judging "
                     f"{turns_text(turns)}{part}, {len(turns)} turn{'s' if len(turns) != 1 else ''}: "
                     f"a cut reply is not retried")


def context_refused(name: str, request: JudgeRequest, limits: ModelLimits) -> PermanentError:
    """A request that cannot fit the model's window, refused before it is sent."""
    prompt, budget = prompt_tokens(request), needed(request, limits)
    part = f" ({request.part})" if request.part else ""
    whose = "its server's" if limits.source == "server" else "the table's" if limits.source == "table" else \
        "the default"
    return PermanentError(f"{name}: the request judging {turns_text(turns_of(request))}{part} needs ~{prompt:,} prompt "
                          f"tokens and {budget:,} for its reply, over {whose} {limits.context:,}-token window")
