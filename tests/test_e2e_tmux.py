"""End to end: the real `arena-tui demo` and `arena-tui run` in a real terminal (tmux), read back
from the screen."""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .tmux_session import TMUX, TmuxSession

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux not installed (CI installs it)")


def _env(tmp_path: Path) -> dict[str, str]:
    """A user with no keys and a private home (no judge key: auto is the offline heuristic)."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "ARENA_TUI_AUDIO_DIR": os.environ.get("ARENA_TUI_AUDIO_DIR", str(tmp_path / "overlay")),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "HOME": str(tmp_path),
    }


def _quit(tmux: TmuxSession) -> int:
    tmux.send("q")
    return tmux.wait_exit(30)


def test_demo_runs_in_a_terminal_and_quits_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    tmux = TmuxSession("e2e-demo", tmp_path)
    tmux.start([sys.executable, "-m", "arena_tui.cli", "--db", str(db),
                "demo", "--speed", "5", "--turns", "0-1", "--faults", "0:barge_in=500,1:no_response"], _env(tmp_path))
    try:
        text = tmux.wait(lambda s: "COMPLETED" in s, 240, "the demo to complete")
        assert "demo_bench" in text and "SIMULATOR" in text
        assert "OVERLAP" in text and "RETRY" in text
        assert "judge: heuristic" in text
        assert "2/2 done" in text
        tmux.wait(lambda s: "any key hides this" in s, 20, "what to do next, under the tables")
        tmux.send("escape")  # hides that line (and only that)
        tmux.wait(lambda s: "any key hides this" not in s, 20, "the line hidden")
        tmux.send("escape")
        text = tmux.wait(lambda s: "pass rates" in s and "[SIM]" in s, 20, "the runs list")
        assert "completed" in text and "2/2" in text
        assert _quit(tmux) == 0, tmux.screen()
    finally:
        tmux.kill()
    with sqlite3.connect(db) as conn:
        status, total = conn.execute("SELECT status, turns_total FROM runs").fetchone()
    assert status == "completed" and total == 2


def test_the_demo_prints_no_pipecat_line_before_its_first_frame(tmp_path: Path) -> None:
    """Pipecat greets on import (an INFO line with its banner): the demo's preflight reads the
    simulator's runner, so its logging is set up first and the line goes to the log file, never
    onto the terminal before the monitor draws (nor left there after it closes)."""
    db = tmp_path / "arena.db"
    tmux = TmuxSession("e2e-banner", tmp_path)
    tmux.start([sys.executable, "-m", "arena_tui.cli", "--db", str(db), "demo", "--speed", "10", "--turns", "0",
                "--judge", "none"], _env(tmp_path))
    try:
        tmux.wait(lambda s: "COMPLETED" in s, 240, "the demo to complete")
        assert _quit(tmux) == 0, tmux.screen()
        seen = tmux.screen(history=True)
    finally:
        tmux.kill()
    assert "ᓚᘏᗢ" not in seen and "| INFO" not in seen, seen


def test_run_opens_the_monitor_on_the_live_run_and_scores_fill_in(tmp_path: Path) -> None:
    """`arena-tui run demo_bench --model sim` (no --headless): the run screen, turns completing,
    the judge's verdicts in the table, and after `q` a line saying what was recorded where."""
    db = tmp_path / "arena.db"
    tmux = TmuxSession("e2e-run", tmp_path)
    tmux.start([sys.executable, "-m", "arena_tui.cli", "run", "demo_bench", "--model", "sim",
                "--db", str(db), "--speed", "5", "--turns", "0-2"], _env(tmp_path))
    try:
        text = tmux.wait(lambda s: "demo_bench" in s and "SIMULATOR" in s, 60, "the run screen")
        assert "turns" in text and "S Stop run" in text  # the live run screen, not the runs list
        text = tmux.wait(lambda s: "COMPLETED" in s and "3/3 done" in s, 240, "the run to complete")
        rows = [ln for ln in text.splitlines() if re.match(r"│ [0-2] ", ln)]
        assert len(rows) == 3, text
        assert all("PASS" in r or "FAIL" in r for r in rows), text  # a verdict on every turn
        assert "judge: heuristic" in text
        assert _quit(tmux) == 0, tmux.screen()
        after = tmux.screen(history=True)
    finally:
        tmux.kill()
    assert re.search(r"run [0-9a-f]{32} completed in \d\d:\d\d \(wall clock\), judge heuristic .*auto: no OPENAI_API_KEY", after), after
    assert f"recorded in {db}" in after
    with sqlite3.connect(db) as conn:
        (status,) = conn.execute("SELECT status FROM runs").fetchone()
        judged = {t for (t,) in conn.execute("SELECT DISTINCT turn_index FROM judgements")}
    assert status == "completed" and {0, 1, 2} <= judged


def test_quit_with_a_run_streaming_asks_first_then_says_how_to_resume_it(tmp_path: Path) -> None:
    """`q` while a run streams asks (naming it); "keep running" keeps it; quitting leaves it
    interrupted and prints, after the monitor closes, the command that continues it, which works."""
    db = tmp_path / "arena.db"
    env = _env(tmp_path)
    tmux = TmuxSession("e2e-quit", tmp_path)
    tmux.start([sys.executable, "-m", "arena_tui.cli", "run", "demo_bench", "--model", "sim", "--judge", "none",
                "--db", str(db), "--speed", "2", "--turns", "0-2"], env)
    try:
        tmux.wait(lambda s: "RUNNING" in s and "0/3 done" in s, 90, "the run to stream")
        tmux.send("q")
        text = tmux.wait(lambda s: "still running" in s, 20, "the quit question")
        assert "1 run is still running" in text and "Keep running" in text and "demo_bench" in text
        tmux.send("Escape")
        tmux.wait(lambda s: "still running" not in s and "RUNNING" in s, 20, "the run going on")
        tmux.send("q")
        tmux.wait(lambda s: "still running" in s, 20, "the quit question again")
        tmux.send("y")
        assert tmux.wait_exit(60) == 0, tmux.screen()
        after = tmux.screen(history=True)
    finally:
        tmux.kill()
    m = re.search(r"run ([0-9a-f]{32}) \(demo_bench, sim\) left interrupted at [0-2]/3 turns; continue it with: "
                  r"(arena-tui resume [0-9a-f]{32} --db \S+)", after)  # fmt: skip
    assert m, after
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM runs WHERE run_id=?", (m.group(1),)).fetchone() == ("interrupted",)
    argv = shlex.split(m.group(2))
    done = subprocess.run([sys.executable, "-m", "arena_tui.cli", *argv[1:]], env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM runs WHERE run_id=?", (m.group(1),)).fetchone() == ("completed",)
