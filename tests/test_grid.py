"""Each process's pacing grid: where its pacers' chunks fall in each period (arena_tui.spine.grid)."""

from __future__ import annotations

import math

import pytest

from arena_tui.spine import grid


@pytest.mark.parametrize("phase", [0.0, 0.25, 0.999])
@pytest.mark.parametrize("period", [0.02, 0.002, 0.0004])  # a 20 ms chunk at 1x, 10x, 50x
def test_next_tick_is_the_first_grid_instant_at_or_after_now(monkeypatch: pytest.MonkeyPatch, phase: float,
                                                            period: float) -> None:
    monkeypatch.setattr(grid, "_phase", phase)
    for now in (12345.678901, 0.0, 7.0 + phase * period, 98765.4321):
        tick = grid.next_tick(now, period)
        assert now - 1e-9 <= tick < now + period
        k = (tick - phase * period) / period
        assert abs(k - round(k)) < 1e-6, (now, tick)


def test_a_process_without_a_pool_slot_draws_its_phase_from_its_pid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Consecutive pids land far apart in the period, so unplanned processes rarely wake together."""
    monkeypatch.setattr(grid, "_phase", None)
    phases = []
    for pid in range(4000, 4008):
        monkeypatch.setattr(grid.os, "getpid", lambda pid=pid: pid)
        phases.append(grid.phase())
    assert all(0.0 <= p < 1.0 for p in phases)
    gaps = [min(abs(a - b), 1 - abs(a - b)) for i, a in enumerate(phases) for b in phases[i + 1:]]
    assert min(gaps) > 1 / (4 * len(phases)), sorted(phases)
    grid.set_phase(1.25)
    assert math.isclose(grid.phase(), 0.25)
