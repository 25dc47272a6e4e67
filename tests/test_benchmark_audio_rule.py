"""One rule for missing audio, said the same by `arena-tui benchmarks` and `arena-tui run`.

A benchmark that ships audio (a recorded WAV is there, a turn names its own path, or its audio/
folder holds WAVs) and lacks a turn's WAV is BROKEN: synthesising would replace real recordings,
or hide a wrong path. Only one that ships none (five of the six shared copies) is "needs audio".
Over a set of folders, `benchmarks` lists as BROKEN exactly what `run` refuses for its data (with
the same problem lines), as "needs audio" exactly what it refuses for lack of audio (with the same
hint), and as ready what it runs.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from .py_layouts import DEMO


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "turns.jsonl").read_text().splitlines() if line.strip()]


def _write_rows(folder: Path, rows: list[dict]) -> None:
    (folder / "turns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _recorded(folder: Path) -> None:
    (folder / "audio" / "sources.json").unlink()  # the demo's WAVs now count as recordings


def _wrong_paths(folder: Path) -> None:
    """The issue's hand conversion of the original eval: its turns' stale `turns_audio/` paths."""
    _write_rows(folder, [{**r, "audio_file": f"turns_audio/turn_{r['turn_index']:03d}.wav"} for r in _rows(folder)])
    shutil.rmtree(folder / "audio")


def _misnamed(folder: Path) -> None:
    _recorded(folder)
    for wav in (folder / "audio").glob("turn_*.wav"):
        wav.rename(wav.with_name(wav.name.replace("turn_", "take_")))


def _one_missing(folder: Path) -> None:
    _recorded(folder)
    (folder / "audio" / "turn_002.wav").unlink()


def _synth_gap(folder: Path) -> None:
    (folder / "audio" / "turn_002.wav").unlink()  # synthesised audio with a gap: synthesise the rest


def _ships_none(folder: Path) -> None:
    shutil.rmtree(folder / "audio")


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "ready": (lambda f: None, "ready"),
    "ships_none": (_ships_none, "needs audio"),
    "synth_gap": (_synth_gap, "needs audio"),
    "wrong_paths": (_wrong_paths, "BROKEN"),
    "misnamed_wavs": (_misnamed, "BROKEN"),
    "one_missing": (_one_missing, "BROKEN"),
}


def _arena(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("arena-tui")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audio_rule")
    for name, (build, _) in CASES.items():
        shutil.copytree(DEMO, root / name)
        for p in [root / name, *(root / name).rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        build(root / name)
    return root


@pytest.fixture(scope="module")
def listing(data: Path) -> subprocess.CompletedProcess:
    return _arena(["benchmarks", "--data", str(data)], data.parent)


@pytest.mark.parametrize("case", list(CASES))
def test_benchmarks_and_run_agree(case: str, data: Path, listing: subprocess.CompletedProcess, tmp_path: Path) -> None:
    expected = CASES[case][1]
    row = next(ln for ln in listing.stdout.splitlines() if ln.split("  ")[0] == case)
    status = row.split("  ")[-1].strip()
    assert status.startswith(expected), row
    errors = [ln.removeprefix("error: ") for ln in listing.stderr.splitlines() if ln.startswith(f"error: {case}: ")]
    got = _arena(["--db", str(tmp_path / "runs.db"), "run", case, "--data", str(data), "--model", "sim",
                  "--speed", "20", "--turns", "0-2", "--headless", "--judge", "none"], tmp_path)
    assert "Traceback" not in got.stderr, got.stderr
    if expected == "ready":
        assert got.returncode == 0 and not errors, got.stdout[-2000:] + got.stderr
        assert "turns 3/3 done: ok 3" in got.stdout, got.stdout[-2000:]
        return
    assert got.returncode == 2 and not (tmp_path / "runs.db").exists(), got.stdout + got.stderr  # nothing recorded
    if expected == "BROKEN":
        assert errors and all("WAV missing" in e for e in errors), errors
        assert all(e.split(": ", 1)[1] in got.stderr for e in errors), (errors, got.stderr)  # the same problems
        assert "synthesize" not in row + got.stderr  # never: it would replace the recordings
    else:
        assert not errors
        hint = status.removeprefix("needs audio: ")
        assert re.fullmatch(rf"arena-tui: {case}: no audio for turn\(s\) [0-9, ]+: it ships none \({re.escape(hint)}\)",
                            got.stderr.strip()), got.stderr
