"""The bootstrap, in one place: with-replacement resamples as index matrices, their per-item counts
and weights, the within-label (or within-stratum) resamples of the fairness and performance intervals, and the
percentile interval that every study reports (Efron and Tibshirani 1993, ch. 13).

Every engine that bootstraps (the WEAT/SEAT effect sizes and ECT of ``association``, Direct Bias,
the fairness gaps and AUROC/AUPRC of Zhang et al. 2020, the counterfactual metrics of Sogancioglu
et al. 2023) draws its replicates here, one ``rng.integers`` call per resampled set, so a seed gives
the same replicates whichever engine asks."""

from __future__ import annotations

import numpy as np


def resample_indices(n: int, n_replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(n_replicates, n) indices of ``n_replicates`` with-replacement resamples of n items."""
    return rng.integers(0, n, size=(n_replicates, n))


def resample_counts(index: np.ndarray, n_rows: int) -> np.ndarray:
    """(replicates, rows) resample counts of an index matrix (how often each row was drawn)."""
    replicates = index.shape[0]
    flat = (np.arange(replicates, dtype=np.int64)[:, None] * n_rows + index).ravel()
    return np.bincount(flat, minlength=replicates * n_rows).reshape(replicates, n_rows).astype(float)


def resample_weights(n: int, n_replicates: int, rng: np.random.Generator) -> np.ndarray:
    """Replicate-by-item weights of with-replacement resamples of n items: counts divided by n, so a
    replicate's weighted sum of the items is its resample's mean."""
    return resample_counts(resample_indices(n, n_replicates, rng), n) / n


def within_strata_resamples(
    strata: list[np.ndarray], n_rows: int, n_replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """(n_replicates, n_rows) index matrix: each stratum (an array of row numbers; together they cover
    the rows once) is resampled with replacement among its own rows, so every replicate keeps each
    stratum's size. The columns hold the strata in the order given."""
    index = np.empty((n_replicates, n_rows), dtype=np.int64)
    start = 0
    for rows in strata:
        if len(rows):
            index[:, start : start + len(rows)] = rows[resample_indices(len(rows), n_replicates, rng)]
        start += len(rows)
    if start != n_rows:
        raise ValueError(f"the strata cover {start} rows, not {n_rows}")
    return index


def within_label_resamples(label: np.ndarray, n_replicates: int, rng: np.random.Generator) -> np.ndarray:
    """(n_replicates, rows) index matrix: each replicate draws as many positives as there are, with
    replacement among the positives, and likewise for the negatives (the positives' columns first)."""
    label = np.asarray(label).astype(bool)
    return within_strata_resamples([np.flatnonzero(label), np.flatnonzero(~label)], len(label), n_replicates, rng)


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval at ``level``, ignoring undefined (non-finite) replicates; NaN
    bounds when no replicate is defined."""
    finite = replicates[np.isfinite(replicates)]
    if len(finite) == 0:
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    lo, hi = np.quantile(finite, [alpha, 1 - alpha])
    return float(lo), float(hi)
