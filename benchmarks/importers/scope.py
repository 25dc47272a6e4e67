"""What the names of a module or class body are bound to once it has run, read from its syntax
tree: a value's expression, a function, a class, an import, or why code changes it."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)


@dataclass(frozen=True)
class Binding:
    kind: str  # value | def | class | import | code
    node: Any  # the expression; the def or class; (level, module, name) of an import; why it is code
    line: int


def _stored_names(node: ast.AST) -> list[str]:
    """Every name a statement binds, at any depth (the targets of a compound statement)."""
    out = [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))]
    out += [n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return out


def _base_name(target: ast.AST) -> str | None:
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def bindings(body: list[ast.stmt], before: int | None = None) -> dict[str, Binding]:
    """What each name of a module or class body is bound to when the body has run (the statements
    before line `before` only). A name changed by code — bound in an `if` or a loop, assigned into,
    extended by a call — is bound to the reason it cannot be read."""
    out: dict[str, Binding] = {}

    def code(name: str | None, why: str, line: int) -> None:
        if name:
            out[name] = Binding("code", f"{name} {why} (line {line})", line)

    for st in body:
        if before is not None and st.lineno >= before:
            break
        line = st.lineno
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            for t in targets:
                if isinstance(t, ast.Name) and st.value is not None:
                    out[t.id] = Binding("value", st.value, line)
                elif isinstance(t, ast.Name):
                    continue  # a bare annotation binds nothing
                else:
                    for name in [_base_name(t)] if not isinstance(t, (ast.Tuple, ast.List)) else _stored_names(t):
                        code(name, "is changed by an assignment", line)
        elif isinstance(st, ast.AugAssign):
            code(_base_name(st.target), "is changed by an augmented assignment", line)
        elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[st.name] = Binding("def", st, line)
        elif isinstance(st, ast.ClassDef):
            out[st.name] = Binding("class", st, line)
        elif isinstance(st, ast.ImportFrom):
            for alias in st.names:
                if alias.name == "*":
                    out["*"] = Binding("code", f"`from {st.module} import *` may bind it (line {line})", line)
                else:
                    out[alias.asname or alias.name] = Binding("import", (st.level, st.module or "", alias.name), line)
        elif isinstance(st, ast.Import):
            for alias in st.names:
                name = alias.asname or alias.name.split(".")[0]
                out[name] = Binding("import", (0, alias.name if alias.asname else name, None), line)
        elif isinstance(st, _COMPOUND):
            for name in _stored_names(st):
                code(name, f"is bound inside a `{type(st).__name__.lower()}` statement", line)
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                code(_base_name(t), "is deleted or changed by `del`", line)
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            func = st.value.func
            if isinstance(func, ast.Attribute):  # `turns.append(...)`: the list is changed by code
                code(_base_name(func.value), f"is changed by `{short(st.value)}`", line)
    return out


def short(node: ast.AST, limit: int = 60) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
