"""Values out of another project's Python files, read from the syntax tree and never run.

The original eval (kwindla/aiewf-eval) and the reference harness (Design-Arena/audio-agent-bench)
keep their benchmarks as Python: a list of turn dicts, Pipecat `FunctionSchema` calls, a system
prompt joined from strings and the knowledge base file. That code is not ours to run, so it is
read here instead: literals (what `ast.literal_eval` takes), `+` of strings or of lists, f-strings
without expressions, names bound to such values in the same file or imported from another file
of the same tree, `FunctionSchema(...)` and `ToolsSchema(standard_tools=[...])`, and paths built
from `__file__` whose `.read_text()` is a file inside the tree — also through a function of no
arguments whose body only binds names and returns. Anything else raises `Unreadable`, naming the
file, the line, the name that could not be read and why.
"""

from __future__ import annotations

import ast
import io
import math
import os
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any

from .confine import Folder, NotRead
from .schemas import function_schema, tools_schema
from .scope import Binding, bindings, short

MAX_SOURCE_BYTES = 16 << 20  # a Python file, or a file it reads (the loader's limit for a text file)
MAX_TOKENS = 200_000  # tokens of one Python file (theirs: a few thousand); its syntax tree costs ~0.5 kB a token
MAX_DEPTH = 200  # names and calls followed through one another before giving up
MAX_STEPS = 200_000  # expressions read for one value (a name used twice is read twice; the real ones take <2,000)
MAX_TEXT = 16 << 20  # characters one string may grow to by `+` …
MAX_ITEMS = 1 << 20  # … and items one list (bounded memory, whatever names refer to names)
#: bytes of values one benchmark's reading builds, every use of a name counted (a name used 400 times is
#: its value 400 times in what is written): strings as Python holds them, 8 bytes an item (theirs: under 1 MiB)
MAX_BUILT = 64 << 20
_PIPECAT = "pipecat"
_SCHEMAS = {"FunctionSchema": function_schema, "ToolsSchema": tools_schema}


class Unreadable(Exception):
    """A value that cannot be had without running the code: file, line, name and why, in one line."""

    def __init__(self, where: str, line: int | None, name: str, why: str, *, code: bool = True) -> None:
        self.where, self.line, self.name, self.why = where, line, name, why
        loc = f"{where}:{line}" if line else where
        super().__init__(f"{loc}: cannot read {name}{' without running it' if code and line else ''}: {why}")


class _TooLarge(Unreadable):
    """The value is too big to read: said of the name asked for, not of where the budget ran out."""


@dataclass(frozen=True)
class FilePath:
    """A path built from `__file__`: a place in the tree, read only if it stays inside it."""

    path: Path


@dataclass(frozen=True)
class External:
    """A name imported from outside the tree: pathlib's Path, Pipecat's schemas, anything else."""

    module: str
    name: str


class Module:
    """One parsed file of the tree."""

    def __init__(self, reader: Reader, path: Path) -> None:
        self.reader = reader
        self.path = path
        self.where = reader.rel(path)
        text = reader.read_text(path, self.where, None, "the file")
        _within_tokens(text, self.where)
        try:
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as e:
            raise Unreadable(self.where, e.lineno, "the file", f"not Python ({e.msg})", code=False) from None
        except RecursionError:  # valid Python, nested deeper than the parser follows: said as the evaluator says it
            raise Unreadable(self.where, None, "the file", "an expression in it is nested too deep to read") from None
        except MemoryError:
            raise Unreadable(self.where, None, "the file", "it is too large to read", code=False) from None
        except ValueError as e:  # e.g. a null byte
            raise Unreadable(self.where, None, "the file", f"not Python ({e})", code=False) from None
        self.tree = tree
        self.scope = bindings(tree.body)
        self._cache: dict[str, Any] = {}

    def has(self, name: str) -> bool:
        return name in self.scope

    def value(self, name: str) -> Any:
        """The value a module-level name holds once the file has run."""
        if name not in self._cache:
            line = self.scope[name].line if name in self.scope else None
            self._cache[name] = _bounded(self, line, name, lambda: self.reader.evaluator.lookup(self, [], name, None, name))
        return self._cache[name]

    def find_class(self, name: str) -> ast.ClassDef | None:
        b = self.scope.get(name)
        return b.node if b is not None and b.kind == "class" else None

    def class_value(self, cls: ast.ClassDef, attr: str) -> Any:
        """A class attribute as the class body leaves it (its earlier attributes, then the module's names)."""
        scope = bindings(cls.body)
        b = scope[attr]
        chain = [bindings(cls.body, before=b.line)]
        who = f"{cls.name}.{attr}"
        return _bounded(self, b.line, who, lambda: self.reader.evaluator.bound(self, chain, attr, b, who))

    def class_has(self, cls: ast.ClassDef, attr: str) -> bool:
        b = bindings(cls.body).get(attr)
        return b is not None and b.kind != "def"

    def origin(self, cls: ast.ClassDef | None, name: str) -> Module:
        """The file a (class attribute's) value is written in, followed through `x = y` and imports."""
        mod: Module = self
        scope = bindings(cls.body) if cls is not None else self.scope
        b = scope.get(name)
        for _ in range(MAX_DEPTH):
            if b is None:
                return mod
            if b.kind == "value" and isinstance(b.node, ast.Name):
                earlier = bindings(cls.body, before=b.line) if cls is not None and mod is self else {}
                name = b.node.id
                b = earlier.get(name) or mod.scope.get(name)
                cls = cls if name in earlier else None
                continue
            if b.kind != "import":
                return mod
            target = self.reader.import_target(mod, b.node, b.line)
            if not isinstance(target, Module) or b.node[2] is None:
                return mod
            mod, name, cls = target, b.node[2], None
            b = mod.scope.get(name)
        return mod


def _within_tokens(text: str, where: str) -> None:
    """Unreadable when the file has more than MAX_TOKENS tokens, counted by the tokenizer without
    holding them (parsing 4 MB of `0,` takes 2 GB and 13 s; a syntax error is left to the parser)."""
    count = 0
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            count += 1
            if count > MAX_TOKENS:
                raise Unreadable(where, None, "the file", f"it has more than {MAX_TOKENS:,} tokens (bounded memory: "
                                 "a benchmark's files have a few thousand)", code=False)
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        return


def _bounded(mod: Module, line: int | None, who: str, read: Callable[[], Any]) -> Any:
    """`read()`, with an expression too deep for the reader's recursion said as one more refusal."""
    evaluator = mod.reader.evaluator
    evaluator.steps = 0
    try:
        return read()
    except RecursionError:
        raise Unreadable(mod.where, line, who, "it is nested too deep to read") from None
    except _TooLarge as e:  # said of the name asked for, and where the budget ran out when that is another file
        raise Unreadable(mod.where, line, who, e.why if e.where == mod.where else f"{e.why}, in {e.where}") from None
    finally:
        evaluator.active.clear()


class Reader:
    """The files of one tree, each parsed once. `root`: the folder the user gave, the only place
    read (`confine.Folder`: links followed, regular files only, bytes counted); `imports`: where
    an absolute import is resolved from (the folder holding the layout's top package, which may
    be the given folder's parent: what it names there is read only if it is inside `root`)."""

    def __init__(self, root: Path, imports: Path | None = None) -> None:
        self.folder = Folder(root)
        self.root = self.folder.root
        self.imports = (imports or root).resolve()
        self._modules: dict[Path, Module] = {}
        self.evaluator = _Evaluator(self)

    def rel(self, path: Path) -> str:
        return self.folder.shown(path)

    def module(self, path: Path) -> Module:
        path = path.resolve()
        if path not in self._modules:
            self._modules[path] = Module(self, path)
        return self._modules[path]

    def inside(self, path: Path) -> bool:
        return self.folder.inside(path)

    def read_text(self, path: Path, where: str, line: int | None, name: str) -> str:
        """A file of the tree as text, bounded; Unreadable naming who asked for it otherwise."""
        shown = self.rel(path)
        try:
            return self.folder.read(path, MAX_SOURCE_BYTES).decode("utf-8")
        except NotRead as e:
            raise Unreadable(where, line, name, str(e)) from None
        except FileNotFoundError:
            raise Unreadable(where, line, name, f"{shown} is not there") from None
        except UnicodeDecodeError as e:
            raise Unreadable(where, line, name, f"{shown} is not UTF-8 text ({e.reason})") from None
        except OSError as e:
            raise Unreadable(where, line, name, f"cannot read {shown}: {e.strerror or e}") from None

    def import_target(self, mod: Module, spec: tuple[int, str, str | None], line: int | None = None) -> Module | External:
        """The module of the tree an import names, or what it names outside the tree (a package
        not among the files: pathlib, Pipecat). A file of the given folder is read; one it names
        beside or above the folder, or a link out of it, or one that is no regular file, never is
        (Unreadable naming it)."""
        level, dotted, name = spec
        base = mod.path.parent
        for _ in range(max(0, level - 1)):
            base = base.parent
        if level == 0:
            base = self.imports
        parts = [p for p in dotted.split(".") if p]
        here = base.joinpath(*parts) if parts else base
        for cand in (here.with_suffix(".py") if parts else None, here / "__init__.py"):
            if cand is None or (level == 0 and not _lexically_in(cand, self.root)):
                continue  # (a top-level name outside the folder: a package of theirs, never looked at)
            if not _lexically_in(cand, self.root):
                raise Unreadable(mod.where, line, dotted or ".", f"it imports {cand}, outside {self.root}")
            if os.path.lexists(cand):
                why = self.folder.problem(cand)
                if why is not None:
                    raise Unreadable(mod.where, line, dotted or ".", why)
                return self.module(cand)
        return External(dotted, name or "")


def _lexically_in(path: Path, root: Path) -> bool:
    """Whether `path` names a place in `root` as written (`..` undone, links not followed)."""
    return Path(os.path.normpath(path)).is_relative_to(root)


class _Evaluator:
    """Evaluates expressions of the files of one `Reader` (see the module docstring for what)."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.active: list[tuple[Path, str, int]] = []
        self.steps = 0
        self.built = 0  # bytes of values built so far, over every value read (MAX_BUILT)

    def _grow(self, size: int, where: str, who: str) -> None:
        """Count `size` bytes built; _TooLarge past MAX_BUILT (every use of a name counts again)."""
        self.built += size
        if self.built > MAX_BUILT:
            raise _TooLarge(where, None, who, f"its values come to more than {MAX_BUILT >> 20} MiB (each use of a name "
                            "counts its value again)")

    # -- names ---------------------------------------------------------------------------------
    def lookup(self, mod: Module, chain: list[dict[str, Binding]], name: str, line: int | None, who: str) -> Any:
        found = self._find(mod, chain, name)
        if found is None:
            why = mod.scope["*"].node if "*" in mod.scope else f"{name} is not defined in this file"
            raise Unreadable(mod.where, line, who, why)
        scope_chain, b = found
        return self.bound(mod, scope_chain, name, b, name)

    @staticmethod
    def _find(mod: Module, chain: list[dict[str, Binding]],
              name: str) -> tuple[list[dict[str, Binding]], Binding] | None:
        for i, scope in enumerate(chain):
            if name in scope:
                return chain[i:], scope[name]
        if name in mod.scope:
            return [], mod.scope[name]
        return None

    def bound(self, mod: Module, chain: list[dict[str, Binding]], name: str, b: Binding, who: str) -> Any:
        key = (mod.path, name, b.line)
        if key in self.active:
            raise Unreadable(mod.where, b.line, who, f"{name} refers to itself")
        if len(self.active) >= MAX_DEPTH:
            raise Unreadable(mod.where, b.line, who, f"more than {MAX_DEPTH} names deep")
        self.active.append(key)
        try:
            if b.kind == "value":
                return self.expr(mod, chain, b.node, who)
            if b.kind == "import":
                target = self.reader.import_target(mod, b.node, b.line)
                if isinstance(target, External):
                    return target
                if b.node[2] is None:
                    raise Unreadable(mod.where, b.line, who, f"{name} is a module, not a value")
                return self.lookup(target, [], b.node[2], None, b.node[2])
            if b.kind == "code":
                raise Unreadable(mod.where, b.line, who, b.node)
            kind = "function" if b.kind == "def" else "class"
            raise Unreadable(mod.where, b.line, who, f"{name} is a {kind}, not a value")
        finally:
            self.active.pop()

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, mod: Module, chain: list[dict[str, Binding]], node: ast.expr, who: str) -> Any:
        def fail(why: str) -> Unreadable:
            return Unreadable(mod.where, getattr(node, "lineno", None), who, why)

        def sub(n: ast.expr) -> Any:
            return self.expr(mod, chain, n, who)

        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _TooLarge(mod.where, None, who, f"it takes more than {MAX_STEPS:,} expressions to read")

        if isinstance(node, ast.Constant):
            v = node.value
            if v is None or isinstance(v, (str, int, bool)) or isinstance(v, float) and math.isfinite(v):
                self._grow(sys.getsizeof(v) if isinstance(v, str) else 8, mod.where, who)
                return v
            raise fail(f"{short(node)} is not a JSON value")
        if isinstance(node, (ast.List, ast.Tuple)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                raise fail(f"`{short(node)}` unpacks with *")
            self._grow(8 * len(node.elts), mod.where, who)
            return [sub(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for k_node, v_node in zip(node.keys, node.values):
                if k_node is None:
                    more = sub(v_node)
                    if not isinstance(more, dict):
                        raise fail(f"`**{short(v_node)}` is not a dict")
                    out.update(more)
                    continue
                key = sub(k_node)
                if not isinstance(key, (str, int, float, bool)) and key is not None:
                    raise fail(f"the key {short(k_node)} is not a JSON key")
                out[key] = sub(v_node)
            self._grow(16 * len(out), mod.where, who)
            return out
        if isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.Constant)]
            if len(parts) == len(node.values):
                text = "".join(str(v.value) for v in parts)
                self._grow(sys.getsizeof(text), mod.where, who)
                return text
            raise fail(f"`{short(node)}` is an f-string with an expression")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = sub(node.operand)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v if isinstance(node.op, ast.USub) else v
            raise fail(f"`{short(node)}` is not a number")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._sum(node, sub, fail)
        if isinstance(node, ast.BinOp):
            return self._binop(node, sub(node.left), sub(node.right), fail)
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return FilePath(mod.path)
            return self.lookup(mod, chain, node.id, node.lineno, who)
        if isinstance(node, ast.Attribute):
            obj = sub(node.value)
            if isinstance(obj, FilePath) and node.attr == "parent":
                return FilePath(obj.path.parent)
            raise fail(f"`{short(node)}` is an attribute of code")
        if isinstance(node, ast.Call):
            return self._call(mod, chain, node, who, fail)
        raise fail(f"`{short(node)}` is {type(node).__name__.lower()} code, not a literal")

    @staticmethod
    def _sum(node: ast.BinOp, sub: Callable[[ast.expr], Any], fail: Callable[[str], Unreadable]) -> Any:
        """`a + b + …` of strings or of lists, read without recursing once per `+` (a prompt may
        join many pieces)."""
        parts: list[ast.expr] = []
        left: ast.expr = node
        while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add):
            parts.append(left.right)
            left = left.left
        values = [sub(p) for p in [left, *reversed(parts)]]
        if all(isinstance(v, (str, list)) for v in values) and len({type(v) for v in values}) == 1:
            size, limit = sum(len(v) for v in values), MAX_TEXT if isinstance(values[0], str) else MAX_ITEMS
            if size > limit:
                raise fail(f"`{short(node)}` grows to {size:,} {'characters' if limit == MAX_TEXT else 'items'}, "
                           f"more than {limit:,}")
            return "".join(values) if isinstance(values[0], str) else [x for v in values for x in v]
        kinds = sorted({type(v).__name__ for v in values})
        raise fail(f"`{short(node)}` adds {' and '.join(kinds)}")

    @staticmethod
    def _binop(node: ast.BinOp, left: object, right: object, fail: Callable[[str], Unreadable]) -> Any:
        if isinstance(node.op, ast.Div) and isinstance(left, FilePath) and isinstance(right, str):
            return FilePath(left.path / right)
        raise fail(f"`{short(node)}` is an operation on {type(left).__name__} and {type(right).__name__}")

    # -- calls ---------------------------------------------------------------------------------
    def _call(self, mod: Module, chain: list[dict[str, Binding]], node: ast.Call, who: str, fail: Callable[[str], Unreadable]) -> Any:
        func = node.func
        if isinstance(func, ast.Attribute):
            obj = self.expr(mod, chain, func.value, who)
            if isinstance(obj, FilePath):
                if func.attr == "read_text" and not node.args:
                    text = self.reader.read_text(obj.path, mod.where, node.lineno, who)
                    self._grow(sys.getsizeof(text), mod.where, who)
                    return text
                if func.attr in ("resolve", "absolute") and not node.args and not node.keywords:
                    return obj
            raise fail(f"`{short(node)}` is a method call")
        if not isinstance(func, ast.Name):
            raise fail(f"`{short(node)}` is a call of code")
        callee = self._callee(mod, chain, func.id)
        if isinstance(callee, External):
            if (callee.module, callee.name) == ("pathlib", "Path"):
                arg = self.expr(mod, chain, node.args[0], who) if len(node.args) == 1 and not node.keywords else None
                if isinstance(arg, FilePath):
                    return arg
                raise fail(f"`{short(node)}` is a path not built from __file__")
            if callee.module.split(".")[0] == _PIPECAT and callee.name in _SCHEMAS:
                return _SCHEMAS[callee.name](node, lambda n: self.expr(mod, chain, n, who), fail)
            raise fail(f"`{short(node)}` calls {callee.module}.{callee.name}")
        if callee is None:
            raise fail(f"`{short(node)}` calls {func.id}, which is not a function of this tree")
        def_mod, fn = callee
        params = fn.args
        if node.args or node.keywords or params.args or params.posonlyargs or params.kwonlyargs \
                or params.vararg or params.kwarg or fn.decorator_list or isinstance(fn, ast.AsyncFunctionDef):
            raise fail(f"`{short(node)}` calls a function with arguments or decorators")
        return self._body(def_mod, fn)

    def _callee(self, mod: Module, chain: list[dict[str, Binding]],
                name: str) -> External | tuple[Module, ast.FunctionDef] | None:
        """What a called name is: a function of the tree (and its file), something imported from
        outside, or None. Followed through imports, never evaluated."""
        found = self._find(mod, chain, name)
        for _ in range(MAX_DEPTH):
            if found is None:
                return None
            _, b = found
            if b.kind == "def":
                return mod, b.node
            if b.kind != "import":
                return None
            target = self.reader.import_target(mod, b.node, b.line)
            if isinstance(target, External):
                return target
            if b.node[2] is None:
                return None
            mod, name = target, b.node[2]
            found = self._find(mod, [], name)
        return None

    def _body(self, mod: Module, fn: ast.FunctionDef) -> Any:
        """A function of no arguments whose body binds names and returns: its return value."""
        who = f"{fn.name}()"
        local: dict[str, Binding] = {}
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for st in body:
            if isinstance(st, ast.Return):
                if st.value is None:
                    break
                key = (mod.path, who, st.lineno)
                if key in self.active or len(self.active) >= MAX_DEPTH:
                    raise Unreadable(mod.where, st.lineno, who, f"{who} calls itself")
                self.active.append(key)
                try:
                    return self.expr(mod, [local], st.value, who)
                finally:
                    self.active.pop()
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None:
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                if len(names) == len(targets):
                    for name in names:
                        local[name] = Binding("value", st.value, st.lineno)
                    continue
            raise Unreadable(mod.where, st.lineno, who, f"its body does more than bind names and return "
                             f"(`{short(st)}`)")
        raise Unreadable(mod.where, fn.lineno, who, "it returns nothing")
