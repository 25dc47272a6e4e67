"""`--executor ray`: runs on warm Ray worker actors on any node, streaming event batches back.

Workers: one actor per CPU of the cluster (as the local pool has one process per core), each
an asyncio actor that imports the engine once and runs up to `1 / run_cpus` sessions at once on
its loop, exactly like a local worker (`ray_worker.py`). Before, every run was a Ray task asking
for 1/4 CPU, so a 2-core node started 8 worker processes that each imported Pipecat (~1-2 s of
CPU apiece, and ~300 MB) while the first runs waited: most of Ray's start-up on a small machine.
A job goes to the ready worker holding the fewest runs; the rest wait here, not in an actor's
queue, so a run never waits behind a busy worker while another is free.

Nodes (`ray_nodes.py`): each alive node is checked by a small task pinned to it before it gets
workers (a node lacking this arena-tui, the providers' packages or keys is refused in one line);
workers are pinned to their node and spread over the nodes, the one holding fewest first. The
node list is read every NODE_POLL_S: a node gone takes its workers out of use (their runs come
back through `on_lost`, and the campaign resumes them on the nodes left; more workers start where
a node has CPUs to spare), a node that joined is checked and given workers, which take queued jobs.

A run is a streaming actor call (`ray_worker.ray_task`): it first says where it runs (pid,
node), then yields event batches (transport.py) and finally the outcome. A killed worker or a
lost node surfaces as a Ray error while the coordinator iterates the stream; that job goes to
`on_lost` and a fresh actor takes the dead one's place. Calls are never retried by Ray
(`max_retries=0`, no actor restarts): resuming is the orchestrator's decision, and a retried run
would re-record turns.

The cluster: with an address, that one; without, a running cluster on this host when it is
verifiably alive and ours (`ray_cluster.py`), else a one-node cluster we start, bound to
127.0.0.1 only, without dashboard, API server, autoscaler monitor or usage statistics, its
workers at nice 0 (`ray_own.py`). Its workers must import this same arena-tui checkout.

What we create we remove: a cluster we started is shut down and its session folder deleted
(and Ray's temp folder if it was not there before); each worker deletes its scratch when closed,
the coordinator deletes a killed local worker's, and a worker sweeps those of dead processes it
finds (`ray_scratch.py`). Ray's own log lines go to our log file (`ray_logs.py`), never to the
user's terminal. `startup_report()` says where start-up time went.

When the coordinator dies, Ray ends its workers itself: actors die with the driver that owns
them (tests/test_campaign_executors.py); a cluster we started goes too, at once, its session
folder with it (Ray's parent-death signal ends its GCS and raylet, `ray_reaper.py` the rest:
tests/test_ray_own_cluster.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Coroutine
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

from arena_tui.spine.bus import EventBus
from arena_tui.spine.settings import RunSettings

from .admission import Admission, Load, pace_text
from .executor import DEFAULT_RUNNER, Executor, Job, JobOutcome, NoWorkers, OnDone, OnLost
from .ray_cluster import (LOCAL_IP, as_future, code_id, find_local_cluster, first_line, import_ray, is_local, on_this_host,
                          ray_temp_root)
from .ray_logs import LOG_FORMAT, log, route_ray_logs
from .ray_nodes import Needs, Node, alive_nodes, check_nodes, code_fingerprint, refused_line, spread
from .ray_own import OwnCluster
from .ray_worker import Worker

RUN_CPUS = 0.25  # four 1× sessions share a core; a campaign asks 1 / its sessions per worker
READY_TIMEOUT_S = 180.0  # as the local pool: a cold worker imports Pipecat, slow on a loaded 2-core machine
CLEANUP_TIMEOUT_S = 10.0
NODE_POLL_S = 2.0  # how often the node list is read: a node lost or joined is seen within this (and Ray's own detection)


@dataclass(eq=False)
class _Slot:
    """One worker actor and what it holds."""

    actor: Any
    n: int
    admission: Admission
    node: str  # the id of the node it is pinned to
    runs: set[str] = field(default_factory=set)
    window: int = -1  # the last load window taken (each of its runs forwards the same one)
    alive: bool = True
    ready: bool = False  # it said ready(): only then does it take runs (a job never waits in a dead actor's queue)
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
        self._where: dict[str, tuple[int, str, str]] = {}  # run_id -> (pid, node ip, node id)
        self._slots: list[_Slot] = []
        self._spawned = 0
        self._nodes: dict[str, Node] = {}  # every node seen, by id
        self._needs = Needs("")  # what a node must have (`expect`, and this code's fingerprint at start)
        self._watching: asyncio.Task[None] | None = None
        self._queue: deque[Job] = deque()
        self._warming: set[asyncio.Task[Any]] = set()
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
        found = False
        if not ray.is_initialized():
            address, why = (self.address, "given") if self.address else await asyncio.to_thread(find_local_cluster)
            if address is not None and not await self._connect(address, why):
                address = None
            if address is None:
                await self._start_own(why)
            found = address is not None and not self.address
        else:
            self.cluster = "already initialised"
        t = time.monotonic()
        self._needs = replace(self._needs, fingerprint=await asyncio.to_thread(code_fingerprint))
        self._actor_cls = ray.remote(num_cpus=1, max_concurrency=self.per_worker + 2, max_restarts=0,
                                     max_task_retries=0)(Worker)
        await self._admit(code_id() if found else "")
        if found and not self._usable():  # a cluster started from another checkout or Python: its workers would run other code
            self._notes.append(f"{self.cluster}: {'; '.join(n.why for n in self._nodes.values())}: started our own")
            await asyncio.to_thread(ray.shutdown)
            self._owns_ray = False
            self._nodes.clear()
            await self._start_own("the running cluster is not ours")
            await self._admit()
        self._t["nodes"] = time.monotonic() - t
        refused = [refused_line(n) for n in self._nodes.values() if n.state == "refused"]
        if not self._usable():
            raise NoWorkers(refused or [f"Ray cluster {self.cluster}: no alive node with a CPU for a worker"])
        for line in refused:
            self._say(f"{line}; the campaign runs on the other node(s)")
        t = time.monotonic()
        await self._warm(self._fill())
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
        self._watching = asyncio.create_task(self._watch(), name="ray-nodes")
        log.info("start-up: %s", self.startup_report())

    def expect(self, settings: list[RunSettings], payload_bytes: int) -> None:
        self._needs = replace(self._needs, providers=tuple(dict.fromkeys(
            (s.model, s.fake, s.service or "") for s in settings)), audio_bytes=payload_bytes)

    async def _admit(self, code: str = "", check: bool = True) -> list[Node]:
        """The alive nodes not seen before, noted and (`check`) checked (`ray_nodes.probe`): each
        `ok` or `refused`. The node of a cluster we started is this process's own: nothing to check."""
        if code:
            self._needs = replace(self._needs, code=code)
        fresh = [n for n in await asyncio.to_thread(alive_nodes, self._ray) if n.node_id not in self._nodes]
        for node in fresh:
            self._nodes[node.node_id] = node
            if self.own_cluster and check:
                node.state = "ok"
        if check and not self.own_cluster:
            await check_nodes(self._ray, fresh, self._needs)
        return fresh

    def _live(self) -> list[_Slot]:
        return [s for s in self._slots if s.alive]

    def _usable(self) -> list[Node]:
        return [n for n in self._nodes.values() if n.state == "ok" and n.cpus > 0]

    def _cap(self) -> int:
        """Workers at most: one per CPU of the usable nodes (each asks for one: more would never
        start), as many as asked if fewer, and no more than the jobs can use."""
        cpus = sum(n.cpus for n in self._usable())
        return max(1, min(self.workers or cpus, cpus, self.most or cpus))

    def _fill(self) -> list[_Slot]:
        """New workers up to the cap, spread over the usable nodes (`ray_nodes.spread`); returned to warm."""
        live = self._live()
        ours = {node_id: sum(s.node == node_id for s in live) for node_id in self._nodes}
        fresh = [self._spawn(node) for node in spread(list(self._nodes.values()), ours, self._cap() - len(live))]
        self._slots += fresh
        return fresh

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
            self._notes.append(f"{why} refused us ({first_line(e)})")
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

    def _spawn(self, node: Node) -> _Slot:
        """A worker actor pinned to `node` (it lives and dies with that node: never moved by Ray)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # deferred: ray is the optional `ray` extra

        self._spawned += 1
        actor = self._actor_cls.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False), name=None).remote()
        return _Slot(actor, self._spawned, Admission(self.per_worker, self.speed), node.node_id)

    async def _warm(self, slots: list[_Slot]) -> list[dict[str, Any]]:
        """Wait until each worker has imported the engine (or give it up after READY_TIMEOUT_S);
        only then does it take runs."""
        async def one(slot: _Slot) -> None:
            try:
                slot.info = await asyncio.wait_for(as_future(slot.actor.ready.remote(self.warm)), READY_TIMEOUT_S)
            except (Exception, TimeoutError) as e:  # noqa: BLE001 - no CPU free, import failed, died, its node lost
                if slot.alive:
                    log.warning("Ray worker %d did not come up on node %s: %s", slot.n, slot.node[:8], e)
                self._retire(slot)
                return
            slot.ready = slot.alive
            self._dispatch()

        await asyncio.gather(*(one(s) for s in slots))
        return [s.info for s in slots if s.alive]

    def _warm_later(self, slots: list[_Slot]) -> None:
        if slots:
            self._later(self._warm(slots))

    def _later(self, work: Coroutine[Any, Any, object]) -> None:
        """Work beside the jobs (warming workers, checking a node), cancelled at close."""
        if self._closing:
            work.close()
            return
        task = asyncio.create_task(work)
        self._warming.add(task)
        task.add_done_callback(self._warming.discard)

    def startup_report(self) -> str:
        """One line: where start-up went (import, cluster start or join, node checks, warm workers)."""
        parts = [f"{k} {self._t[k]:.1f} s" for k in ("import", "cluster", "nodes", "workers") if k in self._t]
        live = self._live()
        nodes = len({s.node for s in live})
        head = f"ray start-up {self._t.get('total', 0.0):.1f} s ({', '.join(parts)}): {self.cluster}, " \
               f"{len(live)} worker(s) × {self.per_worker} session(s)" + (f" on {nodes} nodes" if nodes > 1 else "")
        return "; ".join([head, *self._notes])

    # -- nodes lost and joined

    async def _watch(self) -> None:
        """Every NODE_POLL_S: a node gone takes its workers out (their runs come back lost, through
        `_consume`); a node that joined is checked (beside, so a slow check delays no loss) and given workers."""
        while not self._closing:
            await asyncio.sleep(NODE_POLL_S)
            try:
                alive = {n.node_id for n in await asyncio.to_thread(alive_nodes, self._ray)}
            except Exception as e:  # noqa: BLE001 - the GCS did not answer this time: ask again next time
                log.warning("reading the Ray node list: %s", e)
                continue
            for node in list(self._nodes.values()):
                if node.node_id not in alive and node.state != "gone":
                    self._node_gone(node)
            if alive - set(self._nodes) and not self._closing:
                self._later(self._joined(await self._admit(check=False)))
            self._starve()

    async def _joined(self, nodes: list[Node]) -> None:
        await check_nodes(self._ray, nodes, self._needs)
        for node in nodes:
            if node.state == "refused":
                self._say(refused_line(node))
            elif node.state == "ok" and not self._closing:
                fresh = self._fill()
                self._say(f"Ray node {node.label} joined: {sum(s.node == node.node_id for s in fresh)} worker(s) start there")
                self._warm_later(fresh)

    def _node_gone(self, node: Node) -> None:
        was, node.state = node.state, "gone"
        for slot in [s for s in self._slots if s.node == node.node_id and s.alive]:
            self._retire(slot)  # (its runs come back lost through `_consume`, if they have not yet)
        if was == "ok" and not self._closing:
            fresh = self._fill()
            live = self._live()
            self._say(f"Ray node {node.label} lost: {len(live)} worker(s) on {len(self._usable())} node(s) go on"
                      + (f" ({len(fresh)} more started)" if fresh else ""))
            self._warm_later(fresh)

    def _starve(self) -> None:
        """No worker left nor coming (every node gone or refused): the queued jobs end, said why."""
        if self._closing or any(s.alive for s in self._slots) or any(n.state == "checking" for n in self._nodes.values()):
            return
        while self._queue:
            self._finish(self._queue.popleft().run_id, JobOutcome(
                "error", f"no Ray node left to run it ({len(self._nodes)} seen, none usable)", started=False))

    # -- jobs

    def submit(self, job: Job) -> None:
        if self._closing or self._actor_cls is None:
            raise RuntimeError("executor is not running")
        self._opened(job)
        if job.resume is not None:  # a run cut short (its worker or node lost) goes on first
            self._queue.appendleft(job)
        else:
            self._queue.append(job)
        self._dispatch()

    def _dispatch(self) -> None:
        """Queued jobs to the ready workers holding the fewest runs, up to per_worker each."""
        while self._queue and not self._closing:
            live = [s for s in self._slots if s.alive and s.ready and len(s.runs) < s.admission.limit]
            if not live:
                return
            job = self.caps.take_next(self._queue)  # the first a provider cap has room for
            if job is None:
                return
            slot = min(live, key=lambda s: (len(s.runs), s.admission.busy, s.n))
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

    def _here(self, slot: _Slot) -> bool:
        """The worker ran on this machine (its scratch folder is ours to delete): its node's address
        is loopback (any 127.x: nodes on one machine each have their own) or one of this host's."""
        return bool(slot.info.get("scratch")) and on_this_host(str(slot.info.get("node", "")))

    def _retire(self, slot: _Slot) -> None:
        """A dead (or unreachable) worker: out of use, killed in case it still runs, its scratch
        deleted when it was on this host (killed, it could not clean up)."""
        if slot in self._slots:  # (forgotten: its runs, if any, still end through `_consume`)
            self._slots.remove(slot)
        if not slot.alive:
            return
        slot.alive = slot.ready = False
        with contextlib.suppress(Exception):
            self._ray.kill(slot.actor, no_restart=True)
        if self._here(slot):
            shutil.rmtree(slot.info["scratch"], ignore_errors=True)

    def admissions(self) -> list[Admission]:
        return [s.admission for s in self._slots if s.alive]

    def _queued(self) -> list[Job]:
        return list(self._queue)

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
        if self._watching is not None:
            self._watching.cancel()
            await asyncio.gather(self._watching, return_exceptions=True)
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
                    await asyncio.wait_for(as_future(slot.actor.cleanup.remote()), CLEANUP_TIMEOUT_S)
            if self._here(slot):
                await asyncio.to_thread(shutil.rmtree, slot.info["scratch"], True)
            with contextlib.suppress(Exception):
                self._ray.kill(slot.actor, no_restart=True)

        await asyncio.gather(*(one(s) for s in self._slots))
        self._slots = []

    async def _consume(self, job: Job, stream: AsyncIterator[Awaitable[tuple[Any, ...]]], slot: _Slot) -> None:
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
                    self._where[job.run_id] = (item[1], item[2], slot.node)
                    log.info("run %s on Ray node %s (%s), pid %d", job.run_id, item[2], slot.node[:8], item[1])
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
            at = f" (pid {where[0]} on {where[1]}, node {where[2][:8]})" if where else ""
            if isinstance(e, ex.RayActorError):  # its place goes to a fresh worker, where a node has room
                self._retire(slot)
                self._warm_later(self._fill())
            else:  # (an event batch lost with its node's object store): the run must not go on unheard
                with contextlib.suppress(Exception):
                    self._ray.cancel(stream)
            self._finish(job.run_id, lost=f"{type(e).__name__}{at}: {first_line(e)}")
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
