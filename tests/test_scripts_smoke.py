"""Every script under scripts/ runs, small, as a person types it: `python -m scripts.NAME <small
arguments>` in a child process with an empty TMPDIR and HOME of its own, exits 0 and prints its
table or figures (the lines each entry names). The scripts measure and assert nothing, so nothing
else would notice one failing: bench_concurrency, the performance goal's own benchmark, failed for
weeks after `RunSettings` (issue 45 item 7). No number is checked here (ground rule 5).

The runs are in the slow pass (tests/slow_tests.py); that every script has an entry is checked in
the default run, so a new script cannot be left out.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import REPO_ROOT, shared_root

SCRIPTS = REPO_ROOT / "scripts"
TIMEOUT_S = 240.0  # one script's smoke run, killed (its process group) past this
# what others' code leaves in TMPDIR, not the scripts': dot-files (onnxruntime's `.ses`) and espeak-ng's
# PulseAudio runtime folder (`pulse-<id>`: libpulse makes it even for `espeak-ng --stdout`, the simulator's voice)
LIBRARIES_LEAVE = (".", "pulse-")


@dataclass(frozen=True)
class Smoke:
    args: tuple[str, ...]
    shows: tuple[str, ...]  # regexes (multiline), each must match what it printed (stdout)


# Each script's smoke run: its main path with the fewest turns / sessions / seconds that still fill
# its table. Measured (2 cores, a loaded machine): see the docstring of each script for what it prints.
SMOKE: dict[str, tuple[Smoke, ...]] = {
    "bench_campaign": (Smoke(("--speed", "20", "--repeats", "1", "--turns", "0", "--skip", "ray"),
                             (r"^one process +[\d.]+ +[\d.]+ +4/4 ", r"^local executor +[\d.]+ +[\d.]+ +4/4 ")),),
    "bench_cascade": (Smoke(("--turns", "0"), (r"^ +stt +p50 +\d+ ms", r"^ +v2v +p50 +\d+ ms +ok turns 1/1")),),
    "bench_cli_start": (Smoke(("--runs", "1"), (r"^--help 1: p50 [\d.]+ s", r"^ +first turn line p50 [\d.]+ s")),),
    "bench_concurrency": (Smoke(("--ns", "2", "--hog-ns", "1", "--turns", "0", "--modes", "local,one"),
                                (r"^executor ×\d+ +2 +0 +2 +0 \| +[\d.]+ .*\| +[\d.]+ +[\d.]+ +[\d.]+ \| ",  # engine, coordinator, simulators
                                 r"^one process +2 +0 +2 +0 \| +[\d.]+ ", r"^executor ×\d+ +1 +1 +1 +0 \| +[\d.]+ ")),),
    "bench_conditions": (Smoke((), (r"^clean +\d+ ", r"^telephony +\d+ +[\d.]+ +\d+ +[\d.]+$")),),
    "bench_data_audio": (Smoke((), (r"^decode conversation_bench 75 WAVs", r"^resample .* ms$")),),
    "bench_duplex": (Smoke(("--yields", "400", "--turns", "0", "--speed", "4"), (r"^yield=400 +n= +1 +mean",)),),
    "bench_fakes": (Smoke(("--speed", "4"), tuple(rf'^{{"provider": "{p}", "wall_s": [\d.]+, .*"bot_audio_ms": [1-9]\d*}}$'
                                    for p in ("gemini", "ultravox", "nova", "glm", "grok"))),),
    "bench_gap": (Smoke(("--trials", "5", "--sim-trials", "1", "--sim-known", "1"),
                        (r"^\| 1 \| 0\.0 \| exact McNemar", r"^same setting, one run a side: 1/1 not distinguishable$")),),
    "bench_hogs": (Smoke(("--hogs", "1", "--repeats", "1", "--speed", "8", "--turns", "0-1"), (r"^ +1 +\d+ +- +1/1 ",)),),
    "bench_hostile_import": (Smoke(("--timeout", "60"), (r"^init_at_top +2 ", r"^fifo_wav +\d+ ", r"^base_url +0 +0 ")),),
    "bench_judge_backends": (Smoke(("--repeat", "1", "--turns", "2"),
                                   tuple(rf"^{b} +\d+ requests +judging 1: [\d,]+ prompt tokens"
                                         for b in ("openai", "anthropic", "google", "local"))),),
    "bench_judge_budget": (Smoke(("--turns", "3"), (r"^openai:gpt-5.2 .* 3/3 +all turns judged$",
                                                    r"^bedrock:.* 3/3 +all turns judged$")),),
    "bench_latency_error": (Smoke(("--bench", "demo_bench", "--turns", "0"), (r"^audible bot speech onset +n= +1 +mean",)),),
    "bench_memory": (Smoke(("--short", "0", "--long", "0-1", "--sessions", "1", "--speed", "8"),
                           (r"^ +1 +0 +\d+ .* completed 1$", r"^ +1 +0-1 +\d+ .* completed 1$")),),
    "bench_pacing": (Smoke(("--single-seconds", "3", "--fast-seconds", "3", "--concurrency-seconds", "3", "--max-sessions", "2"),
                           (r"^A\. 1x, one session, .* chunks \d+: late p50", r"^B\. 15x, .* chunks \d+: late p50",
                            r"^C\. 1 concurrent 1x sessions .* chunks \d+: late p50")),),
    "bench_report": (Smoke(("--models", "2", "--benchmarks", "1", "--repeats", "1", "--turns", "3"),
                           (r"^runs 2 ", r"^leaderboard +[\d.]+ s +\(2 rows")),),
    "bench_rss_turns": (Smoke(("--turns", "0-2", "--speed", "8"), (r"× sim at speed 8, judge heuristic: exit 0,",
                                                                   r"^ +3 +\d+$", r"^growth over the second half")),),
    "bench_runs_poll": (Smoke(("--models", "2", "--benchmarks", "1", "--repeats", "2", "--turns", "3", "--polls", "2"),
                              (r"^runs 4 ", r"^first read .* median +[\d.]+ ms", r"^data_version .* median +[\d.]+ ms")),),
    "bench_search": (Smoke(("--runs", "2", "--repeat", "1"), (r"^cold: first search", r"^--run \(one run\) +'booked' +[1-9]")),),
    "bench_session_cost": (Smoke(("--seconds", "3", "--warmup", "3"),
                                 (r"ms CPU per audio second per session", r"^ +input pacing: p50 [\d.]+ ms")),),
    "bench_signal": (Smoke(("--speeds", "10", "--hogs", "1", "--trials", "1", "--after", "1", "--turns", "0"),
                           (r"^speed 10: worst [\d.]+ s; [\d.]+ s exit 143$",)),),
    "bench_simulator": (Smoke((), (r"^fingerprint index, 75 WAVs", r"x real time; CPU")),),
    "bench_store": (Smoke(("--minutes", "0.2", "--turns", "0"), (r"^writer, no audio: \d+ events", r"^ +as stored \(after\)")),),
    "bench_timeline": (Smoke((), (r"^speech_intervals\[energy\]", r"^ToolResolver\.resolve: \d+ us per call")),),
    "bench_ui_pacing": (Smoke(("--seconds", "4"), (r"^headless : chunks \d+", r"^with UI  : chunks \d+", r"meter repaints")),
                        Smoke(("--keys", "1", "--seconds", "12"),
                              (r"^ +table navigation \(down/up\): n \d+, keypress-to-screen p50",
                               r"^ +input pacing of the 1 runs: chunks \d+"))),
    "judge_tokens": (Smoke(("--benchmark", "demo_bench"), (r"^whole-run request +[\d,]+ input tokens", r"^ratio ")),),
    "screenshots": (Smoke(("--smoke",), (r"runs_list\.svg$", r"leaderboard\.svg$", r"compare\.svg$", r"campaign\.svg$",
                                         r"duplex_turn_detail\.svg$", r"^\d+ SVG, 0 PNG \(--smoke")),),
}

# The shell scripts: where each is exercised instead.
SHELL = {
    "bootstrap.sh": "tests/test_cli_outputs.py runs it in a copy of the repo",
    "demo.sh": "bootstrap.sh, then `arena-tui demo` (tests/test_e2e_tmux.py runs the demo in a terminal)",
    "test.sh": "CI itself: bootstrap, lint-imports, ruff, the default run, the slow pass (these), the stress tests",
}

CASES = [pytest.param(name, smoke, id=name if len(runs) == 1 else f"{name}-{i}")
         for name, runs in SMOKE.items() for i, smoke in enumerate(runs)]


def test_every_script_has_a_smoke_run() -> None:
    """A script added under scripts/ without an entry here fails the default run."""
    assert sorted(p.stem for p in SCRIPTS.glob("*.py") if p.stem != "__init__") == sorted(SMOKE)
    assert sorted(p.name for p in SCRIPTS.glob("*.sh")) == sorted(SHELL)
    assert sorted(p.name for p in SCRIPTS.iterdir() if p.suffix not in (".py", ".sh") and p.name != "__pycache__") == []


def _untracked_or_changed() -> set[str]:
    got = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", "."], cwd=REPO_ROOT,
                         capture_output=True, text=True, timeout=60)
    return set(got.stdout.splitlines()) if got.returncode == 0 else set()


@pytest.mark.timeout(TIMEOUT_S + 60)
@pytest.mark.parametrize(("name", "smoke"), CASES)
def test_script_runs_small(name: str, smoke: Smoke, tmp_path: Path) -> None:
    tmp, home = tmp_path / "tmp", tmp_path / "home"
    tmp.mkdir()
    home.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "HOME": str(home), "ARENA_TUI_SHARED": str(shared_root()),
           "ARENA_TUI_DB": str(tmp_path / "arena.db"), "PYTHONUNBUFFERED": "1"}
    env.pop("ARENA_TUI_DATA", None)
    before = _untracked_or_changed()
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", f"scripts.{name}", *smoke.args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the script and whatever it started (workers, hogs, simulators)
        out, err = proc.communicate()
        pytest.fail(f"scripts.{name} {' '.join(smoke.args)} did not end within {TIMEOUT_S:.0f} s:\n{out[-3000:]}\n{err[-3000:]}")
    print(f"scripts.{name} {' '.join(smoke.args)}: {time.monotonic() - t0:.1f} s\n{out}")  # -s / -rA: what it measured
    said = f"\n--- stdout:\n{out[-4000:]}\n--- stderr:\n{err[-4000:]}"
    assert proc.returncode == 0, f"scripts.{name} exited {proc.returncode}{said}"
    missing = [pattern for pattern in smoke.shows if not re.search(pattern, out, re.MULTILINE)]
    assert missing == [], f"scripts.{name} did not print {missing}{said}"
    assert "Traceback (most recent call last)" not in out + err, said
    left = sorted(p.name for p in tmp.iterdir() if not p.name.startswith(LIBRARIES_LEAVE))
    assert left == [], f"scripts.{name} left {left} in its TMPDIR"
    assert _untracked_or_changed() <= before, f"scripts.{name} wrote into the repository"
