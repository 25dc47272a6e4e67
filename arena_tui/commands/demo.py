"""`arena-tui demo`: the built-in demo benchmark against the local simulator, no keys, no network.

The faults are chosen so one run shows each thing the monitor is for: an overlap (turn 0:
the bot starts 500 ms into the user's speech), a retry (turn 1: no answer on the first
attempt), a session rotation with reconnect (turn 3: the connection drops mid-reply and a
new session gets the history) and an interruption (turn 4: the reply is cut short).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from arena_tui.spine import paths
from arena_tui.spine.errors import CliError
from arena_tui.spine.flags import turn_subset
from arena_tui.spine.settings import SIM, RunSettings, SettingsError, build_settings

from ..judge.options import add_judge_arguments
from ..launcher import RunRequest
from ..orchestration.live import choose_judge
from ..orchestration.preflight import preflight
from .ui import run_live


DEMO_BENCHMARK = "demo_bench"
DEMO_FAULTS = "0:barge_in=500,1:no_response,3:disconnect,4:truncated"
DEMO_WATCHDOG = {"extra_ms": 6000.0, "min_wall_ms": 4000.0}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--faults", default=DEMO_FAULTS, help=f"simulator fault spec (default {DEMO_FAULTS!r})")
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed; 1.0 = real time (default)")
    parser.add_argument("--turns", type=turn_subset, help="subset of turns, e.g. 0-3")
    add_judge_arguments(parser, allow_none=True)
    parser.add_argument("--temp-db", action="store_true",
                        help="record into a throw-away database instead of the default one")


def settings_of(args: argparse.Namespace) -> RunSettings:
    """The demo's settings from its flags, by the one builder every way of starting a run uses.
    The simulator answers at once or never: a short watchdog keeps the no_response turn's wait
    (shown live, with its countdown) to a few seconds instead of the 30 a real service gets."""
    try:
        return build_settings(SIM, faults=args.faults, speed=args.speed, turns=args.turns,
                              fields={"watchdog": DEMO_WATCHDOG})
    except SettingsError as e:
        raise CliError(str(e)) from None


def run(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    db = Path(tempfile.mkdtemp(prefix="arena-tui-demo-")) / "demo.db" if args.temp_db else None
    judge = choose_judge(args)
    checked = preflight(DEMO_BENCHMARK, settings, paths.data_dir(args.data))  # the one preflight, as `run`'s
    if checked.problems or checked.benchmark is None:
        raise CliError(checked.refusal)
    judge.check()
    return run_live(args, RunRequest(checked.benchmark, settings, judge.make or "none"), judge, db=db)
