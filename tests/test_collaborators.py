"""No class assembled from mixins: one job per object, and where one piece calls what another
defines, it holds that piece as a collaborator behind a Protocol its own module declares.

The app (`arena_tui.app`) holds its database, runs, judges and navigation; the audio turn loop
(`runners.run.audio`) its frames, end-of-turn rule, sessions and records, beside the run life's
tools and replays; `RunState` (`arena_tui.run_view`) its turn table, transcript, meters, waits,
judgements, log and costs. Read from the source (no import) for every class of ours; the three
classes and their bounds by import.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from textual.app import App

from arena_tui.app import ArenaApp
from arena_tui.run_view import RunState
from runners.run.audio import AudioRun
from runners.run.base import RunBase
from runners.run.full_duplex import FullDuplexRun
from runners.run.text import TextRun

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("arena_tui", "runners", "benchmarks")

#: classes of ours with more than one base of ours, each for a reason; a new one is a decision, not a drift
ALLOWED = {
    "arena_tui.spine.events.Overlap",  # data, not behaviour: an event that is an interval (two pydantic models)
    "arena_tui.judge.schema.JudgeOutput",  # data: a judge's reply schema, its scores and its flags (two pydantic models)
    # the find bar (`screens.find.Finding`) a screen with a search offers: outside this pass (issue 45 item 4)
    "arena_tui.screens.compare.CompareScreen",
    "arena_tui.screens.leaderboard.LeaderboardScreen",
    "arena_tui.screens.run.RunScreen",
    "arena_tui.screens.runs.RunsScreen",
    # a Pipecat service made of its protocol's halves (the user's turns, the model's replies): outside this pass
    "runners.providers.glm_realtime.service.GLMRealtimeLLMService",
}

#: methods (functions and properties, `__init__` included, other dunders not) a class has of ours,
#: its own and its bases' together: before this pass ArenaApp 34 (from four mixins), AudioRun 65,
#: FullDuplexRun 65, TextRun 39, RunState 56
BOUNDS = {ArenaApp: 32, AudioRun: 40, FullDuplexRun: 40, TextRun: 36, RunState: 36}
COLLABORATOR_BOUND = 16  # each collaborator those classes hold: one job


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """Local name -> the dotted name it was imported as (relative imports resolved)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            for a in node.names:
                out[a.asname or a.name] = f"{source}.{a.name}"
    return out


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and (head := _dotted(expr.value)) is not None:
        return f"{head}.{expr.attr}"
    return None


def own_bases(source: str, module: str, is_package: bool = False,
              packages: tuple[str, ...] = PACKAGES) -> dict[str, list[str]]:
    """class -> its bases that are classes of ours (a Protocol's are interfaces composed: not counted)."""
    tree = ast.parse(source)
    imports = _imports(tree, module, is_package)
    local = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    out: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        names = [d for b in node.bases if (d := _dotted(b)) is not None]
        if any(n.split(".")[-1] == "Protocol" for n in names):
            continue
        ours = []
        for name in names:
            head, _, rest = name.partition(".")
            target = f"{module}.{head}" if head in local else imports.get(head)
            if target is not None and target.split(".")[0] in packages:
                ours.append(f"{target}.{rest}" if rest else target)
        out[f"{module}.{node.name}"] = ours
    return out


def mixed_classes(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> set[str]:
    """Classes of ours with more than one base of ours."""
    found: set[str] = set()
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            bases = own_bases(path.read_text(encoding="utf-8"), _module_name(path, root), path.name == "__init__.py", packages)
            found |= {cls for cls, ours in bases.items() if len(ours) > 1}
    return found


def methods(cls: type) -> list[str]:
    """The functions and properties a class has of ours (its own and its bases' in our packages)."""
    names: set[str] = set()
    for base in cls.__mro__:
        if base.__module__.split(".")[0] not in PACKAGES:
            continue
        for name, value in vars(base).items():
            if name.startswith("__") and name != "__init__":
                continue
            if inspect.isfunction(value) or isinstance(value, (property, staticmethod, classmethod)):
                names.add(name)
    return sorted(names)


def test_no_class_is_assembled_from_mixins() -> None:
    assert mixed_classes() == ALLOWED


def test_the_three_hold_collaborators_instead() -> None:
    assert ArenaApp.__bases__ == (App,)
    assert AudioRun.__bases__ == (RunBase,) and FullDuplexRun.__bases__ == (AudioRun,)
    assert RunState.__bases__ == (object,)


def test_each_stays_under_its_method_bound() -> None:
    over = {cls.__name__: len(methods(cls)) for cls, bound in BOUNDS.items() if len(methods(cls)) > bound}
    assert over == {}, f"over their bound {({c.__name__: b for c, b in BOUNDS.items()})}: {over}"


def test_each_collaborator_does_one_job() -> None:
    """Every class the app's, the audio loop's and the run view's modules define stays small."""
    folders = [ROOT / "arena_tui" / "app", ROOT / "arena_tui" / "run_view", ROOT / "runners" / "run"]
    holders = {cls.__name__ for cls in BOUNDS} | {"RunBase", "SessionBase", "Session", "TextSession"}
    big = {}
    for folder in folders:
        for path in sorted(folder.glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.name not in holders:
                    n = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in node.body)
                    if n > COLLABORATOR_BOUND:
                        big[f"{path.name}:{node.name}"] = n
    assert big == {}


def test_the_mixin_check_sees_two_bases_of_ours() -> None:
    source = (
        "from typing import Protocol\n"
        "from textual.app import App\n"
        "from .parts import Part\n"
        "from . import other\n"
        "class Local: ...\n"
        "class Mixed(Part, other.Piece, App): ...\n"
        "class Plain(Part, App): ...\n"
        "class Joined(Local, Part): ...\n"
        "class Hooks(Part, Local, Protocol): ...\n"
    )
    bases = own_bases(source, "arena_tui.app.arena")
    assert bases["arena_tui.app.arena.Mixed"] == ["arena_tui.app.parts.Part", "arena_tui.app.other.Piece"]
    assert {cls for cls, ours in bases.items() if len(ours) > 1} == {"arena_tui.app.arena.Mixed", "arena_tui.app.arena.Joined"}
