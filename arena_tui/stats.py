"""The statistics behind the leaderboard and reports: pure functions on plain numbers and verdicts.

Why these and not others:
- Pass rates get a Wilson score interval: honest at small n and at 0 % / 100 %, where the normal
  approximation gives nonsense (a 10/10 run does not prove a 100 % model).
- Latency percentiles get a percentile-bootstrap interval (2000 resamples). A p95 from 30 turns is
  one or two samples; the interval says how little that pins down. The seed is explicit so the same
  data always gives the same interval (reports are diffable, tests have known answers).
- Consistency across repeats is counted per turn: how often its verdict changes from one repeat to
  the next, and which turns never pass. A model that passes 80 % of turns by passing a different
  80 % each time is a different model from one that always fails the same 20 %.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Z95 = 1.959964  # two-sided 95 % normal quantile
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
PERCENTILES = (50, 90, 95, 99)
_BLOCK = 250  # bootstrap resamples drawn at once

TurnStatus = Literal["pass", "fail", "missing"]


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
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


# --- consistency across repeats ----------------------------------------------------------------


def turn_status(verdicts: Mapping[str, str] | None) -> TurnStatus:
    """One repeat's say on one turn: fail if any dimension fails, pass if the scored ones all
    pass, missing when the turn has no verdict at all (it never ran or was never judged)."""
    if not verdicts:
        return "missing"
    scored = [v for v in verdicts.values() if v != "na"]
    if not scored:
        return "missing"
    return "fail" if "fail" in scored else "pass"


def _changes(seq: Sequence[str]) -> int:
    return sum(1 for a, b in zip(seq, seq[1:]) if a != b)


@dataclass(frozen=True)
class TurnConsistency:
    """How one turn fared over the repeats of one model (repeats in run order)."""

    turn_index: int
    statuses: tuple[TurnStatus, ...]
    flips: int  # status changes between consecutive repeats (pass→fail or fail→pass or to/from missing)
    metric_flips: dict[str, int] = field(default_factory=dict)  # per dimension, changes among its non-na verdicts

    @property
    def runs(self) -> int:
        return len(self.statuses)

    @property
    def pass_runs(self) -> int:
        return self.statuses.count("pass")

    @property
    def fail_runs(self) -> int:
        return self.statuses.count("fail")

    @property
    def missing_runs(self) -> int:
        return self.statuses.count("missing")

    @property
    def unstable(self) -> bool:
        """Its verdict is not the same in every repeat (missing counts as a different verdict)."""
        return len(set(self.statuses)) > 1

    @property
    def always_fails(self) -> bool:
        """Never passed in any repeat, and failed (not just missing) in at least one."""
        return self.pass_runs == 0 and self.fail_runs > 0

    @property
    def pattern(self) -> str:
        """`0:pass|1:fail|…`, repeat index first, for CSVs and reports."""
        return "|".join(f"{i}:{s}" for i, s in enumerate(self.statuses))


def turn_consistency(repeats: Sequence[Mapping[int, Mapping[str, str] | None]]) -> list[TurnConsistency]:
    """Per turn, its verdicts across `repeats` (one mapping turn → {dimension: verdict} per repeat,
    in run order). A turn absent from a repeat is `missing` there."""
    turns = sorted({t for rep in repeats for t in rep})
    out = []
    for t in turns:
        per_repeat = [rep.get(t) for rep in repeats]
        statuses = tuple(turn_status(v) for v in per_repeat)
        dims = sorted({d for v in per_repeat if v for d in v})
        metric_flips = {}
        for d in dims:
            seq = [v[d] for v in per_repeat if v and v.get(d, "na") != "na"]
            n = _changes(seq)
            if n:
                metric_flips[d] = n
        out.append(TurnConsistency(t, statuses, _changes(statuses), metric_flips))
    return out
