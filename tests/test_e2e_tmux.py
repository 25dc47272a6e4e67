"""End to end: the real `arena-tui demo` in a real terminal (tmux), read back from the screen."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux not installed (CI installs it)")


def _tmux(sock: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([TMUX, "-L", sock, "-f", "/dev/null", *args], capture_output=True, text=True, check=check)


def _screen(sock: str) -> str:
    return _tmux(sock, "capture-pane", "-p", "-t", "e2e", check=False).stdout


def _wait(sock: str, cond, timeout: float) -> str:
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        text = _screen(sock)
        if cond(text):
            return text
        time.sleep(0.5)
    raise AssertionError(f"timed out; screen was:\n{text}")


def test_demo_runs_in_a_terminal_and_quits_cleanly(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    sock = f"arena-e2e-{os.getpid()}"
    env = {
        "ARENA_TUI_AUDIO_DIR": os.environ.get("ARENA_TUI_AUDIO_DIR", str(tmp_path / "overlay")),
        "TERM": "xterm-256color",
        "OPENAI_API_KEY": "",
        "AWS_ACCESS_KEY_ID": "",
        "HOME": str(tmp_path),
    }
    cmd = " ".join([
        "env", *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
        shlex.quote(sys.executable), "-m", "arena_tui.cli", "--db", shlex.quote(str(db)),
        "demo", "--speed", "5", "--turns", "0-1", "--faults", "0:barge_in=500,1:no_response",
    ])  # no 2> redirect: Textual draws on stderr
    _tmux(sock, "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "45", cmd)
    try:
        text = _wait(sock, lambda s: "COMPLETED" in s, 240)
        assert "demo_bench" in text and "SIMULATOR" in text
        assert "OVERLAP" in text and "RETRY" in text
        assert "judge: heuristic" in text
        assert "2/2 done" in text
        _tmux(sock, "send-keys", "-t", "e2e", "escape")
        text = _wait(sock, lambda s: "pass rates" in s and "[SIM]" in s, 20)
        assert "completed" in text and "2/2" in text
        _tmux(sock, "send-keys", "-t", "e2e", "q")
        end = time.monotonic() + 30
        while _tmux(sock, "has-session", "-t", "e2e", check=False).returncode == 0:
            assert time.monotonic() < end, "the app did not quit on q"
            time.sleep(0.3)
    finally:
        _tmux(sock, "kill-server", check=False)
    with sqlite3.connect(db) as conn:
        status, total = conn.execute("SELECT status, turns_total FROM runs").fetchone()
    assert status == "completed" and total == 2
