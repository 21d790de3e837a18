"""Sweep statistics against published and hand-computed values."""

from __future__ import annotations

import pytest

from inspector.sweeps.stats import describe, fisher_exact, newcombe, pareto_front, wilson


def test_wilson_matches_newcombes_table() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, table I: 81/263 -> 0.2553 to 0.3662.
    ci = wilson(81, 263)
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.2553, 0.3662)


def test_wilson_at_the_edges_stays_inside_0_1() -> None:
    # 0/10: center = (z²/20)/(1+z²/10) = half-width, so the low end is 0; high = 2 * center.
    z2 = 1.959963984540054**2
    assert wilson(0, 10).low == 0.0
    assert wilson(0, 10).high == pytest.approx(2 * (z2 / 20) / (1 + z2 / 10))
    assert wilson(10, 10).high == pytest.approx(1.0)
    assert (wilson(0, 0).low, wilson(0, 0).high) == (0.0, 1.0)


def test_newcombe_difference_matches_the_paper() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, method 10: 56/70 - 48/80 -> 0.0524 to 0.3339.
    ci = newcombe(56, 70, 48, 80)
    assert (round(ci.low, 4), round(ci.high, 4)) == (0.0524, 0.3339)


@pytest.mark.parametrize(
    ("table", "p"),
    [
        ((3, 1, 1, 3), 34 / 70),  # the lady tasting tea: (1 + 16 + 16 + 1) / C(8, 4)
        ((0, 5, 5, 0), 2 / 252),  # only the two extreme tables: 2 / C(10, 5)
        ((1, 9, 11, 3), 0.002759456),  # Fisher's test's textbook example (two-sided)
        ((5, 5, 5, 5), 1.0),
        ((0, 0, 0, 0), 1.0),
    ],
)
def test_fisher_exact_two_sided(table: tuple[int, int, int, int], p: float) -> None:
    assert fisher_exact(*table) == pytest.approx(p, rel=1e-6)


def test_describe_mean_median_p95() -> None:
    s = describe([4, 1, 100, 3, 2])
    # sorted 1 2 3 4 100: p95 at rank (5-1)*0.95 = 3.8 -> 4 + 0.8 * (100 - 4) = 80.8
    assert (s.mean, s.median, s.p95) == (22.0, 3.0, pytest.approx(80.8))
    assert describe([]).mean is None


def test_pareto_front_keeps_the_undominated() -> None:
    # (cost, pass rate): b is cheaper than a at the same rate; c is dearer but passes more;
    # d costs more than c and passes less.
    points = [(2.0, 0.5), (1.0, 0.5), (3.0, 0.9), (4.0, 0.8)]
    assert pareto_front(points) == [1, 2]
    assert pareto_front([(1.0, 0.5), (1.0, 0.5)]) == [0, 1]  # ties dominate neither
