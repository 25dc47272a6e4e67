"""`arena-tui benchmarks [NAME]`: which benchmarks are here, how complete, and what is wrong with them;
`arena-tui benchmarks import PATH [--out DIR]`: another project's Python benchmarks into ours."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.loader import BenchmarkError
from benchmarks.registry import (BenchmarkInfo, DataDirError, audio_hint, available_benchmarks, canonical_name,
                                 describe, open_benchmark)

from arena_tui.spine import paths
from arena_tui.spine.errors import CliError

IMPORT = "import"  # `benchmarks import PATH`: NAME is this word (a benchmark folder called so: ./import)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME|import",
                        help="show one benchmark (name or folder) turn by turn; or `import PATH`")
    parser.add_argument("path", nargs="?", metavar="PATH",
                        help="import: a checkout of the original eval (kwindla/aiewf-eval) or of the reference "
                        "harness (Design-Arena/audio-agent-bench), its benchmarks/ folder, or one benchmark in it; "
                        "its Python files are read, never run")
    parser.add_argument("--out", metavar="DIR", help="import: write the benchmarks under DIR (default: the user "
                        "data dir's benchmarks folder, where `benchmarks` and `run` find them by name)")
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
        return f"needs audio: {audio_hint(info.name, data_flag if info.source == 'local' else None)}"
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
        print("\n(no --data/ARENA_TUI_DATA folder: showing built-in, imported and downloaded benchmarks only)")
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


def _import(args: argparse.Namespace) -> int:
    from benchmarks.importers.convert import Imported, import_all  # deferred: only an import reads another project's files
    from benchmarks.importers.layouts import LayoutError  # deferred: only an import reads another project's files
    from benchmarks.audio_checks import max_turn_audio_s  # deferred: with the importer

    if not args.path:
        raise CliError("benchmarks import: give the PATH of a checkout of the original eval or the reference harness")
    if args.speaker:
        raise CliError("benchmarks import: --speaker is for showing a benchmark (an import brings every speaker)")
    source = Path(args.path).expanduser()
    if not source.is_dir():
        raise CliError(f"benchmarks import: {args.path}: {'not a folder' if source.exists() else 'no such folder'}")
    out = Path(args.out).expanduser() if args.out else paths.user_benchmarks_dir()
    if out.exists() and not out.is_dir():
        raise CliError(f"--out {args.out}: not a folder")
    try:
        results = list(import_all(source, out, max_turn_audio_s()))
    except (LayoutError, ValueError) as e:
        raise CliError(str(e)) from None
    done = [r for r in results if isinstance(r, Imported)]
    broken = 0
    for r in results:
        if not isinstance(r, Imported):
            print(f"error: {r}", file=sys.stderr)
            for line in r.details:
                print(f"  {line}", file=sys.stderr)
            continue
        info = describe(r.name, out)  # what `benchmarks` will say of it, by the same rule
        print(f"{r.line()}: {_status(info)}")
        for line in r.notices():
            print(f"  {line}")
        for p in info.problems:
            print(f"  error: {p}", file=sys.stderr)
        broken += bool(info.problems)
    if done:
        where = f" --data {out}" if args.out else ""
        print(f"run one: arena-tui run {done[0].name}{where} --model sim")
    refused = len(results) - len(done)
    if refused or broken:
        said = [f"{refused} of {len(results)} not imported"] if refused else []
        said += [f"{broken} imported BROKEN"] if broken else []
        raise CliError(f"benchmarks import: {', '.join(said)} (said above)")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.name == IMPORT:
        return _import(args)
    if args.path or args.out:
        raise CliError(f"benchmarks: PATH and --out are for `benchmarks {IMPORT} PATH [--out DIR]`")
    return _show(args) if args.name else _list(args)
