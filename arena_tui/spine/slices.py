"""Short CPU slices for the threads that pace audio: asked of the kernel, not taken.

A thread that paces 20 ms chunks runs for a fraction of a millisecond and sleeps; when its timer
fires while both cores are busy (other sessions' workers, another program), it waits for a core.
Linux's EEVDF scheduler (6.12 on) lets a thread of the normal class ask for a shorter slice
(`sched_attr.sched_runtime`, 0.1-100 ms): its virtual deadline comes sooner, so it is picked sooner
and preempts a longer-sliced thread when it wakes, with no change in its share of the CPU (its
weight, the nice value, is untouched) and no privilege needed. Elsewhere (another OS, an older
kernel, a filter on the call) the request fails or is ignored, and nothing changes.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

#: the slice a pacing thread asks for: a period's work of a worker's sessions is ~0.5-1 ms
PACING_SLICE_NS = 500_000

_SYS_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274}  # the call's number where we run
_thread = threading.local()  # `took`: whether the kernel took this thread's request (a thread id may be reused)


class _SchedAttr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("sched_policy", ctypes.c_uint32), ("sched_flags", ctypes.c_uint64),
                ("sched_nice", ctypes.c_int32), ("sched_priority", ctypes.c_uint32),
                ("sched_runtime", ctypes.c_uint64), ("sched_deadline", ctypes.c_uint64),
                ("sched_period", ctypes.c_uint64)]


def ask_short_slice(slice_ns: int = PACING_SLICE_NS) -> bool:
    """Ask for `slice_ns` slices for the calling thread, its policy and nice value kept (once per
    thread). Whether the kernel took the request (a kernel before 6.12 takes it and ignores it)."""
    took = getattr(_thread, "took", None)
    if took is None:
        took = _thread.took = _set_slice(slice_ns)
    return took


def _set_slice(slice_ns: int) -> bool:
    number = _SYS_SCHED_SETATTR.get(os.uname().machine)
    if not sys.platform.startswith("linux") or number is None:
        return False
    try:
        policy = os.sched_getscheduler(0)
        if policy not in (os.SCHED_OTHER, os.SCHED_BATCH):  # a real-time or idle thread keeps its class
            return False
        attr = _SchedAttr(size=ctypes.sizeof(_SchedAttr), sched_policy=policy,
                          sched_nice=os.getpriority(os.PRIO_PROCESS, 0), sched_runtime=slice_ns)
        return ctypes.CDLL(None, use_errno=True).syscall(number, 0, ctypes.byref(attr), 0) == 0
    except (OSError, AttributeError):
        return False
