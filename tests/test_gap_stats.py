"""The gap's statistics (`arena_tui.stats.paired`, `arena_tui.stats.repeats`) against computations
written here independently of them: an exact binomial test summed over outcomes as likely as the one
seen (not the doubled tail the product uses), published reference values of Newcombe's interval,
pass@k / pass^k by enumerating every k-subset, Holm by its definition, and the two-stage bootstrap by
a plain loop over index draws. scipy is not a dependency, so none of these comes from a library."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction
from math import comb

import pytest

from arena_tui.stats.paired import (BOOTSTRAP, MCNEMAR, bootstrap_rate, holm, mcnemar_p, newcombe_interval,
                                    one_run_each, paired_gap, with_repeats)
from arena_tui.stats.repeats import pass_at_k, pass_hat_k


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
    # the interval is Newcombe's with B first: both, B only, A only, neither
    assert g.ci == pytest.approx(newcombe_interval(2, 2, 1, 1))
    assert g.caveat  # it says it takes the turns as independent
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


def _loop_bootstrap(a: list[list[bool]], b: list[list[bool]], resamples: int, seed: int) -> tuple[float, float]:
    """The two-stage paired bootstrap written as the method says, one resample at a time: draw the
    turns (once, for both sides), then each side's runs; B - A of the pooled pass rates."""
    rng = random.Random(seed)
    turns = len(a[0])
    diffs = []
    for _ in range(resamples):
        ts = [rng.randrange(turns) for _ in range(turns)]
        ra = [rng.randrange(len(a)) for _ in a]
        rb = [rng.randrange(len(b)) for _ in b]
        pa = sum(a[r][t] for r in ra for t in ts) / (len(ra) * len(ts))
        pb = sum(b[r][t] for r in rb for t in ts) / (len(rb) * len(ts))
        diffs.append(pb - pa)
    diffs.sort()
    return diffs[int(0.025 * resamples)], diffs[int(0.975 * resamples) - 1]


def test_two_stage_bootstrap_agrees_with_a_plain_loop() -> None:
    rng = random.Random(7)
    a = [[rng.random() < 0.8 for _ in range(30)] for _ in range(3)]
    b = [[rng.random() < 0.6 for _ in range(30)] for _ in range(4)]
    g = with_repeats(a, b)
    assert g is not None and g.method == BOOTSTRAP and g.turns == 30 and g.runs == (3, 4) and g.resamples == 2000
    mine = _loop_bootstrap(a, b, 4000, 1)
    assert g.ci[0] == pytest.approx(mine[0], abs=0.03) and g.ci[1] == pytest.approx(mine[1], abs=0.03)
    assert g.difference == pytest.approx(sum(map(sum, b)) / 120 - sum(map(sum, a)) / 90)
    assert with_repeats(a, b) == g  # seeded: the same data always gives the same interval
    assert paired_gap(a, b) == g  # repeats: the bootstrap


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
