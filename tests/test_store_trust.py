"""A run says `recorded` only when it was: unwritable and unusable files stop run/judge with one
line and a non-zero exit, signals interrupt cleanly, a turn shown as done survives kill -9, and
credentials inside --base-url never reach the file, the logs or an export."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest

from arena_tui.cli import main
from arena_tui.spine.events import Level, RunStarted, SessionOpened
from arena_tui.judge import HeuristicJudge
from arena_tui.store import Store, StoreOpenError, StoreWriteError
from arena_tui.store.schema import migrate
from arena_tui.store.scrub import scrub_text
from benchmarks.registry import load_benchmark
from tests.fakes.openai_chat import FakeOpenAI
from tests.test_judge_worker import RUN, record_run

ARENA = [str(Path(sys.executable).with_name("arena-tui"))]  # the console script, as a user runs it
PROGRESS = re.compile(r"^\[[#.]+\] (\d+)/(\d+)  turn (-?\d+): ")


def damage_tables(db: Path, *tables: str) -> None:
    """Overwrite the root pages of `tables` with garbage; the header and the schema stay intact,
    so the file opens and reads elsewhere work, but a write into those tables is refused."""
    with closing(sqlite3.connect(db)) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = c.execute("PRAGMA page_size").fetchone()[0]
        roots = [c.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (t,)).fetchone()[0] for t in tables]
    with db.open("r+b") as f:
        for root in roots:
            f.seek((root - 1) * page)
            f.write(b"\xff" * page)


def fresh_db(path: Path) -> Path:
    """An empty database of the current schema, as `Store.open` leaves it."""
    with closing(sqlite3.connect(path, isolation_level=None)) as c:
        c.execute("PRAGMA journal_mode=WAL")
        migrate(c, str(path))
    return path


def cli_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def arena(*argv: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *argv], capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL, **kw,
    )  # fmt: skip


# --- files that refuse writes ----------------------------------------------------------------------


async def test_a_file_that_refuses_writes_fails_the_writer_once(tmp_path: Path) -> None:
    """Damaged pages ("database disk image is malformed") are one typed failure, not one per event."""
    db = fresh_db(tmp_path / "a.db")
    damage_tables(db, "runs", "events")
    store = await Store.open(db)
    acks = store.committed.subscribe()
    for i in range(237):
        store.submit(Level(run_id="r", t_ms=i + 1, source="bot", rms_dbfs=-9, peak_dbfs=-3))
    with pytest.raises(StoreWriteError, match=r"a\.db: the database cannot be written \(database disk image is malformed"):
        await store.flush()
    assert len(store.errors) == 1 and store.write_failure is not None
    assert acks.drain() == []  # nothing reported as committed
    with pytest.raises(StoreWriteError):  # a caller that goes on is told at once
        store.submit(Level(run_id="r", t_ms=999, source="bot", rms_dbfs=-9, peak_dbfs=-3))
    await store.close()


async def test_committed_events_are_acknowledged_after_their_transaction(tmp_path: Path) -> None:
    async with await Store.open(tmp_path / "c.db") as store:
        acks = store.committed.subscribe()
        store.submit(RunStarted(run_id="r", t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0]))
        assert acks.drain() == []
        await store.flush()
        assert [e.kind for e in acks.drain()] == ["run_started"]
        assert [e.kind for _, e in await store.events("r")] == ["run_started"]


def _make_read_only(path: Path) -> None:
    if os.geteuid() != 0:
        path.chmod(0o444)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
        pytest.skip("running as root without chattr: a file cannot be made read-only here")


def _make_writable(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=False)
    path.chmod(0o644)


def test_run_into_a_read_only_database_stops_with_one_line(tmp_path: Path) -> None:
    db = fresh_db(tmp_path / "ro.db")
    _make_read_only(db)
    try:
        p = arena("--db", str(db), "run", "demo_bench", "--model", "sim", "--speed", "20", "--headless")
    finally:
        _make_writable(db)
    assert p.returncode == 2, p.stdout + p.stderr
    err = cli_lines(p.stderr)
    assert len(err) == 1 and "ro.db" in err[0] and "readonly" in err[0], p.stderr
    assert "recorded" not in p.stdout and not PROGRESS.search(p.stdout), p.stdout


def test_run_into_a_damaged_database_stops_with_one_line(tmp_path: Path) -> None:
    db = fresh_db(tmp_path / "d.db")
    damage_tables(db, "runs", "events")
    p = arena("--db", str(db), "run", "demo_bench", "--model", "sim", "--speed", "20", "--headless")
    assert p.returncode == 2, p.stdout + p.stderr
    err = cli_lines(p.stderr)
    assert len(err) == 1 and "d.db: the database cannot be written" in err[0], p.stderr
    assert "malformed" in err[0] and "Traceback" not in p.stderr
    assert "recorded" not in p.stdout and not PROGRESS.search(p.stdout), p.stdout


@pytest.fixture(scope="module")
def conv(shared_data: Path):
    return load_benchmark(shared_data / "conversation_bench")


@pytest.fixture
def no_judge_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in ("OPENAI_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_PROFILE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(env, raising=False)


def test_judge_into_a_damaged_database_stops_before_printing_scores(
    conv, tmp_path, shared_data, capsys, no_judge_keys
) -> None:
    db = tmp_path / "j.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    with closing(sqlite3.connect(db)) as c:
        before = c.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    damage_tables(db, "judgement_scores")  # reads still work; recording a judgement does not
    code = main(["--db", str(db), "--data", str(shared_data), "judge", RUN, "--judge", "heuristic"])
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert len(cli_lines(err)) == 1 and "j.db: the database cannot be written" in err, err
    assert " r2 " not in out and "tool_use_correct" not in out, out  # no scores for what was not stored
    with closing(sqlite3.connect(db)) as c:
        assert c.execute("SELECT COUNT(*) FROM judgements").fetchone()[0] == before


def test_judge_exits_non_zero_when_a_turn_could_not_be_judged(
    conv, tmp_path, shared_data, capsys, no_judge_keys, monkeypatch
) -> None:
    db = tmp_path / "e.db"
    asyncio.run(record_run(conv, db, HeuristicJudge()))
    server = FakeOpenAI().start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge-0123456789abcdef")
        wrong = server.base_url.replace("/v1", "/no-such-api")  # every request: 404, a permanent error
        code = main(["--db", str(db), "--data", str(shared_data), "judge", RUN, "--turn", "9", "--judge", "openai",
                     "--judge-base-url", wrong])  # fmt: skip
    finally:
        server.stop()
    out = capsys.readouterr().out
    assert code == 1, out
    assert re.search(r"^turn 9: .+", out, re.M), out  # the summary says which turn
    monkeypatch.delenv("OPENAI_API_KEY")
    assert main(["--db", str(db), "--data", str(shared_data), "judge", RUN, "--turn", "9", "--judge", "heuristic"]) == 0


# --- files that cannot be opened ---------------------------------------------------------------------


def _bad_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    good = tmp / "good.db"

    async def fill() -> None:
        async with await Store.open(good) as s:
            for i in range(200):
                s.submit(RunStarted(run_id=f"r{i}", t_ms=0, benchmark="b" * 300, model="m", provider="p", turn_indices=[0]))

    asyncio.run(fill())
    text = tmp / "notes.db"
    text.write_text("just some notes\n" * 50)
    truncated = tmp / "cut.db"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    newer = tmp / "newer.db"
    shutil.copy(good, newer)
    with closing(sqlite3.connect(newer)) as c:
        c.execute("PRAGMA user_version=99")
    other = tmp / "other.db"
    with closing(sqlite3.connect(other)) as c:
        c.execute("CREATE TABLE contacts(name TEXT)")
        c.execute("INSERT INTO contacts VALUES ('ada')")
        c.commit()
    folder = tmp / "folder.db"
    folder.mkdir()
    blocker = tmp / "blocker"
    blocker.write_text("a file where the database's folder should be")
    return {
        "text file": (text, "not an arena-tui database"),
        "truncated": (truncated, "truncated"),
        "newer schema": (newer, "schema version 99 is newer"),
        "not ours": (other, "not an arena-tui database (it holds other tables: contacts)"),
        "directory": (folder, "is a directory"),
        "folder is a file": (blocker / "x.db", "is a file, not a folder"),
    }


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    return _bad_files(tmp_path_factory.mktemp("bad-dbs"))


CASES = ["text file", "truncated", "newer schema", "not ours", "directory", "folder is a file"]


@pytest.mark.parametrize("case", CASES)
async def test_open_refuses_a_bad_file_by_name(bad_files, case: str) -> None:
    path, why = bad_files[case]
    with pytest.raises(StoreOpenError) as e:
        await Store.open(path)
    assert str(e.value).startswith(f"{path}: ") and why in str(e.value)
    assert e.value.path == path and why in e.value.reason


@pytest.mark.parametrize("case", CASES)
def test_run_and_the_tui_refuse_a_bad_file_in_one_line(bad_files, case: str) -> None:
    path, why = bad_files[case]
    before = path.read_bytes() if path.is_file() else None
    for argv in (["run", "demo_bench", "--model", "sim", "--speed", "20", "--headless"], []):  # [] = the TUI
        p = arena("--db", str(path), *argv, timeout=60)
        err = cli_lines(p.stderr)
        assert p.returncode == 2 and len(err) == 1, (argv, p.stdout, p.stderr)
        assert str(path) in err[0] and why in err[0] and "Traceback" not in p.stderr
    if before is not None:
        assert path.read_bytes() == before  # refused, not "repaired"


def test_runs_leaves_a_database_that_is_not_ours_alone(bad_files, capsys) -> None:
    path, _ = bad_files["not ours"]
    assert main(["--db", str(path), "runs"]) == 2
    assert "not an arena-tui database" in capsys.readouterr().err
    with closing(sqlite3.connect(path)) as c:
        assert [r[0] for r in c.execute("SELECT name FROM sqlite_master")] == ["contacts"]


# --- signals and kill -9 -----------------------------------------------------------------------------


def _start_run(db: Path, speed: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*ARENA, "--db", str(db), "run", "demo_bench", "--model", "sim",
         "--speed", speed, "--headless"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, bufsize=1,
    )  # fmt: skip


def _next_progress(proc: subprocess.Popen[str]) -> re.Match[str]:
    assert proc.stdout is not None
    for line in proc.stdout:
        m = PROGRESS.match(line)
        if m:
            return m
    proc.wait(30)
    raise AssertionError(f"the run ended without a progress line: {proc.stderr.read() if proc.stderr else ''}")


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_interrupt_a_headless_run_like_ctrl_c(tmp_path: Path, sig: signal.Signals, status: int) -> None:
    db = tmp_path / "s.db"
    proc = _start_run(db, "2")
    try:
        _next_progress(proc)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, (out, err)
    assert "run interrupted" in out and "recorded in" in out, out  # the summary is printed
    with closing(sqlite3.connect(db)) as c:
        assert c.execute("SELECT status FROM runs").fetchall() == [("interrupted",)]


def test_a_turn_shown_as_done_survives_kill_9(tmp_path: Path) -> None:
    """The progress line of turn N follows the commit of turn N: kill -9 right after the line
    appears, and turn N is in the database, every time."""
    trials, mid_run = 10, 0
    for trial in range(trials):
        db = tmp_path / f"k{trial}.db"
        proc = _start_run(db, "20")
        try:
            for _ in range(trial % 3):  # kill after the 1st, 2nd or 3rd progress line
                _next_progress(proc)
            m = _next_progress(proc)
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        shown = int(m.group(3))
        with closing(sqlite3.connect(db)) as c:
            stored = {r[0] for r in c.execute("SELECT turn_index FROM turns")}
            (status,) = c.execute("SELECT status FROM runs").fetchone()
        mid_run += status == "running"
        assert shown in stored, f"trial {trial}: turn {shown} was shown as done, stored turns: {sorted(stored)}"
    assert mid_run >= trials // 2  # the kill landed while the run was still going


# --- credentials inside --base-url ------------------------------------------------------------------


class _SimulatorThread:
    """The local simulator on its own loop, so the CLI can run (and call asyncio.run) in this thread."""

    def __init__(self, bench) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.bench = bench

    def __enter__(self) -> str:
        from runners.simulator import SimulatorServer

        self.thread.start()

        async def start() -> str:
            self.sim = SimulatorServer(self.bench)
            return await self.sim.start()

        return asyncio.run_coroutine_threadsafe(start(), self.loop).result(30)

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.sim.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_url_scrubbing_covers_userinfo_and_secret_parameters() -> None:
    url = "wss://alice:pa55word@host:8443/v1/realtime?model=m&api_key=abc123&key=k9&x=1"
    assert scrub_text(url) == "wss://[REDACTED]@host:8443/v1/realtime?model=m&api_key=[REDACTED]&key=[REDACTED]&x=1"
    assert scrub_text("https://tok123@example.com/p") == "https://[REDACTED]@example.com/p"
    assert scrub_text("mail bob@example.com at http://example.com/a@b") == "mail bob@example.com at http://example.com/a@b"


def test_credentials_inside_base_url_reach_neither_the_file_nor_logs_nor_export(
    conv, tmp_path, shared_data, capsys, monkeypatch
) -> None:
    secrets = ["SECRET-two-apikey", "SECRET-three-key"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-0123456789abcdef")
    db = tmp_path / "u.db"
    with _SimulatorThread(conv) as url:
        # (user:pass@ would make the client send a second Authorization header, which the
        # simulator refuses: that form is covered at the store below)
        creds = url + f"?api_key={secrets[0]}&key={secrets[1]}"
        main(["--db", str(db), "--data", str(shared_data), "run", "conversation_bench", "--model", "gpt-realtime",
              "--base-url", creds, "--turns", "12", "--headless", "-v"])  # fmt: skip
    out, err = capsys.readouterr()
    with closing(sqlite3.connect(db)) as c:
        (run_id, config) = c.execute("SELECT run_id, config FROM runs").fetchone()
    assert "api_key=[REDACTED]&key=[REDACTED]" in config, config
    assert main(["--db", str(db), "export", run_id, str(tmp_path / "export")]) == 0
    exported = out + err + capsys.readouterr().out
    assert "DEBUG" in err  # the whole debug log is scanned below
    files = [f for f in tmp_path.rglob("*") if f.is_file()]
    assert any(f.suffix == ".jsonl" for f in files)
    for secret in secrets:
        assert secret not in exported, secret
        for f in files:
            assert secret.encode() not in f.read_bytes(), (secret, f)
    assert os.environ["OPENAI_API_KEY"] not in exported


async def test_userinfo_in_a_recorded_url_never_reaches_the_file(tmp_path: Path) -> None:
    url = "wss://alice:pa55-SECRET-one@example.test/v1/realtime?model=m&token=SECRET-tok"
    async with await Store.open(tmp_path / "v.db") as store:
        store.submit(RunStarted(run_id="r", t_ms=0, benchmark="b", model="m", provider="p", turn_indices=[0],
                                config={"base_url": url, "nested": [{"endpoint": url}]}))  # fmt: skip
        store.submit(SessionOpened(run_id="r", t_ms=1, session=1, detail=f"connected to {url}"))
        await store.flush()
        run = await store.get_run("r")
        events = [e for _, e in await store.events("r")]
    assert run is not None and run.config["base_url"] == "wss://[REDACTED]@example.test/v1/realtime?model=m&token=[REDACTED]"
    assert events[1].detail == "connected to wss://[REDACTED]@example.test/v1/realtime?model=m&token=[REDACTED]"
    for f in tmp_path.iterdir():
        assert b"SECRET" not in f.read_bytes(), f
