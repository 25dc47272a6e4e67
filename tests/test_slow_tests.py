"""Every entry of the slow list names a test that exists, so a rename cannot put a heavy test back
into the default run (or drop it from CI's slow pass) unnoticed."""

from __future__ import annotations

import ast
import subprocess
import sys

from .conftest import REPO_ROOT
from .slow_tests import SLOW


def _tests_of(path: str) -> set[str]:
    tree = ast.parse((REPO_ROOT / path).read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test_")}


def test_every_slow_entry_names_a_test() -> None:
    missing = [e for e in sorted(SLOW) if e.split("::")[1].split("[")[0] not in _tests_of(e.split("::")[0])]
    assert missing == []


def test_a_listed_test_is_left_out_of_the_default_run_and_in_the_slow_one() -> None:
    path = "tests/test_engine.py"
    listed = {e for e in SLOW if e.startswith(path + "::")}

    def collected(marks: str) -> set[str]:
        got = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                              "-m", marks, path], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
        return {ln.strip() for ln in got.stdout.splitlines() if ln.startswith(path + "::")}

    assert listed and listed <= collected("slow and not stress")
    default = collected("not slow and not stress")
    assert default and not listed & default
