"""`arena-tui demo`: the built-in demo benchmark against the local simulator, no keys, no network.

What the tool is for in under a minute, in real time: two clean turns first (audio in, the
model's reply, latency on our own clock, the judge's verdicts filling in), then one turn with a
labelled fault (turn 2: the simulator looks up slots for another date), which the turn table
marks (`↯`) and fails on tool use, the turn detail saying the fault and the judge's reason. When the run ends, the monitor and the terminal say what to do next. `--turns` and
`--faults` ask for more (`--turns 0-9 --faults 0:barge_in=500,1:no_response,3:disconnect,4:truncated`:
an overlap, a retry, a reconnect and a cut reply in one run).
"""

from __future__ import annotations

import argparse
import shlex
import tempfile
from pathlib import Path

from arena_tui.spine import paths
from arena_tui.spine.errors import CliError
from arena_tui.spine.option_flags import add_option_flags, chosen
from arena_tui.spine.settings import SIM, RunSettings, SettingsError, build_settings

from ..judge.options import add_judge_arguments
from ..launcher import RunRequest
from ..orchestration.live import choose_judge
from ..orchestration.logs import quiet_logs
from ..orchestration.preflight import preflight
from .ui import locations, run_live

DEMO_BENCHMARK = "demo_bench"
DEMO_TURNS = "0-2"
DEMO_FAULTS = "2:wrong_call"
DEMO_WATCHDOG = {"extra_ms": 6000.0, "min_wall_ms": 4000.0}
# the simulator stops speaking at once: no real service's pauses mid-reply to wait out
DEMO_END_OF_TURN = {"quiet_ms": 800.0, "drain_ms": 300.0}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_option_flags(parser, "demo", defaults={"turns": DEMO_TURNS, "faults": DEMO_FAULTS})  # (0-9: all ten turns)
    add_judge_arguments(parser, allow_none=True)
    parser.add_argument("--temp-db", action="store_true",
                        help="record into a throw-away database instead of the default one")


def settings_of(args: argparse.Namespace) -> RunSettings:
    """The demo's settings from its flags, by the one builder every way of starting a run uses.
    The simulator answers at once or never: a short watchdog keeps the no_response turn's wait
    (shown live, with its countdown) to a few seconds instead of the 30 a real service gets."""
    try:
        return build_settings(SIM, **chosen(args, "demo"), fields={"watchdog": DEMO_WATCHDOG, "end_of_turn": DEMO_END_OF_TURN})
    except SettingsError as e:
        raise CliError(str(e)) from None


def run(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    db = Path(tempfile.mkdtemp(prefix="arena-tui-demo-")) / "demo.db" if args.temp_db else None
    # before the preflight: it reads the simulator's runner, and Pipecat greets on import (an INFO
    # line on the terminal before the monitor's first frame); its lines go beside the database
    quiet_logs(False, paths.log_path(db or paths.db_path(args.db)))
    judge = choose_judge(args)
    checked = preflight(DEMO_BENCHMARK, settings, paths.data_dir(args.data))  # the one preflight, as `run`'s
    if checked.problems or checked.benchmark is None:
        raise CliError(checked.refusal)
    judge.check()
    where, _ = locations(args)
    launch = RunRequest(checked.benchmark, settings, judge.make or "none", then=next_steps(db or where))
    return run_live(args, launch, judge, db=db)


def next_steps(db: Path) -> str:
    """What to do once the demo has run: the next three commands (`--db` when it is not the
    default database), said on screen when the run ends and printed when the monitor closes."""
    flag = f" --db {shlex.quote(str(db))}" if Path(db) != paths.db_path(None) else ""
    return (f"next: `arena-tui{flag}` (this run stored: replay it, re-judge a turn, L leaderboard) · "
            f"`arena-tui report all ~/arena-report{flag}` (CSVs and report.html) · "
            "`arena-tui run demo_bench --model gpt-realtime` (a real model: OPENAI_API_KEY; `arena-tui models` lists all)")
