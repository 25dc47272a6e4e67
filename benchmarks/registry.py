"""The six Audio Arena benchmarks by name, and where a benchmark name resolves to on disk.

Any folder in the benchmark layout is a benchmark too: folders of `--data` are listed by name
next to the six, `demo_bench` and `duplex_bench` ship inside the package, and what `arena-tui benchmarks import`
wrote is in the user's benchmarks folder (`paths.user_benchmarks_dir`).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, Field, TypeAdapter

from .loader import BenchmarkError, Problem, load_folder, looks_like_benchmark
from .speakers import speakers_in
from arena_tui.spine.benchmark import Benchmark
from arena_tui.spine.paths import user_benchmarks_dir
from arena_tui.spine.source import TTS

DEMO_NAME = "demo_bench"
DEMO_DIR = Path(__file__).parent / "demo"
DUPLEX_NAME = "duplex_bench"  # our own duplex turns: the user speaks during the bot's replies
#: the benchmarks that ship inside the package, by name
BUILTIN = {DEMO_NAME: DEMO_DIR, DUPLEX_NAME: Path(__file__).parent / "duplex"}
IMPORTED = "imported"  # the source of a benchmark found in the user's benchmarks folder


class KnownBenchmark(BaseModel):
    name: str
    turns: int
    tools: int
    domain: str

    @property
    def hf_repo(self) -> str:
        return hf_repo_for(self.name)


#: the six, as the Hub publishes them (known.json: name, turns, tools, domain)
KNOWN: dict[str, KnownBenchmark] = {
    k.name: k for k in TypeAdapter(list[KnownBenchmark]).validate_json((Path(__file__).parent / "known.json").read_bytes())
}


def hf_repo_for(name: str) -> str:
    """`conversation_bench` -> `arcada-labs/conversation-bench` (the Hub writes `_` as `-`)."""
    return f"arcada-labs/{name.replace('_', '-')}"


def canonical_name(name: str) -> str:
    """Accept Hub spellings (`conversation-bench`, `arcada-labs/conversation-bench`) for the six."""
    base = name.rsplit("/", 1)[-1] if name.startswith("arcada-labs/") else name
    under = base.replace("-", "_")
    return under if under in KNOWN or under in BUILTIN else name


ALL = "all"  # on a command line: every Hub benchmark (the six of `KNOWN`)


def named_benchmarks(names: list[str]) -> list[str]:
    """What a list of benchmark names given by the user means: `all` (alone, any case) is the six
    Hub benchmarks, anything else each name as `canonical_name` reads it."""
    if [n.lower() for n in names] == [ALL]:
        return list(KNOWN)
    return [canonical_name(n) for n in names]


class BenchmarkInfo(BaseModel):
    """One row of `arena-tui benchmarks`: what the benchmark is and what of it is here."""

    name: str
    domain: str = ""
    hf_repo: str | None = None
    expected_turns: int | None = None  # from the registry (the six) or benchmark.json
    turns: int | None = None  # as loaded; None when not available or broken
    audio_present: int = 0
    audio_total: int = 0
    synthesized: int = 0
    source: str | None = None  # local (--data) | builtin | imported | huggingface | None (not here)
    path: Path | None = None
    problems: list[Problem] = Field(default_factory=list)

    @property
    def available(self) -> bool:
        return self.turns is not None and not self.problems


def audio_hint(name: str, data: str | None = None) -> str:
    """How a benchmark that ships no audio gets it: what `benchmarks` lists ("needs audio") and
    an audio run of it is refused with, as typed (`data`: the --data it was found under, which the
    command needs again)."""
    where = f" --data {shlex.quote(data)}" if data is not None else ""
    fetch = f" or `arena-tui fetch {name}`" if name in KNOWN else ""
    return f"`arena-tui synthesize {name}{where}`{fetch}"


def missing_audio(bench: Benchmark, turns: Iterable[int] | None = None, name: str | None = None,
                  data: str | None = None) -> str | None:
    """The one line refusing an audio run of these turns (all when None) for lack of audio, or None;
    `name`: the benchmark as the user named it (default: its own name); `data`: the --data it was
    read from, which the command in the line needs again (a benchmark found elsewhere needs none).
    A benchmark that loaded has every WAV it ships (`audio_checks.ships_audio`), so a WAV missing here
    is audio it never had: the line says how to get it, as the listing does."""
    want = None if turns is None else set(turns)
    missing = [t.turn_index for t in bench.turns
               if (want is None or t.turn_index in want) and (not bench.has_audio(t) or bench.missing_cues(t))]
    if not missing:
        return None
    shown = ", ".join(map(str, missing[:8])) + (" …" if len(missing) > 8 else "")
    name = name or bench.name
    where = data if bench.source == "local" else None
    return f"{name}: no audio for turn(s) {shown}: it ships none ({audio_hint(name, where)})"


def _hf_cache_dir() -> Path:
    """The hub cache as the environment says now (huggingface_hub reads it only at import)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def hf_snapshot(name: str, cache_dir: str | os.PathLike[str] | None = None, revision: str = "main") -> Path | None:
    """The cached snapshot folder of a benchmark after `fetch`, or None."""
    repo = hf_repo_for(name)
    storage = Path(cache_dir).expanduser() if cache_dir else _hf_cache_dir()
    storage = storage / f"datasets--{repo.replace('/', '--')}"
    ref = storage / "refs" / revision
    commit = ref.read_text().strip() if ref.is_file() else revision
    snap = storage / "snapshots" / commit
    return snap if snap.is_dir() else None


class DataDirError(ValueError):
    """--data (or ARENA_TUI_DATA) names a folder that is not there: said once, not as "not found" per benchmark."""


def check_data_dir(data_dir: str | os.PathLike[str] | None) -> None:
    if data_dir is None:
        return
    p = Path(data_dir).expanduser()
    if not p.is_dir():
        raise DataDirError(f"--data {data_dir}: {'not a folder' if p.exists() else 'no such folder'}")


def locate(name: str, data_dir: str | os.PathLike[str] | None = None,
           cache_dir: str | os.PathLike[str] | None = None) -> tuple[Path, str] | None:
    """Where a benchmark name resolves: --data folder, the built-in demo, the user's imported
    benchmarks, then the HF cache."""
    name = canonical_name(name)
    if data_dir is not None:
        cand = Path(data_dir).expanduser() / name
        if cand.is_dir():
            return cand, "local"
    if name in BUILTIN and BUILTIN[name].is_dir():
        return BUILTIN[name], "builtin"
    imported = user_benchmarks_dir() / name
    if imported.is_dir() and looks_like_benchmark(imported):
        return imported, IMPORTED
    if name in KNOWN:
        snap = hf_snapshot(name, cache_dir)
        if snap is not None:
            return snap, "huggingface"
    return None


def load_benchmark(name_or_path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None,
                   *, cache_dir: str | os.PathLike[str] | None = None, speaker: str | None = None) -> Benchmark:
    """A benchmark by name (--data folder, built-in demo, Hugging Face cache) or by folder path."""
    return open_benchmark(name_or_path, data_dir, cache_dir=cache_dir, speaker=speaker)


def open_benchmark(name_or_path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None,
                   *, cache_dir: str | os.PathLike[str] | None = None, speaker: str | None = None) -> Benchmark:
    """Load by name (see `locate`) or by folder path; raises BenchmarkError with every problem
    (DataDirError when `data_dir` is not a folder). `speaker`: whose recordings are the user
    audio (`tts`/None: the synthesised audio; a name: `real_audio/<speaker>/`)."""
    folder, how = _where(name_or_path, data_dir, cache_dir)
    return load_folder(folder, speaker=speaker, **how)


def speakers(name_or_path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None,
             *, cache_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """Every speaker a benchmark can be run with: `tts`, then each human speaker with recordings
    in its folder or its downloaded Hub snapshot (`--speaker all`). Raises as `open_benchmark`."""
    folder, how = _where(name_or_path, data_dir, cache_dir)
    return [TTS, *speakers_in([folder, *(alt for alt, _ in how.get("audio_fallbacks", []))])]


def _where(name_or_path: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None,
           cache_dir: str | os.PathLike[str] | None) -> tuple[Path, dict[str, Any]]:
    """The folder a benchmark loads from and how `load_folder` reads it (name, source, companions,
    audio fallbacks); BenchmarkError naming where it looked when it is nowhere."""
    check_data_dir(data_dir)
    raw = str(name_or_path)
    path = Path(raw).expanduser()
    explicit_path = isinstance(name_or_path, Path) or os.sep in raw or raw.startswith((".", "~"))
    found = None if explicit_path else locate(raw, data_dir, cache_dir)
    if found is None and path.is_dir() and (explicit_path or looks_like_benchmark(path)):
        return path, {"source": "local", "companion_dirs": _companions(path.name, data_dir, exclude=path),
                      "meta_defaults": meta_defaults(canonical_name(path.name))}
    if found is None:
        name = canonical_name(raw)
        if explicit_path:
            msg = "no such benchmark folder"
        else:
            where = f"--data {data_dir}" if data_dir else "no --data/ARENA_TUI_DATA folder given"
            msg = f"not found ({where}; not built in; not in the Hugging Face cache)"
            if name in KNOWN:
                msg += f"; run `arena-tui fetch {name}` or pass --data"
        raise BenchmarkError(name, [Problem(benchmark=name, path=path if explicit_path else None, message=msg)])
    folder, source = found
    name = canonical_name(raw)
    return folder, {"name": name, "source": source, "meta_defaults": meta_defaults(name),
                    "companion_dirs": _companions(name, data_dir, exclude=folder),
                    "audio_fallbacks": _hub_audio(name, folder, cache_dir)}


def _hub_audio(name: str, folder: Path, cache_dir: str | os.PathLike[str] | None) -> list[tuple[Path, str]]:
    """A --data copy without audio (five of the six shared ones) uses the downloaded Hub audio."""
    if name not in KNOWN:
        return []
    snap = hf_snapshot(name, cache_dir)
    return [(snap, "recorded")] if snap is not None and snap.resolve() != folder.resolve() else []


def meta_defaults(name: str) -> dict:
    k = KNOWN.get(name)
    if k is None:
        return {"name": name}
    return {"name": name, "hf_repo": k.hf_repo, "turn_count": k.turns, "description": k.domain}


def _companions(name: str, data_dir: str | os.PathLike[str] | None, exclude: Path | None = None) -> list[Path]:
    """Folders that may supply files a Hub snapshot lacks (tools, prompt): the same name under --data."""
    out = []
    if data_dir is not None:
        cand = Path(data_dir).expanduser() / name
        if cand.is_dir() and (exclude is None or cand.resolve() != exclude.resolve()):
            out.append(cand)
    return out


def _candidate_names(data_dir: str | os.PathLike[str] | None) -> list[str]:
    names = list(KNOWN)
    folders = [Path(data_dir).expanduser()] if data_dir is not None else []
    for folder in [*folders, user_benchmarks_dir()]:
        if not folder.is_dir():
            continue
        for sub in sorted(folder.iterdir()):
            if sub.is_dir() and sub.name not in names and not sub.name.startswith(".") and looks_like_benchmark(sub):
                names.append(sub.name)
    names += [n for n in BUILTIN if n not in names]
    return names


def describe(name: str, data_dir: str | os.PathLike[str] | None = None,
             cache_dir: str | os.PathLike[str] | None = None) -> BenchmarkInfo:
    """Availability of one benchmark; never raises for bad data (problems are in the result)."""
    k = KNOWN.get(name)
    info = BenchmarkInfo(name=name, domain=k.domain if k else "", hf_repo=k.hf_repo if k else None,
                         expected_turns=k.turns if k else None)
    found = locate(name, data_dir, cache_dir)
    if found is None:
        return info
    info.path, info.source = found
    try:
        bench = open_benchmark(name, data_dir, cache_dir=cache_dir)
    except BenchmarkError as e:
        info.problems = list(e.problems)
        return info
    info.turns = len(bench.turns)
    info.domain = info.domain or bench.meta.description
    info.hf_repo = info.hf_repo or bench.meta.hf_repo
    info.expected_turns = info.expected_turns or bench.meta.turn_count
    info.audio_total = len(bench.turns)
    info.audio_present = bench.audio_present()
    info.synthesized = sum(1 for t in bench.turns if bench.audio_source.get(t.turn_index, "").startswith("synth:"))
    return info


def available_benchmarks(data_dir: str | os.PathLike[str] | None = None,
                         cache_dir: str | os.PathLike[str] | None = None) -> list[BenchmarkInfo]:
    """The six, every benchmark folder under `data_dir` and among the imported ones, and the
    built-in demo, with local availability."""
    check_data_dir(data_dir)
    return [describe(n, data_dir, cache_dir) for n in _candidate_names(data_dir)]
