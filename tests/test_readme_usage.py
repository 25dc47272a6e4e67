"""Every command in README.md's usage section, run as written, offline, so the README cannot drift.

The lines come from the README itself (the fenced block under "## Usage"); `[optional]` parts are
run both without and with each alternative, and the placeholders RUN_ID, N, DIR, RUN_DIR and
REPO_DIR are filled with a recorded run, a turn, a fresh folder, a run folder exported on another
machine and a checkout in the original eval's Python layout (tests/py_layouts.py). Each line runs
in a subprocess as a new user would: a private HOME/XDG tree and database (ARENA_TUI_DB), no keys,
`fetch` against a local Hub (tests/hf_fake.py), from a folder whose ../shared/audio-arena is a copy
of the shared data (never the shared data itself). Lines that need a key we do not have must fail
with the message naming it; lines that open the monitor run in tmux and must draw, then quit on q.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT
from .fakes.openai_chat import FakeOpenAI
from .hf_fake import HubFake, publish_from_shared
from .py_layouts import original_eval
from .tmux_session import TMUX, TmuxSession

PLACEHOLDERS = ("RUN_ID", "RUN_DIR", "REPO_DIR", "DIR", "N")


def usage_lines(readme: Path = REPO_ROOT / "README.md") -> list[str]:
    """The commands of the first ```bash block after '## Usage', comments stripped."""
    text = readme.read_text()
    section = text[text.index("## Usage"):]
    block = section[section.index("```bash") + len("```bash"): section.index("```", section.index("```bash") + 7)]
    lines = [re.split(r"\s+#\s", ln, maxsplit=1)[0].strip() for ln in block.splitlines()]
    return [ln for ln in lines if ln]


def variants(line: str) -> list[str]:
    """`judge RUN_ID [--turn N] [--judge a|b]` → without each optional part, and with each alternative."""
    groups = re.findall(r"\[([^\]]+)\]", line)
    choices = []
    for g in groups:
        head, _, alts = g.rpartition(" ")
        options = [f"{head} {a}".strip() for a in alts.split("|")] if "|" in alts else [g]
        choices.append(["", *options])
    out = []
    for picked in itertools.product(*choices):
        it = iter(picked)
        out.append(" ".join(re.sub(r"\[[^\]]+\]", lambda _m: next(it), line).split()))
    return out


CASES = [v for line in usage_lines() for v in variants(line)]


def heavy(line: str) -> bool:
    """A line that runs a benchmark: a run (4-15 s each, against the simulator or a protocol fake),
    the demo, or a campaign (its worker processes and several runs, 7-11 s). CI runs them after the
    default run, with the other heavy end-to-end tests (`tests/slow_tests.py`); the default run keeps
    the README's lines that read, judge, import, report and refuse."""
    return line.startswith(("arena-tui run ", "arena-tui campaign run ")) or line == "arena-tui demo"


PARAMS = [pytest.param(v, marks=pytest.mark.slow) if heavy(v) else v for v in CASES]


def test_the_usage_section_is_found_and_every_line_is_a_command() -> None:
    lines = usage_lines()
    assert len(lines) >= 10
    assert all(ln.split()[0] == "arena-tui" for ln in lines), lines
    assert "|" not in " ".join(re.sub(r"\[[^\]]+\]", "", ln) for ln in lines), "a pipe outside [a|b] alternatives"
    for v in CASES:
        unknown = {w for w in re.findall(r"\b[A-Z][A-Z_]+\b", v) if w not in PLACEHOLDERS and not w.endswith("_KEY")}
        assert not unknown, f"{v}: placeholder(s) {unknown} the test does not know how to fill"


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


class Sandbox:
    """A new user's machine: checkout folder, ../shared/audio-arena (a copy), home, no keys."""

    def __init__(self, root: Path, shared: Path, hub: HubFake, local_llm: str) -> None:
        self.root = root
        self.checkout = root / "arena-tui"
        self.checkout.mkdir()
        self.data = root / "shared" / "audio-arena"
        shutil.copytree(shared, self.data)
        self.data_before = _tree(self.data)
        self.home = root / "home"
        self.home.mkdir()
        self.hub = hub
        self.db = root / "arena.db"
        self.export_dir = root / "exports-given"
        self.foreign: Path | None = None
        self.env = {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.home),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "ARENA_TUI_DB": str(self.db),
            "HF_HOME": str(root / "hf"),
            "HF_ENDPOINT": hub.endpoint,
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "AWS_EC2_METADATA_DISABLED": "true",  # no instance-metadata lookups for credentials
            "AWS_CONFIG_FILE": str(root / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(root / "no-aws-credentials"),
            "ARENA_TUI_LOCAL_LLM_URL": local_llm,  # the user's Ollama, as a keyless fake on 127.0.0.1
            "LANG": "C.UTF-8",
            "TERM": "xterm-256color",
        }

    def cli(self, *args: str, timeout: float = 280) -> subprocess.CompletedProcess:
        return subprocess.run(["arena-tui", *args], cwd=self.checkout, env=self.env, capture_output=True,
                              text=True, timeout=timeout, executable=shutil.which("arena-tui", path=self.env["PATH"]))

    def run_id(self) -> str:
        """The newest completed run (one is recorded first if there is none yet)."""
        listed = self.cli("runs", "--json")  # (no database yet: refused, nothing recorded)
        rows = [r for r in json.loads(listed.stdout) if r["status"] == "completed"] if listed.returncode == 0 else []
        if not rows:
            got = self.cli("run", "demo_bench", "--model", "sim", "--speed", "20", "--turns", "0", "--headless")
            assert got.returncode == 0, got.stderr
            return self.run_id()
        return rows[0]["run_id"]

    def run_dir(self) -> Path:
        """A run folder from another machine: recorded and exported with a database of its own."""
        if self.foreign is None:
            other = ("--db", str(self.root / "other-machine.db"))
            got = self.cli(*other, "run", "demo_bench", "--model", "sim", "--speed", "20", "--turns", "0", "--headless")
            assert got.returncode == 0, got.stderr
            run_id = re.search(r"run (\w+) recorded in", got.stdout).group(1)
            got = self.cli(*other, "export", run_id, str(self.root / "from-another-machine"))
            assert got.returncode == 0, got.stderr
            self.foreign = Path(got.stdout.strip().splitlines()[-1])
        return self.foreign

    def repo_dir(self) -> Path:
        """A checkout in the original eval's layout (its benchmarks as Python), made once."""
        repo = self.root / "aiewf-eval"
        if not repo.is_dir():
            original_eval(repo)
        return repo

    def fill(self, line: str) -> list[str]:
        argv = shlex.split(line)
        fills = {"RUN_ID": self.run_id, "N": lambda: "0", "DIR": lambda: str(self.export_dir),
                 "RUN_DIR": lambda: str(self.run_dir()), "REPO_DIR": lambda: str(self.repo_dir())}
        return [fills[a]() if a in fills else a for a in argv]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory, shared_data: Path):
    local_llm = FakeOpenAI(keyless=True).start()  # `--judge local`: an OpenAI-compatible server, no key
    try:
        with HubFake() as hub:
            publish_from_shared(hub, shared_data, "conversation_bench", real_audio=False)
            yield Sandbox(tmp_path_factory.mktemp("readme"), shared_data, hub, local_llm.base_url)
    finally:
        local_llm.stop()


def needs_key(argv: list[str]) -> tuple[str, ...]:
    """Names of which one must appear in the error when this line runs with no keys set (() = none needed)."""
    opt = lambda name: argv[argv.index(name) + 1] if name in argv else None  # noqa: E731
    if len(argv) < 2:
        return ()
    if argv[1] == "run" and "--service" in argv:  # a class of the user's: the variables its keys are read from
        refs = [argv[i + 1].partition("=")[2] for i, a in enumerate(argv[:-1]) if a == "--service-arg"]
        return tuple(r.removeprefix("env:") for r in refs if r.startswith("env:"))
    if argv[1] == "run" and opt("--model") and "--fake" not in argv:
        from runners.base import get_runner

        runner = get_runner(opt("--model"))
        return () if runner.simulated else tuple(runner.key_env)
    judge = {"openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",), "google": ("GOOGLE_API_KEY",),
             "bedrock": ("AWS",)}
    if argv[1] in ("judge", "run", "demo") and opt("--judge") in judge:
        return judge[opt("--judge")]
    if argv[1] == "synthesize" and opt("--backend") == "openai":
        return ("OPENAI_API_KEY",)
    return ()


def opens_the_monitor(argv: list[str]) -> bool:
    return len(argv) == 1 or argv[1] in ("demo", "ui") or (argv[1] == "run" and "--headless" not in argv)


@pytest.mark.parametrize("line", PARAMS)
def test_readme_line_runs_as_written(sandbox: Sandbox, line: str) -> None:
    argv = sandbox.fill(line)
    keys = needs_key(argv)
    if keys or not opens_the_monitor(argv):
        got = sandbox.cli(*argv[1:])
        out = got.stdout + got.stderr
        assert "Traceback" not in out, out
        if keys:
            assert got.returncode == 2 and any(k in got.stderr for k in keys), out
        else:
            assert got.returncode == 0, out
            _check_output(sandbox, argv, got.stdout)
    else:
        _check_monitor(sandbox, argv)
    assert _tree(sandbox.data) == sandbox.data_before, "a README command wrote into the benchmark data"


def _check_output(sandbox: Sandbox, argv: list[str], out: str) -> None:
    """What the line promises beyond exiting cleanly."""
    cmd = argv[1]
    if cmd == "run":
        first = out.splitlines()[0]
        assert first.startswith("run ") and "judge heuristic" in first and str(sandbox.db) in first, first
        assert "\nstrict pass " in out  # the per-dimension summary at the end
    elif cmd == "export":
        written = Path(out.strip().splitlines()[-1])
        assert written.is_absolute() and (written / "transcript.jsonl").is_file(), out
        parent = sandbox.export_dir if len(argv) > 3 else sandbox.home / "Documents" / "arena-tui"
        assert written.is_relative_to(parent), (written, parent)
    elif cmd == "synthesize":
        overlay = Path(sandbox.env["XDG_DATA_HOME"])
        m = re.search(r"to (\S+)/audio", out.splitlines()[-1])
        assert m and Path(m.group(1)).is_relative_to(overlay), out
    elif cmd == "fetch":
        assert any("conversation-bench" in p for p in sandbox.hub.paths("hub")), "fetch did not use the local Hub"
    elif cmd == "import":
        assert "imported as run" in out
    elif cmd == "benchmarks" and argv[2:3] == ["import"]:
        into = sandbox.export_dir if "--out" in argv else Path(sandbox.env["XDG_DATA_HOME"]) / "arena-tui" / "benchmarks"
        assert f"→ {into / 'aiwf_demo'}: ready" in out and (into / "aiwf_demo" / "turns.jsonl").is_file(), out


def _check_monitor(sandbox: Sandbox, argv: list[str]) -> None:
    if TMUX is None:
        pytest.skip("tmux not installed (CI installs it)")
    tmux = TmuxSession("readme", sandbox.root)
    tmux.start(argv, sandbox.env, cwd=sandbox.checkout)
    try:
        marker = "pass rates" if len(argv) == 1 or argv[1] == "ui" else "SIMULATOR"
        tmux.wait(lambda s: marker in s and "Quit" in s, 90, f"the monitor to draw ({marker!r})")
        tmux.send("q")
        # a run still streaming: q asks first (and q again, as y, quits)
        tmux.wait(lambda s: "still running" in s or tmux.exit_status() is not None, 30, "the question or the exit")
        if tmux.exit_status() is None:
            tmux.send("q")
        assert tmux.wait_exit(60) == 0, tmux.screen(history=True)
    finally:
        tmux.kill()
