"""A mistyped --db is not an empty database: a command that only reads what is recorded (or adds to
a run already there) refuses a path with no database in one line naming it and saying what creates
one, and creates neither the file nor its folders; only a command that records a run creates it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena_tui.cli import main

READING = [
    ["runs"], ["runs", "--json"], ["runs", "--delete", "abc"], ["report", "all", "{out}"], ["search", "tune-up"],
    ["export", "abc"], ["campaign", "list"], ["campaign", "show", "abc"], ["campaign", "resume", "abc"],
    ["judge", "abc"], ["review", "abc", "--turn", "1", "kb_grounding=fail", "--reason", "x"], ["db", "info"],
    ["db", "vacuum"], ["resume", "abc"],
]


@pytest.mark.parametrize("argv", READING, ids=[" ".join(a[:2]) for a in READING])
def test_a_command_that_reads_refuses_a_missing_database_and_creates_nothing(tmp_path: Path, capsys, argv) -> None:
    db = tmp_path / "typo" / "x" / "y.db"
    code = main(["--db", str(db), *(a.replace("{out}", str(tmp_path / "out")) for a in argv)])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert err.count("\n") == 0 and str(db) in err and "no database here" in err, err
    assert "a run creates one" in err, err
    assert not (tmp_path / "typo").exists()  # no folder, no empty database


def test_db_path_only_says_where_it_is(tmp_path: Path, capsys) -> None:
    db = tmp_path / "typo" / "y.db"
    assert main(["--db", str(db), "db", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(db) and not db.parent.exists()


def test_a_run_creates_its_database_and_the_reading_commands_then_read_it(tmp_path: Path) -> None:
    db = tmp_path / "new" / "arena.db"
    done = subprocess.run([sys.executable, "-m", "arena_tui.cli", "--db", str(db), "run", "demo_bench", "--model", "sim",
                           "--speed", "20", "--turns", "0", "--judge", "none", "--headless"],
                          capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert db.is_file()
    listed = subprocess.run([sys.executable, "-m", "arena_tui.cli", "--db", str(db), "runs"], capture_output=True,
                            text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert listed.returncode == 0 and "demo_bench" in listed.stdout, listed.stderr
