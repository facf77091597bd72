"""Fairness gaps (Zhang et al. 2020, Table 2 and eq. 2): hand-computed tables, the multi-group
expansion, the vectorised bootstrap against a per-replicate loop, undefined replicates, p-values and
Benjamini-Hochberg."""

from __future__ import annotations

import numpy as np
import pytest

from medbias.metrics.bootstrap import within_label_resamples
from medbias.metrics.fairness import (
    benjamini_hochberg,
    bootstrap_gaps,
    fairness_gaps,
    farthest_groups,
    gaps_of,
    group_counts,
    multigroup_gaps,
    pooled_rate_p,
    two_sided_p,
)

# Men: labels 1 1 0 0, predictions 1 0 1 0 -> TP FN FP TN one each: parity 2/4, recall 1/2, specificity 1/2.
# Women: labels 1 1 1 0 0, predictions 1 1 1 0 0 -> parity 3/5, recall 1, specificity 1.
LABEL = np.array([1, 1, 0, 0, 1, 1, 1, 0, 0])
PREDICTED = np.array([1, 0, 1, 0, 1, 1, 1, 0, 0])
GROUP = np.array(["M"] * 4 + ["F"] * 5)


def test_two_group_gaps_by_hand():
    results = {
        (r.group, r.metric): r for r in fairness_gaps(PREDICTED, LABEL, GROUP, ["M", "F"], 50, np.random.default_rng(0))
    }
    expected = {"parity": -0.1, "recall": -0.5, "specificity": -0.5}
    for metric, gap in expected.items():
        assert results[("M", metric)].gap == pytest.approx(gap)
        assert results[("F", metric)].gap == pytest.approx(-gap)
    assert results[("M", "recall")].n == 4 and results[("M", "recall")].positives == 2
    assert results[("M", "recall")].compared_with == "F" and results[("F", "parity")].compared_with == "M"
    assert results[("F", "parity")].n == 5 and results[("F", "parity")].positives == 3


def test_multigroup_expansion_compares_with_the_farthest_group():
    np.testing.assert_allclose(multigroup_gaps(np.array([0.2, 0.5, 0.9])), [-0.7, -0.4, 0.7])
    assert farthest_groups(np.array([0.2, 0.5, 0.9])).tolist() == [2, 2, 0]
    assert farthest_groups(np.array([np.nan, 0.4])).tolist() == [-1, -1]
    # 0.5 is 0.25 from both others: the tie goes to the group listed first (0.25)
    np.testing.assert_allclose(multigroup_gaps(np.array([0.5, 0.25, 0.75])), [0.25, -0.5, 0.5])
    # a tie of rates computed from counts: 5/10 is 0.2 from 7/10 and from 3/10, but as floats
    # 7/10 - 5/10 < 5/10 - 3/10 in the last bit; the first-listed rule still picks 7/10 (gap -0.2)
    assert 0.7 - 0.5 != 0.5 - 0.3
    counted = np.array([5, 7, 3]) / np.array([10, 10, 10])
    assert farthest_groups(counted).tolist() == [1, 2, 1]
    np.testing.assert_allclose(multigroup_gaps(counted), [-0.2, 0.4, -0.4])
    # the same tie inside a replicate matrix, and a true near-tie that is not one (0.2 against 0.2001)
    np.testing.assert_allclose(
        multigroup_gaps(np.vstack([counted, [0.5, 0.7, 0.2999]])), [[-0.2, 0.4, -0.4], [0.2001, 0.4001, -0.4001]]
    )
    # an undefined rate has no gap and is never the comparison group
    np.testing.assert_allclose(multigroup_gaps(np.array([np.nan, 0.4, 0.1])), [np.nan, 0.3, -0.3])
    np.testing.assert_allclose(multigroup_gaps(np.array([np.nan, 0.4])), [np.nan, np.nan])
    # the last axis holds the groups: replicates are rows
    stacked = multigroup_gaps(np.array([[0.2, 0.5, 0.9], [0.5, 0.25, 0.75]]))
    np.testing.assert_allclose(stacked, [[-0.7, -0.4, 0.7], [0.25, -0.5, 0.5]])


def test_vectorised_bootstrap_equals_a_loop_over_the_same_index_matrix():
    rng = np.random.default_rng(4)
    n = 300
    label = (rng.random(n) < 0.2).astype(int)
    predicted = (rng.random(n) < 0.3).astype(int)
    group = rng.integers(0, 3, n)
    group[np.flatnonzero(label)[:2]] = 2  # group 2 has few positives: some replicates leave it without any
    group[np.flatnonzero(label)[2:]] = rng.integers(0, 2, label.sum() - 2)
    index = within_label_resamples(label, 200, np.random.default_rng(9))
    vectorised = bootstrap_gaps(predicted, label, group, 3, index)
    for r, rows in enumerate(index):
        loop = gaps_of(group_counts(predicted[rows], label[rows], group[rows], 3))
        for metric in loop:
            np.testing.assert_allclose(vectorised[metric][r], loop[metric], equal_nan=True)
    assert np.isnan(vectorised["recall"][:, 2]).any()  # the case the loop must agree on too


def test_resamples_stay_within_each_label():
    label = np.array([1, 0, 0, 1, 0, 0, 0, 1])
    index = within_label_resamples(label, 100, np.random.default_rng(0))
    assert index.shape == (100, 8)
    assert (label[index].sum(axis=1) == 3).all()  # every replicate keeps three positives
    assert set(np.unique(index[:, :3])) <= {0, 3, 7} and set(np.unique(index[:, 3:])) <= {1, 2, 4, 5, 6}


def test_replicates_without_positives_in_a_group_are_counted_not_dropped():
    rng = np.random.default_rng(1)
    label = np.array([1] * 20 + [0] * 80)
    group = np.array(["a"] * 19 + ["b"] + ["a"] * 40 + ["b"] * 40)  # b has one positive
    predicted = (rng.random(100) < 0.5).astype(int)
    results = {
        (r.group, r.metric): r
        for r in fairness_gaps(predicted, label, group, ["a", "b"], 300, np.random.default_rng(5))
    }
    index = within_label_resamples(label, 300, np.random.default_rng(5))  # the same draws as inside
    b_positives = ((group[index] == "b") & (label[index] == 1)).sum(axis=1)
    expected = int((b_positives == 0).sum())
    assert 0 < expected < 300
    assert results[("b", "recall")].undefined_replicates == expected
    assert results[("a", "recall")].undefined_replicates == expected  # a's gap needs b's recall too
    assert results[("b", "parity")].undefined_replicates == 0


def test_two_sided_p_value_by_hand():
    # 1 replicate at or below 0, 3 at or above: 2 * min(2/5, 4/5)
    assert two_sided_p(np.array([-1.0, 1.0, 2.0, 3.0, np.nan])) == pytest.approx(0.8)
    assert two_sided_p(np.array([1.0, 2.0, 3.0])) == pytest.approx(0.5)  # 2 * (0 + 1) / 4
    assert np.isnan(two_sided_p(np.array([np.nan])))


def test_planted_gap_is_significant_and_null_gaps_are_near_the_nominal_rate():
    rng = np.random.default_rng(2)
    n = 600
    label = (rng.random(n) < 0.3).astype(int)
    group = np.where(rng.random(n) < 0.5, "M", "F")
    recall = np.where(group == "M", 0.9, 0.4)  # planted: women's positives are found less often
    predicted = np.where(label == 1, rng.random(n) < recall, rng.random(n) < 0.1).astype(int)
    results = {(r.group, r.metric): r for r in fairness_gaps(predicted, label, group, ["M", "F"], 1000, rng)}
    assert results[("M", "recall")].significant and results[("M", "recall")].gap > 0.3
    assert results[("F", "recall")].ci_high < 0 and results[("M", "recall")].p_value < 0.01
    significant = 0
    for task in range(100):  # no gap planted: predictions independent of the group
        label = (rng.random(300) < 0.3).astype(int)
        group = np.where(rng.random(300) < 0.5, "M", "F")
        predicted = np.where(label == 1, rng.random(300) < 0.7, rng.random(300) < 0.1).astype(int)
        result = [
            r
            for r in fairness_gaps(predicted, label, group, ["M", "F"], 300, rng)
            if r.group == "M" and r.metric == "recall"
        ][0]
        significant += result.significant
    assert significant <= 12  # nominal 5 of 100; the binomial 99.9% bound is about 13


def test_benjamini_hochberg_by_hand():
    p = [0.01, np.nan, 0.04, 0.03, 0.5]
    adjusted, rejected = benjamini_hochberg(p, alpha=0.05)
    # sorted 0.01, 0.03, 0.04, 0.5 of m = 4: 0.04, min(0.06, 0.0533), 0.0533, 0.5
    np.testing.assert_allclose(adjusted, [0.04, np.nan, 4 * 0.04 / 3, 4 * 0.04 / 3, 0.5], equal_nan=True)
    assert rejected.tolist() == [True, False, False, False, False]


def test_groups_outside_the_order_are_an_error():
    with pytest.raises(ValueError, match="not in the order"):
        fairness_gaps(PREDICTED, LABEL, GROUP, ["M"], 10, np.random.default_rng(0))


def test_groups_below_the_minimum_get_no_gap_and_say_why():
    rng = np.random.default_rng(3)
    n = 300
    group = np.array(["a"] * 140 + ["b"] * 140 + ["c"] * 20)
    label = np.r_[rng.random(280) < 0.3, [1, 1, 1] + [0] * 17].astype(int)  # c: 3 positives
    predicted = np.where(rng.random(n) < 0.8, label, 1 - label)
    minimum = {"rows": 10, "positives": 10, "negatives": 10}
    results = {
        (r.group, r.metric): r
        for r in fairness_gaps(predicted, label, group, ["a", "b", "c"], 200, rng, minimum=minimum)
    }
    assert np.isnan(results[("c", "recall")].gap) and results[("c", "recall")].note == "fewer than 10 positives (3)"
    assert np.isnan(results[("c", "recall")].p_value) and not results[("c", "recall")].significant
    assert np.isfinite(results[("c", "parity")].gap)  # 20 rows are enough for parity
    assert results[("a", "recall")].compared_with == "b" and results[("b", "recall")].compared_with == "a"
    two = {
        (r.group, r.metric): r
        for r in fairness_gaps(predicted[140:], label[140:], group[140:], ["b", "c"], 50, rng, minimum=minimum)
    }
    assert two[("b", "recall")].note == "no other group to compare with"


def test_pooled_rate_p_by_hand():
    """30/40 vs 20/40: pooled 50/80 = 0.625, SE = sqrt(0.625 * 0.375 * (2/40)) = 0.10825, z = 0.25 / SE."""
    from scipy.stats import norm

    se = np.sqrt(0.625 * 0.375 * (1 / 40 + 1 / 40))
    assert pooled_rate_p(30, 40, 20, 40) == pytest.approx(2 * norm.sf(0.25 / se))
    assert pooled_rate_p(5, 5, 7, 7) == 1.0 and pooled_rate_p(0, 5, 0, 9) == 1.0
    assert np.isnan(pooled_rate_p(1, 0, 3, 4))


def test_a_rate_at_the_boundary_keeps_its_uncertainty():
    """11 positives all found against 113 of 136 (0.83): the score test gives p about 0.12, as the
    exact test does; the bootstrap collapses the group's recall to 1.0 in every replicate, so its
    interval is narrow and excludes 0 although 11 of 11 is likely at a recall of 0.83 (0.83^11 = 0.13)."""
    from scipy.stats import fisher_exact

    label = np.ones(147, dtype=int)
    group = np.array(["small"] * 11 + ["large"] * 136)
    predicted = np.array([1] * 11 + [1] * 113 + [0] * 23)
    result = [
        r
        for r in fairness_gaps(predicted, label, group, ["small", "large"], 1000, np.random.default_rng(0))
        if r.group == "small" and r.metric == "recall"
    ][0]
    assert result.gap == pytest.approx(1 - 113 / 136)
    assert result.ci_low > 0  # the percentile interval is fooled by the boundary
    assert 0.08 < result.p_value < 0.2
    assert result.p_value == pytest.approx(fisher_exact([[11, 0], [113, 23]]).pvalue, abs=0.1)


def _task(rng, n, recall_f):
    label = (rng.random(n) < 0.3).astype(int)
    group = np.where(rng.random(n) < 0.5, "M", "F")
    recall = np.where(group == "M", 0.8, recall_f)
    predicted = np.where(label == 1, rng.random(n) < recall, rng.random(n) < 0.1).astype(int)
    return predicted, label, group


def test_a_lone_strong_gap_survives_fdr_among_null_tasks():
    """One planted recall gap among 46 null tasks: with the count of replicates (floored at 2/1001)
    BH over 47 tests cannot reject it; with the score-test p it is rejected, and the null tasks are not."""
    rng = np.random.default_rng(7)
    tasks = [_task(rng, 800, 0.1)] + [_task(rng, 800, 0.8) for _ in range(46)]
    results = [
        [r for r in fairness_gaps(*t, ["M", "F"], 1000, rng) if r.group == "F" and r.metric == "recall"][0]
        for t in tasks
    ]
    assert results[0].gap < -0.5 and results[0].p_bootstrap == pytest.approx(2 / 1001)
    _, by_count = benjamini_hochberg([r.p_bootstrap for r in results])
    _, by_se = benjamini_hochberg([r.p_value for r in results])
    assert not by_count[0] and by_se[0] and results[0].p_value < 1e-10
    assert by_se[1:].sum() <= 1


def test_score_test_and_counted_p_values_agree_in_the_bulk_and_hold_the_level():
    rng = np.random.default_rng(3)
    pairs, flagged = [], 0
    for _ in range(200):  # no gap planted
        result = [
            r
            for r in fairness_gaps(*_task(rng, 400, 0.8), ["M", "F"], 1000, rng)
            if r.group == "M" and r.metric == "recall"
        ][0]
        pairs.append((result.p_value, result.p_bootstrap))
        flagged += result.p_value < 0.05
    normal, counted = np.array(pairs).T
    bulk = counted > 0.02
    difference = np.abs(normal[bulk] - counted[bulk])  # a count's Monte-Carlo SE at p = 0.5, R = 1,000: 0.03
    assert np.median(difference) < 0.03 and difference.max() < 0.12  # measured 0.02 and 0.09
    assert flagged <= 18  # nominal 10 of 200; binomial 99.5% bound about 18


def test_group_counts_of_decision_probabilities_are_the_expected_counts():
    """A randomised rule's decision probabilities give the confusion counts expected over its draws:
    a row decided positive with probability d adds d to TP or FP and 1 - d to FN or TN, in the data
    and in every resample."""
    label = np.array([1, 1, 0, 0, 1, 0])
    decision = np.array([0.25, 1.0, 0.5, 0.0, 0.75, 1.0])
    group = np.array([0, 0, 0, 0, 1, 1])
    counts = group_counts(decision, label, group, 2)
    assert counts["tp"].tolist() == [1.25, 0.75] and counts["fn"].tolist() == [0.75, 0.25]
    assert counts["fp"].tolist() == [0.5, 1.0] and counts["tn"].tolist() == [1.5, 0.0]
    assert counts["n"].tolist() == [4, 2]
    index = np.array([[0, 0, 5, 3], [4, 1, 2, 2]])
    replicated = group_counts(decision, label, group, 2, index)
    assert replicated["tp"].tolist() == [[0.5, 0.0], [1.0, 0.75]]
    assert replicated["fp"].tolist() == [[0.0, 1.0], [1.0, 0.0]]
    # draws of the rule average to the expected counts
    draws = np.random.default_rng(0).random((20_000, len(label))) < decision
    tp = np.mean([group_counts(d.astype(int), label, group, 2)["tp"] for d in draws[:2000]], axis=0)
    assert np.allclose(tp, counts["tp"], atol=0.05)
    with pytest.raises(ValueError, match="outside"):
        group_counts(np.array([1.5, 0, 0, 0, 0, 0]), label, group, 2)
