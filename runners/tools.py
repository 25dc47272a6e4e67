"""Answer a model's function calls from the turn spec, never from a real backend.

The benchmark scripts what each expected call returns, so the run is reproducible and no
booking/email/order system is touched. The rules follow the reference harness (see
`shared/notes/reference-harness.md`, "Tool calls") with these decisions made explicit:

- Matching compares canonical args (`arena_tui.spine.calls`) key by key, recursively. Extra keys
  in the actual call that the expected call does not have are a mismatch (as in the
  reference: keys are compared). Values compare by JSON type: numbers by value (``2`` equals
  ``2.0``), but ``"2"``, ``2`` and ``True`` all differ; strings are case-sensitive.
- Names in `flexible_args` that the expected call has must be present and non-empty in the
  actual call but are not compared. Flexible names the expected call lacks may appear freely.
- List-shaped turns: each scripted response is used once, matched by (name, args) in any
  order. When several unconsumed expected calls match (flexible args), the one whose
  flexible values are most similar to the actual ones wins, so ``lookup_item("vanilla
  extract")`` gets the vanilla result, not the first scripted lookup.
- The same (name, canonical args) twice in one turn is ``duplicate_skipped``. A flexible call
  that is closer to an already-answered call than to any unanswered one (``"Raw honey"``
  after ``"honey"``), or one that matches only answered calls, is a duplicate too, instead of
  consuming another call's response.
- A call to a function whose expected calls are all answered, with new args, is
  ``UNEXPECTED_TOOL_CALL`` with no ``expected_function``: nothing more is expected.
- ``end_session`` always ends the session (the run records the remaining turns as ended
  early). Expected and matched → ``matched``; otherwise → ``end_session``. Either way
  ``ends_session=True`` and the response is the scripted one or ``{"status": "success"}``.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from arena_tui.spine.events import ToolCallRecord
from arena_tui.spine.benchmark import ExpectedCall, Turn
from arena_tui.spine.calls import args_key, args_match, similarity

END_SESSION = "end_session"
UNEXPECTED_TOOL_CALL = "UNEXPECTED_TOOL_CALL"
ARG_MISMATCH = "ARG_MISMATCH"
NOT_AVAILABLE_MESSAGE = (
    "This function is not available right now. Do NOT call any more functions. "
    "Respond directly to the user with speech."
)
UNPARSED_ARGS_KEY = "_unparsed_arguments"

ResolutionStatus = Literal[
    "matched", "unexpected_tool_call", "arg_mismatch", "not_available", "duplicate_skipped", "end_session"
]


# ---------------------------------------------------------------------------- payloads


def not_available_payload() -> dict[str, Any]:
    """What the model hears when the turn expects no call at all."""
    return {"status": "not_available", "message": NOT_AVAILABLE_MESSAGE}


def success_payload() -> dict[str, Any]:
    """Default answer to an unscripted call that is accepted (e.g. `end_session`)."""
    return {"status": "success"}


def duplicate_payload() -> dict[str, Any]:
    return {"status": "duplicate_skipped"}


def error_payload(
    error_code: str,
    called_function: str,
    called_args: dict[str, Any],
    expected: ExpectedCall | None,
) -> dict[str, Any]:
    """The reference's error shape; `expected` None means no further call was expected."""
    if error_code == ARG_MISMATCH:
        message = (
            f"Function '{called_function}' was called with unexpected arguments. "
            "Check the arguments against what the user asked for."
        )
    elif expected is None:
        message = (
            f"Unexpected call to '{called_function}': no further function call is expected now. "
            "Respond directly to the user with speech."
        )
    else:
        message = f"Unexpected call to '{called_function}'; expected '{expected.name}'."
    return {
        "status": "error",
        "error_code": error_code,
        "message": message,
        "called_function": called_function,
        "called_args": copy.deepcopy(called_args),
        "expected_function": expected.name if expected else None,
        "expected_args": copy.deepcopy(expected.args) if expected else None,
    }


def parse_args(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Model arguments as a dict; malformed JSON is kept under one key so it mismatches visibly."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {UNPARSED_ARGS_KEY: str(raw)}
    return value if isinstance(value, dict) else {UNPARSED_ARGS_KEY: str(raw)}


# ---------------------------------------------------------------------------- resolver


class Resolution(BaseModel):
    """How one call was answered; `response` is THIS call's payload for the model."""

    model_config = ConfigDict(frozen=True)

    status: ResolutionStatus
    response: Any
    is_duplicate: bool = False
    expected_index: int | None = None
    ends_session: bool = False

    def record(self, call_id: str, name: str, args: dict[str, Any], t_ms: float | None = None,
               made_by: tuple[str, str] | None = None) -> ToolCallRecord:
        """The `TurnResult.tool_calls` entry for this call (`made_by`: which of a delegating model's
        models made it, and that model's id)."""
        return ToolCallRecord(
            made_by=made_by[0] if made_by else None,
            made_by_model=made_by[1] if made_by else None,
            call_id=call_id,
            name=name,
            args=args,
            status=self.status,
            response=self.response,
            is_duplicate=self.is_duplicate,
            expected_index=self.expected_index,
            t_ms=t_ms,
        )


class ToolResolver:
    """Answers the calls of one turn attempt; a retry of the turn gets a fresh resolver."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.expected: list[ExpectedCall] = turn.expected_calls
        self._responses: list[Any] = turn.expected_responses
        self._consumed: list[int] = []  # expected indices, in the order they were answered
        self._seen: set[tuple[str, str]] = set()
        self.history: list[tuple[str, dict[str, Any], Resolution]] = []

    def unmatched_expected(self) -> list[int]:
        """Expected calls not (yet) made, by index into `turn.expected_calls`."""
        return [i for i in range(len(self.expected)) if i not in self._consumed]

    def resolve(self, name: str, args: dict[str, Any]) -> Resolution:
        res = self._resolve(name, args)
        self.history.append((name, copy.deepcopy(args), res))
        return res

    def _resolve(self, name: str, args: dict[str, Any]) -> Resolution:
        key = (name, args_key(args))
        if key in self._seen:
            return Resolution(status="duplicate_skipped", response=duplicate_payload(), is_duplicate=True)
        self._seen.add(key)

        same_name = [i for i, c in enumerate(self.expected) if c.name == name]
        matching = [i for i in same_name if args_match(self.expected[i], args)]
        free = [i for i in matching if i not in self._consumed]
        if free:
            best = max(free, key=lambda i: (similarity(self.expected[i], args), -i))
            taken = [i for i in matching if i in self._consumed]
            if taken and max(similarity(self.expected[i], args) for i in taken) > similarity(
                self.expected[best], args
            ):
                return Resolution(status="duplicate_skipped", response=duplicate_payload(), is_duplicate=True)
            self._consumed.append(best)
            scripted = self._responses[best]
            response = copy.deepcopy(scripted) if scripted is not None else success_payload()
            return Resolution(
                status="matched", response=response, expected_index=best, ends_session=name == END_SESSION
            )

        if matching:  # flexible args matching only calls already answered: asked again
            return Resolution(status="duplicate_skipped", response=duplicate_payload(), is_duplicate=True)
        if name == END_SESSION:
            return Resolution(status="end_session", response=success_payload(), ends_session=True)
        if not self.expected:
            return Resolution(status="not_available", response=not_available_payload())

        open_same = [i for i in same_name if i not in self._consumed]
        if open_same:
            same = self.expected[open_same[0]]
            return Resolution(status="arg_mismatch", response=error_payload(ARG_MISMATCH, name, args, same))
        open_any = self.unmatched_expected()
        nearest = self.expected[open_any[0]] if open_any else None
        return Resolution(
            status="unexpected_tool_call", response=error_payload(UNEXPECTED_TOOL_CALL, name, args, nearest)
        )
