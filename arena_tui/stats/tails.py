"""The two tails the gap's tests need beyond a sum of binomial terms, written here because scipy is not
a dependency: the binomial tail at 1/2 on counts that need not be whole (McNemar's test on effective
counts, `paired.one_run_each`), and Student's t quantile (the interval's multiplier when the counts'
weight was itself estimated). Both go through the regularized incomplete beta function I_x(a, b):
P(X <= k) for X ~ Binomial(n, 1/2) is I_(1/2)(n - k, k + 1), the form that stays defined when n and
k are not integers; P(|T| > t) for T ~ t(v) is I_(v / (v + t²))(v/2, 1/2)."""

from __future__ import annotations

import math

_TINY = 1e-300
_EPS = 1e-15


def _continued_fraction(a: float, b: float, x: float) -> float:
    """Lentz's evaluation of the continued fraction for I_x(a, b) (converges fast for x < (a+1)/(a+b+2))."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):  # fmt: skip
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + num / c
            c = c if abs(c) > _TINY else _TINY
            h *= c * d
        if abs(c * d - 1.0) < _EPS:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 <= x <= 1."""
    if a <= 0 or b <= 0:
        raise ValueError(f"incomplete_beta: a = {a}, b = {b} must be positive")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _continued_fraction(a, b, x) / a
    return 1.0 - front * _continued_fraction(b, a, 1.0 - x) / b


def binomial_half_lower(k: float, n: float) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), continued to counts that are not whole (0 <= k < n; 1 at k >= n)."""
    if k >= n:
        return 1.0
    return incomplete_beta(n - k, k + 1.0, 0.5)


def t_two_sided(t: float, df: float) -> float:
    """P(|T| > |t|) for Student's T with `df` degrees of freedom (df > 0, not necessarily whole)."""
    return incomplete_beta(df / 2.0, 0.5, df / (df + t * t)) if t else 1.0


def t_quantile(level: float, df: float) -> float:
    """The t with P(|T| <= t) = `level` (0.95: the two-sided 95 % multiplier): Newton's steps on
    `t_two_sided` (its slope is twice the t density), kept inside a bracket that halves when a step
    would leave it, so it converges for any df."""
    if not 0.0 < level < 1.0 or df <= 0:
        raise ValueError(f"t_quantile: level {level}, df {df}")
    target = 1.0 - level
    lo, hi = 0.0, 1.0
    while t_two_sided(hi, df) > target:
        lo, hi = hi, 2 * hi
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    t = (lo + hi) / 2
    for _ in range(200):
        gap = t_two_sided(t, df) - target  # > 0: t is too small
        lo, hi = (t, hi) if gap > 0 else (lo, t)
        step = gap / (2 * math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df)))
        nxt = t + step if lo < t + step < hi else (lo + hi) / 2
        if abs(nxt - t) <= 1e-13 * max(1.0, t):
            return nxt
        t = nxt
    return t
