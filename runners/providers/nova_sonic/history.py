"""What Nova Sonic is told of a conversation: its history as USER/ASSISTANT text blocks (Nova's
history has no tool blocks, so each tool call and its result is an assistant note), each block
within Nova's ~50 KB a message. The runner replays a session's history with it, the service
renders the live context's tool messages with it (`service.py`)."""

from __future__ import annotations

import json

from ...base import HistoryItem

MAX_MESSAGE_CHARS = 50_000  # Nova history: ~50 KB per message (Pipecat's continuation uses the same cap)


def tool_note(name: str, args: object = None, result: object = None, *, called: bool = True, answered: bool = True) -> str:
    """A tool call and/or its result as assistant text (Nova history has no tool blocks)."""
    a = json.dumps(args or {}, ensure_ascii=False, sort_keys=True)
    r = json.dumps(result, ensure_ascii=False, default=str) if result is not None else "COMPLETED"
    if called and answered:
        return f"(I called the tool {name} with {a}; it returned {r}.)"
    if called:
        return f"(I called the tool {name} with {a}.)"
    return f"(The tool {name} returned {r}.)"


def history_messages(history: list[HistoryItem]) -> list[tuple[str, str]]:
    """(role, text) Nova history blocks in conversation order: tool call + result merged into
    one assistant note, consecutive blocks of the same role joined."""
    out: list[tuple[str, str]] = []
    results = {h.call_id: h for h in history if h.kind == "tool_result" and h.call_id}
    called: set[str] = set()

    def add(role: str, text: str) -> None:
        if not text:
            return
        if out and out[-1][0] == role:
            out[-1] = (role, out[-1][1] + "\n" + text)
        else:
            out.append((role, text))

    for h in history:
        if h.kind == "user":
            add("USER", h.text)
        elif h.kind == "assistant":
            add("ASSISTANT", h.text)
        elif h.kind == "tool_call":
            res = results.get(h.call_id)
            called.add(h.call_id)
            add("ASSISTANT", tool_note(h.name, h.args, res.response if res else None, answered=res is not None))
        elif h.call_id not in called:  # a result whose call was not kept
            add("ASSISTANT", tool_note(h.name, result=h.response, called=False))
    return [(role, text[:MAX_MESSAGE_CHARS]) for role, text in out]
