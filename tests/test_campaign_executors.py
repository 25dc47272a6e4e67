"""Executors run real runs in real worker processes (local pool, local Ray cluster).

Every run is the engine against the in-process simulator at speed 10 on the built-in demo
benchmark; the coordinator records the re-published events with the real Store, so "one row
per turn" is checked in SQLite. A worker is killed with SIGKILL once its run's first turn has
ended: that job must come back through on_lost, the others must complete, and the lost run is
then resumed in place (same run id, at its first unfinished turn) the way a campaign does it.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from arena_tui.spine.bus import EventBus
from arena_tui.orchestration.executor import Executor, Job, JobOutcome
from arena_tui.orchestration.local import LocalExecutor
from arena_tui.orchestration.orchestrator import continue_cell
from arena_tui.orchestration.ray_cluster import LOCAL_IP, import_ray
from arena_tui.orchestration.ray_executor import RayExecutor
from arena_tui.campaign.snapshot import BenchmarkSnapshot, SnapshotError, snapshot
from arena_tui.orchestration.transport import PCM_PIECE, decode_batch, encode_batch, encode_batch_stepwise
from arena_tui.spine.events import AudioChunk, Level, RunEnded, TurnEnded
from arena_tui.store import Store
from arena_tui.spine.settings import RunSettings
from benchmarks.registry import open_benchmark

from . import processes

TURNS = [0, 1]
CONFIG = RunSettings(model="sim", speed=10.0, turns=TURNS, greeting={"enabled": False})


@pytest.fixture(scope="module")
def demo_snapshot() -> BenchmarkSnapshot:
    return snapshot(open_benchmark("demo_bench"))


class Recorder:
    def __init__(self) -> None:
        self.done: dict[str, JobOutcome] = {}
        self.lost: dict[str, str] = {}

    def on_done(self, job: Job, outcome: JobOutcome) -> None:
        assert job.run_id not in self.done  # (a lost run may come back resumed, under its id)
        self.done[job.run_id] = outcome

    def on_lost(self, job: Job, reason: str) -> None:
        assert job.run_id not in self.done and job.run_id not in self.lost
        self.lost[job.run_id] = reason


async def kill_on_first_turn(bus: EventBus, executor: Executor, run_id: str) -> int:
    """SIGKILL the process running `run_id` as soon as one of its benchmark turns has ended; its pid."""
    sub = bus.subscribe(lambda e: isinstance(e, TurnEnded) and e.run_id == run_id and e.turn_index >= 0)
    async for _ in sub:
        pid = executor.worker_pid(run_id)
        assert pid is not None and pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        sub.close()
        return pid
    raise AssertionError("bus closed before the run ended a turn")


async def resume_lost(store: Store, bus: EventBus, executor: Executor, snap: BenchmarkSnapshot, run_id: str) -> None:
    """What the campaign does with a lost run: end it interrupted, then resume it in place."""
    bus.publish(RunEnded(run_id=run_id, t_ms=0.0, status="interrupted", reason="worker lost"))
    await store.flush()
    again, resume, how = await continue_cell(store, open_benchmark("demo_bench"), run_id)
    assert again == run_id and resume is not None, how
    done = [r["turn_index"] for r in resume["done"]]
    assert resume["from_turn"] in TURNS and done == [t for t in TURNS if t < resume["from_turn"]]
    assert how.startswith(f"resumed at turn {resume['from_turn']}")
    executor.submit(Job(run_id, snap, CONFIG, resume=resume))
    await executor.join()


async def assert_resumed_in_place(store: Store, run_id: str) -> None:
    await assert_one_row_per_turn(store, run_id, complete=True)
    kinds = [ev.kind for _, ev in await store.events(run_id, kinds=("run_started", "run_resumed", "run_ended"))]
    assert kinds == ["run_started", "run_ended", "run_resumed", "run_ended"], kinds


async def assert_one_row_per_turn(store: Store, run_id: str, complete: bool) -> None:
    rows = await store.turn_results(run_id)
    indices = [r.turn_index for r in rows if r.turn_index >= 0]  # the greeting (-1) is not a benchmark turn
    assert len(indices) == len(set(indices)), f"{run_id}: duplicate turn rows {indices}"
    if complete:
        assert sorted(indices) == TURNS
        run = await store.get_run(run_id)
        assert run is not None and run.status == "completed"
    else:
        assert indices and set(indices) <= set(TURNS)


@pytest.mark.parametrize("size", [0, 7, PCM_PIECE, PCM_PIECE + 1, 3 * PCM_PIECE - 2, 1_900_001])
def test_a_batch_crosses_as_each_events_own_json_audio_in_pieces_too(size: int) -> None:
    """A worker's batch is its events' own JSON (what the store's `parse_event` reads back), a
    turn's audio included though its PCM is base64-encoded piece by piece (the worker gives its
    loop back between pieces)."""
    events = [
        AudioChunk(run_id="r", t_ms=1.0, turn_index=3, track="conversation", sample_rate=24000, channels=2,
                   start_ms=2.5, pcm=os.urandom(size)),
        Level(run_id="r", t_ms=2.0, source="bot", rms_dbfs=-20.0, peak_dbfs=-6.0, block_ms=50.0),
    ]
    data = encode_batch(events)
    assert data == ("[" + ",".join(e.model_dump_json() for e in events) + "]").encode()
    assert asyncio.run(encode_batch_stepwise(events)) == data
    assert decode_batch(data) == events


def test_snapshot_carries_the_audio_by_value(tmp_path: Path, demo_snapshot: BenchmarkSnapshot) -> None:
    bench = demo_snapshot.materialize(tmp_path / "scratch")
    original = open_benchmark("demo_bench")
    assert bench.root is not None and bench.root.is_relative_to(tmp_path)
    for turn in original.turns:
        assert bench.audio_path(bench.turn(turn.turn_index)).read_bytes() == original.audio_path(turn).read_bytes()
    assert snapshot(original).key == demo_snapshot.key  # same content, same key (unpacked once per worker)


def test_a_snapshot_with_missing_audio_fails_naming_the_turn_unless_missing_is_allowed(tmp_path: Path) -> None:
    original = open_benchmark("demo_bench")
    root = tmp_path / "bench"
    shutil.copytree(original.root, root)
    bench = original.model_copy(update={"root": root})
    gone = bench.audio_path(bench.turns[1])
    gone.unlink()
    with pytest.raises(SnapshotError, match=f"turn {bench.turns[1].turn_index}: audio file .* not found"):
        snapshot(bench)
    travelled = snapshot(bench, missing_ok=True).materialize(tmp_path / "scratch")  # the monitor's runs
    present = [travelled.has_audio(t) for t in travelled.turns]
    assert present == [bench.has_audio(t) for t in bench.turns] and present[1] is False and all(present[:1])


async def test_local_pool_runs_into_one_store(tmp_path: Path, demo_snapshot: BenchmarkSnapshot) -> None:
    bus, rec = EventBus(), Recorder()
    store = await Store.open(tmp_path / "arena.db")
    recording = store.start_recording(bus)
    seen_pids: dict[str, int] = {}
    pool = LocalExecutor(bus, on_lost=rec.on_lost, on_done=rec.on_done, workers=2, per_worker=2)
    try:
        await pool.start()
        jobs = [Job(f"local-{i}", demo_snapshot, CONFIG) for i in range(3)]
        sub = bus.subscribe(lambda e: isinstance(e, TurnEnded))

        async def note_pids() -> None:
            async for e in sub:
                seen_pids.setdefault(e.run_id, pool.worker_pid(e.run_id))

        watcher = asyncio.create_task(note_pids())
        for job in jobs:
            pool.submit(job)
        await pool.join()
    finally:
        await pool.close()
    bus.close()
    await recording
    await watcher
    assert rec.lost == {}
    assert {k: v.status for k, v in rec.done.items()} == {j.run_id: "finished" for j in jobs}
    assert os.getpid() not in seen_pids.values() and len(set(seen_pids.values())) == 2  # both workers used
    for job in jobs:
        await assert_one_row_per_turn(store, job.run_id, complete=True)
    await store.close()


@pytest.mark.parametrize("warm", [(), ("gpt-realtime",)])
async def test_local_workers_load_the_campaigns_providers_before_they_are_ready(
        demo_snapshot: BenchmarkSnapshot, warm: tuple[str, ...]) -> None:
    """A worker's first session must not import its provider (~0.3 s holding the loop) while other
    workers' sessions pace: the campaign's models are loaded before the worker says it is ready."""
    rec = Recorder()
    pool = LocalExecutor(EventBus(), on_lost=rec.on_lost, on_done=rec.on_done, workers=1, per_worker=1,
                         runner="tests.campaign_runners:loaded_modules", warm=warm)
    try:
        await pool.start()
        pool.submit(Job("warm-0", demo_snapshot, CONFIG))
        await pool.join()
    finally:
        await pool.close()
    assert rec.done["warm-0"].result == {"openai_service": bool(warm)}


async def test_local_worker_killed_mid_run(tmp_path: Path, demo_snapshot: BenchmarkSnapshot) -> None:
    bus, rec = EventBus(), Recorder()
    store = await Store.open(tmp_path / "arena.db")
    recording = store.start_recording(bus)
    pool = LocalExecutor(bus, on_lost=rec.on_lost, on_done=rec.on_done, workers=2, per_worker=1)
    try:
        await pool.start()
        before = set(pool.pids)
        victim, survivor = Job("victim", demo_snapshot, CONFIG), Job("survivor", demo_snapshot, CONFIG)
        killer = asyncio.create_task(kill_on_first_turn(bus, pool, victim.run_id))
        pool.submit(victim)
        pool.submit(survivor)
        await pool.join()
        killed = await killer
        assert set(rec.lost) == {"victim"} and "SIGKILL" in rec.lost["victim"] and str(killed) in rec.lost["victim"]
        assert rec.done["survivor"].status == "finished"
        # the pool replaced the dead worker, and a resumed job runs on it
        await asyncio.wait_for(_until(lambda: len(pool.pids) == 2), 120)
        assert killed not in pool.pids and len(set(pool.pids) - before) == 1
        # ... in the dead one's place on the pacing grid: the pool's phases stay apart (arena_tui.spine.grid)
        assert sorted(w.slot for w in pool._workers) == [0, 1]
        await assert_one_row_per_turn(store, "victim", complete=False)
        await resume_lost(store, bus, pool, demo_snapshot, "victim")
    finally:
        await pool.close()
    bus.close()
    await recording
    assert rec.done["victim"].status == "finished"
    await assert_one_row_per_turn(store, "survivor", complete=True)
    await assert_resumed_in_place(store, "victim")
    await store.close()


async def _until(cond) -> None:
    while not cond():
        await asyncio.sleep(0.05)


def short_tempdir(prefix: str) -> str:
    """A fresh folder short enough for Ray's socket paths (107 bytes with the session's name):
    under TMPDIR when that is short (CI gives the suite a fresh one), else under /tmp."""
    base = tempfile.gettempdir()
    return tempfile.mkdtemp(prefix=prefix, dir=base if len(base) <= 40 else "/tmp")


CHILD_MARK = "ARENA_TUI_TEST_RAY_CHILD"  # set on one CLI child: every process it starts inherits it
RAY_LINE = re.compile(r"\bray\b|raylet|gcs_|worker\.py|token|\(raylet\)", re.IGNORECASE)


def marked_alive(token: str) -> list[processes.Proc]:
    """Processes alive whose environment carries CHILD_MARK=token (the CLI child's and Ray's)."""
    needle = f"{CHILD_MARK}={token}".encode()
    out = []
    for p in processes.all_procs():
        try:
            env = Path(f"/proc/{p.pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in env and p.alive:
            out.append(p)
    return out


def campaign_cli(tmp: Path, home: Path, db: Path, token: str) -> subprocess.CompletedProcess[str]:
    """`campaign run --executor ray` without an address, as a user types it, in a fresh TMPDIR and HOME."""
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_TMPDIR")}
    env.update(TMPDIR=str(tmp), HOME=str(home), ARENA_TUI_DB=str(db), **{CHILD_MARK: token})
    return subprocess.run(
        [sys.executable, "-m", "arena_tui.cli", "campaign", "run", "--executor", "ray", "--bench", "demo_bench",
         "--model", "sim", "--speed", "20", "--turns", "0", "--no-greeting", "--judge", "none"],
        env=env, capture_output=True, text=True, timeout=240, cwd=Path(__file__).resolve().parent.parent)


def ray_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if RAY_LINE.search(ln) and "pipecat" not in ln.lower()]


def test_ray_campaign_starts_its_own_cluster_past_a_stale_address_file_and_leaves_nothing(tmp_path: Path) -> None:
    """`campaign run --executor ray` without an address, on a machine where Ray's default folder
    remembers a cluster that is gone (an earlier `ray start`, a killed test cluster): it starts
    its own one-node cluster, says where start-up went, and completes. Before, ray.init followed
    the file to the dead address and retried for minutes. TMPDIR and HOME are fresh, as on a new
    machine. Afterwards nothing it created is left: no session folder, no `arena-ray-*` scratch,
    no Ray process; the stale file is not ours and stays. Ray's log lines went to our log file,
    none to the terminal."""
    tmp, home, token = Path(short_tempdir("rt")), tmp_path / "home", uuid.uuid4().hex
    home.mkdir()
    try:
        (tmp / "ray").mkdir()
        (tmp / "ray" / "ray_current_cluster").write_text("127.0.0.1:1")  # nothing listens on port 1
        got = campaign_cli(tmp, home, tmp_path / "arena.db", token)
        assert got.returncode == 0, got.stdout + got.stderr
        assert "1/1 cells complete" in got.stdout, got.stdout
        report = [ln for ln in got.stdout.splitlines() if "ray start-up" in ln]
        assert report and "started 127.0.0.1:" in report[0] and "not reused" in report[0], got.stdout
        print(f"\n{report[0]}")
        assert not ray_lines(got.stderr), got.stderr
        logged = (tmp_path / "arena-tui.log").read_text()
        assert "Started a local Ray instance" in logged, logged
        session = re.search(r"session (\S+) \(removed at close\)", logged)
        assert session and Path(session[1]).parent == tmp / "ray", logged  # it ran under this TMPDIR
        assert sorted(p.name for p in (tmp / "ray").iterdir()) == ["ray_current_cluster"]
        assert not list(tmp.glob("arena-ray-*"))
        _, left = processes.wait_gone([p.pid for p in marked_alive(token)], 30)
        assert not left, [str(processes.read(pid)) for pid in left]
    finally:
        processes.kill([p.pid for p in marked_alive(token)])
        shutil.rmtree(tmp, ignore_errors=True)


def test_ray_campaign_reuses_a_running_local_cluster_and_leaves_it_running(tmp_path: Path) -> None:
    """A cluster started beforehand with `ray start --head` on 127.0.0.1 (its address in Ray's
    `ray_current_cluster`): the campaign joins it instead of starting one, and leaves it running
    with its session folder; only our worker scratch goes."""
    tmp, home, token = Path(short_tempdir("rr")), tmp_path / "home", uuid.uuid4().hex
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_TMPDIR")}
    env.update(TMPDIR=str(tmp), HOME=str(home), RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    ray_bin = Path(sys.executable).with_name("ray")
    head = subprocess.Popen([str(ray_bin), "start", "--head", "--block", "--node-ip-address", LOCAL_IP, "--port", "0",
                             "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=Path(__file__).resolve().parent.parent)
    try:
        address_file = tmp / "ray" / "ray_current_cluster"
        address = _wait_for_head(head, address_file)
        got = campaign_cli(tmp, home, tmp_path / "arena.db", token)
        assert got.returncode == 0, got.stdout + got.stderr
        assert "1/1 cells complete" in got.stdout, got.stdout
        report = [ln for ln in got.stdout.splitlines() if "ray start-up" in ln]
        assert report and f"joined {address}" in report[0], got.stdout
        print(f"\n{report[0]}")
        assert not ray_lines(got.stderr), got.stderr
        assert head.poll() is None  # left running
        socket.create_connection((LOCAL_IP, int(address.rpartition(":")[2])), timeout=5).close()
        assert address_file.read_text().strip() == address
        assert [p for p in (tmp / "ray").iterdir() if p.name.startswith("session_2")]  # its files: not ours
        assert not list(tmp.glob("arena-ray-*"))  # our workers' scratch: gone
        _, left = processes.wait_gone([p.pid for p in marked_alive(token)], 30)
        assert not left, [str(processes.read(pid)) for pid in left]  # our actors went with our driver
    finally:
        head.terminate()  # `ray start --block` stops the processes it started
        try:
            head.wait(60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def _wait_for_head(head: subprocess.Popen, address_file: Path) -> str:
    """The head's address once its GCS takes connections (a liveness bound, not a timing check)."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert head.poll() is None, f"ray start exited {head.returncode}"
        if address_file.is_file() and (address := address_file.read_text().strip()):
            try:
                socket.create_connection((LOCAL_IP, int(address.rpartition(":")[2])), timeout=1).close()
                return address
            except OSError:
                pass
        time.sleep(0.2)
    raise AssertionError("ray start --head did not come up within 180 s")


@pytest.fixture(scope="module")
def ray_cluster():
    """Two Ray nodes on 127.0.0.1 started here (no dashboard, no usage stats), torn down after.

    Everything Ray writes goes under one fresh folder: `cluster_utils` also records the head's
    address in Ray's default folder (`$RAY_TMPDIR/ray`, else `$TMPDIR/ray` or /tmp/ray), which a
    fresh machine does not have (FileNotFoundError) and another Ray user on this one owns."""
    saved = dict(os.environ)
    ray = import_ray(local=True)
    from ray.cluster_utils import Cluster

    root = short_tempdir("ray")
    os.environ["RAY_TMPDIR"] = root  # Ray's default folder is now root/ray: the nodes' own temp_dir
    cluster = None
    try:
        cluster = Cluster(initialize_head=True, head_node_args={
            "node_ip_address": LOCAL_IP, "num_cpus": 1, "include_dashboard": False,
            "temp_dir": os.path.join(root, "ray")})
        cluster.add_node(node_ip_address=LOCAL_IP, num_cpus=1)
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        shutil.rmtree(root, ignore_errors=True)
        os.environ.clear()
        os.environ.update(saved)


async def test_ray_runs_into_one_store(tmp_path: Path, demo_snapshot: BenchmarkSnapshot, ray_cluster) -> None:
    import ray

    bus, rec = EventBus(), Recorder()
    store = await Store.open(tmp_path / "arena.db")
    recording = store.start_recording(bus)
    executor = RayExecutor(bus, on_lost=rec.on_lost, on_done=rec.on_done, address=ray_cluster.address)
    jobs = [Job(f"ray-{i}", demo_snapshot, CONFIG) for i in range(3)]
    try:
        await executor.start()
        nodes = ray.nodes()
        assert len(nodes) == 2 and {n["NodeManagerAddress"] for n in nodes} == {LOCAL_IP}
        for job in jobs:
            executor.submit(job)
        await executor.join()
        assert {executor.node_of(j.run_id) for j in jobs} == {LOCAL_IP}
    finally:
        await executor.close()
    bus.close()
    await recording
    assert rec.lost == {}
    assert {k: v.status for k, v in rec.done.items()} == {j.run_id: "finished" for j in jobs}
    for job in jobs:
        await assert_one_row_per_turn(store, job.run_id, complete=True)
    await store.close()


async def test_ray_worker_killed_mid_run(tmp_path: Path, demo_snapshot: BenchmarkSnapshot, ray_cluster) -> None:
    bus, rec = EventBus(), Recorder()
    store = await Store.open(tmp_path / "arena.db")
    recording = store.start_recording(bus)
    executor = RayExecutor(bus, on_lost=rec.on_lost, on_done=rec.on_done, address=ray_cluster.address)
    try:
        await executor.start()
        victim, survivor = Job("victim", demo_snapshot, CONFIG), Job("survivor", demo_snapshot, CONFIG)
        killer = asyncio.create_task(kill_on_first_turn(bus, executor, victim.run_id))
        executor.submit(victim)
        executor.submit(survivor)
        await executor.join()
        killed = await killer
        assert set(rec.lost) == {"victim"} and str(killed) in rec.lost["victim"], rec.lost
        assert rec.done["survivor"].status == "finished"
        await assert_one_row_per_turn(store, "victim", complete=False)
        await resume_lost(store, bus, executor, demo_snapshot, "victim")
    finally:
        await executor.close()
    bus.close()
    await recording
    assert rec.done["victim"].status == "finished"
    await assert_one_row_per_turn(store, "survivor", complete=True)
    await assert_resumed_in_place(store, "victim")
    await store.close()



def test_ray_tasks_end_when_their_coordinator_is_killed(tmp_path: Path, ray_cluster) -> None:
    """kill -9 of a coordinator whose runs are Ray tasks on this cluster: the raylet ends the dead
    driver's task workers (no orphaned sessions on the nodes); measured and printed."""
    script = (
        "import asyncio, sys\n"
        "from arena_tui.orchestration.executor import Job\n"
        "from arena_tui.orchestration.ray_executor import RayExecutor\n"
        "from arena_tui.campaign.snapshot import snapshot\n"
        "from arena_tui.spine.bus import EventBus\n"
        "from arena_tui.spine.settings import RunSettings\n"
        "from benchmarks.registry import open_benchmark\n"
        "async def main():\n"
        "    ex = RayExecutor(EventBus(), on_lost=lambda j, r: None, address=sys.argv[1])\n"
        "    await ex.start()\n"
        "    snap = snapshot(open_benchmark('demo_bench'))\n"
        "    for i in range(2):\n"
        "        ex.submit(Job(f'orphan-{i}', snap, RunSettings(model='sim', speed=2.0, turns=[0, 1, 2])))\n"
        "    while len(ex._where) < 2:\n"
        "        await asyncio.sleep(0.1)\n"
        "    print(*[where[0] for where in ex._where.values()], flush=True)\n"
        "    await asyncio.Event().wait()\n"
        "asyncio.run(main())\n")
    coordinator = subprocess.Popen([sys.executable, "-c", script, ray_cluster.address], stdout=subprocess.PIPE,
                                   text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        tasks = [int(pid) for pid in coordinator.stdout.readline().split()]
        assert len(tasks) == 2 and all(processes.alive(pid) for pid in tasks), tasks
        os.kill(coordinator.pid, signal.SIGKILL)
        coordinator.wait(10)
        took, left = processes.wait_gone(tasks, 30)
    finally:
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.wait()
        coordinator.stdout.close()
    for pid in tasks:  # killed with their driver, they could not delete their scratch (the next worker's sweep would)
        for scratch in Path(tempfile.gettempdir()).glob(f"arena-ray-{pid}-*"):
            shutil.rmtree(scratch, ignore_errors=True)
    print(f"\nRay task workers gone {took:.2f} s after kill -9 of their coordinator")
    assert not left, f"Ray task workers still alive 30 s after their coordinator's kill -9: {left}"


async def test_ray_admission_gives_a_worker_held_late_fewer_runs_then_slower_ones(
        demo_snapshot: BenchmarkSnapshot, ray_cluster) -> None:
    """Admission control on Ray as on the local pool (tests/test_campaign_admission.py): one warm
    worker allowed three runs, held late by them, admits the later ones one at a time, then slower."""
    done: dict[str, dict] = {}
    paces: list[str] = []
    executor = RayExecutor(EventBus(), on_lost=lambda j, r: pytest.fail(f"lost {r}"),
                           on_done=lambda j, o: done.__setitem__(j.run_id, o.result | {"status": o.status}),
                           address=ray_cluster.address, workers=1, run_cpus=1 / 3, speed=8.0,
                           runner="tests.campaign_runners:loop_holder")
    executor.on_pace = paces.append
    try:
        await executor.start()
        for i in range(7):
            executor.submit(Job(f"r{i}", demo_snapshot, RunSettings(model="sim", speed=8.0),
                                resume={"from_turn": 0, "start_ms": 0.0, "done": []} if i == 6 else None))
        await executor.join()
    finally:
        await executor.close()
    assert all(d["status"] == "finished" for d in done.values()), done
    assert sorted(done[f"r{i}"]["active"] for i in range(3)) == [1, 2, 3]  # together, before any window
    later = [done[f"r{i}"] for i in range(3, 7)]
    assert all(d["active"] == 1 for d in later), done
    assert any(d["speed"] < 8.0 for d in later[:-1]) and later[-1]["speed"] == 8.0, done
    assert any(p.startswith("pace: 1 session/worker") and "machine busy" in p for p in paces), paces
