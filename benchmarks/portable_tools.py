"""The tool schemas every provider takes, checked when a benchmark is read.

A benchmark is run against every provider, so its `tools.json` may use only what all of them
take. Two things narrow JSON Schema: the engine hands a provider each tool's `properties` and
`required` (`runners.base.ProviderRunner.tools`: Pipecat's provider-neutral FunctionSchema), so
`$defs` beside them never arrives and a `$ref` into it would dangle everywhere; and Gemini
(Live and text) takes a parameter's schema only in its OpenAPI-3.0 subset — its client refuses
any other keyword before the session opens, so a `$ref` made every Gemini session's setup fail
(6 times, 25 lines of stderr) where it should have been one line at load. Pipecat's Gemini
adapter drops `additionalProperties` and `x-…` keys and rewrites a list `type` itself, so
those pass. tests/test_benchmark_input.py holds `KEYWORDS` equal to the Gemini client's own
schema fields.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: the keywords of a parameter's schema every provider takes (Gemini's Schema, as JSON spells it)
KEYWORDS = frozenset({
    "anyOf", "default", "description", "enum", "example", "format", "items", "maxItems", "maxLength",
    "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "nullable", "pattern",
    "properties", "propertyOrdering", "required", "title", "type",
})
#: what Pipecat's Gemini adapter removes before sending (so every provider gets them, or none needs them)
DROPPED = frozenset({"additionalProperties"})
#: keywords that hold schemas (walked); `properties` maps parameter names to schemas
_SUBSCHEMA = ("items",)
_SUBSCHEMAS = ("anyOf",)


def unportable(parameters: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field path under the tool's parameters, keyword) of every keyword in a parameter's schema
    that a provider does not take, walking nested properties, items and anyOf members."""
    props = parameters.get("properties")
    if isinstance(props, dict):
        for name, schema in props.items():
            yield from _walk(schema, f"properties.{name}")


def _walk(schema: object, where: str) -> Iterator[tuple[str, str]]:
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key.startswith("x-") or key in DROPPED:
            continue
        if key not in KEYWORDS:
            yield where, key
            continue
        if key == "properties" and isinstance(value, dict):
            for name, sub in value.items():
                yield from _walk(sub, f"{where}.properties.{name}")
        elif key in _SUBSCHEMA:
            yield from _walk(value, f"{where}.{key}")
        elif key in _SUBSCHEMAS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _walk(sub, f"{where}.{key}[{i}]")


def message(keyword: str) -> str:
    """What a problem says of one keyword no provider may be sent."""
    if keyword in ("$ref", "$defs", "definitions"):
        why = "the engine passes each tool's properties and required only, and Gemini refuses it: write the schema out in place"
    else:
        why = "Gemini's function declarations refuse it (they take an OpenAPI 3.0 subset of JSON Schema)"
    return f"'{keyword}' is not taken by every provider: {why}"
