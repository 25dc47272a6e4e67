"""`arena-tui synthesize BENCH`: write user audio (turn_NNN.wav) for turns that have none."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from arena_tui.spine import paths
from arena_tui.spine.errors import CliError
from benchmarks.loader import BenchmarkError
from benchmarks.overlay import audio_overlay_dir
from benchmarks.registry import open_benchmark
from benchmarks.synthesize import SynthError, make_backend, synthesize_benchmark


def _turn_list(text: str) -> list[int]:
    out: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part:
                a, b = part.split("-", 1)
                out.extend(range(int(a), int(b) + 1))
            elif part.strip():
                out.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad turn list {text!r} (e.g. 0,3,5-9)") from None
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("benchmark", help="benchmark name or folder")
    parser.add_argument("--backend", choices=["espeak", "openai"], default="espeak",
                        help="espeak (offline, espeak-ng) or openai (tts-1, needs OPENAI_API_KEY); default espeak")
    parser.add_argument("--voice", help="espeak voice (default en-us) or OpenAI voice (default alloy)")
    parser.add_argument("--model", help="OpenAI TTS model (default tts-1)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL or api.openai.com)")
    parser.add_argument("--turns", type=_turn_list, help="only these turns, e.g. 0,3,5-9")
    parser.add_argument("--overwrite", action="store_true", help="replace existing audio too")
    parser.add_argument("--out", help="folder to write into (default: the audio overlay in the user data dir, "
                        "env ARENA_TUI_AUDIO_DIR, which runs read; never the benchmark folder unless given here)")


def run(args: argparse.Namespace) -> int:
    # imported here: numpy/soxr/openai are not needed to build the CLI parser

    try:
        bench = open_benchmark(args.benchmark, paths.data_dir(args.data))
    except BenchmarkError as e:
        for p in e.problems:
            print(f"error: {p}", file=sys.stderr)
        raise CliError(f"{e.benchmark}: cannot synthesize, fix the problems above first") from None
    options: dict[str, object] = {"voice": args.voice}
    if args.backend == "openai":
        options.update(model=args.model, base_url=args.base_url)
    try:
        backend = make_backend(args.backend, **options)

        def progress(n: int, total: int, turn) -> None:
            print(f"[{n}/{total}] turn {turn.turn_index}: {turn.input[:70]}", flush=True)

        out_dir = args.out if args.out is not None else audio_overlay_dir(bench.name)
        print(f"{bench.name}: writing to {Path(out_dir).resolve()}/audio", flush=True)
        report = synthesize_benchmark(bench, backend, out_dir=out_dir, turns=args.turns,
                                      overwrite=args.overwrite, progress=progress)
    except SynthError as e:
        raise CliError(str(e)) from None
    secs = sum(report.seconds.values())
    print(f"{bench.name}: wrote {len(report.written)} WAV(s) ({secs:.1f} s of audio, synth:{backend.name}) "
          f"to {Path(report.out_dir).resolve()}/audio; {len(report.skipped)} turn(s) already had audio")
    return 0
