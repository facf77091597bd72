"""Known answers for the association engine: hand-computed WEAT, brute-force permutation p-values,
Monte-Carlo agreement of the sampler, ECT and RIPA on constructed vectors, and the calibrated null
(random attribute sets) against plain loops and on exchangeable and clustered null worlds."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy.stats import spearmanr

from medbias.core.errors import MedbiasInputError
from medbias.metrics.association import (
    NullVocabulary,
    association_scores,
    attribute_direction,
    bootstrap_ect,
    bootstrap_effect_sizes,
    calibrated_null,
    draw_matched_sets,
    ect_score,
    effect_size,
    frequency_bins,
    lookup,
    permutation_p_value,
    relation_vector,
    ripa_scores,
    unit_rows,
    weat,
    weat_statistic,
)

# 2-d vectors chosen so that every cosine is a simple number
E1, E2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
DIAG = np.array([1.0, 1.0]) / np.sqrt(2)


def test_association_score_by_hand():
    # w = e1: cos(w, e1) = 1, cos(w, e2) = 0, cos(w, diag) = 1/sqrt2
    s = association_scores(np.array([E1]), np.array([E1, DIAG]), np.array([E2]))
    assert s[0] == pytest.approx((1 + 1 / np.sqrt(2)) / 2 - 0)


def test_effect_size_and_statistic_by_hand():
    s_x, s_y = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    # means 1.5 and 0.5; union [1,2,0,1] has mean 1, sample variance (0+1+1+0)/3 = 2/3
    assert effect_size(s_x, s_y) == pytest.approx(1.0 / np.sqrt(2 / 3))
    assert weat_statistic(s_x, s_y) == pytest.approx(3.0 - 1.0)


def _brute_force_p(s_x, s_y, alternative):
    s = np.concatenate([s_x, s_y])
    n, n_x = len(s), len(s_x)
    observed = s_x.sum() - s_y.sum()
    expected = (n_x - (n - n_x)) / n * s.sum()
    hits = total = 0
    for combo in combinations(range(n), n_x):
        in_x = s[list(combo)].sum()
        stat = in_x - (s.sum() - in_x)
        if alternative == "greater":
            hits += stat >= observed - 1e-12
        else:
            hits += abs(stat - expected) >= abs(observed - expected) - 1e-12
        total += 1
    return hits / total


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize(("n_x", "n_y"), [(4, 4), (3, 5), (5, 5)])
def test_exact_p_equals_brute_force(alternative, n_x, n_y):
    rng = np.random.default_rng(n_x * 10 + n_y)
    s_x, s_y = rng.normal(0.3, 1, n_x), rng.normal(0, 1, n_y)
    result = permutation_p_value(s_x, s_y, budget=10_000, alternative=alternative)
    assert result.exact and result.n_partitions == math.comb(n_x + n_y, n_x)
    assert result.p_value == pytest.approx(_brute_force_p(s_x, s_y, alternative))


def test_perfect_separation_has_the_smallest_possible_p():
    result = permutation_p_value(np.arange(8.0) + 10, np.arange(8.0), budget=20_000)
    assert result.p_value == pytest.approx(1 / 12_870)


def test_sampled_p_agrees_with_exact_within_monte_carlo_error():
    rng = np.random.default_rng(3)
    s_x, s_y = rng.normal(0.4, 1, 8), rng.normal(0, 1, 8)
    exact = permutation_p_value(s_x, s_y, budget=20_000).p_value
    sampled = permutation_p_value(s_x, s_y, budget=5_000, rng=np.random.default_rng(9))
    assert not sampled.exact and sampled.n_partitions == 5_000
    assert abs(sampled.p_value - exact) < 4 * np.sqrt(exact * (1 - exact) / 5_000) + 1 / 5_000
    two = permutation_p_value(s_x, s_y, budget=5_000, rng=np.random.default_rng(9), alternative="two-sided")
    exact_two = permutation_p_value(s_x, s_y, budget=20_000, alternative="two-sided").p_value
    assert abs(two.p_value - exact_two) < 4 * np.sqrt(exact_two * (1 - exact_two) / 5_000) + 1 / 5_000


def test_sampled_partitions_are_distinct():
    from medbias.metrics.association import _sampled_masks

    observed = np.array([True] * 5 + [False] * 5)
    masks = _sampled_masks(10, 5, 200, np.random.default_rng(0), observed)
    keys = {m.tobytes() for m in masks}
    assert len(keys) == 200 and observed.tobytes() not in keys and (masks.sum(axis=1) == 5).all()


def test_weat_on_planted_and_null_vectors_and_coverage():
    rng = np.random.default_rng(0)
    d = 20
    male, female = rng.normal(size=d), rng.normal(size=d)
    vectors = {}
    for i in range(8):
        vectors[f"m{i}"] = male + 0.3 * rng.normal(size=d)
        vectors[f"f{i}"] = female + 0.3 * rng.normal(size=d)
        vectors[f"career{i}"] = male + 0.8 * rng.normal(size=d)  # planted: career near male
        vectors[f"family{i}"] = female + 0.8 * rng.normal(size=d)
        vectors[f"ctl_a{i}"] = rng.normal(size=d)  # control: no association
        vectors[f"ctl_b{i}"] = rng.normal(size=d)
    males, females = [f"m{i}" for i in range(8)], [f"f{i}" for i in range(8)]
    planted = weat(
        vectors,
        [f"career{i}" for i in range(8)] + ["absent"],
        [f"family{i}" for i in range(8)],
        males,
        females,
        rng=np.random.default_rng(1),
        n_bootstrap=200,
    )
    assert planted.effect_size > 1.5 and planted.p_value < 0.001 and planted.p_exact
    assert planted.ci_low > 0 and planted.ci_low <= planted.effect_size <= planted.ci_high
    assert planted.coverage["X"].missing == ("absent",) and len(planted.coverage["X"].found) == 8
    control = weat(
        vectors,
        [f"ctl_a{i}" for i in range(8)],
        [f"ctl_b{i}" for i in range(8)],
        males,
        females,
        rng=np.random.default_rng(1),
        n_bootstrap=200,
        alternative="two-sided",
    )
    assert control.p_value > 0.05 and control.ci_low < 0 < control.ci_high


def test_lookup_stops_below_the_minimum_fraction():
    with pytest.raises(MedbiasInputError, match="word set 'career': 1 of 3 words have vectors"):
        lookup({"a": np.ones(2)}, ["a", "b", "c"], "career", min_fraction=0.5)


def test_bootstrap_replicate_equals_a_plain_loop():
    """The vectorised bootstrap gives the effect size of explicitly resampled word sets."""
    rng = np.random.default_rng(5)
    x, y, a, b = (rng.normal(size=(n, 6)) for n in (4, 5, 3, 3))
    reps = bootstrap_effect_sizes(x, y, a, b, 3, np.random.default_rng(11))
    draw = np.random.default_rng(11)
    ia, ib = draw.integers(0, 3, (3, 3)), draw.integers(0, 3, (3, 3))
    ix, iy = draw.integers(0, 4, (3, 4)), draw.integers(0, 5, (3, 5))
    for r in range(3):
        s_x = association_scores(x[ix[r]], a[ia[r]], b[ib[r]])
        s_y = association_scores(y[iy[r]], a[ia[r]], b[ib[r]])
        assert reps[r] == pytest.approx(effect_size(s_x, s_y))


def test_ect_known_answers():
    rng = np.random.default_rng(2)
    targets = rng.normal(size=(30, 10))
    x = rng.normal(size=(5, 10))
    assert ect_score(targets, x, x.copy()) == pytest.approx(1.0)  # identical groups: no bias
    # group Y is the mirror image of X: similarities are exactly reversed, rho = -1
    assert ect_score(targets, x, -x) == pytest.approx(-1.0)


def test_bootstrap_ect_replicate_equals_a_plain_loop():
    rng = np.random.default_rng(6)
    targets, x, y = rng.normal(size=(12, 5)), rng.normal(size=(4, 5)), rng.normal(size=(3, 5))
    reps = bootstrap_ect(targets, x, y, 3, np.random.default_rng(2))
    draw = np.random.default_rng(2)
    ix, iy = draw.integers(0, 4, (3, 4)), draw.integers(0, 3, (3, 3))
    it = draw.integers(0, 12, (3, 12))
    for r in range(3):
        assert reps[r] == pytest.approx(ect_score(targets[it[r]], x[ix[r]], y[iy[r]]))


def test_ripa_recovers_the_planted_direction():
    rng = np.random.default_rng(4)
    g_true = np.zeros(8)
    g_true[0] = 1.0
    base = rng.normal(size=(6, 8))
    male_pairs = base + 1.0 * g_true + 0.05 * rng.normal(size=(6, 8))
    female_pairs = base - 1.0 * g_true + 0.05 * rng.normal(size=(6, 8))
    g = relation_vector(male_pairs, female_pairs)
    assert abs(g @ g_true) > 0.99 and g @ g_true > 0  # signed toward the male side
    words = np.array([2.0 * g_true, -3.0 * g_true, np.eye(8)[3]])
    scores = ripa_scores(words, g)
    assert scores[0] == pytest.approx(2.0, abs=0.05) and scores[1] == pytest.approx(-3.0, abs=0.1)
    assert abs(scores[2]) < 0.1


def test_frequency_bins_double_in_rank_and_leave_test_words_out():
    bins = frequency_bins(200, [0, 3, 30, 150], np.array([0, 3, 30, 150]))
    assert bins[0].tolist() == bins[1].tolist() == [w for w in range(25) if w not in (0, 3)]  # [0, 25)
    assert bins[2].tolist() == [w for w in range(25, 50) if w != 30]  # [25, 50)
    assert bins[3].tolist() == [w for w in range(100, 200) if w != 150]  # [100, 200)
    # a bin too small for its words is joined with its neighbour
    crowded = frequency_bins(60, list(range(20)), np.arange(20))
    assert set(crowded[0].tolist()) == set(range(20, 60))
    with pytest.raises(MedbiasInputError, match="fewer than the 5"):
        frequency_bins(6, [0, 1, 2, 3, 4], np.arange(3))


def test_matched_draws_come_from_their_bins_without_repeats():
    candidates = [np.arange(0, 5), np.arange(0, 5), np.arange(10, 40)]
    draws = draw_matched_sets(candidates, 2000, np.random.default_rng(0))
    assert draws.shape == (2000, 3)
    assert np.isin(draws[:, :2], candidates[0]).all() and np.isin(draws[:, 2], candidates[2]).all()
    assert (draws[:, 0] != draws[:, 1]).all()
    assert len({tuple(r) for r in draws[:, :2].tolist()}) == 20  # every ordered pair of 5 words occurs


def test_calibrated_null_equals_a_plain_loop_over_the_random_sets():
    """p from the projection of the X - Y centroid difference on the unit A' - B' direction
    (md / |Delta|); d's interval from d's own null; SEAT's grouped pool as mean over sentences."""
    rng = np.random.default_rng(3)
    x, y, pool = rng.normal(size=(4, 6)), rng.normal(size=(5, 6)), rng.normal(size=(30, 6))
    a_draws, b_draws = rng.integers(0, 30, size=(50, 3)), rng.integers(0, 30, size=(50, 2))
    a, b = rng.normal(size=(3, 6)), rng.normal(size=(2, 6))
    s_x, s_y = association_scores(x, a, b), association_scores(y, a, b)
    d, md = effect_size(s_x, s_y), float(s_x.mean() - s_y.mean())
    norm = float(np.linalg.norm(attribute_direction(a, b)))
    assert np.allclose(unit_rows(x) @ attribute_direction(a, b), s_x)  # s(w, A, B) = unit(w) . Delta

    def projection(xs, ys, aa, bb):
        sx, sy = association_scores(xs, aa, bb), association_scores(ys, aa, bb)
        return (sx.mean() - sy.mean()) / np.linalg.norm(attribute_direction(aa, bb)), effect_size(sx, sy)

    null, d_null = np.array([projection(x, y, pool[ia], pool[ib]) for ia, ib in zip(a_draws, b_draws)]).T
    result = calibrated_null(
        np.vstack([x, y]), 4, pool, a_draws, b_draws, effect=d, mean_difference=md, direction_norm=norm
    )
    observed = md / norm
    assert result.projection == pytest.approx(observed)
    assert result.p_value == pytest.approx((np.sum(null >= observed) + 1) / 51)
    assert result.null_center == pytest.approx(null.mean())
    assert result.null_z == pytest.approx((observed - null.mean()) / null.std(ddof=1))
    lo, hi = np.quantile(d_null - d_null.mean(), [0.025, 0.975])
    assert (result.ci_low, result.ci_high) == pytest.approx((d - hi, d - lo))
    t_lo, t_hi = np.quantile(null - null.mean(), [0.025, 0.975])
    assert (result.md_ci_low, result.md_ci_high) == pytest.approx((md - norm * t_hi, md - norm * t_lo))
    two = calibrated_null(
        np.vstack([x, y]),
        4,
        pool,
        a_draws,
        b_draws,
        effect=d,
        mean_difference=md,
        direction_norm=norm,
        alternative="two-sided",
    )
    assert two.p_value == pytest.approx((np.sum(np.abs(null - null.mean()) >= abs(observed - null.mean())) + 1) / 51)
    # SEAT form: a pool word is several sentences, its vector the mean of their unit vectors
    sentences, groups = rng.normal(size=(60, 6)), np.repeat(np.arange(30), 2)
    grouped = calibrated_null(
        np.vstack([x, y]),
        4,
        sentences,
        a_draws,
        b_draws,
        effect=d,
        mean_difference=md,
        direction_norm=norm,
        item_groups=groups,
    )
    word_sentences = [sentences[2 * i : 2 * i + 2] for i in range(30)]
    null_grouped = [
        projection(x, y, np.vstack([word_sentences[i] for i in ia]), np.vstack([word_sentences[i] for i in ib]))[0]
        for ia, ib in zip(a_draws, b_draws)
    ]
    assert grouped.p_value == pytest.approx((np.sum(np.array(null_grouped) >= observed) + 1) / 51)


def _null_world(seed: int, clustered: bool, dim: int = 30, size: int = 400):
    """Nothing planted: A and B are random words. Clustered: the X words share one random
    component and the Y words another (as words that share documents do)."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(size)]
    vectors = {w: rng.normal(size=dim) for w in words}
    cx, cy = rng.normal(size=dim), rng.normal(size=dim)
    for i in range(8):
        vectors[f"x{i}"] = (1.5 * cx if clustered else 0) + rng.normal(size=dim)
        vectors[f"y{i}"] = (1.5 * cy if clustered else 0) + rng.normal(size=dim)
    return vectors, words


@pytest.mark.parametrize("clustered", [False, True])
def test_calibrated_null_holds_its_level_where_the_permutation_test_does_not(clustered):
    """150 null worlds each. Exchangeable words: both tests near 5% and their p-values agree.
    Clustered targets: the permutation test flags most worlds, the calibrated one stays near 5%
    (binomial SE 1.8 points at 150 worlds; the bound is 5% + 2.5 SE)."""
    classic, calibrated = [], []
    for seed in range(150):
        vectors, words = _null_world(seed, clustered)
        xs, ys = [f"x{i}" for i in range(8)], [f"y{i}" for i in range(8)]
        result = weat(
            vectors,
            xs,
            ys,
            words[:8],
            words[8:16],
            rng=np.random.default_rng(seed),
            n_bootstrap=0,
            alternative="two-sided",
            null_vocabulary=NullVocabulary([*words, *xs, *ys], draws=1000),
        )
        classic.append(result.p_value)
        calibrated.append(result.calibrated.p_value)
    classic, calibrated = np.array(classic), np.array(calibrated)
    assert np.mean(calibrated < 0.05) <= 0.095
    if clustered:
        assert np.mean(classic < 0.05) > 0.4  # measured 0.61: anti-conservative by more than tenfold
    else:
        assert np.mean(classic < 0.05) <= 0.095
        assert spearmanr(classic, calibrated).statistic > 0.9  # measured 0.98


def test_calibrated_null_finds_a_planted_association():
    vectors, words = _null_world(0, clustered=True)
    for i in range(8):  # plant: A near the X words' shared component, B near Y's
        vectors[f"a{i}"] = vectors["x0"] + vectors["x1"] + 0.5 * np.random.default_rng(i).normal(size=30)
        vectors[f"b{i}"] = vectors["y0"] + vectors["y1"] + 0.5 * np.random.default_rng(50 + i).normal(size=30)
    xs, ys = [f"x{i}" for i in range(8)], [f"y{i}" for i in range(8)]
    result = weat(
        vectors,
        xs,
        ys,
        [f"a{i}" for i in range(8)],
        [f"b{i}" for i in range(8)],
        rng=np.random.default_rng(1),
        n_bootstrap=0,
        null_vocabulary=NullVocabulary([*words, *xs, *ys, *[f"{s}{i}" for s in "ab" for i in range(8)]], draws=2000),
    )
    assert result.calibrated.p_value < 0.01 and result.calibrated.ci_low > 0 and result.calibrated.md_ci_low > 0
