"""Shared fixtures. Keep this small and generic: other modules' tests add theirs here too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_root() -> Path:
    """The shared Audio Arena data: env ARENA_TUI_SHARED, else ../shared/audio-arena from the repo."""
    raw = os.environ.get("ARENA_TUI_SHARED")
    return Path(raw).expanduser().resolve() if raw else (REPO_ROOT.parent / "shared" / "audio-arena").resolve()


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
def _private_exports(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exports and WAVs written without a folder go to a per-test folder, never the user's Documents."""
    monkeypatch.setenv("ARENA_TUI_EXPORTS", str(tmp_path_factory.mktemp("exports")))


@pytest.fixture(scope="module")
def demo():
    """The demo benchmark (tools, several turns), as the provider tests run it."""
    from benchmarks.registry import load_benchmark  # deferred: only provider tests load a benchmark here

    return load_benchmark("demo_bench")
