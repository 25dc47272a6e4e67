"""What the OpenAI Live API accepts of a client, as its local fake (`fake.py`) refuses the rest:
the session's startup (`session.start`: a live model, a known audio format, at most 128 `input`
items of one text part each, a Responses model under Responses delegation, no field its strict
schema lacks), context appends within 500 tokens, no Realtime-API event; and the session
resource it reports back (`session.started`, `session.updated`, `session.closed`)."""

from __future__ import annotations

import uuid
from typing import Any

PATH = "/v1/live/sessions"
SESSION_KEYS = {"model", "instructions", "audio", "delegation", "input", "store"}
AUDIO_FORMATS = {("audio/pcm", 24000), ("audio/pcm", 16000), ("audio/pcmu", 8000), ("audio/pcma", 8000)}
MAX_INPUT_ITEMS = 128
MAX_APPEND_TOKENS = 500
#: the Realtime API's events, which the Live API has not (no commit, no client-triggered answer)
REFUSED = ("input_audio_buffer.", "conversation.item.", "response.cancel", "response.output_audio")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def tokens(text: str) -> int:
    """The API's budget counts tokens; Pipecat estimates them as ASCII quarters (`_estimated_tokens`)."""
    return (sum(1 if c.isascii() else 4 for c in text) + 3) // 4


def startup_problem(session: dict[str, Any]) -> str | None:
    """Why the API refuses this `session.start` (its known fields checked: `SESSION_KEYS`); None: it takes it."""
    model = session.get("model")
    if not isinstance(model, str) or not model.startswith("gpt-live"):
        return f"session.model must be a live model (got {model!r})"
    fmt = (session.get("audio") or {}).get("format")
    if fmt is not None and (fmt.get("type", "audio/pcm"), int(fmt.get("rate") or 24000)) not in AUDIO_FORMATS:
        return f"session.audio.format {fmt} is not one the API takes (audio/pcm 16 or 24 kHz, G.711 at 8 kHz)"
    items = session.get("input") or []
    if len(items) > MAX_INPUT_ITEMS:
        return f"session.input has {len(items)} items; at most {MAX_INPUT_ITEMS}"
    for i, item in enumerate(items):
        role, parts = item.get("role"), item.get("content") or []
        want = "output_text" if role == "assistant" else "input_text"
        if role not in ("developer", "user", "assistant"):
            return f"session.input[{i}].role {role!r}: developer, user or assistant"
        if len(parts) != 1 or parts[0].get("type") != want:
            return f"session.input[{i}] ({role}) takes exactly one {want} part"
    delegation = session.get("delegation") or {"type": "client"}
    if delegation.get("type") == "responses" and not (delegation.get("responses") or {}).get("model"):
        return "session.delegation.responses.model is required"
    return None


def session_resource(index: int, config: dict[str, Any], rate: int, status: str) -> dict[str, Any]:
    """The session as the API reports it: connection `index`'s, started with `config`, its audio at `rate`."""
    return {"id": f"live_sess_{index}", "status": status, "model": config.get("model"),
            "instructions": config.get("instructions"), "delegation": config.get("delegation") or {"type": "client"},
            "audio": {"format": {"type": "audio/pcm", "rate": rate}, **(config.get("audio") or {})},
            "input": config.get("input") or []}
