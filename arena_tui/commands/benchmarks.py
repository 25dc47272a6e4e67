"""`arena-tui benchmarks [NAME]`: which benchmarks are here, how complete, and what is wrong with them."""

from __future__ import annotations

import argparse
import shlex
import sys

from benchmarks.loader import BenchmarkError
from benchmarks.registry import BenchmarkInfo, DataDirError, available_benchmarks, canonical_name, open_benchmark

from arena_tui.spine import paths
from arena_tui.spine.errors import CliError

NAME = "benchmarks"
HELP = "list benchmarks and what is available locally (turns, audio n/N, source); or show one"
ORDER = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", help="show one benchmark (name or folder) turn by turn")
    parser.add_argument("--speaker", help="Hub datasets: use this speaker's recordings (real_audio/<speaker>)")


def _audio(info: BenchmarkInfo) -> str:
    if info.turns is None:
        return "-"
    text = f"{info.audio_present}/{info.audio_total}"
    if info.synthesized:
        text += f" ({info.synthesized} synth)"
    return text


def _status(info: BenchmarkInfo, data_flag: str | None = None) -> str:
    """Its state and the command that completes it, as typed: a benchmark read from `--data` is
    found again only with it (ARENA_TUI_DATA needs none)."""
    if info.problems:
        return f"BROKEN: {len(info.problems)} problem{'s' if len(info.problems) != 1 else ''}"
    if info.source is None:
        return f"not here: `arena-tui fetch {info.name}` or --data" if info.hf_repo else "not here"
    if info.audio_present < info.audio_total:
        where = f" --data {shlex.quote(data_flag)}" if data_flag is not None and info.source == "local" else ""
        return f"needs audio: `arena-tui synthesize {info.name}{where}`"
    return "ready"


def _list(args: argparse.Namespace) -> int:
    data = paths.data_dir(args.data)
    try:
        infos = available_benchmarks(data)
    except DataDirError as e:
        raise CliError(str(e)) from None
    rows = [("NAME", "TURNS", "AUDIO", "SOURCE", "STATUS")]
    for i in infos:
        turns = str(i.turns) if i.turns is not None else (f"({i.expected_turns})" if i.expected_turns else "-")
        rows.append((i.name, turns, _audio(i), i.source or "-", _status(i, args.data)))
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    for r in rows:
        print("  ".join(r[c].ljust(widths[c]) for c in range(4)) + "  " + r[4])
    if data is None:
        print("\n(no --data/ARENA_TUI_DATA folder: showing built-in and downloaded benchmarks only)")
    broken = [i for i in infos if i.problems]
    for i in broken:
        for p in i.problems:
            print(f"error: {p}", file=sys.stderr)
    if broken:
        n = sum(len(i.problems) for i in broken)
        raise CliError(f"{n} problem{'s' if n != 1 else ''} in {', '.join(i.name for i in broken)} (listed above)")
    return 0


def _show(args: argparse.Namespace) -> int:
    try:
        b = open_benchmark(args.name, paths.data_dir(args.data), speaker=args.speaker)
    except DataDirError as e:
        raise CliError(str(e)) from None
    except BenchmarkError as e:
        for p in e.problems:
            print(f"error: {p}", file=sys.stderr)
        n = len(e.problems)
        raise CliError(f"{canonical_name(args.name)}: {n} problem{'s' if n != 1 else ''} (listed above)") from None
    present = b.audio_present()
    print(f"{b.name}  ({b.source}: {b.root})")
    if b.meta.description:
        print(f"  {b.meta.description}")
    print(f"  turns {len(b.turns)}, tools {len(b.tools)} ({', '.join(t.name for t in b.tools)}), "
          f"audio {present}/{len(b.turns)}, prompt {len(b.system_prompt)} chars, KB {len(b.knowledge_base)} chars")
    for t in b.turns:
        calls = ", ".join(c.name for c in t.expected_calls) or "-"
        src = b.audio_source.get(t.turn_index, "no audio")
        text = t.input if len(t.input) <= 60 else t.input[:57] + "..."
        print(f"  {t.turn_index:3d}  {','.join(t.categories):32.32}  {calls:28.28}  {src:14}  {text}")
    return 0


def run(args: argparse.Namespace) -> int:
    return _show(args) if args.name else _list(args)
