"""`arena-tui models`: every model alias, its provider, and what a run with it still needs.

A user about to spend real API money wants to know before the run whether the key and the
packages are there; this runs each runner's own preflight (keys are checked for presence
only, their values are never printed).
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
    from runners.base import get_runner, known_models  # deferred: the engine (Pipecat, ~1 s) loads only when a run needs it (--help imports every command module)
    from runners.config import RunConfig  # deferred: the engine (Pipecat, ~1 s) loads only when a run needs it (--help imports every command module)

    from ..orchestration.logs import quiet_logs  # deferred: loguru comes with Pipecat; it is configured only when the runners load

    quiet_logs(False)
    rows = []
    for alias in known_models():
        runner = get_runner(alias)
        config = RunConfig(model=alias, fake=bool(args.fake))
        problems = runner.preflight(config)
        keys = ", ".join(runner.key_env) or "-"
        ready = "ready" if not problems else "needs " + "; ".join(_short(p) for p in problems)
        kind = "text" if runner.mode == "text" else ("simulator" if runner.simulated else "audio")
        rows.append((alias, runner.name, runner.resolve_model(alias), kind, keys, ready))
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
