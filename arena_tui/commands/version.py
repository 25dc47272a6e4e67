"""`arena-tui version`: versions of arena-tui and the parts a run's numbers depend on."""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version


def versions() -> dict[str, str]:
    out = {}
    for pkg in ("arena-tui", "pipecat-ai", "textual", "openai", "boto3", "google-genai", "websockets"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    for k, v in versions().items():
        print(f"{k:14} {v}")
    return 0
