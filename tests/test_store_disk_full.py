"""A full disk never locks the user out of what was recorded.

A disk that fills up while a run records stops the writer mid-checkpoint: the main file is left
shorter than its own header says (page 1 was copied back, the later pages found no room) while
the write-ahead log still holds every committed page. SQLite reads such a file whole; our header
check once refused it as "truncated (102400 bytes; its header says 178 pages)" for every command,
even with room again."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from arena_tui.spine.events import RunEnded
from arena_tui.store import Store, StoreOpenError
from arena_tui.store.wal import committed_pages, wal_of
from tests.test_store_trust import arena, cli_lines, fresh_db

CHILD = Path(__file__).with_name("store_child.py")
RUNS = 300
KEEP_BYTES = 102_400  # the main file's length when the disk filled up (at least what it held before the run)


def _runs_only_in_the_wal(folder: Path) -> tuple[Path, Path]:
    """(the main file as a disk-full checkpoint leaves it, its whole write-ahead log): `RUNS` runs
    committed into the log, a checkpoint that wrote the header and the first `KEEP_BYTES` only."""
    work = fresh_db(folder / "work.db")
    # a checkpoint writes pages into a file that already holds the schema's: the disk fills up past them
    keep = max(KEEP_BYTES, work.stat().st_size)
    with closing(sqlite3.connect(work, isolation_level=None)) as c:
        c.execute("PRAGMA wal_autocheckpoint=0")  # every page stays in the log
        c.execute("BEGIN")
        for i in range(RUNS):
            c.execute("INSERT INTO runs(run_id, benchmark, model, config, started_at) VALUES (?, 'grocery_bench', 'm', ?, "
                      "'2026-01-01T10:00:00+00:00')", (f"r{i:03d}", "{" + f'"note": "{"x" * 3000}"' + "}"))
        c.execute("COMMIT")
        wal = folder / "whole.wal"
        shutil.copy(wal_of(work), wal)
        c.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the main file now has every page, and its header says so
        main = folder / "main.db"
        main.write_bytes(work.read_bytes()[:keep])
    return main, wal


def _place(main: Path, wal: Path | None, db: Path) -> Path:
    db.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(main, db)
    if wal is not None:
        shutil.copy(wal, wal_of(db))
    return db


@pytest.fixture(scope="module")
def left_by_a_full_disk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _runs_only_in_the_wal(tmp_path_factory.mktemp("disk-full"))


def _header_pages(db: Path) -> int:
    return int.from_bytes(db.read_bytes()[28:32], "big")


async def test_a_main_file_short_of_its_header_with_the_rest_in_its_wal_opens_whole(
    left_by_a_full_disk: tuple[Path, Path], tmp_path: Path
) -> None:
    main, wal = left_by_a_full_disk
    db = _place(main, wal, tmp_path / "x.db")
    assert KEEP_BYTES <= db.stat().st_size < _header_pages(db) * 4096  # what the old check called truncated
    async with await Store.open(db) as store:
        runs = await store.list_runs()
        assert sorted(r.run_id for r in runs) == [f"r{i:03d}" for i in range(RUNS)]
    with closing(sqlite3.connect(db)) as c:  # with room, the close's checkpoint wrote the pages back
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.stat().st_size >= _header_pages(db) * 4096


def test_every_command_reads_it(left_by_a_full_disk: tuple[Path, Path], tmp_path: Path) -> None:
    main, wal = left_by_a_full_disk
    db = _place(main, wal, tmp_path / "x.db")
    p = arena("--db", str(db), "runs", timeout=60)
    assert p.returncode == 0, p.stderr
    assert "r299" in p.stdout and "truncated" not in p.stderr


@pytest.mark.parametrize("log", ["none", "cut before its commit", "another generation"])
async def test_a_main_file_short_of_its_header_is_still_refused_when_its_wal_lacks_the_rest(
    left_by_a_full_disk: tuple[Path, Path], tmp_path: Path, log: str
) -> None:
    main, wal = left_by_a_full_disk
    db = _place(main, None, tmp_path / "x.db")
    whole = wal.read_bytes()
    if log == "cut before its commit":  # the header and a first frame, not the commit frame
        wal_of(db).write_bytes(whole[: 32 + 2 * (24 + 4096)])
    elif log == "another generation":  # a log restarted since (new salts): its frames are not these
        wal_of(db).write_bytes(whole[:16] + bytes(8) + whole[24:32] + whole[32:])
    assert committed_pages(wal_of(db), 4096) is None
    before = db.read_bytes()
    with pytest.raises(StoreOpenError, match="truncated"):
        await Store.open(db)
    assert db.read_bytes() == before


def _mount_small_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    got = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return got.returncode == 0


def test_a_disk_full_stop_locks_nobody_out_full_or_with_room_again(tmp_path: Path) -> None:
    disk = tmp_path / "small-disk"
    if shutil.which("mount") is None or not _mount_small_tmpfs(disk, "400k"):
        pytest.skip("cannot mount a small tmpfs here (needs root); the WAL case above covers the check")
    try:
        db = disk / "runs.db"
        child = subprocess.run([sys.executable, str(CHILD), str(db), "full", "--batch", "50"], capture_output=True,
                               text=True, timeout=120)
        assert child.returncode != 0 and "disk is full" in child.stderr, child.stderr[-2000:]
        assert db.stat().st_size < _header_pages(db) * 4096  # the state that locked users out
        for room in ("still full", "room again"):
            if room == "room again":
                subprocess.run(["mount", "-o", "remount,size=20m", str(disk)], check=True)
            p = arena("--db", str(db), "runs", timeout=60)
            assert p.returncode == 0 and "full" in p.stdout and not cli_lines(p.stderr), (room, p.stdout, p.stderr)

        async def record_more() -> None:
            async with await Store.open(db) as store:
                await store.mark_interrupted_stale()
                assert [r.run_id for r in await store.list_runs()] == ["full"]

        asyncio.run(record_more())
        with closing(sqlite3.connect(db)) as c:
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert c.execute("SELECT COUNT(*) FROM events WHERE run_id='full'").fetchone()[0] > 0
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_while_the_disk_is_still_full_every_reader_says_what_was_recorded(tmp_path: Path) -> None:
    """Issue 41 item 7: with the disk still full, `search` died with an `OperationalError` traceback
    (its index could not be written), `runs` showed a run whose recorder was gone as `running` (its
    end could not be written) and `report all` refused it as "still recording". Each now reads what
    is there: search from memory, the dead recorder's run interrupted, the report with it."""
    from tests.counting_runs import ended, judged, record, started

    disk = tmp_path / "small-disk"
    if shutil.which("mount") is None or not _mount_small_tmpfs(disk, "600k"):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        db = disk / "runs.db"
        done = [started("done", [0, 1]), ended("done", 0), judged("done", 0), ended("done", 1), judged("done", 1),
                RunEnded(run_id="done", t_ms=3000.0, status="completed")]
        asyncio.run(record(db, done))
        # a recorder that fills the disk, and is gone: its run left `running`, its end never written
        child = subprocess.run([sys.executable, str(CHILD), str(db), "dead", "--batch", "50"], capture_output=True,
                               text=True, timeout=120)
        assert child.returncode != 0 and "disk is full" in child.stderr, child.stderr[-2000:]
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as c:
            assert c.execute("SELECT status FROM runs WHERE run_id='dead'").fetchone() == ("running",)
        runs = arena("--db", str(db), "runs", timeout=60)
        assert runs.returncode == 0 and not cli_lines(runs.stderr), runs.stderr
        [dead] = [ln for ln in runs.stdout.splitlines() if ln.startswith("dead ")]
        assert " interrupted " in dead and "running" not in dead, runs.stdout
        found = arena("--db", str(db), "search", "reply", timeout=60)
        assert found.returncode == 0 and "Traceback" not in found.stderr and not cli_lines(found.stderr), found.stderr
        assert "2 turns in 1 run (searched 2 runs)" in found.stdout, found.stdout
        report = arena("--db", str(db), "report", "all", str(tmp_path / "report"), timeout=120)
        said = report.stdout + report.stderr
        assert report.returncode == 0 and "still recording" not in said and "1 runs, 1 models" in said, said
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
