"""A real terminal for end-to-end tests: a private tmux server running one command, read back
from the screen (what a user would see), keys sent as a user would press them."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

TMUX = shutil.which("tmux")


EXIT_MARK = "[exited with status "


class TmuxSession:
    """One command in a detached tmux pane of its own server (`-L`), kept after it exits so its
    exit status and last screen can be read. The status is echoed by the shell onto the screen:
    tmux 3.3 does not always record `pane_dead_status` for a pane whose pty closed first."""

    def __init__(self, name: str, workdir: Path) -> None:
        assert TMUX is not None, "tmux is not installed"
        self.sock = f"arena-{name}-{os.getpid()}-{uuid.uuid4().hex[:6]}"  # a fresh server each time
        self.conf = workdir / f"{self.sock}.conf"
        self.conf.write_text("set -g remain-on-exit on\nset -g history-limit 5000\n")

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([TMUX, "-L", self.sock, "-f", str(self.conf), *args],
                              capture_output=True, text=True, check=check)

    def start(self, argv: list[str], env: Mapping[str, str], *, cwd: Path | None = None,
              size: tuple[int, int] = (160, 45)) -> None:
        """argv runs with exactly `env` (plus nothing inherited); no 2> redirect: Textual draws on stderr."""
        cmd = " ".join(["env", "-i", *(f"{k}={shlex.quote(v)}" for k, v in env.items()), *map(shlex.quote, argv)])
        shell = f'{cmd}; echo "{EXIT_MARK}$?]"'
        extra = ["-c", str(cwd)] if cwd is not None else []
        self._tmux("new-session", "-d", "-s", "e2e", "-x", str(size[0]), "-y", str(size[1]), *extra, shell)

    def screen(self, *, history: bool = False) -> str:
        """The visible screen; with history also what scrolled off (wrapped lines joined)."""
        extra = ["-J", "-S", "-"] if history else []
        return self._tmux("capture-pane", "-p", *extra, "-t", "e2e", check=False).stdout

    def wait(self, cond: Callable[[str], bool], timeout: float, what: str = "") -> str:
        end = time.monotonic() + timeout
        text = ""
        while time.monotonic() < end:
            text = self.screen()
            if cond(text):
                return text
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what or 'the screen'}; screen was:\n{text}")

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "e2e", *keys)

    def exit_status(self) -> int | None:
        """The command's exit status once it has exited, else None."""
        m = re.search(re.escape(EXIT_MARK) + r"(\d+)\]", self.screen(history=True))
        return int(m.group(1)) if m else None

    def wait_exit(self, timeout: float) -> int:
        end = time.monotonic() + timeout
        while (status := self.exit_status()) is None:
            if time.monotonic() > end:
                raise AssertionError(f"the command did not exit; screen was:\n{self.screen()}")
            time.sleep(0.3)
        return status

    def kill(self) -> None:
        self._tmux("kill-server", check=False)
