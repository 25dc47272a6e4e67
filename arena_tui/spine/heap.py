"""The garbage collector's full passes kept short and rare in a long-lived process that paces or draws.

A full pass walks every tracked object: ~300k in a process that has imported Textual or Pipecat,
mostly those modules. In the monitor with 8 runs streaming one came every ~12 s and froze the
screen for 170-290 ms; in a worker, the sessions' pacing waited as long.

Only a process whose entry point says so (`settle_heaps_here`: the monitor, a local worker) does
anything: freezing makes the "a quarter more survivors" rule fire on what was allocated since, so
in a process holding far more than it froze (a test session running apps and commands in-process)
full passes came often and long enough (~400 ms) to cost runs their pace.
"""

from __future__ import annotations

import gc

FULL_GC_EVERY = 100  # younger passes per full one (Python's default: 10)

_enabled = False
_settled: set[str] = set()


def settle_heaps_here(on: bool = True) -> None:
    """This process's `settle_heap` calls take effect (on=False: no longer, and every moment may
    settle again; a test that turned it on turns it off)."""
    global _enabled
    _enabled = on
    if not on:
        _settled.clear()


def settle_heap(moment: str) -> None:
    """Leave what is alive now out of every later full pass (`gc.freeze`), and make full passes
    rarer: with little left to walk, the survivors rule made a ~100 ms pass frequent, so one waits
    for 100 younger passes instead of 10 (scripts/bench_ui_pacing.py --keys 8: detail opening
    max 250-295 → 47-60 ms, p95 41-56 → 40-44 ms).

    Once per process at each `moment` (after a start's imports; after a first run's), never per
    run: a frozen object is never collected as part of a cycle later, so what was transient then
    stays for good."""
    if not _enabled or moment in _settled:
        return
    _settled.add(moment)
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_GC_EVERY)


def unsettle_heap() -> None:
    """Free what a failed or stopped run left in reference cycles now, not at interpreter exit: a
    process that settled its heap (the monitor) froze what its run had loaded, its sessions stayed
    reachable from it, and soxr's nanobind objects they hold printed a 20-line leak report on
    stderr after the one line saying why. ~0.3 s after a run, nothing when nothing was frozen."""
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()
