"""Session rotation, provider-agnostic: when to rotate, and what history a new session gets.

The reference lost replayed history silently on several providers and showed rotation only
in log lines; here the history is kept as typed items, the replay is cut to a budget with
tool calls kept first, and what was replayed is summarised for the `session_rotated` event
so it can be checked against what the server received.
"""

from __future__ import annotations

from arena_tui.spine.events import ReplaySummary, ToolCallRecord
from arena_tui.spine.settings import Rotation

from .base import HistoryItem


def turn_span(turns: list[int]) -> str:
    """Replayed turns as said in a line: `turn 3`, `turns 0-4` (consecutive), `turns 0, 2, 5`."""
    if not turns:
        return "no turns"
    if len(turns) == 1:
        return f"turn {turns[0]}"
    if turns == list(range(turns[0], turns[-1] + 1)):
        return f"turns {turns[0]}-{turns[-1]}"
    return "turns " + ", ".join(map(str, turns))


class History:
    """The conversation as completed turns, in order (only turns that finished are replayable)."""

    def __init__(self) -> None:
        self.items: list[HistoryItem] = []

    def add_turn(
        self, turn_index: int, user_text: str, assistant_text: str, tool_calls: list[ToolCallRecord]
    ) -> None:
        self.items.append(HistoryItem(kind="user", turn_index=turn_index, text=user_text))
        for call in tool_calls:
            if call.is_duplicate:
                continue
            self.items.append(
                HistoryItem(kind="tool_call", turn_index=turn_index, call_id=call.call_id, name=call.name, args=call.args)
            )
            self.items.append(
                HistoryItem(
                    kind="tool_result", turn_index=turn_index, call_id=call.call_id, name=call.name, response=call.response
                )
            )
        if assistant_text:
            self.items.append(HistoryItem(kind="assistant", turn_index=turn_index, text=assistant_text))

    def chars(self) -> int:
        return sum(i.chars() for i in self.items)


def select_replay(items: list[HistoryItem], budget_chars: int, strategy: str = "full_history") -> tuple[list[HistoryItem], ReplaySummary]:
    """The items a new session is given, and a summary of them.

    full_history when everything fits; otherwise tool_priority (every tool call/result kept,
    then the most recent Q&A that fits); zero_context when even the tool items do not fit;
    provider_resumption sends nothing and summarises what the provider is trusted to keep.
    """
    total = sum(i.chars() for i in items)
    if strategy == "provider_resumption":  # the provider carries the old session's history itself
        return [], ReplaySummary(
            strategy=strategy,
            messages=sum(1 for i in items if i.kind in ("user", "assistant")),
            tool_calls=sum(1 for i in items if i.kind == "tool_call"),
            chars=total,
            note="carried over by the provider (not sent by us)",
        )
    if strategy == "full_history" and total <= budget_chars:
        chosen, used = list(items), "full_history"
    else:
        tool_items = [i for i in items if i.kind in ("tool_call", "tool_result")]
        tool_chars = sum(i.chars() for i in tool_items)
        if tool_chars > budget_chars or strategy == "zero_context":
            chosen, used = [], "zero_context"
        else:
            room = budget_chars - tool_chars
            keep: set[int] = {id(i) for i in tool_items}
            for item in reversed(items):
                if item.kind in ("user", "assistant"):
                    if item.chars() > room:
                        break
                    room -= item.chars()
                    keep.add(id(item))
            chosen, used = [i for i in items if id(i) in keep], "tool_priority"
    summary = ReplaySummary(
        strategy=used,
        messages=sum(1 for i in chosen if i.kind in ("user", "assistant")),
        tool_calls=sum(1 for i in chosen if i.kind == "tool_call"),
        chars=sum(i.chars() for i in chosen),
        dropped_messages=sum(1 for i in items if i.kind in ("user", "assistant")) - sum(
            1 for i in chosen if i.kind in ("user", "assistant")
        ),
    )
    return chosen, summary


def rotation_due(policy: Rotation, session_age_ms: float, context_chars: int) -> str | None:
    """Why a live session should be replaced at this turn boundary, or None."""
    if policy.max_age_s is not None and session_age_ms >= policy.max_age_s * 1000.0:
        return "age"
    if policy.max_context_chars is not None and context_chars >= policy.max_context_chars:
        return "context_budget"
    return None
