"""Pipecat's `FunctionSchema(...)` and `ToolsSchema(standard_tools=[...])` read from their call's
syntax (never imported, never run): the tools as our tools.json holds them."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Callable

from .scope import short

Read = Callable[[ast.expr], Any]  # an argument's value, read by the static reader
Fail = Callable[[str], Exception]  # the refusal naming the call's file, line and name


@dataclass
class Tool:
    """A `FunctionSchema(...)`: the tool as our tools.json holds it, and what of it was left out."""

    spec: dict[str, Any]
    left_out: list[str] = field(default_factory=list)


@dataclass
class Tools:
    """A `ToolsSchema(standard_tools=[...])`."""

    tools: list[Tool]
    left_out: list[str] = field(default_factory=list)


def _arguments(node: ast.Call, params: tuple[str, ...], fail: Fail) -> dict[str, ast.expr]:
    if len(node.args) > len(params):
        raise fail(f"`{short(node)}` has {len(node.args)} positional arguments")
    args = dict(zip(params, node.args))
    for kw in node.keywords:
        if kw.arg is None:
            raise fail(f"`{short(node)}` unpacks arguments with **")
        if kw.arg not in params or kw.arg in args:
            raise fail(f"`{short(node)}`: unexpected argument {kw.arg}")
        args[kw.arg] = kw.value
    return args


def function_schema(node: ast.Call, read: Read, fail: Fail) -> Tool:
    """`FunctionSchema(name, description, properties, required[, handler])`: a handler is code, left out."""
    args = _arguments(node, ("name", "description", "properties", "required", "handler"), fail)
    missing = [p for p in ("name", "description", "properties", "required") if p not in args]
    if missing:
        raise fail(f"FunctionSchema without {', '.join(missing)}")
    values = {k: read(args[k]) for k in ("name", "description", "properties", "required")}
    required = [] if values["required"] is None else values["required"]
    if not isinstance(values["name"], str) or not isinstance(values["description"], str):
        raise fail("FunctionSchema's name and description must be strings")
    if not isinstance(values["properties"], dict):
        raise fail("FunctionSchema's properties must be a dict")
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise fail("FunctionSchema's required must be a list of names")
    spec = {"name": values["name"], "description": values["description"],
            "parameters": {"type": "object", "properties": values["properties"], "required": required}}
    return Tool(spec, ["handler (code)"] if "handler" in args else [])


def tools_schema(node: ast.Call, read: Read, fail: Fail) -> Tools:
    """`ToolsSchema(standard_tools=[...][, custom_tools])`: custom tools are provider-specific, left out."""
    args = _arguments(node, ("standard_tools", "custom_tools"), fail)
    if "standard_tools" not in args:
        raise fail("ToolsSchema without standard_tools")
    items = args["standard_tools"]
    values = [read(e) for e in items.elts] if isinstance(items, (ast.List, ast.Tuple)) else read(items)
    if not isinstance(values, list):
        raise fail("ToolsSchema's standard_tools must be a list")
    for i, v in enumerate(values):
        if not isinstance(v, Tool):
            raise fail(f"standard_tools[{i}] is not a FunctionSchema (a function or other code)")
    return Tools(values, ["custom_tools"] if "custom_tools" in args else [])
