"""The code's structure: no import cycle between modules, and every deferred import says why.

The layer contracts themselves are `lint-imports` (pyproject.toml, run by scripts/test.sh).
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arena_tui", "runners", "benchmarks")
MARK = "# deferred:"


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    adj = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for start in adj:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            if i < len(adj[v]):
                work.append((v, i + 1))
                w = adj[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def test_no_import_cycle_between_modules() -> None:
    """Every import counts, inside functions and under TYPE_CHECKING too: a cycle hidden in a
    function is still two modules that cannot be understood (or moved) one without the other."""
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for m in ("p.a", "p.b", "p.c"):
        graph.add_module(m)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    assert _cycles(graph) == [["p.a", "p.b"]]


def _undeclared_deferred_imports(source: str) -> list[int]:
    """Lines of imports inside a function that carry no `# deferred: <reason>`."""
    lines = source.splitlines()
    missing: list[int] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                first, last = lines[child.lineno - 1], lines[(child.end_lineno or child.lineno) - 1]
                if not any(MARK in line and line.split(MARK, 1)[1].strip() for line in (first, last)):
                    missing.append(child.lineno)
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(source), False)
    return missing


def test_every_import_inside_a_function_says_why() -> None:
    missing = [
        f"{path.relative_to(ROOT)}:{line}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for line in _undeclared_deferred_imports(path.read_text(encoding="utf-8"))
    ]
    assert missing == [], "imports inside functions need `# deferred: <reason>`: " + ", ".join(missing)


def test_the_deferred_check_sees_a_bare_import() -> None:
    source = (
        "import os\n"
        "def f():\n"
        "    import json\n"
        "    import re  # deferred: only f needs it\n"
        "    import csv  # deferred:\n"
    )
    assert _undeclared_deferred_imports(source) == [3, 5]
