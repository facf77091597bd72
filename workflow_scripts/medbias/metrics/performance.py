"""AUROC and AUPRC of note-level predictions with bootstrap intervals (Zhang et al. 2020, Table A2
and Figure A1), all replicates at once.

A replicate is a vector of resample counts per row (from the same within-label index matrix as the
fairness bootstrap). With the rows sorted by score once, a replicate's weighted true and false
positives at every distinct threshold are cumulative sums of its counts, which gives its ROC and
precision-recall steps: AUROC by the trapezoid rule (ties count one half), AUPRC as average precision,
sum over thresholds of (recall step) x precision, as scikit-learn computes both.
"""

from __future__ import annotations

import numpy as np


def _weighted_curves(score: np.ndarray, label: np.ndarray, weights: np.ndarray):
    """Cumulative weighted TP and FP at each distinct threshold, highest first: (replicates, thresholds)."""
    order = np.argsort(-score, kind="stable")
    s, y, w = score[order], label[order].astype(bool), weights[:, order]
    last = np.r_[s[1:] != s[:-1], True]  # the last row of each run of equal scores
    tp = np.cumsum(w * y, axis=1)[:, last]
    fp = np.cumsum(w * ~y, axis=1)[:, last]
    return tp, fp


def ranking_metrics(score: np.ndarray, label: np.ndarray, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """AUROC and AUPRC (average precision) per replicate; ``weights`` (replicates, rows) are resample
    counts, None for the observed data (a one-element array each). NaN when a replicate lacks positives
    or negatives."""
    score = np.asarray(score, dtype=float)
    label = np.asarray(label).astype(bool)
    w = np.ones((1, len(score))) if weights is None else np.asarray(weights, dtype=float)
    tp, fp = _weighted_curves(score, label, w)
    positives, negatives = tp[:, -1:], fp[:, -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.hstack([np.zeros_like(positives), tp / positives])
        fpr = np.hstack([np.zeros_like(negatives), fp / negatives])
        auroc = np.sum(np.diff(fpr, axis=1) * (tpr[:, 1:] + tpr[:, :-1]) / 2, axis=1)
        precision = tp / (tp + fp)
        recall_step = np.diff(np.hstack([np.zeros_like(positives), tp]), axis=1) / positives
        auprc = np.sum(np.where(recall_step > 0, recall_step * precision, 0.0), axis=1)
    undefined = (positives[:, 0] == 0) | (negatives[:, 0] == 0)
    auroc[undefined] = np.nan
    auprc[positives[:, 0] == 0] = np.nan
    return {"auroc": auroc, "auprc": auprc}
