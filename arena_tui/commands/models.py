"""`arena-tui models`: every model alias, its provider, and what a run with it still needs.

A user about to spend real API money wants to know before the run whether the key and the
packages are there; this checks what each provider's catalog entry declares, the checks its
runner's preflight makes with default settings (keys for presence only, their values never
printed), without importing any provider or Pipecat (`runners.providers.catalog`).
"""

from __future__ import annotations

import argparse
import re

NAME = "models"
HELP = "list model aliases, their provider and what each still needs (keys, packages)"
ORDER = 25


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fake", action="store_true", help="check as for a --fake run (no keys needed)")


def run(args: argparse.Namespace) -> int:
    from runners.providers import catalog  # deferred: --help imports every command module; the catalog is data, no provider module

    from ..orchestration.logs import quiet_logs  # deferred: the log set-up loads only when a command runs

    quiet_logs(False)
    rows = []
    for alias in catalog.known_models():
        provider = catalog.find(alias)
        problems = provider.problems(fake=bool(args.fake))
        keys = ", ".join(provider.key_env) or "-"
        ready = "ready" if not problems else "needs " + "; ".join(_short(p) for p in problems)
        rows.append((alias, provider.name, provider.model_id(alias), provider.kind, keys, ready))
    widths = [max(len(r[i]) for r in rows + [("alias", "provider", "model id", "kind", "key", "")]) for i in range(5)]
    head = ("alias", "provider", "model id", "kind", "key")
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + "  status")
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:5], widths, strict=True)) + "  " + r[5])
    return 0


def _short(problem: str) -> str:
    """'nova-sonic: environment variable AWS_ACCESS_KEY_ID is not set (…)' → 'AWS_ACCESS_KEY_ID'."""
    text = problem.split(": ", 1)[-1]
    m = re.match(r"environment variable (\S+)", text)
    return m.group(1) if m else text
