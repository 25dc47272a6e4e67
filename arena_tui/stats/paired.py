"""Two rows on the same turns: the gap between their pass rates, its 95 % interval and a test of
whether it is more than noise. Pure functions on verdicts already paired by turn (which turns pair
is `arena_tui.compare.gap`'s rule); docs/reports.md ("Gaps between rows") states the assumptions.

Turns of one conversation are not independent (a missed call can fail the turns after it), so both
methods read how much they lean on each other from the paired difference B − A along turn order
(`serial.lag1`: its bias-corrected lag-1 autocorrelation) and widen for it. Why these methods:
- **One run a side** (`one_run_each`): each turn is a matched pair. Only the discordant turns carry
  information: the test is McNemar's exact test (two-sided, Binomial(b + c, 1/2)) and the interval
  Newcombe's method 10 (Wilson intervals of both rates joined through their correlation: honest at
  small n and at 0 %/100 %), both on *effective* counts: every cell of the 2×2 table divided by the
  variance inflation (1 + ρ)/(1 − ρ) (Rao & Scott's design-effect correction, here for serial
  correlation), the binomial taken through the incomplete beta function so the counts need not be
  whole, and the interval's multiplier Student's t with (effective turns − 1) degrees of freedom, the
  inflation being estimated. With no correlation seen (ρ <= 0) the test is the exact McNemar test and
  the interval Newcombe's but for that multiplier (2.05 at 30 turns for 1.96); under MIN_TURNS paired
  turns (correlation not estimated) both are exactly the classic ones.
  Seeded simulations (scripts/bench_gap.py, 30 turns, a failed turn failing the next one with chance
  0, 0.5, 0.8) keep one setting "not distinguishable" >= 95 % and cover a known gap ~95 %, where the
  uncorrected test fell to 72-87 %; the price is some power when turns are independent (24.5 % against
  30 % on the bench's known gap). What one run cannot show is a swing lasting the whole run (`Gap.caveat`).
- **Repeats on either side** (`with_repeats`): a two-stage paired bootstrap. Each resample draws the
  common turns with replacement in circular blocks of `serial.block_length` turns (one draw for both
  sides: the pairing; a block keeps a streak whole, 1 when no correlation is seen), then each side's
  runs with replacement (the conversation is the unit: turns of one run share its fate), and takes
  B − A over the drawn verdicts. A bootstrap over runs alone calls two rows of one setting different
  19 % of the time at 2 repeats, 21 % at 3 and 12 % at 5 (2-5 repeats is what a benchmark gets); the
  two-stage one stays at or under 5 % with failures cascading or not (scripts/bench_gap.py), erring
  wide when turns are independent.
  p is the bootstrap's own: twice the smaller share of resamples on either side of 0, so "the
  interval excludes 0" and "p < 0.05" say the same.
- **Many pairs** (`holm`): Holm's step-down adjustment keeps the chance of calling any of them
  real by accident at 5 %; the intervals stay per pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, Z95, wilson
from .serial import MIN_TURNS, block_length, inflation, lag1
from .tails import binomial_half_lower, t_quantile

ALPHA = 0.05
MCNEMAR = "exact McNemar, Newcombe interval on effective turns"
BOOTSTRAP = "paired bootstrap over turn blocks and runs"
#: what the methods cannot see, said wherever their figures are (`Gap.caveat`)
RUN_WIDE = "one run a side: a swing lasting the whole run is not seen"
TOO_FEW = f"too few turns (< {MIN_TURNS}) to measure their correlation: taken as independent"

Verdict = bool | None  # pass, fail, or no verdict on this turn (never played, not judged, not scored)


@dataclass(frozen=True)
class Gap:
    """B − A on the turns both sides have a verdict on, with its 95 % interval and two-sided p."""

    method: str  # MCNEMAR | BOOTSTRAP
    turns: int  # the turns paired (both sides have a verdict on each)
    runs: tuple[int, int]  # runs of A and of B
    a: float  # A's pass rate over its paired verdicts
    b: float
    ci: tuple[float, float]
    p: float
    discordant: tuple[int, int] | None = None  # one run each: (A passed, B failed), (A failed, B passed)
    resamples: int = 0  # the bootstrap's (those that drew a verdict on both sides)
    serial: float | None = None  # lag-1 autocorrelation of B − A along the paired turns (`serial.lag1`); None: too few
    effective: float | None = None  # one run each: the turns the test and interval count (turns / inflation)
    block: int = 1  # repeats: the turns the bootstrap draws together

    @property
    def difference(self) -> float:
        return self.b - self.a

    @property
    def caveat(self) -> str:
        """What the method cannot see in these data ('' when nothing it knows of)."""
        said = [RUN_WIDE] * (self.method == MCNEMAR) + [TOO_FEW] * (self.serial is None)
        return "; ".join(said)

    def distinguishable(self, p: float | None = None, alpha: float = ALPHA) -> bool:
        """Whether the gap is more than noise at `alpha` (by `p`, e.g. Holm's adjusted, default its own)."""
        return (self.p if p is None else p) < alpha


def mcnemar_p(b: float, c: float) -> float:
    """Exact two-sided McNemar p of `b` and `c` discordant pairs: twice the smaller binomial tail of
    Binomial(b + c, 1/2), at most 1 (1 when there is no discordant pair). Whole counts sum the
    binomial terms; effective counts (not whole) take the same tail through the incomplete beta."""
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar_p: negative count ({b}, {c})")
    n = b + c
    if n == 0:
        return 1.0
    if float(b).is_integer() and float(c).is_integer():
        tail = sum(math.comb(int(n), i) for i in range(int(min(b, c)) + 1))
        return min(1.0, 2 * tail / 2 ** int(n))
    return min(1.0, 2 * binomial_half_lower(min(b, c), n))


def newcombe_interval(both: float, first_only: float, second_only: float, neither: float, z: float = Z95) -> tuple[float, float]:
    """Newcombe's method 10 interval for p1 − p2 of paired binary data: p1 the first's pass rate
    ((both + first_only) / n), p2 the second's. Wilson intervals of each rate, combined through
    their phi correlation (its numerator shrunk by n/2 when positive, as Newcombe 1998)."""
    n = both + first_only + second_only + neither
    if n <= 0:
        raise ValueError("newcombe_interval: no pairs")
    x1, x2 = both + first_only, both + second_only
    p1, p2 = x1 / n, x2 / n
    l1, u1 = wilson(x1, n, z)
    l2, u2 = wilson(x2, n, z)
    margins = x1 * (n - x1) * x2 * (n - x2)
    cross = both * neither - first_only * second_only
    shrunk = cross - n / 2 if cross > n / 2 else 0.0 if cross >= 0 else cross
    phi = shrunk / math.sqrt(margins) if margins else 0.0
    d = p1 - p2
    lo = d - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    hi = d + math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
    return (max(-1.0, lo), min(1.0, hi))


def one_run_each(a: Sequence[Verdict], b: Sequence[Verdict]) -> Gap | None:
    """The gap between two runs over the turns both have a verdict on (`a[i]`, `b[i]`: one turn, in
    turn order): McNemar's exact p and Newcombe's interval on the effective counts (module docstring).
    None when no turn pairs."""
    if len(a) != len(b):
        raise ValueError(f"one_run_each: {len(a)} verdicts against {len(b)}")
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not pairs:
        return None
    both = sum(x and y for x, y in pairs)
    a_only = sum(x and not y for x, y in pairs)
    b_only = sum(y and not x for x, y in pairs)
    neither = len(pairs) - both - a_only - b_only
    n = len(pairs)
    rho = lag1([int(y) - int(x) for x, y in pairs])
    f = inflation(rho)
    z = Z95 if rho is None else t_quantile(0.95, max(1.0, n / f - 1.0))
    ci = newcombe_interval(both / f, b_only / f, a_only / f, neither / f, z)
    return Gap(MCNEMAR, n, (1, 1), (both + a_only) / n, (both + b_only) / n, ci, mcnemar_p(a_only / f, b_only / f),
               (a_only, b_only), serial=rho, effective=n / f)


def _matrix(runs: Sequence[Sequence[Verdict]], turns: int) -> tuple[np.ndarray, np.ndarray]:
    """(passes, verdicts) as runs × turns integers: 1 where the run passed (had a verdict on) the turn.
    Integers, so the products below are numpy's own loops: a BLAS thread pool on a busy machine made
    these small float products 100x slower (scripts/bench_report.py)."""
    if any(len(r) != turns for r in runs):
        raise ValueError("with_repeats: every run needs a verdict slot per turn")
    passes = np.array([[1 if v else 0 for v in r] for r in runs], dtype=np.int64).reshape(len(runs), turns)
    judged = np.array([[0 if v is None else 1 for v in r] for r in runs], dtype=np.int64).reshape(len(runs), turns)
    return passes, judged


TURNS, RUNS_A, RUNS_B = 0, 1, 2  # the bootstrap's three streams of draws, each seeded on its own


@lru_cache(maxsize=16)
def _draws(seed: int, stream: int, n: int, resamples: int, block: int = 1) -> np.ndarray:
    """How often each of `n` items is drawn in each resample (resamples × n counts summing to n): n
    draws with replacement per resample, counted; with `block` > 1, ceil(n / block) circular blocks
    of `block` consecutive items (a block may wrap past the last to the first), cut to n. Each stream
    is its own seeded generator, so a report's hundreds of pairs of the same shape reuse one set of
    draws (read-only)."""
    if block <= 1:
        rng = np.random.default_rng([seed, stream, n, resamples])
        picks = rng.integers(0, n, size=(resamples, n))
    else:
        rng = np.random.default_rng([seed, stream, n, resamples, block])
        starts = rng.integers(0, n, size=(resamples, -(-n // block)))
        picks = ((starts[:, :, None] + np.arange(block)) % n).reshape(resamples, -1)[:, :n]
    picks = picks + n * np.arange(resamples)[:, None]
    out = np.bincount(picks.ravel(), minlength=resamples * n).reshape(resamples, n)
    out.flags.writeable = False
    return out


def _shares(passes: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """Each turn's pass share over the runs with a verdict on it (the turns kept have one)."""
    return passes.sum(axis=0) / judged.sum(axis=0)


def _rates(turn_draws: np.ndarray, run_draws: np.ndarray, passes: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """Each resample's pooled pass rate (NaN where it drew no verdict)."""
    won = ((run_draws @ passes) * turn_draws).sum(axis=1)
    seen = ((run_draws @ judged) * turn_draws).sum(axis=1)
    return np.where(seen > 0, won / np.maximum(seen, 1), np.nan)


def with_repeats(a: Sequence[Sequence[Verdict]], b: Sequence[Sequence[Verdict]], *, resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED, level: float = 0.95) -> Gap | None:
    """The gap between two rows of runs (each run a verdict per common turn, same turn order on both
    sides) by the two-stage paired bootstrap (module docstring), its turn blocks sized from the lag-1
    correlation of the turns' B − A pass shares. A turn no run of a side has a verdict on pairs
    nothing and is dropped. None when no turn pairs."""
    if not a or not b:
        return None
    width = len(a[0])
    pa, ja = _matrix(a, width)
    pb, jb = _matrix(b, width)
    keep = (ja.sum(axis=0) > 0) & (jb.sum(axis=0) > 0)
    if not keep.any():
        return None
    pa, ja, pb, jb = pa[:, keep], ja[:, keep], pb[:, keep], jb[:, keep]
    turns = int(keep.sum())
    rho = lag1(_shares(pb, jb) - _shares(pa, ja))
    block = block_length(rho, turns)
    td = _draws(seed, TURNS, turns, resamples, block)
    da, db = _draws(seed, RUNS_A, len(a), resamples), _draws(seed, RUNS_B, len(b), resamples)
    diff = _rates(td, db, pb, jb) - _rates(td, da, pa, ja)
    diff = diff[np.isfinite(diff)]
    tail = (1.0 - level) / 2.0
    lo, hi = (float(x) for x in np.quantile(diff, [tail, 1.0 - tail]))
    below, above = int((diff <= 0).sum()), int((diff >= 0).sum())
    p = min(1.0, 2 * (min(below, above) + 1) / (diff.size + 1))
    rate_a, rate_b = pa.sum() / ja.sum(), pb.sum() / jb.sum()
    return Gap(BOOTSTRAP, turns, (len(a), len(b)), float(rate_a), float(rate_b), (lo, hi), p, resamples=int(diff.size),
               serial=rho, block=block)


def bootstrap_rate(runs: Sequence[Sequence[Verdict]], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                   level: float = 0.95) -> tuple[float, float] | None:
    """One row's pass rate over its repeats, resampled as `with_repeats` does (turns in blocks sized
    from the lag-1 correlation of the turns' pass shares, then runs): the interval of a row with >= 2
    repeats, which a Wilson interval over its turns as if independent draws would make too narrow.
    None without a verdict."""
    if not runs:
        return None
    passes, judged = _matrix(runs, len(runs[0]))
    keep = judged.sum(axis=0) > 0
    if not keep.any():
        return None
    passes, judged = passes[:, keep], judged[:, keep]
    turns = int(keep.sum())
    block = block_length(lag1(_shares(passes, judged)), turns)
    rates = _rates(_draws(seed, TURNS, turns, resamples, block), _draws(seed, RUNS_A, len(runs), resamples), passes, judged)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(rates[np.isfinite(rates)], [tail, 1.0 - tail])
    return (float(lo), float(hi))


def paired_gap(a: Sequence[Sequence[Verdict]], b: Sequence[Sequence[Verdict]]) -> Gap | None:
    """B − A of two rows of runs on the same turns (each run a verdict per turn, same order): one run
    a side by McNemar's exact test and Newcombe's interval on effective turns (`one_run_each`),
    repeats on either side by the two-stage paired bootstrap over turn blocks and runs
    (`with_repeats`). None when a side has no run or no turn pairs."""
    if not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return one_run_each(a[0], b[0])
    return with_repeats(a, b)


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (each at most 1, never below its own)."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out = [0.0] * len(ps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - rank) * ps[i]))
        out[i] = running
    return out
