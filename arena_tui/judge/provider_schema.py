"""A request's output schema in each provider's dialect.

Requests carry one JSON Schema, written for OpenAI's strict `json_schema` (every object closed
with `additionalProperties: false`, every property required). Anthropic's strict tool input
and Gemini's `response_schema` accept less, differently: each backend sends its conversion, so
any request shape (one turn, a whole run) reaches every provider without a backend change.
"""

from __future__ import annotations

import copy
from typing import Any

# Anthropic's strict tool use refuses numeric and string bounds and array bounds other than
# minItems 0 or 1; they are constraints the pydantic output model still checks on the reply.
_ANTHROPIC_UNSUPPORTED = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                          "minLength", "maxLength", "maxItems", "$schema"}
# What Gemini's OpenAPI-subset `Schema` has (in the REST spelling); anything else is refused by
# the API as an unknown field (`additionalProperties` with the Gemini Developer API).
_GEMINI_KEYS = {"type", "format", "description", "nullable", "enum", "items", "properties", "required",
                "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern", "anyOf",
                "propertyOrdering", "title", "default", "example", "minProperties", "maxProperties"}


def _subschemas(schema: dict[str, Any]) -> list[dict[str, Any]]:
    out = [s for s in (schema.get("properties") or {}).values() if isinstance(s, dict)]
    if isinstance(schema.get("items"), dict):
        out.append(schema["items"])
    for key in ("anyOf", "oneOf", "allOf"):
        out += [s for s in schema.get(key) or [] if isinstance(s, dict)]
    out += [s for s in (schema.get("$defs") or {}).values() if isinstance(s, dict)]
    return out


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    return [t] if isinstance(t, str) else [x for x in t or [] if isinstance(x, str)]


def for_anthropic(schema: dict[str, Any]) -> dict[str, Any]:
    """A strict tool's `input_schema`: every object closed, unsupported bounds dropped (minItems
    above 1 too)."""
    out = copy.deepcopy(schema)

    def fix(s: dict[str, Any]) -> None:
        for key in _ANTHROPIC_UNSUPPORTED & s.keys():
            del s[key]
        if isinstance(s.get("minItems"), int) and s["minItems"] > 1:
            del s["minItems"]
        if "object" in _types(s) or "properties" in s:
            s["additionalProperties"] = False
        for sub in _subschemas(s):
            fix(sub)

    fix(out)
    return out


def for_gemini(schema: dict[str, Any]) -> dict[str, Any]:
    """Gemini's `response_schema` (OpenAPI subset): no `additionalProperties`, `$ref`s inlined,
    a nullable type instead of a type list, `const` as a one-value enum, properties kept in the
    schema's order (`propertyOrdering`: Gemini orders them alphabetically otherwise)."""
    defs = schema.get("$defs") or {}

    def conv(s: dict[str, Any], seen: tuple[str, ...] = ()) -> dict[str, Any]:
        ref = s.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in defs:
                raise ValueError(f"schema: {ref} is recursive or undefined (Gemini's response_schema has no $ref)")
            return conv({**defs[name], **{k: v for k, v in s.items() if k != "$ref"}}, (*seen, name))
        s = dict(s)
        if "const" in s:
            s["enum"] = [s.pop("const")]
        types = _types(s)
        if len(types) > 1 or "null" in types:
            real = [t for t in types if t != "null"]
            s["type"] = real[0] if real else "null"
            if "null" in types:
                s["nullable"] = True
        if "oneOf" in s:
            s["anyOf"] = s.pop("oneOf")
        out = {k: v for k, v in s.items() if k in _GEMINI_KEYS}
        if isinstance(out.get("properties"), dict):
            out["properties"] = {k: conv(v, seen) for k, v in out["properties"].items()}
            if len(out["properties"]) > 1:
                out.setdefault("propertyOrdering", list(out["properties"]))
        if isinstance(out.get("items"), dict):
            out["items"] = conv(out["items"], seen)
        if isinstance(out.get("anyOf"), list):
            out["anyOf"] = [conv(x, seen) for x in out["anyOf"]]
        return out

    return conv(schema)
