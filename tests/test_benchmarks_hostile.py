"""`benchmarks import` reads only the folder it is given (issue 41, items 2-4): an outside file
reached through an `__init__.py` at the folder's top, a `..` path, a symlinked benchmark or speaker
folder; a FIFO where a file should be; a name naming a big string hundreds of times. Each is refused
(or, for one WAV or one speaker folder, left unread) by a one-line message naming the file, the
command exits cleanly, and nothing of what lies outside turns up in what it wrote or said. Each
case runs the real command in a child process: a read that blocks (a FIFO) is a timeout, not a
hung test. Time and memory per case: scripts/bench_hostile_import.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .hostile_inputs import BENCHMARK_CASES, leaked

TIMEOUT_S = 120.0  # a refusal takes seconds; a read of a FIFO never ends


def _import(given: Path, out: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("arena-tui")
    return subprocess.run([str(exe), "benchmarks", "import", str(given), "--out", str(out)], capture_output=True,
                          text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", sorted(BENCHMARK_CASES))
def test_a_hostile_benchmark_folder_is_refused_by_name_and_nothing_outside_is_read(tmp_path: Path, name: str) -> None:
    case = BENCHMARK_CASES[name](tmp_path)
    out = tmp_path / "out"
    got = _import(case.given, out)
    said = got.stdout + got.stderr
    assert "Traceback" not in said and got.returncode in (0, 2), said[-3000:]
    lines = [line for line in said.splitlines() if all(f in line for f in case.says)]
    assert len(lines) == 1, (case.says, said[-3000:])
    imported = [line for line in got.stdout.splitlines() if f"→ {out}" in line]
    assert len(imported) == case.imports, said[-3000:]
    assert leaked(out, said) == [], leaked(out, said)
    written = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    assert written == (["bike_bench"] if case.imports else []), written  # nothing half written, nothing of theirs
