"""`tools.json`: the tools the model is given, read (our array, `{"tools": [...]}` or OpenAI's
chat-completions shape) and checked (portable keywords, a valid JSON Schema object, unique names),
and every turn's expected calls against them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from arena_tui.spine.benchmark import Tool, Turn

from . import portable_tools
from .problems import error_text, loc
from .reading import Reader


def check_calls(r: Reader, turns: list[Turn], tools: list[Tool], path: Path | None,
                 lines: dict[int, int]) -> None:
    """Expected calls must name a tool and use its parameters."""
    by_name = {t.name: t for t in tools}
    for turn in turns:
        for i, call in enumerate(turn.expected_calls):
            field = "required_function_call" + (f"[{i}]" if isinstance(turn.required_function_call, list) else "")
            tool = by_name.get(call.name)
            if tool is None:
                r.add(f"calls '{call.name}', which is not in tools.json", path, lines.get(turn.turn_index),
                      turn.turn_index, field + ".name")
                continue
            props = tool.parameters.get("properties") or {}
            if props:
                for arg in call.args:
                    if arg not in props:
                        r.add(f"argument '{arg}' is not a parameter of {call.name}", path,
                              lines.get(turn.turn_index), turn.turn_index, f"{field}.args.{arg}")
            for arg in call.flexible_args:
                if props and arg not in props:
                    r.add(f"flexible argument '{arg}' is not a parameter of {call.name}", path,
                          lines.get(turn.turn_index), turn.turn_index, f"{field}.flexible_args")


def read_tools(r: Reader) -> list[Tool]:
    path = r.find("tools.json")
    if path is None:
        r.add("missing (the tools the model is given: [{name, description, parameters}])", r.folder / "tools.json")
        return []
    data = r.read_json(path, items="tools")
    if data is None:
        return []
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]  # tolerate {"tools": [...]}
    if not isinstance(data, list):
        r.add(f"expected a JSON array of tools, got {type(data).__name__}", path)
        return []
    tools: list[Tool] = []
    for i, item in enumerate(data):
        if isinstance(item, dict) and item.get("type") == "function" and isinstance(item.get("function"), dict):
            item = item["function"]  # OpenAI chat-completions shape
        try:
            tool = Tool.model_validate(item)
        except ValidationError as e:
            label = f"tools[{i}]" + (f" ({item.get('name')})" if isinstance(item, dict) and item.get("name") else "")
            for err in e.errors():
                r.add(error_text(err), path, None, None, loc(err["loc"], label))
            continue
        where = f"tools[{i}] ({tool.name}).parameters"
        for at, keyword in portable_tools.unportable(tool.parameters):
            r.add(portable_tools.message(keyword), path, None, None, f"{where}.{at}.{keyword}")
        if schema_problems(r, tool.parameters, path, where):
            pass
        elif tool.parameters.get("type") != "object":
            r.add(f"parameters must be a JSON Schema object (\"type\": \"object\"), got {tool.parameters.get('type')!r}",
                  path, None, None, f"tools[{i}] ({tool.name}).parameters.type")
        else:
            props = tool.parameters.get("properties", {})
            for req in tool.parameters.get("required", []):
                if req not in props:
                    r.add(f"required parameter '{req}' is not in properties", path, None, None, f"{where}.required")
        if any(t.name == tool.name for t in tools):
            r.add(f"duplicate tool name '{tool.name}'", path, None, None, f"tools[{i}].name")
            continue
        tools.append(tool)
    return tools


JSON_TYPES = "array, boolean, integer, null, number, object, string"


def schema_problems(r: Reader, schema: dict[str, Any], path: Path, where: str) -> bool:
    """Check a tool's parameters against the JSON Schema metaschema (the draft its `$schema`
    names, else 2020-12); each error becomes a problem at its place in the schema."""
    import jsonschema  # deferred: jsonschema takes ~0.1 s to import: only when a benchmark is read

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(cls(cls.META_SCHEMA).iter_errors(schema), key=lambda e: list(map(str, e.absolute_path)))
    for err in errors:
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        if err.absolute_path and err.absolute_path[-1] == "type" and err.validator == "anyOf":
            msg = f"{json.dumps(err.instance)[:40]} is not a JSON Schema type ({JSON_TYPES})"
        else:
            msg = err.message if len(err.message) <= 120 else err.message[:117] + "..."
        r.add(f"not valid JSON Schema: {msg}", path, None, None, where + loc)
    return bool(errors)
