"""How much the turns of a run lean on each other, measured along turn order, and what it does to a
gap's uncertainty. A missed call can fail the turns after it, so a run's verdicts come in streaks: 30
turns then carry the information of fewer independent ones. The paired methods (`paired.py`) read
that from the paired difference B − A turn by turn, the sequence whose mean is the gap:

- `lag1`: its lag-1 autocorrelation, corrected for the bias of a short series (Marriott & Pope 1954:
  E[r] ≈ ρ − (1 + 3ρ)/n, so ρ ≈ (n·r + 1)/(n − 3); the raw r sits 0.03-0.09 low at 30 turns). Under
  MIN_TURNS paired turns it is not estimated (None): the surfaces then say the turns are taken as
  independent.
- `inflation`: how much wider the variance of the mean is than if the turns were independent, for a
  correlation that fades as ρ^k over k turns (AR(1)): (1 + ρ)/(1 − ρ); the effective number of turns
  is n / inflation (n(1 − ρ)/(1 + ρ)). A negative estimate is taken as none (never narrower).
- `block_length`: the turns a block bootstrap draws together so a streak stays whole: the
  mean-squared-error-optimal circular block of Politis & White (2004, as corrected by Patton, Politis
  & White 2009), (2G²/D)^(1/3) n^(1/3) with D = 4/3 g(0)², with G and g(0) those of the same AR(1):
  (√6 ρ / (1 − ρ²))^(2/3) n^(1/3), capped at their min(3√n, n/3); 1 (turns drawn one at a time) when
  no correlation is seen.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

MIN_TURNS = 10  # below this the lag-1 estimate is mostly noise (its standard error is over 0.3)
RHO_MAX = 0.9  # a larger estimate is taken as this: 30 turns count as 1.6, the interval as wide as it gets


def lag1(values: Sequence[float] | np.ndarray) -> float | None:
    """The bias-corrected lag-1 autocorrelation of `values` in order, within [−1, 1]; None under MIN_TURNS
    values; 0 when they do not vary (nothing to correct)."""
    n = len(values)
    if n < MIN_TURNS:
        return None
    x = np.asarray(values, dtype=float)
    dev = x - x.mean()
    spread = float(dev @ dev)
    if spread <= 1e-12 * n:
        return 0.0
    r = float(dev[:-1] @ dev[1:]) / spread
    return max(-1.0, min(1.0, (n * r + 1.0) / (n - 3.0)))


def _used(rho: float | None) -> float:
    """The correlation the corrections use: none when not estimated or negative, at most RHO_MAX."""
    return 0.0 if rho is None else min(max(rho, 0.0), RHO_MAX)


def inflation(rho: float | None) -> float:
    """Variance inflation of a mean over turns with lag-1 correlation `rho` (AR(1)); 1 for none."""
    r = _used(rho)
    return (1.0 + r) / (1.0 - r)


def block_length(rho: float | None, n: int) -> int:
    """The circular block length for `n` turns with lag-1 correlation `rho` (module docstring)."""
    r = _used(rho)
    if r == 0.0 or n < 2:
        return 1
    best = (math.sqrt(6.0) * r / (1.0 - r * r)) ** (2.0 / 3.0) * n ** (1.0 / 3.0)
    return max(1, min(math.ceil(min(3.0 * math.sqrt(n), n / 3.0)), round(best)))
