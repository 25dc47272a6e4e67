"""Shared fixtures. Keep this small and generic: other modules' tests add theirs here too."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from multiprocessing import resource_tracker
from pathlib import Path

import pytest

from . import processes

REPO_ROOT = Path(__file__).resolve().parent.parent
LEFTOVER_GRACE_S = 10.0  # what the last teardown stopped may take this long to exit


def shared_root() -> Path:
    """The shared Audio Arena data: env ARENA_TUI_SHARED, else ../shared/audio-arena from the repo."""
    raw = os.environ.get("ARENA_TUI_SHARED")
    return Path(raw).expanduser().resolve() if raw else (REPO_ROOT.parent / "shared" / "audio-arena").resolve()


@pytest.fixture(scope="session", autouse=True)
def _no_process_left() -> Iterator[None]:
    """The suite ends with no process of ours alive: two campaign workers orphaned by a killed
    coordinator once kept 4.4 GB and two cores until killed by hand.

    Runs in every process that runs tests (pytest alone, or each xdist worker for what it
    started itself; the xdist controller runs none). That process becomes a subreaper, so an
    orphan stays in its tree instead of moving under init, and its children carry a session
    mark in their environment (found in /proc even if they escaped the tree). At the end,
    whatever is still alive is killed, then named in the failure."""
    token = uuid.uuid4().hex
    os.environ[processes.SESSION_ENV] = token
    processes.become_subreaper()
    yield
    helper = getattr(resource_tracker._resource_tracker, "_pid", None)  # Python's own, ends with us

    def leftovers() -> list[processes.Proc]:
        procs = processes.all_procs()
        found = {p.pid: p for p in processes.descendants(os.getpid(), procs) + processes.marked(token, procs)}
        return [p for p in found.values() if p.alive and p.pid != helper]

    end = time.monotonic() + LEFTOVER_GRACE_S
    while (left := leftovers()) and time.monotonic() < end:
        time.sleep(0.2)
    processes.kill([p.pid for p in left])
    processes.reap([p.pid for p in processes.descendants(os.getpid()) if not p.alive])
    if left:
        pytest.fail(f"{len(left)} process(es) started by the tests were still alive at the end (killed now):\n"
                    + "\n".join(f"  {p}" for p in left), pytrace=False)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder holding the six benchmark folders (read-only; copy before modifying)."""
    root = shared_root()
    if not (root / "conversation_bench" / "turns.jsonl").is_file():
        pytest.fail(f"shared benchmark data not found at {root} (set ARENA_TUI_SHARED)")
    return root


@pytest.fixture
def hf_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty, private Hugging Face cache, so no test reads or writes the user's."""
    home = tmp_path / "hf-home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    return home


@pytest.fixture(autouse=True)
def _private_audio_overlay(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthesised audio for read-only benchmark folders goes to a per-test folder, never the user's."""
    monkeypatch.setenv("ARENA_TUI_AUDIO_DIR", str(tmp_path_factory.mktemp("audio-overlay")))


@pytest.fixture(autouse=True)
def _private_user_benchmarks(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Imported benchmarks (`benchmarks import` without --out) go to a per-test folder, never the user's."""
    monkeypatch.setenv("ARENA_TUI_BENCHMARKS", str(tmp_path_factory.mktemp("user-benchmarks")))


@pytest.fixture(autouse=True)
def _private_exports(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exports and WAVs written without a folder go to a per-test folder, never the user's Documents."""
    monkeypatch.setenv("ARENA_TUI_EXPORTS", str(tmp_path_factory.mktemp("exports")))


@pytest.fixture(scope="module")
def demo():
    """The demo benchmark (tools, several turns), as the provider tests run it."""
    from benchmarks.registry import load_benchmark  # deferred: only provider tests load a benchmark here

    return load_benchmark("demo_bench")


@pytest.fixture(scope="module")
def quiet_pipecat() -> Iterator[None]:
    """Pipecat logs every frame and the whole system prompt at DEBUG; keep warnings only (per module)."""
    import sys

    from loguru import logger

    logger.remove()
    handler = logger.add(sys.stderr, level="WARNING")
    yield
    logger.remove(handler)
    logger.add(sys.stderr)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the heavy end-to-end tests `slow` (`tests/slow_tests.py`): CI runs them after the default run."""
    from .slow_tests import SLOW

    for item in items:
        if item.nodeid in SLOW or item.nodeid.split("[")[0] in SLOW:
            item.add_marker(pytest.mark.slow)
