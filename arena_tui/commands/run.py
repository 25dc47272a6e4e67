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
from arena_tui.spine.flags import named_values, turn_subset
from arena_tui.spine.settings import RunSettings, SettingsError, build_settings
from arena_tui.spine.source import ALL_SPEAKERS, variant_labels
from benchmarks.loader import BenchmarkError
from benchmarks.registry import speakers as benchmark_speakers

from ..judge.options import add_judge_arguments
from ..launcher import RunRequest
from ..orchestration.headless import run_headless
from ..orchestration.live import choose_judge, headline, run_source
from ..orchestration.logs import quiet_logs
from ..orchestration.models import manual_commit_names
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
    parser.add_argument("--faults", help="simulator faults, e.g. '3:no_response,5:barge_in,expire=120' (sim only)")
    parser.add_argument("--speed", type=float, default=1.0, help="audio speed-up (sim or --fake only; default 1)")
    parser.add_argument("--turns", type=turn_subset, help="turn subset, e.g. 0,5-9")
    parser.add_argument("--base-url", help="provider endpoint override (e.g. ws://127.0.0.1:PORT/v1/realtime)")
    parser.add_argument(
        "--fake", action="store_true", help="run against the provider's local protocol fake, scripted from the benchmark (no key)"
    )
    parser.add_argument(
        "--fake-timing", choices=("real", "instant"),
        help="when the fake answers (--fake or sim): real = the provider's measured timing (default for --fake), "
        "instant = at once, in one burst",
    )
    parser.add_argument("--headless", action="store_true", help="no TUI: progress and a summary on stdout")
    parser.add_argument("--no-greeting", action="store_true", help="skip the greeting handshake")
    parser.add_argument("-v", "--verbose", action="store_true", help="show Pipecat's debug log on stderr")
    parser.add_argument("--rotate-after", type=float, metavar="SECONDS", help="rotate sessions older than this")
    add_judge_arguments(parser, allow_none=True)
    parser.add_argument(
        "--rehydrate", action="store_true",
        help="each turn in a fresh session seeded with the golden turns before it (no turn-taking scored)",
    )
    parser.add_argument("--parallel", type=int, default=1, metavar="N", help="rehydrated turns at once (default 1)")
    add_input_arguments(parser)
    parser.add_argument(
        "--service", metavar="package.module:Class",
        help="a Pipecat LLM or realtime service class of your own, run in place of --model's provider (--model is then "
        "the model id it is given); a preflight says what it needs",
    )
    parser.add_argument(
        "--service-arg", action="append", default=[], metavar="KEY=VALUE",
        help="a constructor argument of --service's class (repeatable; JSON values as JSON, env:NAME reads a variable: "
        "the only way to give a key)",
    )


def add_input_arguments(parser: argparse.ArgumentParser, *, matrix: bool = False) -> None:
    """The user-input options `run` and `campaign` share: whose voice, and who closes the turn
    (`matrix`: a campaign's, where speakers are a list, one cell each)."""
    if matrix:
        parser.add_argument(
            "--speaker", metavar="tts|NAME,…|all",
            help="whose voice the user audio is, one cell each: tts (default), human speakers' recordings "
            "(person1,person2: real_audio/<name>/), or all (tts and every speaker the benchmarks have)",
        )
    else:
        parser.add_argument(
            "--speaker", metavar="tts|NAME|all",
            help="whose voice the user audio is: tts (default, the benchmark's audio/), a human speaker's recordings "
            "(e.g. person1: real_audio/person1/), or all (one run per speaker the benchmark has)",
        )
    parser.add_argument(
        "--disable-vad", action="store_true",
        help=f"server VAD off ({manual_commit_names()}): the user's turn is closed by our commit + response.create at "
        "the end of the speech in the user WAV" + (" (every run of the campaign)" if matrix else ""),
    )
    each = ", one cell each" if matrix else ""
    parser.add_argument(
        "--condition", metavar="SPEC,…" if matrix else "SPEC", type=named_values,
        help=f"the acoustic condition the user audio is heard under{each}: clean (default), noise=<SNR dB>[:white|pink|babble], "
        "telephony (8 kHz mu-law, 300-3400 Hz) or loss=<percent> (dropped 20 ms frames); seeded, so reproducible",
    )
    parser.add_argument(
        "--effort", metavar="VALUE,…" if matrix else "VALUE", type=named_values,
        help=f"reasoning effort / thinking level{each}, as the model takes it (e.g. low, high, or a token budget; "
        "`arena-tui models` says which); refused for a model without one",
    )
    if not matrix:  # (a campaign: `seed = N` in its [config])
        parser.add_argument("--seed", type=int, help="the seed of the condition's noise and drops (default 0: every run "
                            "of a condition hears the same audio)")


def settings_of(args: argparse.Namespace, speaker: str | None = None) -> RunSettings:
    """The run's settings from its flags (`speaker`: one of `--speaker all`'s), by the one builder
    every way of starting a run uses (`spine.settings.build_settings`); a CliError naming the flag
    it refuses."""
    try:
        return build_settings(
            args.model, speed=args.speed, turns=args.turns, faults=args.faults, base_url=args.base_url, fake=args.fake,
            fake_timing=args.fake_timing, greeting=not args.no_greeting, rotate_after=args.rotate_after,
            rehydrate=args.rehydrate, parallel=args.parallel,
            speaker=speaker or (None if args.speaker == ALL_SPEAKERS else args.speaker), disable_vad=args.disable_vad,
            service=args.service, service_args=args.service_arg, condition=args.condition, seed=args.seed,
            effort=args.effort,
        )
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
    return asyncio.run(run_headless(checked.benchmark, settings, db, sys.stdout, judge))


def _on_a_terminal() -> bool:
    """The monitor needs a terminal on both ends: `run … | tee log` or a CI job gets the progress lines."""
    return sys.stdin.isatty() and sys.stdout.isatty()
