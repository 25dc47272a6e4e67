"""`arena-tui fetch BENCH|all`: download benchmarks from Hugging Face into its cache."""

from __future__ import annotations

import argparse
import sys

from benchmarks.fetch import FetchError, endpoint, fetch_benchmark, offline
from benchmarks.registry import ALL, KNOWN, named_benchmarks

from arena_tui.spine.errors import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("benchmarks", nargs="+", metavar="BENCH",
                        help=f"one or more of {', '.join(KNOWN)}, or {ALL}")
    parser.add_argument("--revision", default="main", help="branch, tag or commit (default main)")
    parser.add_argument("--real-audio", action="store_true",
                        help="also download the human recordings (real_audio/<speaker>/)")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def run(args: argparse.Namespace) -> int:
    names = named_benchmarks(args.benchmarks)
    unknown = [n for n in names if n not in KNOWN]
    if unknown:
        raise CliError(f"unknown benchmark {', '.join(unknown)} (choose from {', '.join(KNOWN)}, or {ALL})")
    where = "the local cache (HF_HUB_OFFLINE)" if offline() else endpoint()
    problems = 0
    for n in names:
        print(f"{n}: fetching from {where} ...", flush=True)
        try:
            r = fetch_benchmark(n, revision=args.revision, real_audio=args.real_audio)
        except FetchError as e:
            raise CliError(str(e)) from None
        print(f"{n}: {r.files} files ({_mb(r.bytes)}) at {r.path}")
        if r.problems:
            problems += len(r.problems)
            for p in r.problems:
                print(f"error: {p}", file=sys.stderr)
        else:
            print(f"{n}: {r.turns} turns, audio {r.audio_present}/{r.turns}")
    if problems:
        raise CliError(f"downloaded, but {problems} problem(s) keep it from loading (listed above)")
    return 0
