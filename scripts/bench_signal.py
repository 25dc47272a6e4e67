#!/usr/bin/env python
"""How fast SIGTERM / SIGINT end a headless run, with the CPU oversubscribed.

Not a test: prints numbers. Each trial starts CPU hogs (busy-loop processes, `--hogs`, default
4 × the cores), then `arena-tui run demo_bench --model sim --headless` at `--speed`, waits until
the run is recorded, then `--after` seconds, sends the signal and times the exit (wall seconds from
the signal to the process's end). A run that has not ended `--timeout` seconds after the signal
is reported as hung and killed. The run must end interrupted: exit status 128 + signal (SIGINT:
130), the summary printed with its outcome line "run interrupted". The hogs are always killed.

    .venv/bin/python -m scripts.bench_signal [--speeds 10,50] [--hogs 8] [--trials 3] [--signal TERM]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _spin() -> None:
    while True:
        pass


class Hogs:
    """`n` busy-loop processes for the duration of a `with` block (killed on the way out, always)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.procs: list[multiprocessing.Process] = []

    def __enter__(self) -> Hogs:
        ctx = multiprocessing.get_context("spawn")
        self.procs = [ctx.Process(target=_spin, daemon=True) for _ in range(self.n)]
        for p in self.procs:
            p.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.join(5)


def _recorded(db: Path) -> bool:
    """The run has started: its row is in the database."""
    if not db.exists():
        return False
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return bool(con.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.Error:
        return False


def trial(speed: float, turns: str, sig: signal.Signals, after: float, timeout: float, db: Path) -> dict:
    """One run stopped by `sig`: seconds from the signal to the exit, its status and summary."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONFAULTHANDLER": "1"}  # a hung run dumps its stacks on SIGABRT
    cmd = [sys.executable, "-m", "arena_tui.cli", "run", "demo_bench", "--model", "sim", "--headless",
           "--speed", f"{speed:g}", "--turns", turns, "--judge", "none", "--db", str(db)]
    err = open(db.with_suffix(".stderr"), "w+")  # noqa: SIM115  # read back for a hung run's stacks
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # the headline: the run is being set up
        started = time.monotonic()
        while not _recorded(db) and proc.poll() is None and time.monotonic() - started < 120:
            time.sleep(0.1)  # until the run is recorded (a signal before that just ends the process)
        time.sleep(after)
        if proc.poll() is not None:
            return {"exit": proc.returncode, "secs": None, "out": proc.stdout.read(), "ended_first": True}
        t0 = time.monotonic()
        proc.send_signal(sig)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # faulthandler: every thread's stack on stderr
            try:
                out, _ = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
            err.seek(0)
            return {"exit": None, "secs": None, "out": out, "hung": True, "stacks": err.read()[-6000:]}
        return {"exit": proc.returncode, "secs": time.monotonic() - t0, "out": out}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--speeds", default="10,50")
    ap.add_argument("--turns", default="0-2")
    ap.add_argument("--hogs", type=int, default=4 * (os.cpu_count() or 1))
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--after", type=float, default=4.0, help="seconds after the run is recorded before the signal")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds after the signal before a run counts as hung")
    ap.add_argument("--signal", default="TERM", choices=["TERM", "INT"])
    ap.add_argument("--stacks", action="store_true", help="print a hung run's stacks (faulthandler, on SIGABRT)")
    args = ap.parse_args()
    sig = signal.Signals[f"SIG{args.signal}"]
    expected = 128 + int(sig)
    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; {args.hogs} CPU hogs; "
          f"SIG{args.signal} {args.after:g} s into the run; hung after {args.timeout:g} s", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for speed in (float(s) for s in args.speeds.split(",")):
            secs: list[float] = []
            notes: list[str] = []
            for k in range(args.trials):
                with Hogs(args.hogs):
                    r = trial(speed, args.turns, sig, args.after, args.timeout, Path(tmp) / f"s{speed:g}_{k}.db")
                lines = r["out"].strip().splitlines()  # its summary: the outcome line, then where it is and how to resume
                if r.get("hung"):
                    notes.append("HUNG")
                    if args.stacks:
                        print(f"--- speed {speed:g} trial {k}: hung; its stacks:\n{r['stacks']}", flush=True)
                elif r.get("ended_first"):
                    notes.append(f"ended before the signal (exit {r['exit']})")
                else:
                    secs.append(r["secs"])
                    ok = r["exit"] == expected and any(line.startswith("run interrupted") for line in lines)
                    failed = next((line for line in lines if line.startswith("run failed")), None)
                    why = f" (the run had ended by itself: {failed[:60]})" if failed else " UNEXPECTED: " + " | ".join(lines[-3:])
                    notes.append(f"{r['secs']:.2f} s exit {r['exit']}{'' if ok else why}")
            worst = f"worst {max(secs):.2f} s" if secs else "no timed exit"
            print(f"speed {speed:g}: {worst}; " + "; ".join(notes), flush=True)


if __name__ == "__main__":
    main()
