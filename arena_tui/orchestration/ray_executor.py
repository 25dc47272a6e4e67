"""`--executor ray`: runs on warm Ray worker actors on any node, streaming event batches back.

Workers: one actor per CPU of the cluster (as the local pool has one process per core), each
an asyncio actor that imports the engine once and runs up to `1 / run_cpus` sessions at once on
its loop, exactly like a local worker. Before, every run was a Ray task asking for 1/4 CPU, so a
2-core node started 8 worker processes that each imported Pipecat (~1-2 s of CPU apiece, and
~300 MB) while the first runs waited: most of Ray's start-up on a small machine. A job goes to
the live worker holding the fewest runs; the rest wait here, not in an actor's queue, so a run
never waits behind a busy worker while another is free.

A run is a streaming actor call (`_ray_task`): it first says where it runs (pid, node), then
yields event batches (transport.py) and finally the outcome. A killed worker or a lost node
surfaces as a Ray error while the coordinator iterates the stream; that job goes to `on_lost`
and a fresh actor takes the dead one's place. Calls are never retried by Ray (`max_retries=0`,
no actor restarts): resuming is the orchestrator's decision, and a retried run would re-record
turns.

The cluster. With an address, that one. Without, a running cluster on this host is reused when
it is verifiably alive and ours: the address in `RAY_ADDRESS` or in Ray's `ray_current_cluster`
file (left by `ray start`) is loopback, a raylet process here serves it and its port answers
(all bounded: a process scan and a 1 s connect), and its workers import this same arena-tui
checkout; otherwise we start a one-node cluster with `address="local"`. Never `ray.init()`'s
own default: it follows that file blindly, so a file left by an earlier `ray start` or a killed
test cluster sent the campaign to a dead address, where `ray.init` retried for minutes. A
cluster we start binds and advertises 127.0.0.1 only, without dashboard, API server, autoscaler
monitor or usage statistics, its workers at nice 0 (`ray_own.py`).

What we create we remove: a cluster we started is shut down and its session folder deleted
(and Ray's temp folder if it was not there before); each worker deletes its `arena-ray-*`
scratch when closed, the coordinator deletes a killed local worker's, and a worker sweeps those
of dead processes it finds. Ray's own log lines go to our log file (`arena-tui.log` beside the
database), never to the user's terminal. `startup_report()` says where start-up time went.

When the coordinator dies, Ray ends its workers itself: actors die with the driver that owns
them (tests/test_campaign_executors.py); a cluster we started goes too, at once, its session
folder with it (Ray's parent-death signal ends its GCS and raylet, `ray_reaper.py` the rest:
tests/test_ray_own_cluster.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena_tui.spine.bus import EventBus
from arena_tui.spine.heap import settle_heap, settle_heaps_here
from arena_tui.spine.settings import RunSettings

from .admission import Admission, Load, pace_text, probe_lag
from .executor import DEFAULT_RUNNER, Executor, Job, JobOutcome, OnDone, OnLost
from .ray_own import OwnCluster
from arena_tui.campaign.snapshot import BenchmarkSnapshot

LOCAL_IP = "127.0.0.1"
RUN_CPUS = 0.25  # four 1× sessions share a core; a campaign asks 1 / its sessions per worker
READY_TIMEOUT_S = 180.0  # as the local pool: a cold worker imports Pipecat, slow on a loaded 2-core machine
PROBE_TIMEOUT_S = 1.0  # connecting to a remembered cluster's port: alive answers at once
VERIFY_TIMEOUT_S = 15.0  # a child asking that GCS for its versions, with our token (imports Ray: ~1 s)
CLEANUP_TIMEOUT_S = 10.0
SCRATCH_PREFIX = "arena-ray-"

# Ray asks the routing table for "its" address (192.0.2.2 on a sandbox); with cluster mode off
# for IP discovery it uses 127.0.0.1 in the driver, GCS, raylets and workers (they inherit env).
# Read when Ray is first imported, so set before that.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}

LOG_FORMAT = "%(asctime)s | %(levelname)-8s | %(name)s - %(message)s"
log = logging.getLogger("arena_tui.ray")
_log_file: Path | None = None


def log_to(path: Path | None) -> None:
    """Where Ray's and this module's log lines go (the CLI: `arena-tui.log` beside the database).

    Unset: beside the default database, as the TUI's log."""
    global _log_file
    _log_file = path


def import_ray(local: bool = True) -> Any:
    """Ray, with usage statistics off (and loopback-only addresses when `local`).

    A clear message when the extra is not installed."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        os.environ.update(LOOPBACK_ENV)
    try:
        import ray  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used
    except ImportError:
        raise RuntimeError("the Ray executor needs the extra: pip install 'arena-tui[ray]'") from None
    return ray


def is_local(address: str | None) -> bool:
    return address is None or address.split("//")[-1].startswith((LOCAL_IP, "localhost"))


def route_ray_logs() -> Path | None:
    """Ray logs through the stdlib logger "ray" with a stderr handler it adds when imported
    (start-up INFO, auth and SIGTERM-handler warnings, a killed worker's error): those lines go
    to our log file instead, with ours. Returns the file (None: it could not be opened)."""
    from arena_tui.spine import paths  # deferred: only the Ray path needs the default db location

    path = _log_file or paths.log_path(paths.db_path())
    handlers: list[logging.Handler] = []
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handlers.append(handler)
    except OSError:
        path = None
    for name in ("ray", log.name):
        lg = logging.getLogger(name)
        for h in list(lg.handlers):
            lg.removeHandler(h)
            h.close()
        for h in handlers:
            lg.addHandler(h)
        if not handlers:
            lg.addHandler(logging.NullHandler())
        lg.setLevel(logging.INFO)
        lg.propagate = False  # never Python's last-resort stderr handler
    # (ray.init keeps the "ray" logger's handlers when it configures logging, and clears them when
    # told not to: so it is called with configure_logging on and our format)
    with contextlib.suppress(Exception):  # (private: without it, those lines stay on the terminal)
        import ray._private.worker as driver  # deferred: ray is the optional `ray` extra

        # the raylet's error messages to this driver (a killed worker's "A worker died…") are
        # printed on stdout by a background thread, past any logger: ours instead
        driver.print_to_stdstream = _log_stdstream
    return path


def _log_stdstream(data: dict[str, Any], ignore_prefix: bool = False) -> None:
    for line in data.get("lines", ()):
        log.warning("(%s) %s", data.get("pid", "ray"), line)


def ray_temp_root() -> Path:
    """Ray's default folder ($RAY_TMPDIR/ray, else $TMPDIR/ray, else /tmp/ray), as Ray computes it."""
    base = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    return Path(base) / "ray"


def find_local_cluster() -> tuple[str | None, str]:
    """(address of a live Ray cluster on this host we may join, or None; why).

    Candidates: `RAY_ADDRESS`, then Ray's `ray_current_cluster` file. Only a loopback address
    whose GCS a raylet process here names (a process scan, not a file) and whose port accepts a
    connection within PROBE_TIMEOUT_S: a file outliving its cluster is never followed."""
    candidates = []
    if os.environ.get("RAY_ADDRESS"):
        candidates.append(("RAY_ADDRESS", os.environ["RAY_ADDRESS"].strip()))
    try:
        remembered = (ray_temp_root() / "ray_current_cluster").read_text().strip()
    except OSError:
        remembered = ""
    if remembered:
        candidates.append(("ray_current_cluster", remembered))
    if not candidates:
        return None, "no running cluster remembered"
    why = []
    for source, address in candidates:
        host, _, port = address.split("//")[-1].rpartition(":")
        if host not in (LOCAL_IP, "localhost") or not port.isdigit():
            why.append(f"{source} {address} is not a loopback address")
            continue
        address = f"{LOCAL_IP}:{port}"
        if address not in _raylet_gcs_addresses():
            why.append(f"{source} {address}: no raylet here serves it")
            continue
        try:
            socket.create_connection((LOCAL_IP, int(port)), timeout=PROBE_TIMEOUT_S).close()
        except OSError as e:
            why.append(f"{source} {address} does not answer ({e})")
            continue
        if (refused := _verify_gcs(address)) is not None:
            why.append(f"{source} {address}: {refused}")
            continue
        return address, f"{source} {address}"
    return None, "; ".join(why)


# In a child process: its C++ client prints its retries on stderr, and a wrong token or version
# would otherwise cost ray.init's 20 s of retries in this process. Token auth as Ray's own
# "auto" discovery enables it (a token file present: token mode).
_VERIFY = """
import sys
from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
from ray._raylet import GcsClient
from ray._common.usage.usage_lib import get_cluster_metadata
from ray._private.utils import check_version_info
try:
    meta = get_cluster_metadata(GcsClient(address=sys.argv[1]))
    check_version_info(meta or {}, "arena-tui") if meta else None
except Exception as e:
    print(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300])
    sys.exit(1)
"""


def _verify_gcs(address: str) -> str | None:
    """None when the cluster at `address` takes our token and runs our Ray and Python; else why."""
    try:
        got = subprocess.run([sys.executable, "-c", _VERIFY, address], capture_output=True, text=True,
                             timeout=VERIFY_TIMEOUT_S, env={**os.environ, **LOOPBACK_ENV})
    except subprocess.TimeoutExpired:
        return f"no answer within {VERIFY_TIMEOUT_S:.0f} s"
    if got.stderr.strip():
        log.info("probing %s: %s", address, got.stderr.strip())
    return None if got.returncode == 0 else (got.stdout.strip() or f"probe exited {got.returncode}")


def _raylet_gcs_addresses() -> set[str]:
    """The GCS addresses named by this host's raylet processes (as `ray status` finds them)."""
    try:
        from ray._private.services import find_gcs_addresses  # deferred: ray is the optional `ray` extra

        return {a.replace("localhost", LOCAL_IP) for a in find_gcs_addresses()}
    except Exception:  # noqa: BLE001 - a private helper; without it nothing is reused (start our own)
        return set()


@dataclass(eq=False)
class _Slot:
    """One worker actor and what it holds."""

    actor: Any
    n: int
    admission: Admission
    runs: set[str] = field(default_factory=set)
    window: int = -1  # the last load window taken (each of its runs forwards the same one)
    alive: bool = True
    info: dict[str, Any] = field(default_factory=dict)  # from ready(): pid, node, scratch, code, import_s


class RayExecutor(Executor):
    def __init__(self, bus: EventBus, *, on_lost: OnLost, on_done: OnDone | None = None,
                 address: str | None = None, run_cpus: float = RUN_CPUS, runner: str = DEFAULT_RUNNER,
                 workers: int | None = None, speed: float = 1.0, most: int | None = None,
                 warm: tuple[str, ...] = ()) -> None:
        """`most`: workers the jobs can use at most (a campaign's cells: one each at most);
        `warm`: the model aliases the jobs will run (loaded before a worker says it is ready)."""
        super().__init__(bus, on_lost=on_lost, on_done=on_done, runner=runner)
        self.most = most
        self.warm = tuple(warm)
        self.address = address
        self.run_cpus = run_cpus
        self.per_worker = max(1, round(1 / run_cpus))  # the most a worker is given; admission control may give fewer
        self.speed = speed  # the campaign's speed: new runs on a busy worker may get less
        self.workers = workers  # actors; default one per CPU of the cluster
        self.cluster = ""  # the address we run on, once started
        self.own_cluster = False  # we started it (and remove it after)
        self._ray: Any = None
        self._actor_cls: Any = None
        self._owns_ray = False
        self._refs: dict[str, Any] = {}  # snapshot key -> ObjectRef (one put per benchmark)
        self._follow: dict[str, asyncio.Task[None]] = {}
        self._where: dict[str, tuple[int, str]] = {}  # run_id -> (pid, node ip)
        self._slots: list[_Slot] = []
        self._queue: deque[Job] = deque()
        self._warming: set[asyncio.Task[None]] = set()
        self._own: OwnCluster | None = None  # the cluster we started (removed at close)
        self._closing = False
        self._t: dict[str, float] = {}  # start-up phases, seconds
        self._notes: list[str] = []
        self._t0 = 0.0

    # -- start-up

    async def start(self) -> None:
        t = self._t0 = time.monotonic()
        ray = self._ray = import_ray(is_local(self.address))
        self._t["import"] = time.monotonic() - t
        self._notes.append(f"log {route_ray_logs()}")
        if not ray.is_initialized():
            address, why = (self.address, "given") if self.address else await asyncio.to_thread(find_local_cluster)
            if address is not None and not await self._connect(address, why):
                address = None
            if address is None:
                await self._start_own(why)
        else:
            self.cluster = "already initialised"
        t = time.monotonic()
        self._actor_cls = ray.remote(num_cpus=1, max_concurrency=self.per_worker + 2, max_restarts=0,
                                     max_task_retries=0)(_Worker)
        self._slots = [self._spawn(i) for i in range(self._worker_count())]
        ready = await self._warm(self._slots)
        if self.address is None and not self.own_cluster and ready and ready[0].get("code") != _code_id():
            # a cluster started from another checkout or Python: its workers would run other code
            self._notes.append(f"{self.cluster} runs {ready[0].get('code')}, not {_code_id()}: started our own")
            await self._drop_slots()
            await asyncio.to_thread(ray.shutdown)
            self._owns_ray = False
            await self._start_own("the running cluster is not ours")
            t = time.monotonic()
            self._slots = [self._spawn(i) for i in range(self._worker_count())]
            ready = await self._warm(self._slots)
        self._t["workers"] = time.monotonic() - t
        if not any(s.alive for s in self._slots):
            raise RuntimeError(f"no Ray worker came up on {self.cluster} within {READY_TIMEOUT_S:.0f} s")
        imports = [s.info["import_s"] for s in self._slots if "import_s" in s.info]
        if imports:
            self._notes.append(f"engine import {min(imports):.1f}-{max(imports):.1f} s per worker")
        nice = sorted({s.info["nice"] for s in self._slots if s.info.get("nice")})
        if nice:  # (a joined cluster's own setting: Ray's default is 15)
            self._notes.append(f"workers at nice {', '.join(map(str, nice))}: they yield the cores to anything else "
                               "running here, and lose pace beside busy processes")
        self._t["total"] = time.monotonic() - self._t0
        log.info("start-up: %s", self.startup_report())

    def _worker_count(self) -> int:
        """One actor per CPU of the cluster (each asks for one: more would never start), as many
        as asked if fewer, and no more than the jobs can use."""
        cpus = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        return max(1, min(self.workers or cpus, cpus, self.most or cpus))

    async def _connect(self, address: str, why: str) -> bool:
        """Join `address`; False (and why, in the report) when it refuses us."""
        kw: dict[str, Any] = {"log_to_driver": False, "logging_format": LOG_FORMAT}
        if is_local(address):
            kw["_node_ip_address"] = LOCAL_IP
        t = time.monotonic()
        if not self.address:  # found here, verified with Ray's own "auto" token rule: use that rule
            from ray._private.authentication.authentication_token_setup import (  # deferred: ray is the optional `ray` extra
                maybe_enable_token_auth_if_token_available)

            maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
        try:
            await asyncio.to_thread(self._ray.init, address=address, **kw)
        except Exception as e:  # noqa: BLE001 - version mismatch, auth, gone since the probe
            if self.address:
                raise
            self._notes.append(f"{why} refused us ({_first_line(e)})")
            log.warning("not joining %s: %s", address, e)
            return False
        self._owns_ray = True
        self._t["cluster"] = time.monotonic() - t
        self.cluster = f"joined {address} ({why})" if not self.address else f"joined {address}"
        return True

    async def _start_own(self, why: str) -> None:
        t = time.monotonic()
        self._own = await asyncio.to_thread(OwnCluster.start, self._ray, ray_temp_root(), _node_ip_address=LOCAL_IP,
                                            log_to_driver=False, logging_format=LOG_FORMAT)
        self._t["cluster"] = time.monotonic() - t
        self._owns_ray = self.own_cluster = True
        node = self._ray._private.worker._global_node
        log.info("started a Ray cluster, session %s (removed at close)", self._own.session)
        self.cluster = f"started {node.gcs_address if hasattr(node, 'gcs_address') else 'a local cluster'}"
        if why and why != "no running cluster remembered":
            self._notes.append(f"not reused: {why}")

    def _spawn(self, n: int) -> _Slot:
        actor = self._actor_cls.options(scheduling_strategy="SPREAD", name=None).remote()
        return _Slot(actor, n, Admission(self.per_worker, self.speed))

    async def _warm(self, slots: list[_Slot]) -> list[dict[str, Any]]:
        """Wait until each worker has imported the engine (or give it up after READY_TIMEOUT_S)."""
        async def one(slot: _Slot) -> None:
            try:
                slot.info = await asyncio.wait_for(_as_future(slot.actor.ready.remote(self.warm)), READY_TIMEOUT_S)
            except (Exception, TimeoutError) as e:  # noqa: BLE001 - no CPU free, import failed, died
                log.warning("Ray worker %d did not come up: %s", slot.n, e)
                slot.alive = False
                with contextlib.suppress(Exception):
                    self._ray.kill(slot.actor, no_restart=True)

        await asyncio.gather(*(one(s) for s in slots))
        return [s.info for s in slots if s.alive]

    def startup_report(self) -> str:
        """One line: where start-up went (import, cluster start or join, warm workers)."""
        parts = [f"{k} {self._t[k]:.1f} s" for k in ("import", "cluster", "workers") if k in self._t]
        live = sum(s.alive for s in self._slots)
        head = f"ray start-up {self._t.get('total', 0.0):.1f} s ({', '.join(parts)}): {self.cluster}, " \
               f"{live} worker(s) × {self.per_worker} session(s)"
        return "; ".join([head, *self._notes])

    # -- jobs

    def submit(self, job: Job) -> None:
        if self._closing or self._actor_cls is None:
            raise RuntimeError("executor is not running")
        self._opened(job)
        self._queue.append(job)
        self._dispatch()

    def _dispatch(self) -> None:
        """Queued jobs to the live workers holding the fewest runs, up to per_worker each."""
        while self._queue and not self._closing:
            live = [s for s in self._slots if s.alive and len(s.runs) < s.admission.limit]
            if not live:
                return
            slot = min(live, key=lambda s: (len(s.runs), s.admission.busy, s.n))
            job = self._queue.popleft()
            ref = self._refs.get(job.snapshot.key)
            if ref is None:
                t = time.monotonic()
                ref = self._refs[job.snapshot.key] = self._ray.put(job.snapshot)
                self._t.setdefault("put", time.monotonic() - t)
            slot.runs.add(job.run_id)
            settings = slot.admission.settings_for(job.settings, resumed=job.keeps_speed)
            stream = slot.actor.run.options(num_returns="streaming").remote(
                ref, settings, job.run_id, self.runner, job.resume)
            self._follow[job.run_id] = asyncio.create_task(self._consume(job, stream, slot), name=f"ray-{job.run_id}")

    def _replace(self, slot: _Slot) -> None:
        """A dead worker's place goes to a fresh one (warming while jobs already queue on it)."""
        if not slot.alive or self._closing:
            return
        slot.alive = False
        if slot.info.get("node") == LOCAL_IP and slot.info.get("scratch"):  # killed: it could not clean up
            shutil.rmtree(slot.info["scratch"], ignore_errors=True)
        fresh = self._spawn(slot.n)
        self._slots[self._slots.index(slot)] = fresh
        task = asyncio.create_task(self._warm([fresh]))
        self._warming.add(task)
        task.add_done_callback(self._warming.discard)

    def admissions(self) -> list[Admission]:
        return [s.admission for s in self._slots if s.alive]

    def worker_pid(self, run_id: str) -> int | None:
        where = self._where.get(run_id)
        return where[0] if where and run_id in self._open else None

    def node_of(self, run_id: str) -> str | None:
        where = self._where.get(run_id)
        return where[1] if where else None

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for task in list(self._follow.values()):
            task.cancel()
        await asyncio.gather(*self._follow.values(), return_exceptions=True)
        while self._queue:  # never reached a worker
            self._finish(self._queue.popleft().run_id, JobOutcome("cancelled", "closed", started=False))
        for task in list(self._warming):
            task.cancel()
        self._refs.clear()
        if self._ray is not None and self._actor_cls is not None:
            await self._drop_slots()
        if self._owns_ray and self._ray is not None:
            await asyncio.to_thread(self._ray.shutdown)
        if self._own is not None:
            await asyncio.to_thread(self._own.close)

    async def _drop_slots(self) -> None:
        """Each live worker deletes its scratch, then goes; a killed local one's scratch we delete."""
        async def one(slot: _Slot) -> None:
            if slot.alive:
                with contextlib.suppress(Exception, TimeoutError):
                    await asyncio.wait_for(_as_future(slot.actor.cleanup.remote()), CLEANUP_TIMEOUT_S)
            if slot.info.get("node") == LOCAL_IP and slot.info.get("scratch"):
                await asyncio.to_thread(shutil.rmtree, slot.info["scratch"], True)
            with contextlib.suppress(Exception):
                self._ray.kill(slot.actor, no_restart=True)

        await asyncio.gather(*(one(s) for s in self._slots))
        self._slots = []

    async def _consume(self, job: Job, stream: Any, slot: _Slot) -> None:
        ex = self._ray.exceptions
        outcome: JobOutcome | None = None
        try:
            async for ref in stream:
                item = await ref
                if item[0] == "events":
                    self._publish(item[1])
                elif item[0] == "load":
                    self._load(slot, item[1], Load(item[2], item[3]))
                elif item[0] == "where":
                    self._where[job.run_id] = (item[1], item[2])
                    self._t.setdefault("first_run", time.monotonic() - self._t0)
                elif item[0] == "done":
                    out = item[1]
                    outcome = JobOutcome(out["status"], out["message"], out["result"])
            self._finish(job.run_id, outcome or JobOutcome("error", "the task ended without an outcome"))
        except asyncio.CancelledError:
            try:
                self._ray.cancel(stream)  # (an actor call: the run is cancelled on the worker's loop)
            except Exception:  # noqa: BLE001 - already finished or its node is gone
                pass
            self._finish(job.run_id, JobOutcome("cancelled", "closed"))
        except ex.TaskCancelledError:
            self._finish(job.run_id, JobOutcome("cancelled", "cancelled in Ray"))
        except ex.RayTaskError as e:  # the task's own code failed (not the run: that is caught inside)
            self._finish(job.run_id, JobOutcome("error", str(e).strip().splitlines()[-1]))
        except ex.RayError as e:  # worker crashed, node died, object lost, ...
            where = self._where.get(job.run_id)
            at = f" (pid {where[0]} on {where[1]})" if where else ""
            if isinstance(e, ex.RayActorError):
                self._replace(slot)
            self._finish(job.run_id, lost=f"{type(e).__name__}{at}: {_first_line(e)}")
        finally:
            self._follow.pop(job.run_id, None)
            slot.runs.discard(job.run_id)
            self._dispatch()


    def _load(self, slot: _Slot, window: int, load: Load) -> None:
        """One window of a worker's loop lag (forwarded by each of its runs: taken once)."""
        if window <= slot.window:
            return
        slot.window = window
        if slot.admission.observe(load, len(slot.runs)):
            self._dispatch()
        self._set_pace(pace_text(s.admission for s in self._slots if s.alive))


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def _as_future(ref: Any) -> asyncio.Future[Any]:
    return asyncio.wrap_future(ref.future())


def _code_id() -> str:
    """Which arena-tui a process runs: its package folder (a cluster from another checkout differs)."""
    import arena_tui  # deferred: tiny, and only for the comparison

    return str(Path(arena_tui.__file__).resolve().parent)


# -- inside a Ray worker process

_SCRATCH: Path | None = None
_BENCHMARKS: dict[str, Any] = {}
_LOAD_TO: set[asyncio.Queue[tuple]] = set()  # the item queues of the runs on this worker now
_PROBE: list[asyncio.Task[None]] = []
_WINDOW = [0]


def _report_load(load: Load) -> None:
    """This worker's loop lag, to every run's stream (the coordinator takes each window once)."""
    _WINDOW[0] += 1
    for q in _LOAD_TO:
        q.put_nowait(("load", _WINDOW[0], load.worst_ms, load.mean_ms))


class _Worker:
    """A warm worker: the engine imported once, then many runs on this actor's event loop."""

    async def ready(self, warm: tuple[str, ...] = ()) -> dict[str, Any]:
        """Load the engine and the jobs' providers (`warm`), as a local worker does before it says
        it is ready, so no first session imports them while others pace."""
        import ray  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

        t = time.monotonic()
        from .worker import execute  # noqa: F401  # deferred: the engine loads here, once per worker
        from runners import engine  # deferred: the engine (Pipecat, ~1 s) loads in the worker process, never in the coordinator

        for model in warm:
            with contextlib.suppress(Exception):  # a model that cannot run is reported by its job, as ever
                engine.runner_for(model)
        settle_heaps_here()  # a worker lives as long as its coordinator, and paces
        settle_heap("ray worker loaded")  # the collector's full passes leave the engine's modules alone
        _sweep_scratch()
        if not _PROBE:  # admission control: this loop's lag, once a window (admission.py)
            _PROBE.append(asyncio.get_running_loop().create_task(probe_lag(_report_load)))
        return {"pid": os.getpid(), "node": ray.util.get_node_ip_address(), "scratch": str(_scratch()),
                "code": _code_id(), "import_s": time.monotonic() - t, "nice": os.getpriority(os.PRIO_PROCESS, 0)}

    async def run(self, snap: BenchmarkSnapshot, settings: RunSettings, run_id: str, runner_spec: str,
                  resume: dict | None = None):
        async for item in _ray_task(snap, settings, run_id, runner_spec, resume):
            yield item

    async def cleanup(self) -> None:
        global _SCRATCH
        if _SCRATCH is not None:
            shutil.rmtree(_SCRATCH, ignore_errors=True)
            _SCRATCH = None
            _BENCHMARKS.clear()


def _scratch() -> Path:
    """This worker's folder for unpacked benchmarks; the pid in its name lets a sweep know it abandoned."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    return _SCRATCH


def _sweep_scratch() -> None:
    """Delete our scratch folders whose process is gone (a worker killed with its coordinator):
    only ours (this user, our prefix with a pid) and only when that pid no longer runs."""
    root = Path(tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for p in root.glob(f"{SCRATCH_PREFIX}*-*"):
            pid = p.name[len(SCRATCH_PREFIX):].split("-", 1)[0]
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                if p.stat().st_uid != os.getuid():
                    continue
                os.kill(int(pid), 0)
            except ProcessLookupError:
                shutil.rmtree(p, ignore_errors=True)
            except OSError:
                continue


def _benchmark(snap: BenchmarkSnapshot) -> Any:
    """Unpack a snapshot once per worker process (workers run many runs)."""
    if snap.key not in _BENCHMARKS:
        _BENCHMARKS[snap.key] = snap.materialize(_scratch())
    return _BENCHMARKS[snap.key]


async def _ray_task(snap: BenchmarkSnapshot, settings: RunSettings, run_id: str, runner_spec: str,
                    resume: dict | None = None):
    """Streaming generator: ("where", pid, ip), then ("events", bytes)..., then ("done", outcome).

    The run is a task on the worker's loop beside its other runs (as a local worker holds them);
    cancelling this call cancels it, and it ends itself `interrupted`."""
    import ray  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

    from .worker import execute, load_runner  # deferred: ray is the optional `ray` extra; imported only when --executor ray is used

    yield ("where", os.getpid(), ray.util.get_node_ip_address())
    benchmark = _benchmark(snap)
    runner = load_runner(runner_spec)
    items: asyncio.Queue[tuple] = asyncio.Queue()

    async def run() -> None:
        try:
            out = await execute(runner, benchmark, settings, run_id, lambda b: items.put_nowait(("events", b)), resume)
        except BaseException as e:  # (execute reports the run's own errors; this is the rest)
            out = {"status": "error", "message": f"{type(e).__name__}: {e}", "result": {}}
        items.put_nowait(("done", out))

    task = asyncio.create_task(run(), name=f"run-{run_id}")
    _LOAD_TO.add(items)
    try:
        while True:
            item = await items.get()
            yield item
            if item[0] == "done":
                return
    finally:
        _LOAD_TO.discard(items)
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
