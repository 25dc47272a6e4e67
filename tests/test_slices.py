"""A pacing thread asks the kernel for short slices (arena_tui.spine.slices): read back from the kernel."""

from __future__ import annotations

import ctypes
import os
import platform
import threading

import pytest

from arena_tui.spine import slices

_SYS_SCHED_GETATTR = {"x86_64": 315, "aarch64": 275}


def _kernel() -> tuple[int, int]:
    major, minor = platform.release().split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _attr_of(tid: int) -> slices._SchedAttr:
    attr = slices._SchedAttr()
    number = _SYS_SCHED_GETATTR[os.uname().machine]
    assert ctypes.CDLL(None, use_errno=True).syscall(number, tid, ctypes.byref(attr), ctypes.sizeof(attr), 0) == 0
    return attr


@pytest.mark.skipif(not platform.system() == "Linux" or os.uname().machine not in _SYS_SCHED_GETATTR
                    or _kernel() < (6, 12), reason="custom slices for normal threads: Linux 6.12 on")
def test_a_pacing_thread_gets_its_short_slice_and_keeps_its_class_and_nice_value() -> None:
    seen: dict[str, object] = {}

    def pacer() -> None:
        tid = threading.get_native_id()
        before = _attr_of(tid)
        seen["took"] = slices.ask_short_slice(400_000)
        seen["again"] = slices.ask_short_slice(400_000)  # once per thread
        seen["before"], seen["after"] = before, _attr_of(tid)

    t = threading.Thread(target=pacer)
    t.start()
    t.join()
    before, after = seen["before"], seen["after"]
    assert isinstance(before, slices._SchedAttr) and isinstance(after, slices._SchedAttr)
    assert seen["took"] is True and seen["again"] is True
    assert after.sched_runtime == 400_000 != before.sched_runtime
    assert (after.sched_policy, after.sched_nice) == (before.sched_policy, before.sched_nice)
    assert _attr_of(threading.get_native_id()).sched_runtime != 400_000, "only the asking thread"
