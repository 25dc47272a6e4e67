"""The nodes of the Ray cluster a campaign runs on: which are alive, and whether each can run it.

The executor spreads its workers over every alive node (`ray_executor.py`) and reads the node
list again every few seconds, so a node lost mid-campaign stops getting runs and one that joins
starts getting them. Before a node gets any worker, a small task pinned to it (`probe`, Ray's
`NodeAffinitySchedulingStrategy`, no CPU asked) checks what a worker there needs and would
otherwise fail on mid-run; a node that lacks it is refused with one line naming the node and what
it lacks, and the campaign uses the others:

- arena-tui importable, and the same code as the coordinator's (a fingerprint of its sources:
  events cross as JSON the coordinator decodes, and a run resumed on another node must replay by
  the same rules);
- the campaign's providers' Python packages, and their API keys in the environment the node was
  started with (`ray start` hands its environment to its workers; keys never travel);
- room in its temp folder for the benchmarks' audio (benchmarks travel by value through Ray's
  object store: a node needs no benchmark data folder of its own).

Ray itself refuses a node running another Ray or Python when it joins the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import importlib.util
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from .ray_cluster import as_future, code_id

#: the packages a worker runs (pyproject's `packages.find`): their sources make the fingerprint
PACKAGES = ("arena_tui", "runners", "benchmarks")
#: a node's check: a fresh Python importing Ray and our catalog, on a loaded machine
PROBE_TIMEOUT_S = 90.0

NodeState = Literal["checking", "ok", "refused", "gone"]


@dataclass
class Node:
    """One node of the cluster as the executor sees it."""

    node_id: str  # Ray's node id (hex)
    ip: str
    cpus: int  # its CPU resource: as many of our workers at most
    state: NodeState = "checking"
    why: str = ""  # refused: what it lacks
    head: bool = False

    @property
    def label(self) -> str:
        """How a line names it: its address and the start of its id (two nodes may share an address)."""
        return f"{self.ip} ({self.node_id[:8]})"


@dataclass(frozen=True)
class Needs:
    """What a node must have to run the campaign's workers (sent to `probe`)."""

    fingerprint: str  # the coordinator's `code_fingerprint()`
    code: str = ""  # when set, the package folder it must run from (a cluster found here, not given)
    providers: tuple[tuple[str, bool, str], ...] = ()  # (model, fake, service class) of each kind of run
    audio_bytes: int = 0  # the benchmarks' audio a worker unpacks into its temp folder


@functools.cache
def code_fingerprint() -> str:
    """This installation's `sources_fingerprint`: equal on two nodes exactly when they run the
    same code, wherever each has it installed."""
    roots = {}
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)  # (finds without running the package's __init__)
        roots[package] = [Path(f) for f in (spec.submodule_search_locations or [])] if spec is not None else []
    return sources_fingerprint(roots)


def sources_fingerprint(roots: dict[str, list[Path]]) -> str:
    """A hash of every .py under each package's folders, by its path inside the package."""
    h = hashlib.sha256()
    for package, folders in roots.items():
        for root in folders:
            for path in sorted(root.rglob("*.py")):
                h.update(f"{package}/{path.relative_to(root).as_posix()}\0".encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def probe(needs: Needs) -> list[str]:
    """On the node: what it lacks of `needs`, one phrase each (none: it can run the campaign).

    Runs wherever Ray puts it: imports nothing heavy (no Pipecat), writes nothing."""
    from runners.catalog import find  # deferred: the catalog is data (no Pipecat); read on the node being checked
    from runners.provider_entry import installed  # deferred: as above

    lacks = []
    if needs.code and code_id() != needs.code:
        lacks.append(f"it runs arena-tui from {code_id()}, not {needs.code}")
    elif code_fingerprint() != needs.fingerprint:
        lacks.append(f"its arena-tui ({code_id()}) is other code than the coordinator's "
                     f"(fingerprint {code_fingerprint()}, not {needs.fingerprint}): install the same version")
    for model, fake, service in needs.providers:
        if service:
            module = service.partition(":")[0]
            if not installed(module):
                lacks.append(f"{model}: service class module {module!r} is not installed")
            continue
        try:
            lacks += find(model).problems(fake=fake)
        except ValueError as e:
            lacks.append(str(e))
    tmp = tempfile.gettempdir()
    try:
        free = shutil.disk_usage(tmp).free
    except OSError as e:
        lacks.append(f"its temp folder {tmp} cannot be read ({e.strerror})")
    else:
        if free < 2 * needs.audio_bytes:  # (each worker unpacks them once: room for two, with the rest of the disk's use)
            lacks.append(f"its temp folder {tmp} has {free / 1e6:.0f} MB free, the benchmarks' audio needs "
                         f"{2 * needs.audio_bytes / 1e6:.0f} MB")
    return list(dict.fromkeys(lacks))


def alive_nodes(ray: ModuleType) -> list[Node]:
    """The cluster's alive nodes (blocking: a GCS request; call it in a thread)."""
    out = []
    for n in ray.nodes():
        if not n.get("Alive"):
            continue
        resources = n.get("Resources") or {}
        out.append(Node(str(n["NodeID"]), str(n.get("NodeManagerAddress", "?")), int(resources.get("CPU", 0)),
                        head="node:__internal_head__" in resources))
    return out


async def check_nodes(ray: ModuleType, nodes: list[Node], needs: Needs, timeout_s: float = PROBE_TIMEOUT_S) -> None:
    """Probe each node where it runs; each ends `ok`, or `refused` with what it lacks (`why`)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # deferred: ray is the optional `ray` extra

    task = _probe_task(ray)

    async def one(node: Node) -> None:
        ref = task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False)).remote(needs)
        try:
            lacks = await asyncio.wait_for(as_future(ref), timeout_s)
        except TimeoutError:
            with contextlib.suppress(Exception):  # (already ended, or its node is gone)
                ray.cancel(ref, force=True)
            lacks = [f"its check did not answer within {timeout_s:.0f} s"]
        except Exception as e:  # noqa: BLE001 - the task could not run there: most often arena-tui is not importable
            lacks = [lack_of(e)]
        if node.state == "checking":  # (lost while it was checked: stays gone)
            node.state, node.why = ("refused", "; ".join(lacks)) if lacks else ("ok", "")

    await asyncio.gather(*(one(n) for n in nodes))


@functools.cache
def _probe_task(ray: ModuleType) -> Any:
    return ray.remote(num_cpus=0, max_retries=0)(probe)


def lack_of(e: BaseException) -> str:
    """What a node lacks, from the error its check task raised: the import that failed, when one did."""
    text = str(e)
    failed = re.findall(r"\b(?:ModuleNotFoundError|ImportError): [^\n]+", text)
    if failed:
        return f"it cannot import arena-tui ({failed[-1].strip()})"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return f"its check failed ({type(e).__name__}: {lines[-1] if lines else ''})"


def refused_line(node: Node) -> str:
    return f"Ray node {node.label} refused: {node.why}"


def spread(nodes: list[Node], ours: dict[str, int], want: int) -> list[Node]:
    """Where the next `want` workers go: each on the usable node holding fewest of ours (the head
    first on a tie, then the cluster's order), never more on a node than its CPUs."""
    counts = dict(ours)
    usable = [n for n in nodes if n.state == "ok" and n.cpus > 0]
    order = {n.node_id: i for i, n in enumerate(sorted(usable, key=lambda n: not n.head))}
    out: list[Node] = []
    for _ in range(want):
        free = [n for n in usable if counts.get(n.node_id, 0) < n.cpus]
        if not free:
            break
        node = min(free, key=lambda n: (counts.get(n.node_id, 0), order[n.node_id]))
        counts[node.node_id] = counts.get(node.node_id, 0) + 1
        out.append(node)
    return out
