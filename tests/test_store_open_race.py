"""Several processes opening one new database at the same moment: one migrates, the others wait
and see its result (three `arena-tui runs` started together once failed 1–2 in 48 with "migration
to schema version 1 failed: table runs already exists")."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from arena_tui.store.schema import SCHEMA_VERSION

CHILD = Path(__file__).with_name("store_opener_child.py")
OPENERS = 3
TRIALS = 16


def _expect(proc: subprocess.Popen[str], line: str) -> None:
    assert proc.stdout is not None
    got = proc.stdout.readline().strip()  # (a hung opener: pytest's timeout)
    assert got == line, f"opener {proc.pid} said {got!r}, not {line!r}: {proc.stderr.read() if proc.stderr else ''}"


def test_openers_started_together_on_a_new_database_all_succeed(tmp_path: Path) -> None:
    procs = [subprocess.Popen([sys.executable, str(CHILD), str(tmp_path), str(TRIALS)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(OPENERS)]
    outcomes: list[str] = []
    try:
        for i in range(TRIALS):
            for p in procs:
                _expect(p, f"ready {i}")
            (tmp_path / f"go-{i}").touch()
            for p in procs:
                assert p.stdout is not None
                outcomes.append(p.stdout.readline().strip())
        for p in procs:
            p.wait(60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    failed = [o for o in outcomes if not o.startswith("ok ")]
    assert not failed, f"{len(failed)} of {len(outcomes)} opens failed:\n" + "\n".join(failed)
    assert len(outcomes) == OPENERS * TRIALS
    for i in range(TRIALS):
        db = sqlite3.connect(tmp_path / f"trial-{i}.db")
        try:
            assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            db.close()
