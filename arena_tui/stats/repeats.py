"""Repeats as the field reports them: pass@k and pass^k of a turn run n times, c of them passing.

Both are the unbiased estimators over every k-subset of the n repeats (Chen et al. 2021 for pass@k,
tau-bench for pass^k), so a turn repeated 5 times gives its pass^3 without running it 3 more times:
- pass@k = 1 − C(n − c, k) / C(n, k): at least one of k repeats passes (can it ever do it);
- pass^k = C(c, k) / C(n, k): all k pass (can it be relied on). pass^1 = pass@1 = c / n.
"""

from __future__ import annotations

import math


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"{c} passes of {n} repeats")
    if not 1 <= k <= n:
        raise ValueError(f"k = {k} needs 1 <= k <= {n} repeats")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k repeats drawn from the n passes (unbiased)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all k repeats drawn from the n pass (unbiased)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)
