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


def _rooms(graph: grimp.ImportGraph) -> grimp.ImportGraph:
    """The graph of rooms: a package's first-level parts (`runners.fakes`, `runners.base`), each
    standing for every module inside it; an import between two modules is one between their rooms."""
    def room(module: str) -> str:
        return ".".join(module.split(".")[:2])

    rooms = grimp.ImportGraph()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            a, b = room(importer), room(imported)
            if a != b and a.split(".")[0] == b.split(".")[0] and imported in graph.modules:
                rooms.add_import(importer=a, imported=b)
    return rooms


def test_no_import_runs_back_up_between_rooms() -> None:
    """Inside each package its rooms stand on floors: `runners.base` (the provider contract) never
    imports `runners.providers` (which implements it), the fakes never the simulator (which uses
    them). A piece two rooms share lives below both."""
    assert _cycles(_rooms(grimp.build_graph(*PACKAGES, cache_dir=None))) == []


def test_the_room_check_sees_an_import_running_back_up() -> None:
    graph = grimp.ImportGraph()
    for m in ("p.base", "p.providers.a", "p.providers.catalog", "p.fakes.x"):
        graph.add_module(m)
    graph.add_import(importer="p.providers.a", imported="p.base")
    graph.add_import(importer="p.base", imported="p.providers.catalog")
    graph.add_import(importer="p.fakes.x", imported="p.base")
    assert _cycles(_rooms(graph)) == [["p.base", "p.providers"]]


def test_the_heap_is_settled_in_one_place() -> None:
    """Freezing the heap, unfreezing it and the collector's thresholds are `spine.heap`'s rule, applied
    only where an entry point says so (`settle_heaps_here`); the engine once froze it in every process
    that ran, the console script once thawed it by itself."""
    calls = sorted(
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "gc"
        and node.func.attr in ("freeze", "set_threshold", "unfreeze")
    )
    assert calls == ["arena_tui/spine/heap.py"] * 3


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


def _layer_modules(pyproject: dict) -> list[str]:
    """The modules named in the `layers` contract (siblings joined by `|` apart)."""
    (layers,) = [c for c in pyproject["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [m.strip() for layer in layers["layers"] for m in layer.split("|")]


def _modules(root: Path, packages: tuple[str, ...]) -> list[str]:
    out = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def _outside_layers(modules: list[str], layers: list[str]) -> list[str]:
    """Modules neither a layer nor inside one; the root package `arena_tui` itself (its
    `__init__`: the docstring and the version) is no layer's."""
    return [m for m in modules if m != "arena_tui" and not any(m == la or m.startswith(la + ".") for la in layers)]


def test_every_module_sits_in_a_layer() -> None:
    """lint-imports checks only the modules its layers name: a module outside them is unchecked."""
    import tomllib

    layers = _layer_modules(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8")))
    assert _outside_layers(_modules(ROOT, PACKAGES), layers) == []


def test_the_layer_check_sees_a_module_outside(tmp_path: Path) -> None:
    for rel in ("p/__init__.py", "p/a.py", "p/b/__init__.py", "p/b/c.py", "p/d.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", encoding="utf-8")
    layers = _layer_modules({"tool": {"importlinter": {"contracts": [{"type": "layers", "layers": ["p.a | p.b"]}]}}})
    assert _outside_layers(_modules(tmp_path, ("p",)), layers) == ["p", "p.d"]


def _private_command_imports(path: Path) -> list[str]:
    """`from <another command> import _name` in a command module: a command's private names are its own."""
    me = path.stem
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 1:
            target = node.module or ""
        elif node.level == 0 and (node.module or "").startswith("arena_tui.commands."):
            target = (node.module or "").removeprefix("arena_tui.commands.")
        else:
            continue
        out += [f"{path.name}:{node.lineno} {a.name}" for a in node.names
                if target.split(".")[0] != me and a.name.startswith("_")]
    return out


def test_no_command_imports_a_private_name_of_another() -> None:
    found = [hit for path in sorted((ROOT / "arena_tui" / "commands").glob("*.py")) for hit in _private_command_imports(path)]
    assert found == []


def test_the_private_import_check_sees_one(tmp_path: Path) -> None:
    path = tmp_path / "resume.py"
    path.write_text("from .run import _quiet, public\nfrom arena_tui.commands.run import _other\n"
                    "from .resume import _mine\nfrom ..judge import _elsewhere\n", encoding="utf-8")
    assert _private_command_imports(path) == ["resume.py:1 _quiet", "resume.py:2 _other"]
