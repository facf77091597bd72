"""How far a statistic lies beyond the criterion it must pass, in standard errors (the margin).

A planted effect that passes its criterion by a margin of m standard errors would pass a repeat of
the same experiment with probability about Phi(m) if the observed statistic were the truth: 3 SE is a
single-run stand-in for power of about 0.999 (``MARGIN_AT_POWER``). A margin below 0 is a miss.

Two kinds of criterion have a margin:

- a p-value below a threshold (``p_margin``): the normal quantile of the observed p minus that of the
  threshold, on the p-value's own sidedness; under Benjamini-Hochberg the threshold is the one the
  hypothesis had to pass given the other p-values of its family (``bh_threshold``);
- an interval that must exclude a bound (``interval_margin``): the distance of the interval's near end
  beyond the bound, in the standard errors the interval's width implies.

A permutation p cannot fall below 1/(draws + 1); at that floor the margin is a lower bound
(``at_p_floor``). A criterion that accepts a null ("closed", "removed", "not significant") has no
margin here: passing it says nothing about power.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

Sided = Literal["one", "two"]

MARGIN_AT_POWER = 3.0
"""A plant is found at power when its margin is at least this many standard errors."""

_SMALLEST_P = 1e-300


def z_of_p(p: float, sided: Sided) -> float:
    """The standard normal quantile a p-value corresponds to: Phi^-1(1 - p) for a one-sided p,
    Phi^-1(1 - p/2) for a two-sided one (p is clipped to [1e-300, 1], so 0 gives about 37)."""
    from scipy.stats import norm

    if not np.isfinite(p):
        return float("nan")
    clipped = min(max(float(p), _SMALLEST_P), 1.0)
    return float(norm.isf(clipped if sided == "one" else clipped / 2))


def p_margin(p: float, threshold: float, sided: Sided, right_direction: bool = True) -> float:
    """z of the observed ``p`` minus z of the ``threshold`` it must be below, both on ``sided``.

    For a two-sided p whose criterion also asks for a sign, ``right_direction`` False puts the
    observed z on the wrong side (-z): a strong effect of the wrong sign is a large negative margin.
    A one-sided p already carries its direction (p > 0.5 gives z < 0). NaN when either is undefined.
    """
    if not (np.isfinite(p) and np.isfinite(threshold)) or threshold <= 0:
        return float("nan")
    observed = z_of_p(p, sided)
    if sided == "two" and not right_direction:
        observed = -observed
    return observed - z_of_p(threshold, sided)


def bh_threshold(p: float, p_bh: float, alpha: float) -> float:
    """The raw-p threshold a hypothesis had to pass under Benjamini-Hochberg at ``alpha``, given its
    family: it is rejected exactly when p_bh <= alpha, that is when p <= alpha * p / p_bh. Without the
    step-up's monotone minimum this is alpha * k / m at its rank k of m; with it, the threshold is
    the larger one the p-values ranked above it grant. NaN when p_bh is undefined."""
    if not (np.isfinite(p) and np.isfinite(p_bh)):
        return float("nan")
    if p_bh <= 0:
        return float(alpha)
    return float(alpha * p / p_bh)


def bh_margin(p: float, p_bh: float, alpha: float, sided: Sided, right_direction: bool = True) -> float:
    """``p_margin`` of ``p`` against its Benjamini-Hochberg threshold (``bh_threshold``): >= 0
    exactly when the hypothesis is rejected (and, for a two-sided p, the sign is right)."""
    return p_margin(p, bh_threshold(p, p_bh, alpha), sided, right_direction)


def interval_margin(
    low: float, high: float, side: Literal["below", "above"], bound: float = 0.0, level: float = 0.95
) -> float:
    """How far a ``level`` two-sided interval [low, high] lies ``side`` of ``bound``, in the standard
    errors its width implies (SE = width / (2 z_{(1+level)/2})): (bound - high) / SE for "below",
    (low - bound) / SE for "above". Equals the estimate's z beyond the bound minus z_{(1+level)/2}
    for a symmetric normal interval. An interval of width 0 is +inf beyond the bound or -inf."""

    if not (np.isfinite(low) and np.isfinite(high)):
        return float("nan")
    se = interval_se(low, high, level)
    if se <= 0:  # a point: beyond the bound with certainty, or not at all
        beyond = high < bound if side == "below" else low > bound
        return float("inf") if beyond else float("-inf")
    return float((bound - high) / se if side == "below" else (low - bound) / se)


def equivalence_margin_se(estimate: float, se: float, delta: float, alpha: float = 0.05) -> float:
    """The margin of two one-sided tests (TOST at ``alpha``) that the true value lies within
    [-``delta``, ``delta``]: (delta - |estimate|) / SE - z_{1-alpha}. >= 0 exactly when the 1 - 2 alpha
    interval estimate +- z_{1-alpha} SE lies inside the margin; NaN when the estimate or SE is
    undefined, +-inf when SE is 0 (inside the margin or not)."""
    from scipy.stats import norm

    if not (np.isfinite(estimate) and np.isfinite(se)):
        return float("nan")
    if se <= 0:  # a point: inside the margin with certainty, or not at all
        return float("inf") if abs(estimate) < delta else float("-inf")
    return float((delta - abs(estimate)) / se - norm.isf(alpha))


def relative_equivalence_margin(
    before: float,
    after: float,
    se_before: float,
    se_after: float,
    covariance: float,
    share: float,
    alpha: float = 0.05,
) -> float:
    """The margin of two one-sided tests at ``alpha`` that an effect measured again after a treatment
    lies within +-``share`` of the effect before it, both measured on the same units (paired, with the
    estimates' ``covariance``): H0 after >= share x before is rejected by z1 = (share before - after) /
    SE1 with SE1^2 = share^2 se_before^2 + se_after^2 - 2 share cov, and H0 after <= -share x before by
    z2 = (after + share before) / SE2 with SE2^2 = share^2 se_before^2 + se_after^2 + 2 share cov. The
    margin is min(z1, z2) - z_{1-alpha}: >= 0 exactly when both nulls are rejected. The margin is fixed
    before the data as a share of the effect (a ratio margin, as bioequivalence's are), so an effect
    before that is not positive leaves no room and fails. NaN when an input is undefined; a test whose
    SE is 0 counts as +inf where its difference is positive and -inf otherwise."""
    from scipy.stats import norm

    values = (before, after, se_before, se_after, covariance, share)
    if not all(np.isfinite(v) for v in values):
        return float("nan")
    zs = []
    for difference, variance in (
        (share * before - after, share**2 * se_before**2 + se_after**2 - 2 * share * covariance),
        (after + share * before, share**2 * se_before**2 + se_after**2 + 2 * share * covariance),
    ):
        se = float(np.sqrt(max(variance, 0.0)))
        zs.append(difference / se if se > 0 else (float("inf") if difference > 0 else float("-inf")))
    return float(min(zs) - norm.isf(alpha))


def equivalence_power(se: float, delta: float, alpha: float = 0.05) -> float:
    """Power of two one-sided tests at ``alpha`` with margin ``delta`` when the true value is 0 and the
    estimate is normal with standard error ``se``: P(|Z se| < delta - z_{1-alpha} se) =
    2 Phi(delta / se - z_{1-alpha}) - 1, and 0 when that is negative. It depends on the test's size, not
    on the estimate, so it says before the result whether the test can establish equivalence."""
    from scipy.stats import norm

    if not np.isfinite(se) or se < 0:
        return float("nan")
    if se == 0:
        return 1.0
    return float(max(0.0, 2 * norm.cdf(delta / se - norm.isf(alpha)) - 1))


def interval_se(low: float, high: float, level: float = 0.95) -> float:
    """The standard error a two-sided ``level`` interval's width implies (normal approximation)."""
    from scipy.stats import norm

    return float((high - low) / (2 * norm.ppf(0.5 + level / 2)))


def p_floor(draws: float, doubled: bool = False) -> float:
    """The smallest permutation p = (k + 1) / (draws + 1), at k = 0: 1 / (draws + 1), or 2 / (draws + 1)
    for a two-sided p taken as twice the smaller tail (``doubled``)."""
    return (2.0 if doubled else 1.0) / (draws + 1)


def at_p_floor(p: float, draws: float, doubled: bool = False) -> bool:
    """Whether a permutation p is at its smallest value (``p_floor``), where the margin it gives is only
    a lower bound."""
    if not (np.isfinite(p) and np.isfinite(draws) and draws > 0):
        return False
    return bool(p <= p_floor(draws, doubled) * (1 + 1e-9))


def majority_margin(margins: Sequence[float]) -> float:
    """The margin a majority of replicates passes by: the (floor(R/2) + 1)-th largest of R margins.
    A criterion "passed in more than half of R replicates" holds exactly when this is >= 0."""
    values = np.sort(np.asarray(margins, dtype=float))[::-1]
    if not len(values) or np.isnan(values).any():
        return float("nan")
    return float(values[len(values) // 2])
