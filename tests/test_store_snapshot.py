"""Runs carry their benchmark: judged, re-judged and exported without the data folder, anywhere."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from arena_tui import cli
from arena_tui.spine.events import RunEnded, RunStarted
from arena_tui.judge.locate import benchmark_of_run
from arena_tui.store import Store
from benchmarks.registry import load_benchmark
from arena_tui.spine.benchmark import SNAPSHOT_FIELDS, Benchmark


@pytest.fixture
def conv(shared_data: Path) -> Benchmark:
    return load_benchmark("conversation_bench", shared_data)


@pytest.fixture
def no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hf_home: Path) -> Path:
    """No data folder, an empty Hugging Face cache, and a working folder with no benchmarks in it."""
    monkeypatch.delenv("ARENA_TUI_DATA", raising=False)
    monkeypatch.delenv("ARENA_TUI_DB", raising=False)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def started(run_id: str, bench: Benchmark | None) -> RunStarted:
    return RunStarted(run_id=run_id, t_ms=0, benchmark="conversation_bench", model="m", provider="p",
                      turn_indices=[0], benchmark_snapshot=bench.snapshot() if bench else None)  # fmt: skip


async def test_one_copy_per_content_shared_by_repeated_runs(tmp_path: Path, conv: Benchmark) -> None:
    edited = conv.model_copy(deep=True)
    edited.turns[0].golden_text += " (edited)"
    path = tmp_path / "runs.db"
    async with await Store.open(path) as store:
        for run_id, bench in (("r1", conv), ("r2", conv), ("r3", edited), ("old", None)):
            store.submit(started(run_id, bench))
            store.submit(RunEnded(run_id=run_id, t_ms=1, status="completed"))
        await store.flush()
        got = await store.stored_benchmark("r1")
        assert got is not None and got.source == "stored" and got.root is None
        assert got.model_dump(include=SNAPSHOT_FIELDS) == conv.model_dump(include=SNAPSHOT_FIELDS)
        assert (await store.stored_benchmark("r3")).turns[0].golden_text.endswith("(edited)")
        assert await store.stored_benchmark("old") is None
        assert (await store.info()).counts["benchmarks"] == 2
        db = sqlite3.connect(path)
        shas = dict(db.execute("SELECT run_id, benchmark_sha256 FROM runs").fetchall())
        assert shas["r1"] == shas["r2"] != shas["r3"] and shas["old"] is None
        # the event log keeps run_started small: the snapshot lives once, in `benchmarks`
        (payload,) = db.execute("SELECT payload FROM events WHERE run_id='r1' AND kind='run_started'").fetchone()
        assert conv.system_prompt[:200] not in payload and "benchmark_snapshot" not in payload
        assert await store.delete_run("r1")
        assert (await store.info()).counts["benchmarks"] == 2  # r2 still uses it
        assert await store.delete_run("r2")
        assert (await store.info()).counts["benchmarks"] == 1
        assert (await store.stored_benchmark("r3")) is not None


async def test_a_secret_inside_a_benchmark_never_reaches_the_file(tmp_path: Path, conv: Benchmark) -> None:
    leaky = conv.model_copy(update={"system_prompt": conv.system_prompt + "\nkey: sk-abcdefghijklmnopqrstuvwx"})
    path = tmp_path / "runs.db"
    async with await Store.open(path) as store:
        store.submit(started("r", leaky))
        await store.flush()
        assert "sk-abcdefghijklmnopqrstuvwx" not in (await store.stored_benchmark("r")).system_prompt
    assert b"sk-abcdefghijklmnopqrstuvwx" not in path.read_bytes()


async def test_runs_from_before_snapshots_fall_back_to_the_data_folder(
    tmp_path: Path, shared_data: Path, no_data: Path
) -> None:
    async with await Store.open(tmp_path / "runs.db") as store:
        store.submit(started("old", None))
        await store.flush()
        assert (await benchmark_of_run(store, "old", shared_data)).source == "local"
        with pytest.raises(LookupError, match="conversation_bench.*pass --data"):
            await benchmark_of_run(store, "old")


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_recorded_run_needs_no_data_folder_to_judge_or_export(
    tmp_path: Path, shared_data: Path, no_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    shutil.copytree(shared_data / "conversation_bench", data / "conversation_bench")
    db = str(tmp_path / "runs.db")
    code, out, err = _cli(capsys, "--db", db, "--data", str(data), "run", "conversation_bench", "--model", "sim",
                          "--speed", "10", "--turns", "0-1", "--headless")  # fmt: skip  (10x: at 20x a busy CI machine lost pace on its turns, which are then judged by nobody)
    assert code == 0, out + err
    shutil.rmtree(data)  # the benchmark's folder is gone: only the database is left
    with closing(sqlite3.connect(db)) as conn:
        [run_id] = [r for (r,) in conn.execute("SELECT run_id FROM runs")]

    code, out, err = _cli(capsys, "--db", db, "judge", run_id[:6], "--judge", "heuristic")
    assert code == 0, err
    assert "turn 0 " in out and "turn 1 " in out and "pass --data" not in out + err

    code, out, err = _cli(capsys, "--db", db, "export", run_id, str(tmp_path / "out"))
    assert code == 0, err
    [summary] = Path(out.strip()).glob("*_summary.json")
    doc = json.loads(summary.read_text())
    assert "arena_tui" in doc  # the summary had the benchmark's denominators, not only verdict counts

    # the database file alone, on another machine: judged there too
    other = tmp_path / "other-machine"
    other.mkdir()
    shutil.copy(db, other / "copied.db")
    assert not Path(f"{db}-wal").exists()  # closed cleanly: the file alone holds everything
    code, out, err = _cli(capsys, "--db", str(other / "copied.db"), "judge", run_id, "--judge", "heuristic", "--turn", "1")
    assert code == 0, err
    assert out.startswith("turn 1 r") and "heuristic" in out
