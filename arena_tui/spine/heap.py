"""The garbage collector's full passes kept short and rare in a process that paces or draws.

A full pass walks every tracked object: ~300k in a process that has imported Textual or Pipecat,
mostly those modules. In the monitor with 8 runs streaming one came every ~12 s and froze the
screen for 170-290 ms; in a worker, the sessions' pacing waited as long.
"""

from __future__ import annotations

import gc

FULL_GC_EVERY = 100  # younger passes per full one (Python's default: 10)

_settled: set[str] = set()
_rare_full_passes = False


def prefer_rare_full_passes() -> None:
    """This process (the monitor, a worker: long-lived, its entry point decides) makes a full pass
    wait for `FULL_GC_EVERY` younger ones from its next `settle_heap` on. A library call never
    does: in a process holding much more than it froze (a test session) a rare full pass is long."""
    global _rare_full_passes
    _rare_full_passes = True


def settle_heap(moment: str) -> None:
    """Leave what is alive now out of every later full pass (`gc.freeze`), and, where the process
    prefers it, make full passes rarer: with little left to walk, the "a quarter more survivors"
    rule made a ~100 ms pass frequent, so one waits for 100 younger passes instead of 10
    (scripts/bench_ui_pacing.py --keys 8: detail opening max 250-295 → 47-60 ms with both,
    p95 41-56 → 49-54 ms frozen only, → 40-44 ms with rare full passes too).

    Once per process at each `moment` (after a start's imports; after a first run's), never per
    run: a frozen object is never collected as part of a cycle later, so what was transient then
    stays for good."""
    if moment in _settled:
        return
    _settled.add(moment)
    gc.freeze()
    if _rare_full_passes:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, FULL_GC_EVERY)
