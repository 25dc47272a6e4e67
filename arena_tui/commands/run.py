"""`arena-tui run`: run a benchmark against a model (or the offline simulator) and record it.

By default the monitor opens on the live run. `--headless` prints a first line (what runs,
judged how, recorded where), a progress bar per finished turn, each turn's verdicts as the
judge returns them, and a per-turn and per-dimension summary at the end; the run itself is the
engine's (`runners.engine.run_benchmark`) and the record is the store's, so a headless run and
a TUI run store exactly the same thing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from arena_tui.spine import paths
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.errors import CliError
from arena_tui.spine.option_flags import add_option_flags, chosen
from arena_tui.spine.settings import RunSettings, SettingsError, build_settings
from arena_tui.spine.source import ALL_SPEAKERS, variant_labels
from benchmarks.loader import BenchmarkError
from benchmarks.registry import speakers as benchmark_speakers

from ..judge.options import add_judge_arguments
from ..launcher import RunRequest
from ..orchestration.headless import run_headless
from ..orchestration.live import choose_judge, headline, run_source
from ..orchestration.logs import quiet_logs
from ..orchestration.preflight import preflight
from .ui import run_live


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bench", help="benchmark name or folder")
    parser.add_argument(
        "--model",
        default="sim",
        help=(
            "model alias (default sim): sim, gpt-realtime, gemini-native-audio, gemini-3.1-flash, nova-sonic, "
            "glm-realtime-flash, glm-realtime-air, grok-realtime, ultravox, or a text model such as gpt-4.1, "
            "claude-sonnet-4-6, gemini-2.5-flash, bedrock-nova-lite (`arena-tui models` lists them all)"
        ),
    )
    parser.add_argument("--headless", action="store_true", help="no TUI: progress and a summary on stdout")
    parser.add_argument("-v", "--verbose", action="store_true", help="show Pipecat's debug log on stderr")
    add_judge_arguments(parser, allow_none=True)
    add_option_flags(parser, "run")  # every run option `run` takes (spine.settings.OPTIONS)


def settings_of(args: argparse.Namespace, speaker: str | None = None) -> RunSettings:
    """The run's settings from its flags (`speaker`: one of `--speaker all`'s), by the one builder
    every way of starting a run uses (`spine.settings.build_settings`); a CliError naming the flag
    it refuses."""
    choices = chosen(args, "run")
    if speaker or choices.get("speaker") == ALL_SPEAKERS:
        choices["speaker"] = speaker
    try:
        return build_settings(args.model, **choices)
    except SettingsError as e:
        raise CliError(str(e)) from None


def run(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    quiet_logs(args.verbose, paths.log_path(paths.db_path(args.db)))
    headless = args.headless or not _on_a_terminal()
    if not args.headless and headless:
        print("arena-tui: not a terminal, so running headless (pass --headless to say so)", file=sys.stderr)
    runs = [settings]
    if args.speaker == ALL_SPEAKERS:
        if not headless:
            raise CliError("--speaker all makes one run per speaker: add --headless (or use `campaign --speaker all`)")
        try:
            speakers = benchmark_speakers(args.bench, paths.data_dir(args.data))
        except BenchmarkError as e:
            raise CliError(str(e)) from None
        # (on stderr: a headless run's first line on stdout is its headline)
        print(f"arena-tui: --speaker all: {len(speakers)} run(s), one per speaker: {', '.join(speakers)}", file=sys.stderr,
              flush=True)
        runs = [settings_of(args, speaker) for speaker in speakers]
    status = 0
    for one in runs:
        status = max(status, _run_one(args, one, headless))
    return status


def _run_one(args: argparse.Namespace, settings: RunSettings, headless: bool) -> int:
    """One run of `args.bench` with `settings` (its speaker's audio), in the monitor or headless:
    the one preflight first (its first line, headless, once the benchmark's half is through and
    before the provider's loads Pipecat: output from the start)."""
    db = paths.db_path(args.db)
    judge = choose_judge(args)

    def announce(bench: Benchmark) -> None:
        if headless:
            print(headline(bench.name, settings.model, turns=len(settings.turns_of(bench)), source=run_source(settings),
                           judge=judge, db=db, speed=settings.speed, variants=variant_labels(settings.public())),
                  flush=True)

    checked = preflight(args.bench, settings, paths.data_dir(args.data), data=args.data, announce=announce)
    if checked.problems or checked.benchmark is None:
        raise CliError(checked.refusal)
    judge.check()
    if not headless:
        return run_live(args, RunRequest(checked.benchmark, settings, judge.make or "none"), judge, db=db)
    return asyncio.run(run_headless(checked.benchmark, settings, db, sys.stdout, judge, preflighted=True))


def _on_a_terminal() -> bool:
    """The monitor needs a terminal on both ends: `run … | tee log` or a CI job gets the progress lines."""
    return sys.stdin.isatty() and sys.stdout.isatty()
