"""`arena-tui weights [--fetch PART…]`: the local cascade parts' weights (Whisper, Piper, Kokoro).

A run never downloads a model: its preflight names what is missing and this command, which
fetches it only when asked. Listed: each part's model or voice (and the variable that picks
another), then where its weights are, or what is missing and how to get it.
"""

from __future__ import annotations

import argparse

from ..orchestration import weights
from ..orchestration.logs import quiet_logs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fetch", nargs="+", metavar="PART",
                        help="download these parts' weights: whisper, piper, kokoro, or all (needs arena-tui[local])")


def run(args: argparse.Namespace) -> int:
    quiet_logs(False)  # Pipecat greets on import (a part's check imports its module)
    if not args.fetch:
        for part in weights.local_parts():
            print(f"{part:8} {weights.status(part)}")
        return 0
    for part in weights.chosen(args.fetch):
        print(f"{part}: fetching ...", flush=True)
        print(f"{part}: at {weights.fetch(part)}")
    return 0
