"""The statistics of a sweep, as pure functions (checked against hand-computed values in
tests/sweeps/test_sweep_stats.py).

- ``wilson``: the Wilson score interval of a proportion (good at small n and at 0 or n
  successes, where the normal approximation gives impossible bounds).
- ``newcombe``: the interval of a difference of two proportions from their Wilson intervals
  (Newcombe 1998, method 10).
- ``fisher_exact``: the two-sided p-value of Fisher's exact test on a 2x2 table (exact at the
  sample sizes sweeps have; no normal approximation).
- ``describe``: mean, median and p95 (linear interpolation between closest ranks).
- ``pareto_front``: the points no other point beats on both cost and pass rate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


class Interval(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    low: float
    high: float


class Summary(BaseModel):
    """Mean, median and 95th percentile of a measure; None when there are no values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float | None = None
    median: float | None = None
    p95: float | None = None


def wilson(successes: int, n: int, z: float = Z95) -> Interval:
    """The Wilson score interval; [0, 1] when there is no trial."""
    if n <= 0:
        return Interval(low=0.0, high=1.0)
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    center = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return Interval(low=max(0.0, center - half), high=min(1.0, center + half))


def newcombe(s1: int, n1: int, s2: int, n2: int, z: float = Z95) -> Interval:
    """The interval of p1 - p2 (Newcombe's hybrid score method)."""
    p1, p2 = (s1 / n1 if n1 else 0.0), (s2 / n2 if n2 else 0.0)
    w1, w2 = wilson(s1, n1, z), wilson(s2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - w1.low) ** 2 + (w2.high - p2) ** 2)
    high = d + math.sqrt((w1.high - p1) ** 2 + (p2 - w2.low) ** 2)
    return Interval(low=max(-1.0, low), high=min(1.0, high))


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_exact(a: int, b: int, c: int, d: int) -> float:
    """Two-sided p-value for the table [[a, b], [c, d]] (rows: arms; columns: pass, not pass):
    the probability, with the margins fixed, of a table at most as likely as the one seen."""
    row1, col1, n = a + b, a + c, a + b + c + d
    if n == 0:
        return 1.0
    low, high = max(0, col1 - (n - row1)), min(row1, col1)
    log_total = _log_choose(n, col1)

    def log_p(k: int) -> float:
        return _log_choose(row1, k) + _log_choose(n - row1, col1 - k) - log_total

    observed = log_p(a)
    # Tables as likely as the observed one count too; the tolerance absorbs rounding.
    cutoff = observed + 1e-7
    p = sum(math.exp(lp) for k in range(low, high + 1) if (lp := log_p(k)) <= cutoff)
    return min(1.0, p)


def quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolating linearly between closest ranks."""
    h = (len(ordered) - 1) * q
    below = math.floor(h)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (h - below) * (ordered[above] - ordered[below])


def describe(values: Sequence[float]) -> Summary:
    if not values:
        return Summary()
    ordered = sorted(values)
    return Summary(
        mean=math.fsum(ordered) / len(ordered),
        median=quantile(ordered, 0.5),
        p95=quantile(ordered, 0.95),
    )


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indexes of the (cost, pass rate) points no other point dominates (costs no more and
    passes at least as often, better on one of them), in input order."""
    front = []
    for i, (cost, rate) in enumerate(points):
        dominated = any(
            c <= cost and r >= rate and (c < cost or r > rate)
            for j, (c, r) in enumerate(points)
            if j != i
        )
        if not dominated:
            front.append(i)
    return front
