"""Where the benchmarks of a Python layout are, and what each one's `config.py` says.

Two layouts share one shape: a `benchmarks/<name>/config.py` whose `BenchmarkConfig` class names
the turns, the tools (a Pipecat `ToolsSchema`), the system instruction and the audio folder.
- the original eval (kwindla/aiewf-eval): `prompts/system.py` beside the config, and the turns,
  tools and `audio/turn_NNN.wav` shared by its benchmarks in `benchmarks/_shared/`;
- the reference harness (Design-Arena/audio-agent-bench): `system.py`, `tools.py`, `turns.py`
  (with CORE_DIMENSIONS and CATEGORY_DIMENSIONS) beside the config, `audio/` and
  `real_audio/<speaker>/` in the benchmark's own folder (downloaded there, not in git).
Both keep the knowledge base in `data/knowledge_base.txt`. Everything is read by `static`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .schemas import Tool, Tools
from .static import External, FilePath, Module, Reader, Unreadable

CONFIG = "config.py"
CONFIG_CLASS = "BenchmarkConfig"
KB_FILE = Path("data") / "knowledge_base.txt"
ORIGINAL = "original eval"
REFERENCE = "reference harness"


class LayoutError(Exception):
    """PATH holds no benchmark of either layout."""


@dataclass
class Source:
    """One benchmark as its Python files say it, every value read without running them."""

    name: str
    folder: Path  # the benchmark's folder in their tree
    root: Path  # the folder the user gave: nothing outside it is read
    layout: str  # ORIGINAL | REFERENCE
    turns: list[Any]
    tools: list[Tool]
    system_prompt: str
    knowledge_base: str | None  # None: no data/knowledge_base.txt
    audio_dir: Path
    real_audio_dir: Path | None
    description: str = ""
    hf_repo: str | None = None
    core_dimensions: list[str] | None = None  # the turns file's CORE_DIMENSIONS, if it has them
    category_dimensions: dict[str, list[str]] | None = None
    turns_file: str = ""  # where the turns are written (for messages)
    left_out: list[str] = field(default_factory=list)


def find_benchmarks(path: Path) -> list[Path]:
    """The benchmark folders under PATH: PATH itself (it has a config.py), its `benchmarks/`
    folder's, or its own subfolders' (a `benchmarks/` folder given); `_shared`, `__pycache__` and
    hidden folders are not benchmarks."""
    if (path / CONFIG).is_file():
        return [path]
    base = path / "benchmarks" if (path / "benchmarks").is_dir() else path
    found = sorted(d for d in base.iterdir() if d.is_dir() and not d.name.startswith(("_", "."))
                   and (d / CONFIG).is_file()) if base.is_dir() else []
    if not found:
        raise LayoutError(f"{path}: no benchmark found (expected benchmarks/<name>/{CONFIG}, the layout of the "
                          "original eval or of the reference harness)")
    return found


def package_root(folder: Path, root: Path) -> Path:
    """The folder Python would import the benchmark's top package from: above every folder
    with an `__init__.py` (what `from benchmarks._shared import turns` is resolved against), up
    to the given folder `root` (its parent when `root` is itself a package: a name resolved
    there is read only if it is inside `root`)."""
    top, root = folder.resolve(), root.resolve()
    while top != root and top.parent.is_relative_to(root) and (top.parent / "__init__.py").is_file():
        top = top.parent
    return top.parent if (top / "__init__.py").is_file() else top


def read_benchmark(folder: Path, root: Path | None = None) -> Source:
    """A benchmark folder's config, turns, tools and prompt, reading nothing outside `root` (the
    folder the user gave; default `folder`); Unreadable names what could not be read."""
    reader = Reader(root or folder)
    if not reader.inside(folder):  # (a link out of the given folder: nothing of it is looked at)
        raise Unreadable(reader.rel(folder), None, "the folder", reader.folder.outside(folder), code=False)
    reader.imports = package_root(folder, reader.root)
    config = reader.module(folder / CONFIG)
    cls = config.find_class(CONFIG_CLASS)
    if cls is None:
        raise Unreadable(config.where, None, CONFIG_CLASS, f"{CONFIG} has no class {CONFIG_CLASS}")

    def attr(name: str, kind: type | tuple[type, ...], default: object = ...) -> Any:
        if not config.class_has(cls, name):
            if default is ...:
                raise Unreadable(config.where, cls.lineno, f"{CONFIG_CLASS}.{name}", "the class does not set it")
            return default
        value = config.class_value(cls, name)
        if not isinstance(value, kind):
            raise Unreadable(config.where, cls.lineno, f"{CONFIG_CLASS}.{name}", _not(value, kind))
        return value

    name = attr("name", str, folder.name)
    turns = attr("turns", list)
    tools = attr("tools_schema", (Tools, list))
    tool_list = tools.tools if isinstance(tools, Tools) else tools
    if not all(isinstance(t, Tool) for t in tool_list):
        raise Unreadable(config.where, cls.lineno, f"{CONFIG_CLASS}.tools_schema", "not FunctionSchemas")
    prompt = attr("system_instruction", str)
    audio = attr("audio_dir", FilePath, FilePath(folder / "audio"))
    real = attr("real_audio_dir", FilePath, None)
    for label, where in (("audio_dir", audio), ("real_audio_dir", real)):
        if where is not None and not reader.inside(where.path):
            raise Unreadable(config.where, cls.lineno, f"{CONFIG_CLASS}.{label}", f"{where.path} is outside the tree")
    turns_mod = config.origin(cls, "turns")
    source = Source(
        name=name, folder=folder, root=reader.root, layout=ORIGINAL if (folder / "prompts").is_dir() else REFERENCE,
        turns=turns, tools=tool_list, system_prompt=prompt, knowledge_base=_knowledge_base(reader, folder),
        audio_dir=audio.path, real_audio_dir=real.path if real else None,
        description=attr("description", str, ""), hf_repo=attr("hf_repo", str, None),
        core_dimensions=_optional(turns_mod, "CORE_DIMENSIONS", list),
        category_dimensions=_optional(turns_mod, "CATEGORY_DIMENSIONS", dict),
        turns_file=turns_mod.where,
        left_out=[*(f"{t.spec['name']}: {x}" for t in tool_list for x in t.left_out),
                  *(f"ToolsSchema {x}" for x in (tools.left_out if isinstance(tools, Tools) else []))],
    )
    if not turns_mod.has("CATEGORY_DIMENSIONS") and turns_mod.has("get_relevant_dimensions"):
        source.left_out.append("get_relevant_dimensions (code, without CATEGORY_DIMENSIONS)")
    return source


def _optional(mod: Module, name: str, kind: type) -> Any:
    if not mod.has(name):
        return None
    value = mod.value(name)
    if not isinstance(value, kind):
        raise Unreadable(mod.where, mod.scope[name].line, name, _not(value, kind))
    return value


def _not(value: object, kind: type | tuple[type, ...]) -> str:
    """Why `value` is not the `kind` asked for; a name imported from no file of the folder said as such."""
    if isinstance(value, External):
        return f"it is {value.module}.{value.name}, imported from no file of the given folder (not read)"
    return f"it is a {type(value).__name__}, expected a {_kind(kind)}"


def _knowledge_base(reader: Reader, folder: Path) -> str | None:
    """data/knowledge_base.txt, or None when there is none (a FIFO, a link out or a folder there is refused)."""
    path = folder / KB_FILE
    return reader.read_text(path, reader.rel(path), None, "the knowledge base") if os.path.lexists(path) else None


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {"str": "string", "list": "list", "dict": "dict", "FilePath": "path built from __file__",
             "Tools": "ToolsSchema"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k.__name__, k.__name__) for k in kinds)
