"""The gap's statistics (`arena_tui.stats.paired`, `.serial`, `.tails`, `.repeats`) against computations
written here independently of them: an exact binomial test summed over outcomes as likely as the one
seen (not the doubled tail the product uses), published reference values of Newcombe's interval and of
Student's t, the incomplete beta and t tails by numerical integration of their densities (not the
product's continued fraction), the lag-1 correction, effective turns and block length by their
formulas, pass@k / pass^k by enumerating every k-subset, Holm by its definition, and the two-stage
block bootstrap by a plain loop over index draws. scipy is not a dependency, so none of these comes
from a library."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction
from math import comb

import pytest

from arena_tui.stats.paired import (BOOTSTRAP, MCNEMAR, RUN_WIDE, TOO_FEW, bootstrap_rate, holm, mcnemar_p,
                                    newcombe_interval, one_run_each, paired_gap, with_repeats)
from arena_tui.stats.repeats import pass_at_k, pass_hat_k
from arena_tui.stats.serial import MIN_TURNS, block_length, inflation, lag1
from arena_tui.stats.tails import binomial_half_lower, incomplete_beta, t_quantile


def binomial_test_half(k: int, n: int) -> Fraction:
    """Two-sided exact binomial test of k successes in n at p = 1/2, the way R's binom.test sums it:
    every outcome no more likely than the one observed (exact fractions; a different rule from the
    product's doubled smaller tail, equal to it at p = 1/2)."""
    if n == 0:
        return Fraction(1)
    probs = [Fraction(comb(n, i), 2**n) for i in range(n + 1)]
    return min(Fraction(1), sum(q for q in probs if q <= probs[k]))


@pytest.mark.parametrize("b,c", [(0, 0), (0, 1), (0, 5), (3, 10), (10, 3), (7, 7), (1, 12), (20, 31), (0, 40)])
def test_exact_mcnemar_matches_an_independent_binomial_test(b: int, c: int) -> None:
    assert mcnemar_p(b, c) == pytest.approx(float(binomial_test_half(b, b + c)), abs=1e-12)


def test_mcnemar_known_values() -> None:
    assert mcnemar_p(0, 5) == pytest.approx(0.0625)  # 2 / 2**5
    assert mcnemar_p(3, 10) == pytest.approx(2 * (1 + 13 + 78 + 286) / 2**13)
    with pytest.raises(ValueError):
        mcnemar_p(-1, 2)


def test_newcombe_method_10_matches_a_published_value() -> None:
    """Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables" (ch. 8; the R package
    contingencytables tests it): table [[59, 6], [16, 80]]: estimate -0.0621, 95 % CI -0.1186 to -0.0046."""
    lo, hi = newcombe_interval(59, 6, 16, 80)
    assert (round(lo, 4), round(hi, 4)) == (-0.1186, -0.0046)


def test_one_run_each_counts_the_discordant_turns() -> None:
    a = [True, True, False, False, True, None, True, False]
    b = [True, False, True, True, True, False, None, False]  # turns 5 and 6 have one verdict: they pair nothing
    g = one_run_each(a, b)
    assert g is not None and g.method == MCNEMAR and g.turns == 6 and g.discordant == (1, 2)
    assert (g.a, g.b) == (pytest.approx(3 / 6), pytest.approx(4 / 6)) and g.difference == pytest.approx(1 / 6)
    assert g.p == pytest.approx(float(binomial_test_half(1, 3)))
    # the interval is Newcombe's with B first: both, B only, A only, neither; 6 turns are too few to
    # estimate their correlation, so the counts are the turns' own, and the caveat says so
    assert g.ci == pytest.approx(newcombe_interval(2, 2, 1, 1))
    assert g.serial is None and g.effective == 6 and g.caveat == f"{RUN_WIDE}; {TOO_FEW}"
    assert one_run_each([None], [True]) is None
    assert paired_gap([a], [b]) == g  # one run a side: McNemar


def test_pass_at_k_and_pass_hat_k_equal_enumeration_over_every_k_subset() -> None:
    for n in range(1, 7):
        for c in range(n + 1):
            outcomes = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(outcomes, k))
                assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
                assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))
    assert pass_hat_k(5, 3, 1) == pytest.approx(0.6) == pass_at_k(5, 3, 1)
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)  # k > n: no unbiased estimate


def test_holm_by_its_definition() -> None:
    ps = [0.01, 0.04, 0.03, 0.5]
    # sorted 0.01, 0.03, 0.04, 0.5 times 4, 3, 2, 1 = 0.04, 0.09, 0.08 -> 0.09 (monotone), 0.5
    assert holm(ps) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # 2 x 0.8 capped at 1; never below a smaller p's
    assert holm([0.02, 0.6]) == pytest.approx([0.04, 0.6])
    assert holm([]) == []


# --- the tails, by integrating the densities ------------------------------------------------------


def simpson(f, lo: float, hi: float, steps: int = 4000) -> float:  # noqa: ANN001
    h = (hi - lo) / steps
    return h / 3 * sum((1 if i in (0, steps) else 4 if i % 2 else 2) * f(lo + i * h) for i in range(steps + 1))


def beta_cdf_by_integration(a: float, b: float, x: float) -> float:
    """I_x(a, b) as the integral of the beta density (a, b >= 1: no pole at the ends)."""
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return simpson(lambda t: t ** (a - 1) * (1 - t) ** (b - 1), 0.0, x) / math.exp(log_beta)


def t_quantile_by_integration(level: float, df: float) -> float:
    """The t with P(|T| <= t) = level: the t density integrated from 0, the quantile found by bisection."""
    norm = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    inside = lambda t: 2 * simpson(lambda u: norm * (1 + u * u / df) ** (-(df + 1) / 2), 0.0, t, 2000)  # noqa: E731
    lo, hi = 0.0, 100.0
    for _ in range(60):
        lo, hi = (lo, (lo + hi) / 2) if inside((lo + hi) / 2) >= level else ((lo + hi) / 2, hi)
    return (lo + hi) / 2


@pytest.mark.parametrize("a,b,x", [(1, 1, 0.5), (2.5, 3.5, 0.3), (7.3, 1.7, 0.5), (12.4, 4.6, 0.5), (3, 9, 0.8)])
def test_incomplete_beta_matches_integrating_the_density(a: float, b: float, x: float) -> None:
    assert incomplete_beta(a, b, x) == pytest.approx(beta_cdf_by_integration(a, b, x), abs=1e-9)


def test_binomial_tail_on_whole_counts_is_the_sum_of_its_terms() -> None:
    for n in range(1, 41):
        for k in range(n):
            assert binomial_half_lower(k, n) == pytest.approx(sum(comb(n, i) for i in range(k + 1)) / 2**n, rel=1e-9)
    # McNemar on effective (not whole) counts: the same tail, continued through the beta function
    assert mcnemar_p(2.5, 9.5) == pytest.approx(2 * beta_cdf_by_integration(9.5, 3.5, 0.5), abs=1e-9)
    assert mcnemar_p(3.0, 10.0) == pytest.approx(2 * binomial_half_lower(3.0, 13.0), abs=1e-12) == mcnemar_p(3, 10)


def test_t_quantile_matches_published_tables_and_integration() -> None:
    # two-sided 95 % points of Student's t (any table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2)
    for df, t in [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (29, 2.045), (10**9, 1.960)]:
        assert round(t_quantile(0.95, df), 3) == t
    for df in (1.6, 3.7, 14.5):  # effective turns are not whole
        assert t_quantile(0.95, df) == pytest.approx(t_quantile_by_integration(0.95, df), abs=1e-5)


# --- the turns' correlation ------------------------------------------------------------------------


def lag1_by_hand(x: list[float]) -> float:
    """The lag-1 autocorrelation, then Marriott & Pope's bias correction: rho = (n r + 1) / (n - 3)."""
    n = len(x)
    mean = sum(x) / n
    dev = [v - mean for v in x]
    r = sum(dev[i] * dev[i + 1] for i in range(n - 1)) / sum(v * v for v in dev)
    return max(-1.0, min(1.0, (n * r + 1) / (n - 3)))


def test_lag1_inflation_and_block_length_by_their_formulas() -> None:
    rng = random.Random(5)
    x = [rng.choice([-1, 0, 0, 1]) for _ in range(30)]
    assert lag1(x) == pytest.approx(lag1_by_hand(x))
    assert lag1(x[:MIN_TURNS - 1]) is None and lag1([1] * 20) == 0.0  # too few; nothing varies
    alternating = lag1([1, -1] * 10)
    assert alternating is not None and alternating < 0 and alternating == pytest.approx(lag1_by_hand([1, -1] * 10))
    assert inflation(0.35) == pytest.approx(1.35 / 0.65) and inflation(-0.3) == inflation(None) == 1.0
    assert inflation(0.99) == pytest.approx(1.9 / 0.1)  # at most 0.9 is used
    # Politis & White's circular block for an AR(1): (sqrt 6 rho / (1 - rho^2))^(2/3) n^(1/3), at most min(3 sqrt n, n/3)
    assert block_length(0.56, 30) == round((math.sqrt(6) * 0.56 / (1 - 0.56**2)) ** (2 / 3) * 30 ** (1 / 3)) == 5
    assert block_length(0.35, 75) == round((math.sqrt(6) * 0.35 / (1 - 0.35**2)) ** (2 / 3) * 75 ** (1 / 3)) == 4
    assert block_length(0.9, 30) == 10 and block_length(0.0, 30) == block_length(None, 30) == block_length(-0.2, 30) == 1


def streaky(rng: random.Random, turns: int, fail: float, stay: float) -> list[bool]:
    """A run whose failures come in streaks: after a failure the next turn fails with chance `stay`."""
    out, failed = [], False
    for _ in range(turns):
        failed = rng.random() < (stay if failed else fail)
        out.append(not failed)
    return out


def test_one_run_each_discounts_correlated_turns_by_hand() -> None:
    rng = random.Random(11)
    a, b = streaky(rng, 30, 0.1, 0.7), streaky(rng, 30, 0.25, 0.7)
    g = one_run_each(a, b)
    d = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    rho = lag1_by_hand(d)
    assert rho > 0.2  # the streaks show
    f = (1 + rho) / (1 - rho)
    both = sum(x and y for x, y in zip(a, b, strict=True))
    a_only = sum(x and not y for x, y in zip(a, b, strict=True))
    b_only = sum(y and not x for x, y in zip(a, b, strict=True))
    neither = 30 - both - a_only - b_only
    assert g is not None and g.method == MCNEMAR and g.discordant == (a_only, b_only) and g.caveat == RUN_WIDE
    assert g.serial == pytest.approx(rho) and g.effective == pytest.approx(30 / f)
    # the exact McNemar tail on the effective discordant counts, by integrating the beta density
    lo_e, hi_e = sorted((a_only / f, b_only / f))
    assert g.p == pytest.approx(min(1.0, 2 * beta_cdf_by_integration(hi_e, lo_e + 1, 0.5)), abs=1e-9)
    # Newcombe's interval on every cell divided by f, t's multiplier on (30 / f - 1) degrees of freedom
    z = t_quantile_by_integration(0.95, 30 / f - 1)
    assert g.ci == pytest.approx(newcombe_interval(both / f, b_only / f, a_only / f, neither / f, z), abs=1e-6)
    plain = newcombe_interval(both, b_only, a_only, neither)
    assert g.ci[0] < plain[0] and g.ci[1] > plain[1]  # wider than if the turns were independent
    assert g.p > mcnemar_p(a_only, b_only)


def test_one_run_each_without_correlation_is_the_exact_mcnemar_test() -> None:
    a = [True, False] * 8  # the discordant turns alternate in sign: the lag-1 estimate is negative
    b = [False, True] * 7 + [True, True]
    g = one_run_each(a, b)
    assert g is not None and g.serial is not None and g.serial < 0 and g.effective == 16
    assert g.discordant == (7, 8) and g.p == pytest.approx(float(binomial_test_half(7, 15)))
    assert g.ci == pytest.approx(newcombe_interval(1, 8, 7, 0, t_quantile_by_integration(0.95, 15)), abs=1e-6)


# --- the two-stage block bootstrap, as a plain loop --------------------------------------------------


def shares(runs: list[list[bool]]) -> list[float]:
    return [sum(r[t] for r in runs) / len(runs) for t in range(len(runs[0]))]


def _loop_bootstrap(a: list[list[bool]], b: list[list[bool]] | None, block: int, resamples: int,
                    seed: int) -> tuple[float, float]:
    """The two-stage paired bootstrap written as the method says, one resample at a time: draw the
    turns (once, for both sides) as circular blocks of `block` consecutive turns, cut to the number of
    turns, then each side's runs; B - A of the pooled pass rates (A's rate alone without B)."""
    rng = random.Random(seed)
    turns = len(a[0])
    out = []
    for _ in range(resamples):
        ts: list[int] = []
        while len(ts) < turns:
            start = rng.randrange(turns)
            ts += [(start + j) % turns for j in range(block)]
        ts = ts[:turns]
        rates = []
        for side in (a, b) if b is not None else (a,):
            rs = [rng.randrange(len(side)) for _ in side]
            rates.append(sum(side[r][t] for r in rs for t in ts) / (len(rs) * len(ts)))
        out.append(rates[1] - rates[0] if b is not None else rates[0])
    out.sort()
    return out[int(0.025 * resamples)], out[int(0.975 * resamples) - 1]


def test_two_stage_bootstrap_agrees_with_a_plain_loop() -> None:
    rng = random.Random(7)
    a = [[rng.random() < 0.8 for _ in range(30)] for _ in range(3)]
    b = [[rng.random() < 0.6 for _ in range(30)] for _ in range(4)]
    g = with_repeats(a, b)
    assert g is not None and g.method == BOOTSTRAP and g.turns == 30 and g.runs == (3, 4) and g.resamples == 2000
    rho = lag1_by_hand([y - x for x, y in zip(shares(a), shares(b), strict=True)])
    assert g.serial == pytest.approx(rho) and g.block == block_length(rho, 30)
    mine = _loop_bootstrap(a, b, g.block, 4000, 1)
    assert g.ci[0] == pytest.approx(mine[0], abs=0.03) and g.ci[1] == pytest.approx(mine[1], abs=0.03)
    assert g.difference == pytest.approx(sum(map(sum, b)) / 120 - sum(map(sum, a)) / 90)
    assert with_repeats(a, b) == g  # seeded: the same data always gives the same interval
    assert paired_gap(a, b) == g  # repeats: the bootstrap


def test_block_bootstrap_of_streaky_runs_agrees_with_a_plain_loop() -> None:
    rng = random.Random(2)
    a = [streaky(rng, 40, 0.08, 0.8) for _ in range(2)]
    b = [streaky(rng, 40, 0.2, 0.8) for _ in range(2)]
    g = with_repeats(a, b)
    rho = lag1_by_hand([y - x for x, y in zip(shares(a), shares(b), strict=True)])
    block = round((math.sqrt(6) * min(rho, 0.9) / (1 - min(rho, 0.9) ** 2)) ** (2 / 3) * 40 ** (1 / 3))
    assert g is not None and g.serial == pytest.approx(rho) and g.block == min(block, 14) > 1  # streaks: blocks
    mine = _loop_bootstrap(a, b, g.block, 4000, 3)
    assert g.ci[0] == pytest.approx(mine[0], abs=0.03) and g.ci[1] == pytest.approx(mine[1], abs=0.03)
    # one row's interval over its repeats: the same draws, its own blocks
    row = bootstrap_rate(b)
    row_block = block_length(lag1_by_hand(shares(b)), 40)
    assert row is not None and row == pytest.approx(_loop_bootstrap(b, None, row_block, 4000, 4), abs=0.03)


def test_bootstrap_p_and_interval_say_the_same() -> None:
    rng = random.Random(3)
    for shift in (0.0, 0.1, 0.2, 0.3, 0.45):
        a = [[rng.random() < 0.8 for _ in range(20)] for _ in range(2)]
        b = [[rng.random() < 0.8 - shift for _ in range(20)] for _ in range(2)]
        g = with_repeats(a, b)
        assert g is not None
        assert (g.p < 0.05) == (not g.ci[0] <= 0 <= g.ci[1]) or min(abs(g.ci[0]), abs(g.ci[1])) < 1e-9, (shift, g)


def test_bootstrap_degenerate_rows() -> None:
    same = [[True] * 10, [True] * 10]
    g = with_repeats(same, same)
    assert g is not None and g.ci == (0.0, 0.0) and g.p == 1.0 and not g.distinguishable()
    apart = with_repeats([[True] * 10] * 2, [[False] * 10] * 2)
    assert apart is not None and apart.ci == (-1.0, -1.0) and apart.distinguishable()
    # a turn one side never judged pairs nothing; a run's missing verdict is skipped, not a failure
    g = with_repeats([[True, None], [True, True]], [[False, None], [False, None]])
    assert g is not None and g.turns == 1 and g.a == 1.0 and g.b == 0.0
    assert with_repeats([[None]], [[True]]) is None and with_repeats([], [[True]]) is None
    assert bootstrap_rate([[True, False], [True, True]]) is not None and bootstrap_rate([[None]]) is None
