"""Note-level predictions from window-level classifiers (Zhang et al. 2020, section 3.3 and 4.1).

A note longer than one window is split into up to ten windows that all carry the note's label; the
classifier scores windows, and the note's probability merges them with eq. 1 (Huang et al.):

    P(Y = 1) = (P_max + P_mean * n / c) / (1 + n / c)

with n the note's number of windows and c a scaling factor tuned per task on the validation set
(few windows: close to the mean; many: pulled towards the maximum). The threshold for binary
predictions is the one with the best F1 on the validation set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def merge_window_probabilities(probability: np.ndarray, note_id: np.ndarray, c: float) -> pd.Series:
    """Eq. 1 per note: (max + mean * n / c) / (1 + n / c) over the note's windows; indexed by note id
    in sorted order."""
    if c <= 0:
        raise ValueError(f"scaling factor c must be positive, got {c}")
    frame = pd.DataFrame({"note": note_id, "p": probability}).groupby("note")["p"]
    highest, mean, n = frame.max(), frame.mean(), frame.size()
    return (highest + mean * n / c) / (1 + n / c)


def note_labels(label: np.ndarray, note_id: np.ndarray) -> pd.Series:
    """The label of each note from its windows (all windows of a note carry it; a disagreement is an
    error), indexed like ``merge_window_probabilities``."""
    frame = pd.DataFrame({"note": note_id, "y": label}).groupby("note")["y"]
    inconsistent = frame.nunique() > 1
    if inconsistent.any():
        raise ValueError(f"windows of one note carry different labels: notes {inconsistent[inconsistent].index[:5].tolist()}")
    return frame.first()


def choose_scaling_factor(probability: np.ndarray, label: np.ndarray, note_id: np.ndarray,
                          grid: Sequence[float]) -> tuple[float, float]:
    """The c of ``grid`` whose merged note probabilities have the best AUPRC (average precision) on
    these (validation) windows; ties go to the first c in the grid. Returns (c, AUPRC)."""
    from sklearn.metrics import average_precision_score

    truth = note_labels(label, note_id)
    best_c, best = grid[0], -np.inf
    for c in grid:
        merged = merge_window_probabilities(probability, note_id, c)
        score = average_precision_score(truth.loc[merged.index], merged)
        if score > best:
            best_c, best = c, score
    return float(best_c), float(best)


def best_f1_threshold(probability: np.ndarray, label: np.ndarray) -> tuple[float, float]:
    """The threshold t (predict positive when p >= t) with the highest F1 on these (validation)
    probabilities, searched over the distinct probabilities; ties go to the highest threshold.
    Returns (t, F1). Without positives F1 is 0 everywhere and t is above every probability."""
    probability = np.asarray(probability, dtype=float)
    label = np.asarray(label).astype(bool)
    if not label.any():
        return float(np.nextafter(probability.max(), np.inf)) if len(probability) else 1.0, 0.0
    order = np.argsort(-probability, kind="stable")
    p, y = probability[order], label[order]
    true_positives = np.cumsum(y)
    predicted = np.arange(1, len(p) + 1)
    last_of_value = np.r_[p[1:] != p[:-1], True]  # a threshold includes every row with that probability
    f1 = 2 * true_positives / (predicted + label.sum())
    f1 = np.where(last_of_value, f1, -1.0)
    best = int(np.argmax(f1))  # first maximum = highest threshold
    return float(p[best]), float(f1[best])
