"""Where the CLI writes and how it ends: files the user asks for go to the exports folder or the
audio overlay (never the benchmark data or the checkout) with the full path printed; a reader
that closes the pipe early (`runs | head`) ends it quietly; bootstrap only reinstalls on change."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.spine.paths import exports_dir

from .conftest import REPO_ROOT


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A database holding one short simulator run: (db, run id)."""
    db = tmp_path_factory.mktemp("outputs") / "a.db"
    code = subprocess.run(
        [sys.executable, "-m", "arena_tui.cli", "--db", str(db), "run", "demo_bench", "--speed", "20",
         "--turns", "0", "--headless", "--judge", "heuristic"], capture_output=True, text=True)
    assert code.returncode == 0, code.stderr
    run_id = code.stdout.strip().splitlines()[-1].split()[1]
    return db, run_id


def _to_closed_pipe(*args: str) -> subprocess.CompletedProcess:
    """Run the CLI with stdout a pipe whose reader is already gone (what `| head` leaves behind)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([sys.executable, "-m", "arena_tui.cli", *args], stdout=w, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        os.close(w)


@pytest.mark.parametrize("args", [["runs"], ["runs", "--json"], ["judge", "RUN", "--json"], ["judge", "RUN"]])
def test_a_closed_pipe_ends_quietly(recorded: tuple[Path, str], args: list[str]) -> None:
    db, run_id = recorded
    got = _to_closed_pipe("--db", str(db), *[run_id if a == "RUN" else a for a in args])
    assert got.returncode in (0, 141) and got.stderr == "", got.stderr


def test_export_without_a_folder_goes_to_the_exports_folder(recorded: tuple[Path, str], tmp_path: Path,
                                                            capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    db, run_id = recorded
    monkeypatch.chdir(tmp_path)  # the checkout the user stands in gets nothing
    assert main(["--db", str(db), "export", run_id]) == 0
    written = Path(capsys.readouterr().out.strip())
    assert written.is_absolute() and written.is_relative_to(exports_dir()) and (written / "transcript.jsonl").is_file()
    assert list(tmp_path.iterdir()) == []
    # without ARENA_TUI_EXPORTS: the user's Documents folder
    monkeypatch.delenv("ARENA_TUI_EXPORTS")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    assert exports_dir() == (tmp_path / "home" / "Documents" / "arena-tui").resolve()


def test_synthesize_writes_to_the_overlay_not_the_benchmark(shared_data: Path, tmp_path: Path, capsys,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    shutil.copytree(shared_data / "event_bench", data / "event_bench")  # writable, still not to be written
    before = sorted(p.name for p in (data / "event_bench").rglob("*"))
    overlay = Path(os.environ["ARENA_TUI_AUDIO_DIR"]) / "event_bench"
    assert main(["synthesize", "event_bench", "--data", str(data), "--turns", "5"]) == 0
    out = capsys.readouterr().out
    assert f"event_bench: writing to {overlay.resolve()}/audio" in out
    assert f"to {overlay.resolve()}/audio" in out.splitlines()[-1]
    assert (overlay / "audio" / "turn_005.wav").is_file()
    assert sorted(p.name for p in (data / "event_bench").rglob("*")) == before
    # asked for explicitly: there
    assert main(["synthesize", "event_bench", "--data", str(data), "--turns", "6", "--out", str(data / "event_bench")]) == 0
    assert (data / "event_bench" / "audio" / "turn_006.wav").is_file()


def test_bootstrap_keeps_pip_chatter_out_of_sight_unless_it_fails(tmp_path: Path) -> None:
    """A first launch shows one line about installing, not setuptools' editable-install warning;
    a failed install shows pip's whole output and says setup failed."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "scripts" / "bootstrap.sh", repo / "scripts")
    shutil.copy(REPO_ROOT / "pyproject.toml", repo)
    venv_python = repo / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    fail = tmp_path / "fail"
    venv_python.write_text(
        '#!/bin/sh\nif [ "$1" = "-m" ]; then echo "BuildBackendWarning: Editable installation." >&2; '
        f'[ -e {fail} ] && {{ echo "ERROR: no matching distribution" >&2; exit 1; }}; exit 0; fi\nexec {sys.executable} "$@"\n')
    venv_python.chmod(0o755)
    got = subprocess.run(["bash", str(repo / "scripts" / "bootstrap.sh")], capture_output=True, text=True)
    assert got.returncode == 0 and "Editable installation" not in got.stderr + got.stdout, got.stderr
    assert "installing arena-tui" in got.stderr
    fail.write_text("")
    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text() + "\n# changed\n")
    got = subprocess.run(["bash", str(repo / "scripts" / "bootstrap.sh")], capture_output=True, text=True)
    assert got.returncode == 1 and "no matching distribution" in got.stderr and "setup failed" in got.stderr


def test_bootstrap_installs_once_per_pyproject(tmp_path: Path) -> None:
    """scripts/bootstrap.sh (and so demo.sh) runs pip only when pyproject.toml changed. The venv's
    python here is a stand-in that logs pip calls instead of installing."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "scripts" / "bootstrap.sh", repo / "scripts")
    shutil.copy(REPO_ROOT / "pyproject.toml", repo)
    log = tmp_path / "pip.log"
    venv_python = repo / ".venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text(f'#!/bin/sh\nif [ "$1" = "-m" ]; then echo "$@" >> {log}; exit 0; fi\nexec {sys.executable} "$@"\n')
    venv_python.chmod(0o755)

    def bootstrap(*extra: str) -> list[str]:
        subprocess.run(["bash", str(repo / "scripts" / "bootstrap.sh"), *extra], check=True, capture_output=True)
        calls = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        return calls

    assert any("install -q -e ." in c for c in bootstrap())
    assert bootstrap() == []  # nothing changed: no pip at all
    assert any(".[test]" in c for c in bootstrap("test"))
    assert bootstrap() == [] and bootstrap("test") == []  # the test install covers the base one
    with (repo / "pyproject.toml").open("a") as f:
        f.write("\n# changed\n")
    assert any("install -q -e ." in c for c in bootstrap())
