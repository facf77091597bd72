"""Group fairness gaps of a binary classifier (Zhang et al. 2020, section 4.2, Table 2 and eq. 2).

For every subgroup of a protected attribute, from test predictions:

- parity gap: difference in the rate of predicted positives, (TP + FP) / N;
- recall gap: difference in the true-positive rate, TP / (TP + FN);
- specificity gap: difference in the true-negative rate, TN / (TN + FP).

With two groups the gap of group 1 is m_1 - m_2 (Table 2). With more groups (eq. 2) the gap of group
j is m_j - m_i*, where i* is the group whose rate is farthest from j's (the most aggressive
comparison); the sign is kept, so a positive gap favours group j. Ties in the distance go to the
group listed first. A rate whose denominator is zero (a group without positives has no recall) is
NaN, and so is every gap that needs it; such groups are skipped when i* is chosen.

The bootstrap resamples the test rows with replacement within each label (positives among
positives, negatives among negatives, so every replicate keeps the task's prevalence), draws all
replicates at once as one seeded index matrix, and counts every replicate's confusion cells per group
with one ``bincount``. Percentile 95% intervals; a gap is significant when its interval excludes 0.
Two p-values, both two-sided (the reference code reported one side):

- ``p_value`` (the one Benjamini-Hochberg uses): the two-proportion score test of the gap against its
  comparison group, z = (m_j - m_i) / sqrt(m (1 - m) (1/n_j + 1/n_i)) with m the pooled rate of the
  two groups and n_j, n_i the rates' denominators (rows, positives or negatives), p = 2 Phi(-|z|).
  Its variance is the one the null implies, so a group whose rate is 0 or 1 (11 positives, all
  found) keeps a real standard error; the bootstrap SE of such a gap collapses with the group's
  rate, and BH over such p-values rejects control gaps (docs/association-tests.md).
  It is not floored by a replicate count either: BH over m tests rejects a lone gap only
  when its p is below alpha / m (0.05 / 47 = 0.0011 on the demo's testable tasks), and a count of
  replicates beyond 0 cannot go below 2 / (R + 1). With more than two groups the comparison group
  is the farthest one (eq. 2), chosen on the data; the test does not correct for that choice.
- ``p_bootstrap``: the count of replicates on each side of 0, (k + 1) / (R + 1) per side, doubled;
  kept beside it (floored at 2 / (R + 1), and as blind to the 0/1 boundary as the interval).

Replicates in which a gap is undefined are counted and left out of its interval and p-values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medbias.metrics.bootstrap import percentile_interval, within_label_resamples

GAP_METRICS: tuple[str, ...] = ("parity", "recall", "specificity")


CELLS: tuple[str, ...] = ("tp", "fp", "fn", "tn")


def group_counts(
    predicted: np.ndarray, label: np.ndarray, group_index: np.ndarray, n_groups: int, index: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Per-group confusion counts ``tp``, ``fp``, ``fn``, ``tn`` and ``n``: shape (n_groups,) over all
    rows, or (replicates, n_groups) over the rows of each replicate of an index matrix.

    ``label`` is 0/1 per row; ``group_index`` is each row's group in 0..n_groups-1. ``predicted`` is
    0/1 per row, or a randomised rule's probability of a positive decision, in which case the counts
    are the expected ones over the rule's draws (a row with probability d adds d to its positive cell
    and 1 - d to its negative one). Each row gets one cell code (group x outcome); a replicate's counts
    are one ``bincount`` of the codes of its rows, all replicates at once.
    """
    predicted = np.asarray(predicted)
    label = np.asarray(label).astype(bool)
    base = np.asarray(group_index, dtype=np.int64) * len(CELLS)
    n_codes = n_groups * len(CELLS)
    replicates = 1 if index is None else index.shape[0]
    rows = np.arange(len(label)) if index is None else index
    offset = np.arange(replicates, dtype=np.int64)[:, None] * n_codes
    if np.isin(predicted, (0, 1)).all():
        outcome = np.where(predicted.astype(bool), np.where(label, 0, 1), np.where(label, 2, 3))  # tp, fp, fn, tn
        flat = (offset + (base + outcome)[rows]).ravel()
        table = np.bincount(flat, minlength=replicates * n_codes).astype(float)
    else:
        decided = predicted.astype(float)
        if not ((decided >= 0) & (decided <= 1)).all():
            raise ValueError("a decision probability outside [0, 1]")
        positive = base + np.where(label, 0, 1)  # the cell of a positive decision: tp or fp
        negative = base + np.where(label, 2, 3)  # of a negative one: fn or tn
        size = replicates * n_codes
        table = np.bincount((offset + positive[rows]).ravel(), weights=decided[rows].ravel(), minlength=size)
        table += np.bincount((offset + negative[rows]).ravel(), weights=1 - decided[rows].ravel(), minlength=size)
    table = table.reshape(replicates, n_groups, len(CELLS))
    if index is None:
        table = table[0]
    counts = {cell: table[..., k] for k, cell in enumerate(CELLS)}
    counts["n"] = table.sum(axis=-1)
    return counts


def safe_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is not positive (an undefined rate)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.nan)


# Table 2's rates as (cells counted as successes, cells counted as trials):
# parity (TP+FP)/N, recall TP/(TP+FN), specificity TN/(TN+FP)
RATE_PARTS = {
    "parity": (("tp", "fp"), ("tp", "fp", "fn", "tn")),
    "recall": (("tp",), ("tp", "fn")),
    "specificity": (("tn",), ("tn", "fp")),
}


def rate_parts(counts: dict[str, np.ndarray], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """``metric``'s successes and trials per group (``RATE_PARTS``) from ``group_counts``."""
    top, bottom = RATE_PARTS[metric]
    return sum(counts[c] for c in top), sum(counts[c] for c in bottom)


def group_rates(counts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Table 2's rates per group: parity (TP+FP)/N, recall TP/(TP+FN), specificity TN/(TN+FP)."""
    return {metric: safe_ratio(*rate_parts(counts, metric)) for metric in RATE_PARTS}


# distances within this relative tolerance of the largest are ties: rates are ratios of counts, and
# 7/10 - 5/10 and 5/10 - 3/10 are both 0.2 but differ in the last bit as floats
TIE_RTOL = 1e-9


def farthest_groups(rates: np.ndarray) -> np.ndarray:
    """Eq. 2's i* for every group: the index of the other group whose rate is farthest from its own
    (the first listed on ties, ties judged to ``TIE_RTOL`` of the distance; NaN rates skipped; -1
    where there is none)."""
    rates = np.asarray(rates, dtype=float)
    difference = rates[..., :, None] - rates[..., None, :]
    k = rates.shape[-1]
    distance = np.where(np.isnan(difference) | np.eye(k, dtype=bool), -np.inf, np.abs(difference))
    largest = distance.max(axis=-1, keepdims=True)
    farthest = np.argmax(distance >= largest * (1 - TIE_RTOL), axis=-1)
    defined = np.isfinite(largest[..., 0])
    return np.where(defined, farthest, -1)


def multigroup_gaps(rates: np.ndarray) -> np.ndarray:
    """Eq. 2: gap_j = m_j - m_i* with i* = argmax over the other groups of |m_j - m_i| (first group
    on ties; NaN rates skipped; NaN where m_j is NaN or no other rate is defined). Works on the last
    axis, so (replicates, groups) gives every replicate's gaps at once."""
    rates = np.asarray(rates, dtype=float)
    farthest = farthest_groups(rates)
    other = np.take_along_axis(rates, np.maximum(farthest, 0), axis=-1)
    return np.where((farthest >= 0) & ~np.isnan(rates), rates - other, np.nan)


# the count each metric's rate is computed from: a group with too few of them gets no gap
DENOMINATOR = {"parity": "rows", "recall": "positives", "specificity": "negatives"}


def eligible_rates(
    counts: dict[str, np.ndarray], eligible: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """``group_rates`` with the groups that ``eligible`` (metric -> bool per group) leaves out of a
    metric set to NaN: they get no gap and are never the comparison group."""
    rates = group_rates(counts)
    if eligible is None:
        return rates
    return {m: np.where(eligible[m], rate, np.nan) for m, rate in rates.items()}


def gaps_of(counts: dict[str, np.ndarray], eligible: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Each metric's signed gap per group (eq. 2 on the rates of ``eligible_rates``)."""
    return {metric: multigroup_gaps(rate) for metric, rate in eligible_rates(counts, eligible).items()}


def bootstrap_gaps(
    predicted: np.ndarray,
    label: np.ndarray,
    group_index: np.ndarray,
    n_groups: int,
    index: np.ndarray,
    eligible: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Every replicate's gaps at once: metric -> (replicates, groups), from the index matrix."""
    return gaps_of(group_counts(predicted, label, group_index, n_groups, index), eligible)


def pooled_rate_p(successes: float, trials: float, other_successes: float, other_trials: float) -> float:
    """Two-sided p of the two-proportion score test that two rates are equal (module docstring):
    2 * Phi(-|r1 - r2| / sqrt(r (1 - r) (1/n1 + 1/n2))) with r the pooled rate. 1.0 when the pooled
    rate is 0 or 1 (the two rates are equal); NaN when either group has no trials."""
    from scipy.stats import norm

    if trials <= 0 or other_trials <= 0:
        return float("nan")
    pooled = (successes + other_successes) / (trials + other_trials)
    variance = pooled * (1 - pooled) * (1 / trials + 1 / other_trials)
    if variance <= 0:
        return 1.0
    difference = successes / trials - other_successes / other_trials
    return float(2 * norm.sf(abs(difference) / np.sqrt(variance)))


def two_sided_p(replicates: np.ndarray) -> float:
    """Two-sided bootstrap p-value of 'gap = 0': twice the smaller share of defined replicates at or
    beyond 0 on either side, (k + 1) / (R + 1) each, capped at 1."""
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return float("nan")
    below = (np.sum(finite <= 0) + 1) / (len(finite) + 1)
    above = (np.sum(finite >= 0) + 1) / (len(finite) + 1)
    return float(min(1.0, 2 * min(below, above)))


@dataclass(frozen=True)
class GapResult:
    """One metric's gap for one group, with its bootstrap summary."""

    group: str
    metric: str
    compared_with: str  # eq. 2's farthest group on the observed data ('' when the gap is undefined)
    gap: float
    ci_low: float
    ci_high: float
    p_value: float  # two-proportion score test against compared_with (module docstring): what BH uses
    significant: bool
    undefined_replicates: int
    n: int
    positives: int
    note: str = ""  # why there is no gap ('fewer than 10 positives', 'no other group to compare with')
    p_bootstrap: float = float("nan")  # replicates counted on each side of 0, floored at 2 / (R + 1)


def group_sizes_and_eligibility(
    counts: dict[str, np.ndarray], minimum: dict[str, int] | None = None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Each group's rows, positives and negatives (``group_counts``), and per metric whether the group
    has at least ``minimum`` of the count its rate is computed from (``DENOMINATOR``; 1 where
    ``minimum`` leaves a count out)."""
    sizes = {"rows": counts["n"], "positives": counts["tp"] + counts["fn"], "negatives": counts["tn"] + counts["fp"]}
    floor = {"rows": 1, "positives": 1, "negatives": 1, **(minimum or {})}
    return sizes, {m: sizes[DENOMINATOR[m]] >= floor[DENOMINATOR[m]] for m in GAP_METRICS}


def fairness_gaps(
    predicted: np.ndarray,
    label: np.ndarray,
    groups: Sequence[str],
    order: Sequence[str],
    n_replicates: int,
    rng: np.random.Generator,
    level: float = 0.95,
    minimum: dict[str, int] | None = None,
) -> list[GapResult]:
    """Parity, recall and specificity gaps of every group in ``order`` (rows whose group is not in
    ``order`` must be removed by the caller, who reports them), with bootstrap intervals and p-values.

    ``minimum`` ({'rows', 'positives', 'negatives'}) leaves a group out of a metric when it has fewer
    test rows (parity), positives (recall) or negatives (specificity): its rate would rest on a handful
    of notes, and a rate that is 0 or 1 in every replicate gives a zero-width interval that excludes 0
    (docs/hurtful.md). The row stays, with no gap and a note saying why."""
    groups = np.asarray(groups)
    position = {g: k for k, g in enumerate(order)}
    unknown = sorted(set(groups.tolist()) - set(position))
    if unknown:
        raise ValueError(f"groups not in the order: {unknown}")
    group_index = np.array([position[g] for g in groups], dtype=int)
    label = np.asarray(label).astype(int)
    counts = group_counts(predicted, label, group_index, len(order))
    minimum = {"rows": 1, "positives": 1, "negatives": 1, **(minimum or {})}  # the notes name the floor
    sizes, eligible = group_sizes_and_eligibility(counts, minimum)
    rates = eligible_rates(counts, eligible)
    observed = {m: multigroup_gaps(rates[m]) for m in GAP_METRICS}
    comparators = {m: farthest_groups(rates[m]) for m in GAP_METRICS}
    successes, trials = {}, {}
    for m in GAP_METRICS:
        successes[m], trials[m] = rate_parts(counts, m)
    replicates = bootstrap_gaps(
        predicted, label, group_index, len(order), within_label_resamples(label, n_replicates, rng), eligible
    )
    results = []
    for metric in GAP_METRICS:
        for k, group in enumerate(order):
            column = replicates[metric][:, k]
            low, high = percentile_interval(column, level)
            gap = float(observed[metric][k])
            results.append(
                GapResult(
                    group=str(group),
                    metric=metric,
                    compared_with=str(order[comparators[metric][k]]) if np.isfinite(gap) else "",
                    gap=gap,
                    ci_low=low,
                    ci_high=high,
                    p_value=pooled_rate_p(
                        successes[metric][k],
                        trials[metric][k],
                        successes[metric][comparators[metric][k]],
                        trials[metric][comparators[metric][k]],
                    )
                    if np.isfinite(gap)
                    else float("nan"),
                    significant=bool(np.isfinite(gap) and (low > 0 or high < 0)),
                    undefined_replicates=int(np.sum(~np.isfinite(column))) if np.isfinite(gap) else 0,
                    n=int(sizes["rows"][k]),
                    positives=int(sizes["positives"][k]),
                    note=_missing_gap_note(metric, k, eligible, sizes, minimum) if not np.isfinite(gap) else "",
                    p_bootstrap=two_sided_p(column) if np.isfinite(gap) else float("nan"),
                )
            )
    return results


def _missing_gap_note(
    metric: str, k: int, eligible: dict[str, np.ndarray], sizes: dict[str, np.ndarray], minimum: dict[str, int]
) -> str:
    what = DENOMINATOR[metric]
    if not eligible[metric][k]:
        return f"fewer than {minimum[what]} {what} ({int(sizes[what][k])})"
    return "no other group to compare with"


def benjamini_hochberg_by(table, p_column: str, by: Sequence[str], alpha: float = 0.05):
    """``benjamini_hochberg`` within each group of rows of ``table`` (a DataFrame) sharing the ``by``
    columns: (adjusted p, rejected) as Series aligned with ``table``'s index."""
    import pandas as pd

    adjusted = pd.Series(np.nan, index=table.index)
    rejected = pd.Series(False, index=table.index)
    for _, index in table.groupby(list(by)).groups.items():
        adjusted.loc[index], rejected.loc[index] = benjamini_hochberg(table.loc[index, p_column].to_numpy(), alpha)
    return adjusted, rejected


def benjamini_hochberg(p_values: Sequence[float], alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini-Hochberg adjusted p-values and rejections (statsmodels ``fdr_bh``) over the defined
    p-values; undefined (NaN) p-values stay NaN, are not rejected and do not count as tests."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(len(p), np.nan)
    rejected = np.zeros(len(p), dtype=bool)
    defined = np.isfinite(p)
    if defined.any():
        reject, corrected, _, _ = multipletests(p[defined], alpha=alpha, method="fdr_bh")
        adjusted[defined], rejected[defined] = corrected, reject
    return adjusted, rejected
