#!/usr/bin/env python
"""Hostile inputs of issue 41, measured: how long each takes to be refused, the peak memory of the
command, whether anything outside the given folder was opened, and (item 1) how many requests
reach the endpoint an imported run folder names.

Not a test (tests/test_benchmarks_hostile.py and tests/test_import_trust.py assert the refusals):
prints a table. Each `benchmarks import` case (tests/hostile_inputs.py builds them) runs the real
command as a child process; its peak RSS is the child's own (wait4), its time the wall clock
until it exits, killed at `--timeout` (a read blocked on a FIFO never ends). With `--strace` each
case runs once more under `strace -f -e trace=open,openat` and the files it opened beside the
given folder (the credentials file, the linked folders: everything the case put outside it) are
counted. Item 1: a reference-layout run folder naming a listener on 127.0.0.1 as its endpoint (or
as its service class's `base_url`, with `env:OPENAI_API_KEY`) is imported and resumed with a key
set; the listener counts what reached it.

    .venv/bin/python -m scripts.bench_hostile_import [--timeout 60] [--strace] [--cap-mb 4000] [--checkout PATH]
        [--cases NAME …]

`--checkout PATH` runs the commands of another checkout (e.g. main, to see the numbers before),
`--cap-mb` limits each child's address space so a case that grows without bound fails there
instead of taking the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.hostile_inputs import BENCHMARK_CASES, KEY, Listener, base_url_named, leaked, run_folder, service_named

REPO = Path(__file__).resolve().parent.parent
CLI = [str(Path(sys.executable).with_name("arena-tui"))]


def _env(checkout: Path | None, **more: str) -> dict[str, str]:
    env = {**os.environ, **more}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    return env


def _limit(cap_mb: int | None):
    if cap_mb is None:
        return None

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_mb << 20, cap_mb << 20))

    return cap


def measure(argv: list[str], env: dict[str, str], timeout: float, cap_mb: int | None,
            cwd: Path) -> tuple[int | None, float, float, str, str]:
    """(exit status or None when killed at `timeout`, seconds, peak RSS MB, stdout, stderr) of one child."""
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    start = time.monotonic()
    p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                         preexec_fn=_limit(cap_mb), start_new_session=True)
    status, rusage, killed = None, None, False
    while True:
        pid, status, rusage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout and not killed:
            os.killpg(p.pid, 9)
            killed = True
        time.sleep(0.02)
    p.returncode = os.waitstatus_to_exitcode(status)  # (reaped by wait4: keep Popen from waiting again)
    seconds = time.monotonic() - start
    out.seek(0)
    err.seek(0)
    return (None if killed else p.returncode, seconds, rusage.ru_maxrss / 1024.0,
            out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def outside_opens(argv: list[str], env: dict[str, str], timeout: float, tmp: Path, given: Path, out: Path) -> int | None:
    """Files under `tmp` but outside `given` and `out` that the command opened (strace), or None
    without strace or when it did not end."""
    if shutil.which("strace") is None:
        return None
    log = tmp / "strace.log"
    p = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", str(log), *argv], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cwd=tmp,
                         start_new_session=True)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)  # strace and the command it traces (which outlives strace when only it is killed)
        p.wait()
        return None
    given_r, out_r = given.resolve(), out.resolve()
    opened = set()
    for m in re.finditer(r'open(?:at)?\([^"]*"([^"]+)"[^)]*\)\s*=\s*(-?\d+)', log.read_text(errors="replace")):
        path = Path(m.group(1))
        if not path.is_absolute() or int(m.group(2)) < 0:
            continue
        real = Path(os.path.realpath(path))  # (a link inside the folder to a file outside is outside)
        if real.is_relative_to(tmp) and not real.is_relative_to(given_r) and not real.is_relative_to(out_r) \
                and real != log:
            opened.add(real)
    return len(opened)


def benchmark_cases(args: argparse.Namespace) -> None:
    print(f"{'case':<22} {'exit':>4} {'seconds':>8} {'peak MB':>8} {'outside':>7} {'leaked':>6} {'written MB':>10}  said")
    for name, build in BENCHMARK_CASES.items():
        if args.cases and name not in args.cases:
            continue
        tmp = Path(tempfile.mkdtemp(prefix=f"hostile-{name}-")).resolve()
        try:
            case = build(tmp)
            out = tmp / "out"
            argv = [*CLI, "benchmarks", "import", str(case.given), "--out", str(out)]
            env = _env(args.checkout)
            code, seconds, peak, stdout, stderr = measure(argv, env, args.timeout, args.cap_mb, tmp)
            said = [ln for ln in (stdout + stderr).splitlines() if "not imported" in ln or "not read:" in ln
                    or "Error" in ln]
            written = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6 if out.exists() else 0.0
            bad = leaked(out, stdout + stderr)
            opened = None
            if args.strace:
                shutil.rmtree(out, ignore_errors=True)
                opened = outside_opens(argv, env, args.timeout, tmp, case.given, out)
            shown = (said[0] if said else (stderr.strip().splitlines() or ["(nothing)"])[-1]).replace(str(tmp), "TMP")
            print(f"{name:<22} {'kill' if code is None else code:>4} {seconds:>8.2f} {peak:>8.0f} "
                  f"{'-' if opened is None else opened:>7} {len(bad):>6} {written:>10.1f}  {shown[:150]}", flush=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def run_folder_cases(args: argparse.Namespace) -> None:
    print(f"\n{'run folder names':<22} {'import':>6} {'resume':>6} {'seconds':>8} {'requests':>8} {'with key':>8}  endpoint line")
    for label, named in (("base_url", base_url_named), ("service+env key", service_named)):
        tmp = Path(tempfile.mkdtemp(prefix="hostile-run-")).resolve()
        listener = Listener()
        try:
            folder = run_folder(tmp, named(listener.port))
            db = tmp / "arena.db"
            env = _env(args.checkout, OPENAI_API_KEY=KEY, HOME=str(tmp))
            code_i, _, _, out_i, _ = measure([*CLI, "--db", str(db), "import", str(folder)], env, args.timeout, None, tmp)
            run_id = out_i.split()[-1] if out_i.strip() else "?"
            code_r, seconds, _, out_r, err_r = measure([*CLI, "--db", str(db), "resume", run_id, "--headless",
                                                        "--judge", "none"], env, args.timeout, None, tmp)
            line = next((ln for ln in out_r.splitlines() if ln.startswith("endpoint: ")), "(no endpoint line)")
            with_key = sum(1 for _, key in listener.seen if key)
            print(f"{label:<22} {code_i:>6} {'kill' if code_r is None else code_r:>6} {seconds:>8.2f} "
                  f"{len(listener.seen):>8} {with_key:>8}  {line[:160]}", flush=True)
        finally:
            listener.close()
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before a case is killed (default 60)")
    parser.add_argument("--strace", action="store_true", help="count the files opened outside the given folder")
    parser.add_argument("--cap-mb", type=int, help="address-space cap of each child, MB")
    parser.add_argument("--checkout", type=Path, help="run another checkout's code (PYTHONPATH)")
    parser.add_argument("--cases", nargs="*", help=f"only these benchmark cases ({', '.join(BENCHMARK_CASES)}); "
                        "none: skip the run folders")
    args = parser.parse_args()
    benchmark_cases(args)
    if args.cases is None:
        run_folder_cases(args)


if __name__ == "__main__":
    main()
