"""What GLM-Realtime takes, checked before anything is sent: its tools in its flat function
format (identifier-like unique names, a description, an object schema), a system instruction
within its 12,000-character cap (refused with its size, never cut), user audio as one WAV file
per append, and the history that fits beside the instruction when a session is seeded or
reconnects (`fit_history`: the reference harness's budget)."""

from __future__ import annotations

import io
import json
import re
import wave
from typing import Any

from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pydantic import BaseModel

GLM_REALTIME_URL = "wss://open.bigmodel.cn/api/paas/v4/realtime"
MAX_INSTRUCTION_CHARS = 12_000
REPLAY_MARGIN_CHARS = 200
REPLAY_ENTRY_CHARS = 500
TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


class GLMConfigError(ValueError):
    """A session configuration GLM-Realtime would refuse (or silently mangle)."""


class ReplayReport(BaseModel):
    """What a new connection was given of the conversation so far (a reconnect's replay, or
    the `history` seeded into a session that continues an earlier one)."""

    session: int
    kind: str = "reconnect"  # "reconnect" (our own) | "seed" (history given at construction)
    reason: str = ""  # why the reconnect happened (close code / reason)
    messages: int = 0
    chars: int = 0
    dropped_messages: int = 0
    budget_chars: int = 0
    truncated_entries: int = 0


def check_instructions(text: str | None) -> str | None:
    """Refuse instructions over GLM's cap, naming the size, instead of letting the API cut them."""
    if text and len(text) > MAX_INSTRUCTION_CHARS:
        raise GLMConfigError(
            f"GLM-Realtime system instruction is {len(text):,} characters; the limit is "
            f"{MAX_INSTRUCTION_CHARS:,}. Shorten the prompt (or knowledge base) for this model."
        )
    return text


def glm_tools(tools: ToolsSchema | None) -> list[dict[str, Any]]:
    """Tools in GLM's flat function format, checked against the constraints we know of.

    GLM wants `{type: "function", name, description, parameters}` with an object-typed JSON
    Schema; names must be identifier-like (≤ 64 chars) and unique; a description is needed
    for the model to choose. Violations are reported all at once, by tool name.
    """
    if not tools:
        return []
    out: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for fn in tools.standard_tools:
        if not TOOL_NAME.match(fn.name):
            problems.append(f"tool {fn.name!r}: name must match {TOOL_NAME.pattern}")
        if fn.name in seen:
            problems.append(f"tool {fn.name!r}: duplicate name")
        seen.add(fn.name)
        if not (fn.description or "").strip():
            problems.append(f"tool {fn.name!r}: description is empty")
        params = {"type": "object", "properties": dict(fn.properties or {}), "required": list(fn.required or [])}
        missing = [r for r in params["required"] if r not in params["properties"]]
        if missing:
            problems.append(f"tool {fn.name!r}: required {missing} not among its properties")
        out.append({"type": "function", "name": fn.name, "description": fn.description, "parameters": params})
    if problems:
        raise GLMConfigError("GLM-Realtime tool schema problems: " + "; ".join(problems))
    return out


def wav_bytes(pcm: bytes, sample_rate: int) -> bytes:
    """A complete mono PCM16 WAV file: GLM's append event carries one per request."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm)
    return buf.getvalue()


def tool_note(name: str, args: object, result: object) -> str:
    """A tool call and its result as one line of text, for replay into a new session."""

    def compact_json(v: object) -> str:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)

    def compact(v: object) -> str:
        if isinstance(v, str):
            try:
                return compact_json(json.loads(v))
            except json.JSONDecodeError:
                return v
        return compact_json(v)

    return f"[tool {name}({compact(args)}) returned {compact(result)}]"


def budget_for(instructions: object) -> int:
    """Replay room left next to the instructions (the reference harness's rule; none given, or
    Pipecat's NOT_GIVEN, leave it all)."""
    return max(0, MAX_INSTRUCTION_CHARS - (len(instructions) if isinstance(instructions, str) else 0) - REPLAY_MARGIN_CHARS)


def fit_history(entries: list[tuple[str, str]], report: ReplayReport) -> list[tuple[str, str]]:
    """The newest entries that fit `report.budget_chars`, in order; entries cut to 500 chars.
    Fills in the report's counts (kept, chars, dropped, truncated).

    GLM's own rule, not the engine's `runners.rotation.select_replay`, because it trims a
    different thing for a different reason: the service replays by itself after its own
    reconnect, from the (role, text) transcript it saw on the wire, where tool calls are
    already flattened into text notes (GLM documents no function-call item to seed), so there
    is no tool item to keep first; and every entry is cut to 500 chars before the 12,000-char
    instruction cap is counted, oldest dropped first (the reference harness's GLM budget). The
    engine's rule still decides what a rotated session is handed (`history_budget_chars` is set
    to `budget_for` the prompt), so this one only cuts further what no longer fits."""
    kept: list[tuple[str, str]] = []
    used = 0
    for role, text in reversed(entries):
        if len(text) > REPLAY_ENTRY_CHARS:
            text = text[:REPLAY_ENTRY_CHARS]
            report.truncated_entries += 1
        if used + len(text) > report.budget_chars:
            break
        used += len(text)
        kept.append((role, text))
    kept.reverse()
    report.dropped_messages = len(entries) - len(kept)
    report.messages, report.chars = len(kept), used
    return kept


def message_text(message: object) -> str:
    """A context message's text (a string, or its text parts joined)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
