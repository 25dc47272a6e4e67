"""JSON as JSON defines it: Python's `json` reads `NaN`, `Infinity` and `-Infinity` (and turns
`1e999` into infinity), none of which is JSON. A benchmark file holding one would load, then our
own client could not serialise the request (the turn recorded as the model's failure) or an
expected call's arguments could never be matched. So the loader reads with `loads`, which marks
each such value, and `not_json` names where each one sits, for a problem per value (file, line,
turn, field) instead of a run that fails later for a reason nobody can see.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any


class NotJSON:
    """Where a value that is not JSON was read: `text` as written (`NaN`, `-Infinity`, `1e999`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _number(text: str) -> float | NotJSON:
    value = float(text)
    return value if math.isfinite(value) else NotJSON(text)


def loads(text: str | bytes) -> Any:
    """`json.loads`, each NaN / ±Infinity / overflowing number left as a `NotJSON` marker (`not_json`)."""
    return json.loads(text, parse_constant=NotJSON, parse_float=_number)


def not_json(value: object, where: str = "") -> Iterator[tuple[str, str]]:
    """(field path, text as written) of every non-JSON number inside `value`, in document order;
    the path spelled as the loader names fields (`required_function_call.args.price`,
    `tools[2] (book_repair).parameters.properties.n.maximum`)."""
    if isinstance(value, NotJSON):
        yield where, value.text
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from not_json(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            name = v.get("name") if isinstance(v, dict) else None  # a tool, a call: named beside its index
            yield from not_json(v, f"{where}[{i}]" + (f" ({name})" if isinstance(name, str) else ""))


def message(text: str) -> str:
    """What a problem says of one such value."""
    return f"{text} is not JSON (JSON has no NaN or Infinity; write a finite number, or null)"
