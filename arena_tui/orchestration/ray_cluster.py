"""Which Ray cluster a campaign runs on, when none is given: a running cluster on this host is
reused only when it is verifiably alive and ours (the address in `RAY_ADDRESS` or in Ray's
`ray_current_cluster` file is loopback, a raylet process here serves it, its port answers, and it
takes our token and runs our Ray and Python: all bounded, a process scan, a 1 s connect and a
child's probe), else the caller starts its own (`ray_own.py`). Never `ray.init()`'s own default:
it follows that file blindly, so a file left by an earlier `ray start` or a killed test cluster
sent the campaign to a dead address, where `ray.init` retried for minutes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

from .ray_logs import log

LOCAL_IP = "127.0.0.1"
PROBE_TIMEOUT_S = 1.0  # connecting to a remembered cluster's port: alive answers at once
VERIFY_TIMEOUT_S = 15.0  # a child asking that GCS for its versions, with our token (imports Ray: ~1 s)

# Ray asks the routing table for "its" address (192.0.2.2 on a sandbox); with cluster mode off
# for IP discovery it uses 127.0.0.1 in the driver, GCS, raylets and workers (they inherit env).
# Read when Ray is first imported, so set before that.
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


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
    """No address, or 127.0.0.1 itself (where Ray's loopback-only mode applies; not 127.0.0.10)."""
    if address is None:
        return True
    rest = address.split("//")[-1]
    host = rest.rpartition(":")[0] if rest.count(":") == 1 else rest
    return host in (LOCAL_IP, "localhost")


def on_this_host(ip: str) -> bool:
    """Whether a Ray node at `ip` runs on this machine (its files are ours to see): any loopback
    address (all of 127.0.0.0/8 is this host, as ::1 is; so are two nodes on 127.0.0.2 and
    127.0.0.3), or one of this host's own addresses (one it can bind: binding sends nothing)."""
    try:
        addr = ipaddress.ip_address(ip.strip().strip("[]"))
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    if addr.is_loopback:
        return True
    if addr.is_unspecified or addr.is_multicast:
        return False
    try:
        with socket.socket(socket.AF_INET6 if addr.version == 6 else socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind((str(addr), 0))
    except OSError:  # EADDRNOTAVAIL: another machine's address
        return False
    return True


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
        port = address.split("//")[-1].rpartition(":")[2]
        if not is_local(address) or not port.isdigit():
            why.append(f"{source} {address} is not on {LOCAL_IP} (join another cluster with --ray-address)")
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


def code_id() -> str:
    """Which arena-tui a process runs: its package folder (a cluster from another checkout differs)."""
    import arena_tui  # deferred: tiny, and only for the comparison

    return str(Path(arena_tui.__file__).resolve().parent)


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


class ObjectRef[T](Protocol):
    """What is read of a Ray `ObjectRef` here (ray is an optional extra, so never imported for its types)."""

    def future(self) -> concurrent.futures.Future[T]: ...


def as_future[T](ref: ObjectRef[T]) -> asyncio.Future[T]:
    return asyncio.wrap_future(ref.future())
