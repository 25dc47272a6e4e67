"""Download benchmarks from the Hugging Face Hub into its cache, where the loader finds them.

Uses huggingface_hub's own `snapshot_download` (resume, integrity, cache layout) and passes it
the environment as it is *now* (`HF_ENDPOINT`, `HF_HUB_OFFLINE`, `HF_HOME`/`HF_HUB_CACHE`,
`HF_TOKEN`): the library reads those once at import, which is too early for a CLI that sets them
per invocation and for tests.
"""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

from pydantic import BaseModel, Field

from .loader import BenchmarkError, Problem, load_folder
from .registry import KNOWN, _hf_cache_dir, canonical_name, hf_repo_for, meta_defaults

_TRUE = {"1", "on", "yes", "true"}


class FetchError(Exception):
    """A download that failed; one line naming the benchmark and what to do."""


class FetchResult(BaseModel):
    name: str
    repo_id: str
    path: Path
    commit: str
    files: int
    bytes: int
    turns: int | None = None
    audio_present: int = 0
    problems: list[Problem] = Field(default_factory=list)


def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in _TRUE


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _version() -> str:
    """The installed arena-tui version (from the package metadata: benchmarks import only the spine)."""
    try:
        return metadata.version("arena-tui")
    except metadata.PackageNotFoundError:
        return "0"


def _patterns(real_audio: bool) -> tuple[list[str] | None, list[str] | None]:
    # Human recordings (real_audio/<speaker>/) double the download; only on request.
    return None, (None if real_audio else ["real_audio/*", "real_audio/**"])


def fetch_benchmark(name: str, *, revision: str = "main", cache_dir: str | os.PathLike[str] | None = None,
                    real_audio: bool = False, token: str | None = None, max_workers: int = 4) -> FetchResult:
    """Download (or, offline, find in the cache) one of the six; then check it loads."""
    from huggingface_hub import snapshot_download  # deferred: huggingface_hub reads its environment at import; fetch sets it first
    from huggingface_hub.errors import (  # deferred: huggingface_hub reads its environment at import; fetch sets it first
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    name = canonical_name(name)
    if name not in KNOWN:
        raise FetchError(f"'{name}' is not one of the Hub benchmarks ({', '.join(KNOWN)})")
    repo = hf_repo_for(name)
    cache = Path(cache_dir).expanduser() if cache_dir else _hf_cache_dir()
    allow, ignore = _patterns(real_audio)
    ep = endpoint()
    try:
        path = Path(snapshot_download(
            repo_id=repo, repo_type="dataset", revision=revision, cache_dir=str(cache), endpoint=ep,
            local_files_only=offline(), allow_patterns=allow, ignore_patterns=ignore,
            token=token or os.environ.get("HF_TOKEN") or False, max_workers=max_workers,
            library_name="arena-tui", library_version=_version(),
        ))
    except RevisionNotFoundError:
        raise FetchError(f"{name}: revision '{revision}' not found in {repo} on {ep}") from None
    except GatedRepoError:
        raise FetchError(f"{name}: {repo} is gated on {ep}; accept its terms and set HF_TOKEN") from None
    except RepositoryNotFoundError:
        raise FetchError(f"{name}: dataset {repo} not found on {ep}") from None
    except LocalEntryNotFoundError:
        if offline():
            raise FetchError(f"{name}: HF_HUB_OFFLINE is set and {repo} is not in the cache {cache}") from None
        raise FetchError(f"{name}: cannot reach {ep} and {repo} is not in the cache {cache}") from None
    except HfHubHTTPError as e:
        status = e.response.status_code if e.response is not None else "?"
        raise FetchError(f"{name}: {ep} answered HTTP {status} for {repo}") from None
    except OSError as e:  # disk full, permissions, connection errors surfacing as OSError
        raise FetchError(f"{name}: download of {repo} failed: {e}") from None
    files = [p for p in path.rglob("*") if p.is_file() and ".cache" not in p.parts]
    result = FetchResult(name=name, repo_id=repo, path=path, commit=path.name, files=len(files),
                         bytes=sum(p.stat().st_size for p in files))
    try:
        # the snapshot itself, not a --data folder of the same name (which takes precedence by name)
        bench = load_folder(path, name=name, source="huggingface", meta_defaults=meta_defaults(name))
    except BenchmarkError as e:
        result.problems = e.problems
        return result
    result.turns = len(bench.turns)
    result.audio_present = bench.audio_present()
    return result
