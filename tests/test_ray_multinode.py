"""A campaign across a real two-node Ray cluster on this machine: a node lost mid-run, a node that
joins mid-campaign, a node that cannot run it.

The nodes are what a user starts: `ray start --head` and `ray start --address` (each with its own
CPUs and resources, `--block` so each command owns its node's processes), in a fresh TMPDIR and
HOME; the campaign is `arena-tui campaign run --executor ray --ray-address ADDR` against the
simulator, at speed 10. Each node has its own loopback address, as a user trying two nodes on one
machine gives them (docs/campaigns.md): the head `--node-ip-address 127.0.0.2`, the others
127.0.0.3, 127.0.0.4, … (all of 127.0.0.0/8 is loopback; `ray start` replaces 127.0.0.1 itself
with the machine's network address). Nothing goes off loopback: every established TCP connection
of every marked process is sampled while the nodes run (tests/connections.py) and must have both
ends on loopback. Where each run runs is read from the campaign's log (`run X on Ray node IP (ID),
pid N`: a worker's parent is its node's raylet); what was recorded, from the store. Every process
(the nodes', their workers', the campaign's) carries a mark in its environment, and none may be
left once the nodes are stopped.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena_tui.campaign import records
from arena_tui.store import Store

from . import connections, processes
from .conftest import REPO_ROOT
from .test_campaign_executors import CHILD_MARK, marked_alive, short_tempdir

RAY = Path(sys.executable).with_name("ray")
TURNS = [0, 1, 2, 3]
BOUND_S = 240.0  # liveness bounds (a node up, a run under way), not timing checks
PLACED = re.compile(r"run (\S+) on Ray node \S+ \((\w+)\), pid (\d+)")
HEAD_IP = "127.0.0.2"  # the head's loopback address; a joining node's is the next free one (127.0.0.3, …)
SAMPLE_S = 0.5  # how often the marked processes' connections are read


class LoopbackWatch:
    """Every SAMPLE_S until stopped, the established TCP connections of every process carrying the
    mark (tests/connections.py): all kept, to check none had an end off loopback. A sample, not a
    trace: a connection opened and closed between two reads is not seen."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.seen: dict[tuple[int, tuple[str, int], tuple[str, int]], connections.Conn] = {}
        self.cmds: dict[int, str] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loopback-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            marked = marked_alive(self.token)
            for conn in connections.established([p.pid for p in marked]):
                self.seen.setdefault((conn.pid, conn.local, conn.remote), conn)
            self.cmds.update((p.pid, p.cmd) for p in marked)
            self.samples += 1
            self._stop.wait(SAMPLE_S)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def check(self, ips: list[str]) -> str:
        """Every connection seen stays on loopback, and some reached each of `ips` (the nodes'
        addresses: the check saw the cluster's own traffic). A line saying what was seen."""
        self.stop()
        seen = list(self.seen.values())
        off = connections.off_loopback(seen)
        assert not off, "connections off loopback:\n" + "\n".join(f"{c} ({self.cmds.get(c.pid, '?')[:100]})" for c in off)
        ends = {str(connections.unmapped(ip)) for c in seen for ip in (c.local[0], c.remote[0])}
        assert set(ips) <= ends, (ips, sorted(ends))
        return (f"{len(seen)} established TCP connection(s) of {len({c.pid for c in seen})} process(es) in "
                f"{self.samples} samples, every end on loopback ({', '.join(sorted(ends))})")


class LocalNodes:
    """Ray nodes started with `ray start --block`, each at its own loopback address (the head at
    HEAD_IP), stopped (and checked gone) at close; their connections watched from the start."""

    def __init__(self, tmp: Path, home: Path, token: str) -> None:
        self.tmp, self.token = tmp, token
        # (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, the campaign's own one-node cluster's switch, makes `ray start` refuse to join)
        drop = ("RAY_ADDRESS", "RAY_TMPDIR", "PYTHONPATH", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
        self.env = {k: v for k, v in os.environ.items() if k not in drop}
        self.env.update(TMPDIR=str(tmp), HOME=str(home), RAY_USAGE_STATS_ENABLED="0", **{CHILD_MARK: token})
        self.nodes: list[subprocess.Popen[bytes]] = []
        self.address = ""
        self.ips: dict[str, str] = {}  # node name -> its --node-ip-address
        self.watch = LoopbackWatch(token)

    def _start(self, name: str, args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        out = (self.tmp / f"{name}.out").open("wb")
        node = subprocess.Popen([str(RAY), "start", "--block", "--disable-usage-stats",
                                 "--object-store-memory", str(100 * 2**20), *args],
                                env={**self.env, **(env or {})}, stdout=out, stderr=subprocess.STDOUT, cwd=self.tmp)
        out.close()
        self.nodes.append(node)
        return node

    def head(self, cpus: int, resource: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        self.ips["head"] = HEAD_IP
        node = self._start("head", ["--head", "--node-ip-address", HEAD_IP, "--port", "0", "--num-cpus", str(cpus),
                                    "--include-dashboard", "false", "--resources", json.dumps({resource: 1})], env)
        address_file = self.tmp / "ray" / "ray_current_cluster"
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            assert node.poll() is None, self.output("head")
            if address_file.is_file() and (address := address_file.read_text().strip()):
                host, _, port = address.rpartition(":")
                try:
                    socket.create_connection((host, int(port)), timeout=1).close()
                except OSError:
                    pass
                else:
                    assert host == HEAD_IP, address  # (`ray start` kept the loopback address it was given)
                    self.address = address
                    self.raylet(node)
                    return node
            time.sleep(0.2)
        raise AssertionError(f"the head node did not come up within {BOUND_S:.0f} s: {self.output('head')}")

    def join(self, name: str, cpus: int, resource: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        ip = self.ips[name] = f"127.0.0.{len(self.ips) + 2}"  # (the head is 127.0.0.2)
        node = self._start(name, ["--address", self.address, "--node-ip-address", ip, "--num-cpus", str(cpus),
                                  "--resources", json.dumps({resource: 1})], env)
        self.raylet(node)
        deadline = time.monotonic() + BOUND_S
        while "Ray runtime started" not in self.output(name):  # (printed once the node registered)
            assert node.poll() is None and time.monotonic() < deadline, self.output(name)
            time.sleep(0.2)
        return node

    def raylet(self, node: subprocess.Popen[bytes]) -> int:
        """The pid of the node's raylet (a child of its `ray start --block`)."""
        deadline = time.monotonic() + BOUND_S
        while time.monotonic() < deadline:
            found = [p.pid for p in processes.descendants(node.pid) if "/raylet" in p.cmd.split(" ")[0] and p.alive]
            if found:
                return found[0]
            assert node.poll() is None, f"ray start exited {node.returncode}"
            time.sleep(0.1)
        raise AssertionError(f"no raylet under ray start (pid {node.pid}) within {BOUND_S:.0f} s")

    def output(self, name: str) -> str:
        path = self.tmp / f"{name}.out"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> list[processes.Proc]:
        """Stop every node (`ray start --block` stops its processes on SIGTERM); what is left after 30 s."""
        self.watch.stop()
        for node in self.nodes:
            if node.poll() is None:
                node.terminate()
        for node in self.nodes:
            try:
                node.wait(60)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
        _, left = processes.wait_gone([p.pid for p in marked_alive(self.token)], 30)
        return [p for pid in left if (p := processes.read(pid)) is not None]


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[LocalNodes]:
    tmp, home = Path(short_tempdir("rn")), tmp_path / "home"
    home.mkdir()
    cluster = LocalNodes(tmp, home, uuid.uuid4().hex)
    try:
        yield cluster
    finally:
        left = cluster.stop()
        processes.kill([p.pid for p in marked_alive(cluster.token)])
        shutil.rmtree(tmp, ignore_errors=True)
        assert not left, "left running after the nodes stopped:\n" + "\n".join(map(str, left))


def campaign(nodes: LocalNodes, db: Path, repeats: int, cwd: Path = REPO_ROOT) -> subprocess.Popen[str]:
    """`campaign run --executor ray --ray-address` the head, its output in `db`'s folder."""
    out = (db.parent / "campaign.out").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena_tui.cli", "campaign", "run", "--executor", "ray", "--ray-address", nodes.address,
         "--bench", "demo_bench", "--model", "sim", "--speed", "10", "--turns", f"{TURNS[0]}-{TURNS[-1]}",
         "--repeats", str(repeats), "--no-greeting", "--judge", "none"],
        env={**nodes.env, "ARENA_TUI_DB": str(db)}, stdout=out, stderr=subprocess.STDOUT, text=True, cwd=cwd)
    out.close()
    return proc


def placed(db: Path) -> list[tuple[str, str, int]]:
    """(run id, node id prefix, worker pid) of every run placed so far, from the campaign's log."""
    log = db.parent / "arena-tui.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    return [(m[1], m[2], int(m[3])) for m in PLACED.finditer(text)]


def finished_turns(db: Path, run_id: str) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        try:
            return conn.execute("SELECT COUNT(*) FROM events WHERE run_id=? AND kind='turn_ended'",
                                (run_id,)).fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def has_event(db: Path, run_id: str, kind: str) -> bool:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT 1 FROM events WHERE run_id=? AND kind=?", (run_id, kind)).fetchone() is not None


def wait_for(what: str, cond, proc: subprocess.Popen[str], db: Path):
    deadline = time.monotonic() + BOUND_S
    while not (got := cond()):
        assert proc.poll() is None, f"the campaign ended before {what}:\n" + (db.parent / "campaign.out").read_text()
        assert time.monotonic() < deadline, f"not within {BOUND_S:.0f} s: {what}"
        time.sleep(0.1)
    return got


def finish(proc: subprocess.Popen[str], db: Path) -> str:
    try:
        proc.wait(BOUND_S * 2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    out = (db.parent / "campaign.out").read_text()
    assert proc.returncode == 0, out
    return out


async def counted_once(db: Path, cells: int) -> dict[str, list[str]]:
    """Every cell complete exactly once: one counted (not superseded) run per cell, one finished
    row per planned turn, each life of it (started, resumed) playing its turns in order.
    {run id: its run_started / run_resumed / run_ended:status:reason, in order}."""
    store = await Store.open(db)
    try:
        [campaign_id] = await records.campaign_ids(store)
        rows = await records.cells(store, campaign_id)
        assert len(rows) == cells and all(r.status == "done" for r in rows), rows
        counted = [r.run_id for r in rows]
        every = [run_id for (run_id,) in await store.read_rows("SELECT run_id FROM runs WHERE superseded_by IS NULL")]
        assert sorted(every) == sorted(counted) and len(set(counted)) == cells, (every, counted)
        lives = {}
        for run_id in counted:
            assert (await records.cell_state(store, run_id))[0] == "complete"
            finished = [r.turn_index for r in await store.turn_results(run_id) if r.turn_index >= 0]
            assert sorted(finished) == TURNS, (run_id, finished)
            assert len(finished) == len(set(finished)), f"{run_id}: a turn recorded twice {finished}"
            lives[run_id], turns = [], []
            timeline = await store.events(run_id, kinds=("run_started", "run_resumed", "run_ended", "turn_started",
                                                         "turn_ended"))
            t_ms = [ev.t_ms for _, ev in timeline]
            assert t_ms == sorted(t_ms), f"{run_id}: its events out of order on its timeline {timeline}"
            for _, ev in timeline:
                if ev.kind == "turn_ended":
                    continue
                if ev.kind == "turn_started":
                    if ev.turn_index >= 0:
                        turns[-1].append(ev.turn_index)
                    continue
                lives[run_id].append(f"run_ended:{ev.status}:{ev.reason}" if ev.kind == "run_ended" else ev.kind)
                if ev.kind != "run_ended":
                    turns.append([])
            # each life of the run (started, or resumed) plays its turns in order
            assert all(t == sorted(t) for t in turns), f"{run_id}: turns out of order {turns}"
        return lives
    finally:
        await store.close()


@pytest.mark.timeout(900)
def test_a_campaign_survives_losing_a_ray_node_mid_run(nodes: LocalNodes, tmp_path: Path) -> None:
    """Head and a second node, one CPU each: the cells spread over both. Once a run on the second
    node has ended a turn, its raylet is killed (SIGKILL): that run comes back lost, is ended
    `interrupted` and resumed in place on the head at its first unfinished turn; every cell ends
    complete exactly once, turns in order; the second node's processes go with its raylet."""
    cells = 6
    nodes.head(cpus=1, resource="node_a")
    second = nodes.join("second", cpus=1, resource="node_b")
    raylet = nodes.raylet(second)
    db = tmp_path / "arena.db"
    proc = campaign(nodes, db, cells)
    try:
        def on_second() -> tuple[str, str] | None:
            for run_id, node, pid in placed(db):
                p = processes.read(pid)
                if p is not None and p.ppid == raylet and finished_turns(db, run_id) >= 1:
                    return run_id, node
            return None

        victim, victim_node = wait_for("a run on the second node ended a turn", on_second, proc, db)
        assert not has_event(db, victim, "run_ended"), "the run ended before its node was killed"
        below = [p.pid for p in processes.descendants(second.pid)]
        os.kill(raylet, signal.SIGKILL)
        killed = time.monotonic()
        gone_s, left = processes.wait_gone(below, 30)
        assert not left, [str(processes.read(pid)) for pid in left]  # the node's workers and agents went with its raylet
        wait_for("the lost run resumed", lambda: has_event(db, victim, "run_resumed"), proc, db)
        recovered = time.monotonic() - killed
        out = finish(proc, db)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert f"{cells}/{cells} cells complete" in out, out
    assert f"Ray node {nodes.ips['second']} ({victim_node}) lost: 1 worker(s) on 1 node(s) go on" in out, out
    assert re.search(rf"run {victim} interrupted, worker lost .*; resuming on another worker", out), out
    lives = asyncio.run(counted_once(db, cells))
    assert lives[victim][:3] == ["run_started", lives[victim][1], "run_resumed"], lives[victim]
    assert lives[victim][1].startswith("run_ended:interrupted:worker lost"), lives[victim]
    where = placed(db)
    by_node = {node: sum(1 for _, n, _ in where if n == node) for _, node, _ in where}
    assert len(by_node) == 2 and by_node[victim_node] >= 1, where  # the cells went to both nodes
    assert [n for r, n, _ in where if r == victim][-1] != victim_node, where  # resumed on the head
    assert not list(nodes.tmp.glob("arena-ray-*")), list(nodes.tmp.glob("arena-ray-*"))  # workers' scratch, the lost ones' too
    print(f"\nnode killed: its processes gone {gone_s:.1f} s after, the lost run resumed {recovered:.1f} s after; "
          f"runs placed per node {by_node}; {nodes.watch.check([HEAD_IP, nodes.ips['second']])}")


@pytest.mark.timeout(900)
def test_a_node_that_joins_mid_campaign_takes_cells(nodes: LocalNodes, tmp_path: Path) -> None:
    """A head of one CPU starts the campaign alone; a second node joins once the first run is under
    way: it is checked, given a worker, and takes queued cells."""
    cells = 6
    nodes.head(cpus=1, resource="node_a")
    db = tmp_path / "arena.db"
    proc = campaign(nodes, db, cells)
    try:
        wait_for("the first run placed", lambda: placed(db), proc, db)
        second = nodes.join("second", cpus=1, resource="node_b")
        joined = time.monotonic()
        raylet = nodes.raylet(second)

        def on_second() -> str | None:
            for run_id, node, pid in placed(db):
                p = processes.read(pid)
                if p is not None and p.ppid == raylet:
                    return node
            return None

        second_id = wait_for("a run on the node that joined", on_second, proc, db)
        took = time.monotonic() - joined
        out = finish(proc, db)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert f"{cells}/{cells} cells complete" in out, out
    assert f"Ray node {nodes.ips['second']} ({second_id}) joined: 1 worker(s) start there" in out, out
    asyncio.run(counted_once(db, cells))
    where = placed(db)
    by_node = {node: sum(1 for _, n, _ in where if n == node) for _, node, _ in where}
    print(f"\nnode joined: its first run placed {took:.1f} s after `ray start` returned; runs placed per node {by_node}; "
          f"{nodes.watch.check([HEAD_IP, nodes.ips['second']])}")


def another_version(tmp: Path) -> Path:
    """A copy of this arena-tui with one line changed (another version), for a node's PYTHONPATH."""
    other = tmp / "other"
    for package in ("arena_tui", "runners", "benchmarks"):
        shutil.copytree(REPO_ROOT / package, other / package, ignore=shutil.ignore_patterns("__pycache__"))
    engine = other / "runners" / "engine.py"
    engine.write_text(engine.read_text() + "\n# another version\n")
    return other


@pytest.mark.timeout(900)
def test_a_node_running_other_arena_tui_code_is_refused_in_one_line_and_the_others_run(
        nodes: LocalNodes, tmp_path: Path) -> None:
    """The second node's Python finds another arena-tui first (a copy of this one with one line
    changed, on its PYTHONPATH: a node with another version installed): the campaign names it
    refused, starts no worker there, and runs every cell on the head. The campaign runs outside
    the repository (Ray puts the driver's folder on every worker's path)."""
    other = another_version(nodes.tmp)
    cells = 2
    nodes.head(cpus=1, resource="node_a")
    nodes.join("second", cpus=1, resource="node_b", env={"PYTHONPATH": str(other)})
    db = tmp_path / "arena.db"
    proc = campaign(nodes, db, cells, cwd=tmp_path)
    out = finish(proc, db)
    refused = [ln for ln in out.splitlines() if "refused" in ln]
    assert len(refused) == 1, out
    line = re.fullmatch(rf"campaign: Ray node {re.escape(nodes.ips['second'])} \((\w+)\) refused: its arena-tui "
                        rf"\({re.escape(str(other / 'arena_tui'))}\) is other code than the coordinator's "
                        r"\(fingerprint \w+, not \w+\): install the same version; the campaign runs on the other node\(s\)",
                        refused[0])
    assert line, refused[0]
    assert f"{cells}/{cells} cells complete" in out, out
    assert placed(db) and line[1] not in {node for _, node, _ in placed(db)}, placed(db)  # no run went there
    asyncio.run(counted_once(db, cells))
    nodes.watch.check([HEAD_IP, nodes.ips["second"]])


@pytest.mark.timeout(900)
def test_a_cluster_where_no_node_can_run_the_campaign_starts_nothing_and_says_why(
        nodes: LocalNodes, tmp_path: Path) -> None:
    """Every node runs another arena-tui: the campaign starts no worker and no run, lists each
    node's refusal, one line each, and exits with a one-line error."""
    other = another_version(nodes.tmp)
    nodes.head(cpus=1, resource="node_a", env={"PYTHONPATH": str(other)})
    nodes.join("second", cpus=1, resource="node_b", env={"PYTHONPATH": str(other)})
    db = tmp_path / "arena.db"
    proc = campaign(nodes, db, 2, cwd=tmp_path)
    proc.wait(BOUND_S)
    out = (db.parent / "campaign.out").read_text()
    assert proc.returncode == 2, out
    refused = [ln for ln in out.splitlines() if ln.startswith("arena-tui: Ray node ")]
    assert len(refused) == 2 and all(" refused: its arena-tui " in ln for ln in refused), out
    assert sorted(ln.split()[3] for ln in refused) == [HEAD_IP, nodes.ips["second"]], out
    assert "campaign not started: no worker can start (2 problem(s) above; docs/campaigns.md says what each Ray " \
           "node needs)" in out, out
    assert "Traceback" not in out and not placed(db), out
    nodes.watch.check([HEAD_IP, nodes.ips["second"]])
