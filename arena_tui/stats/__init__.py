"""The statistics behind the leaderboard and reports: pure functions on plain numbers and verdicts.

Why these and not others:
- Pass rates get a Wilson score interval: honest at small n and at 0 % / 100 %, where the normal
  approximation gives nonsense (a 10/10 run does not prove a 100 % model).
- Latency percentiles get a percentile-bootstrap interval (2000 resamples). A p95 from 30 turns is
  one or two samples; the interval says how little that pins down. The seed is explicit so the same
  data always gives the same interval (reports are diffable, tests have known answers).
- Consistency across repeats (how often a turn's verdict flips, which turns never pass) is a rule
  about verdicts: `arena_tui.verdicts.turn_consistency`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959964  # two-sided 95 % normal quantile
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
PERCENTILES = (50, 90, 95, 99)
_BLOCK = 250  # bootstrap resamples drawn at once


def wilson(passes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of `passes`/`n`; (0, 0) when there is nothing to count.

    The ends are exact (0 passes → lower 0, all pass → upper 1), not 1e-17 off.
    """
    if n <= 0:
        return (0.0, 0.0)
    if not 0 <= passes <= n:
        raise ValueError(f"wilson: passes {passes} outside 0..{n}")
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if passes == 0 else max(0.0, centre - half)
    hi = 1.0 if passes == n else min(1.0, centre + half)
    return (lo, hi)


@dataclass(frozen=True)
class Rate:
    """passes / n with its Wilson 95 % interval (rate and interval None when n is 0)."""

    passes: int
    n: int

    @property
    def rate(self) -> float | None:
        return self.passes / self.n if self.n else None

    @property
    def ci95(self) -> tuple[float, float] | None:
        return wilson(self.passes, self.n) if self.n else None

    def __add__(self, other: Rate) -> Rate:
        return Rate(self.passes + other.passes, self.n + other.n)


def _clean(values: Sequence[float | None]) -> np.ndarray:
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    return arr[np.isfinite(arr)]


@dataclass(frozen=True)
class Distribution:
    """mean and percentiles of one sample (linear interpolation, as numpy and pandas default)."""

    n: int
    mean: float
    std: float  # sample standard deviation (ddof 1); 0 for a single value
    min: float
    max: float
    p50: float
    p90: float
    p95: float
    p99: float


def describe(values: Sequence[float | None]) -> Distribution | None:
    """Distribution of the finite values (None and NaN dropped); None when nothing is left."""
    arr = _clean(values)
    if arr.size == 0:
        return None
    p50, p90, p95, p99 = (float(x) for x in np.percentile(arr, PERCENTILES))
    std = float(arr.std(ddof=1)) if arr.size > 1 else 0.0
    return Distribution(int(arr.size), float(arr.mean()), std, float(arr.min()), float(arr.max()), p50, p90, p95, p99)


def median(values: Sequence[float | None]) -> float | None:
    """The median of the finite values (the mean of the middle two for an even count, as `describe`'s
    p50 and the leaderboard's); None when nothing is left."""
    d = describe(values)
    return d.p50 if d is not None else None


def bootstrap_percentile_cis(
    values: Sequence[float | None],
    qs: Sequence[float],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> list[tuple[float, float]] | None:
    """Percentile-bootstrap intervals of the `qs`-th percentiles (0–100) from one set of resamples:
    draw `resamples` samples with replacement from a generator seeded with `seed`, take each
    percentile of each, and the (1−level)/2 and (1+level)/2 quantiles of those. Same inputs and
    seed → the same intervals; asking for one percentile or several gives the same interval for it."""
    arr = _clean(values)
    if arr.size == 0:
        return None
    if arr.size == 1:
        v = float(arr[0])
        return [(v, v) for _ in qs]
    rng = np.random.default_rng(seed)
    # Resampled in blocks so memory stays ~BLOCK x n whatever `resamples` is (a pooled model row
    # over six benchmarks x ten repeats is ~2,000 turns).
    stats = np.empty((len(qs), resamples))
    for start in range(0, resamples, _BLOCK):
        rows = min(_BLOCK, resamples - start)
        idx = rng.integers(0, arr.size, size=(rows, arr.size))
        stats[:, start : start + rows] = np.percentile(arr[idx], list(qs), axis=1)
    tail = (1.0 - level) / 2.0
    bounds = np.quantile(stats, [tail, 1.0 - tail], axis=1)
    return [(float(bounds[0, i]), float(bounds[1, i])) for i in range(len(qs))]


def bootstrap_percentile_ci(
    values: Sequence[float | None],
    q: float,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """The bootstrap interval of one percentile (see `bootstrap_percentile_cis`)."""
    cis = bootstrap_percentile_cis(values, [q], resamples=resamples, seed=seed, level=level)
    return cis[0] if cis else None


def mean_std(values: Sequence[float | None], ddof: int = 1) -> tuple[float | None, float | None]:
    """Mean and standard deviation over repeats (std None when fewer than ddof + 1 values)."""
    arr = _clean(values)
    if arr.size == 0:
        return (None, None)
    return (float(arr.mean()), float(arr.std(ddof=ddof)) if arr.size > ddof else None)
