"""Vectorised AUROC and AUPRC per bootstrap replicate against scikit-learn with sample weights."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from medbias.metrics.bootstrap import resample_counts, within_label_resamples
from medbias.metrics.performance import ranking_metrics


def test_observed_metrics_by_hand():
    # positives 0.9, 0.4; negatives 0.6, 0.1: 3 of 4 pairs ordered -> AUROC 0.75;
    # AP = 1/2 * 1 (at 0.9) + 1/2 * 2/3 (at 0.4) = 5/6
    result = ranking_metrics(np.array([0.9, 0.6, 0.4, 0.1]), np.array([1, 0, 1, 0]))
    assert result["auroc"][0] == pytest.approx(0.75) and result["auprc"][0] == pytest.approx(5 / 6)
    tied = ranking_metrics(np.array([0.5, 0.5]), np.array([1, 0]))
    assert tied["auroc"][0] == pytest.approx(0.5) and tied["auprc"][0] == pytest.approx(0.5)


def test_every_replicate_matches_scikit_learn_with_its_counts_as_weights():
    rng = np.random.default_rng(0)
    label = (rng.random(120) < 0.25).astype(int)
    score = np.round(rng.random(120) * 0.5 + 0.4 * label, 2)  # rounding makes ties
    index = within_label_resamples(label, 50, rng)
    weights = resample_counts(index, 120)
    assert (weights.sum(axis=1) == 120).all() and weights[3, index[3, 0]] >= 1
    result = ranking_metrics(score, label, weights)
    for r in range(50):
        assert result["auroc"][r] == pytest.approx(roc_auc_score(label, score, sample_weight=weights[r]))
        assert result["auprc"][r] == pytest.approx(average_precision_score(label, score, sample_weight=weights[r]))


def test_undefined_without_positives():
    result = ranking_metrics(np.array([0.2, 0.3]), np.array([0, 0]))
    assert np.isnan(result["auroc"][0]) and np.isnan(result["auprc"][0])
