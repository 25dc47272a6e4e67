"""Small helpers of the fakes' wire protocols: base64 both ways, keys in either spelling, audio
elided from what is recorded, a transcript spread over deltas."""

from __future__ import annotations

import base64
import json
from typing import Any


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def pick(d: dict[str, Any] | None, name: str, default: object = None) -> Any:
    """Read a protocol key in camelCase or its snake_case spelling (clients send either)."""
    if not d:
        return default
    if name in d:
        return d[name]
    snake = "".join("_" + c.lower() if c.isupper() else c for c in name)
    return d.get(snake, default)


def elide_audio(msg: object, keys: tuple[str, ...] = ("data", "audio", "content", "delta")) -> Any:
    """Copy of a message with long base64 payloads replaced by their length, for the record."""
    if isinstance(msg, dict):
        return {
            k: (f"<{len(v)} b64 chars>" if k in keys and isinstance(v, str) and len(v) > 256 and _looks_b64(v)
                else elide_audio(v, keys))
            for k, v in msg.items()
        }
    if isinstance(msg, list):
        return [elide_audio(v, keys) for v in msg]
    return msg


def _looks_b64(s: str) -> bool:
    return " " not in s[:256]


def spread_words(text: str, n: int) -> list[str]:
    """Split `text` into n transcript deltas (word groups, leading space after the first)."""
    words = text.split()
    n = max(1, n)
    out: list[str] = []
    for k in range(n):
        group = words[k * len(words) // n : (k + 1) * len(words) // n]
        out.append(((" " if out and any(out) else "") + " ".join(group)) if group else "")
    return out


def b64decode_any(data: str) -> bytes:
    """Standard or URL-safe base64, padded or not (google-genai sends URL-safe unpadded)."""
    s = data.replace("-", "+").replace("_", "/")
    return base64.b64decode(s + "=" * (-len(s) % 4))


def tool_output(raw: object) -> Any:
    """A tool result as a client sent it (a function_call_output's `output`): its JSON when it is
    JSON text, else as sent (the fake records what it got; the provider's checks judge it)."""
    if not isinstance(raw, (str, bytes, bytearray)):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw
