"""Known answers that stand on their own: every reference here is written in the test, by hand or as
an independent resampler, never with the helpers of the module it checks.

- ECT (Dev & Phillips 2019) at a hand-computed value between its endpoints, a planted lean and a
  control where nothing leans.
- The percentile bootstrap intervals of WEAT, of the fairness gaps and of the counterfactual metrics
  against a resampler written here (plain loops over random choices, its own random stream): the two
  intervals estimate the same quantiles, so they agree within Monte-Carlo error.
"""

from __future__ import annotations

import numpy as np
import pytest

from medbias.metrics.association import bootstrap_ect, ect_score, weat
from medbias.metrics.counterfactual import summarise_pairs
from medbias.metrics.fairness import fairness_gaps

# --- ECT ------------------------------------------------------------------------------------------


def test_ect_at_a_hand_computed_value():
    """mean X = (1, 0, 0) and mean Y = (0, 1, 0). The targets' cosines with mean X rank them 1, 2, 3, 4
    (0.098, 0.195, 0.424, 0.566) and with mean Y 2, 1, 4, 3 (0.195, 0.098, 0.566, 0.424): rank
    differences -1, 1, -1, 1, sum of squares 4, Spearman rho = 1 - 6 * 4 / (4 * (16 - 1)) = 0.6."""
    targets = np.array([[1, 2, 10], [2, 1, 10], [3, 4, 5], [4, 3, 5]], dtype=float)
    x = np.array([[1, 1, 0], [1, -1, 0]], dtype=float)
    y = np.array([[1, 1, 0], [-1, 1, 0]], dtype=float)
    assert ect_score(targets, x, y) == pytest.approx(0.6)


def planted_world(lean: float, seed: int, n_targets: int = 40, dim: int = 20):
    """Occupation-like targets, half leaning towards the X words and half towards the Y words by
    ``lean`` along the X-Y axis (0: no target has a part along it, so each is about as close to X as
    to Y and their cosines with the two means rank the targets alike)."""
    rng = np.random.default_rng(seed)
    shared, axis = rng.normal(size=dim), rng.normal(size=dim)
    x = shared + axis + 0.05 * rng.normal(size=(6, dim))
    y = shared - axis + 0.05 * rng.normal(size=(6, dim))
    side = np.repeat([1.0, -1.0], n_targets // 2)
    noise = rng.normal(size=(n_targets, dim))
    noise -= np.outer(noise @ axis / (axis @ axis), axis)  # no part along the X-Y axis but the planted one
    targets = noise + shared + lean * side[:, None] * axis
    return targets, x, y


def test_ect_finds_a_planted_lean_and_stays_near_one_on_a_control():
    """ECT = 1 means no bias. With half the targets pulled towards X and half towards Y the two
    similarity rankings disagree (rho well below 0, its bootstrap interval far from 1); with no pull
    they agree (rho near 1)."""
    planted, control = planted_world(1.5, seed=0), planted_world(0.0, seed=0)
    planted_interval = np.percentile(bootstrap_ect(*planted, 500, np.random.default_rng(1)), [2.5, 97.5])
    control_interval = np.percentile(bootstrap_ect(*control, 500, np.random.default_rng(1)), [2.5, 97.5])
    assert ect_score(*planted) < 0 and planted_interval[1] < 0
    assert ect_score(*control) > 0.9 and control_interval[0] > 0.9
    # across worlds the control stays far above the planted lean
    for seed in range(1, 4):
        assert ect_score(*planted_world(0.0, seed)) > ect_score(*planted_world(1.5, seed)) + 0.8


# --- bootstrap intervals against a resampler written here ------------------------------------------

REPLICATES = 4000


def cosine(u: np.ndarray, v: np.ndarray) -> float:
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def weat_d(x, y, a, b) -> float:
    """Caliskan et al.'s effect size, written out: s(w) = mean cos(w, a) - mean cos(w, b),
    d = (mean s over X - mean s over Y) / SD of s over X and Y (ddof 1)."""
    s = [np.mean([cosine(w, v) for v in a]) - np.mean([cosine(w, v) for v in b]) for w in [*x, *y]]
    return float((np.mean(s[: len(x)]) - np.mean(s[len(x) :])) / np.std(s, ddof=1))


def test_weat_interval_agrees_with_an_independent_resampler():
    """Both resample the words of each of the four sets with replacement; the percentile interval of d."""
    rng = np.random.default_rng(7)
    male, female = rng.normal(size=8), rng.normal(size=8)
    words = {f"x{i}": male + rng.normal(size=8) for i in range(6)}
    words |= {f"y{i}": female + rng.normal(size=8) for i in range(6)}
    words |= {f"a{i}": male + rng.normal(size=8) for i in range(5)}
    words |= {f"b{i}": female + rng.normal(size=8) for i in range(5)}
    sets = [[w for w in words if w[0] == k] for k in "xyab"]
    result = weat(words, *sets, rng=np.random.default_rng(1), n_bootstrap=REPLICATES, budget=1000)
    vectors = [np.array([words[w] for w in s]) for s in sets]
    assert result.effect_size == pytest.approx(weat_d(*vectors))
    mine = np.random.default_rng(12345)
    draws = [weat_d(*(v[mine.choice(len(v), len(v))] for v in vectors)) for _ in range(REPLICATES)]
    low, high = np.percentile(draws, [2.5, 97.5])
    width = high - low
    assert result.ci_low == pytest.approx(low, abs=0.08 * width)
    assert result.ci_high == pytest.approx(high, abs=0.08 * width)


def within_label_draw(label: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows drawn with replacement among the positives and among the negatives separately."""
    rows = [rng.choice(np.flatnonzero(label == value), int((label == value).sum())) for value in (0, 1)]
    return np.concatenate(rows)


def test_recall_gap_interval_agrees_with_an_independent_resampler():
    """Two groups: the recall gap of group F is recall(F) - recall(M), rows resampled within label."""
    rng = np.random.default_rng(3)
    n = 400
    group = np.where(rng.random(n) < 0.5, "F", "M")
    label = (rng.random(n) < 0.3).astype(int)
    hit = np.where(group == "F", 0.6, 0.8)
    predicted = np.where(label == 1, rng.random(n) < hit, rng.random(n) < 0.1).astype(int)
    results = fairness_gaps(predicted, label, group, ["F", "M"], REPLICATES, np.random.default_rng(2))
    recall_f = next(r for r in results if r.metric == "recall" and r.group == "F")

    def recall_gap(rows: np.ndarray) -> float:
        p, g, y = predicted[rows], group[rows], label[rows]
        return p[(g == "F") & (y == 1)].mean() - p[(g == "M") & (y == 1)].mean()

    assert recall_f.gap == pytest.approx(recall_gap(np.arange(n)))
    mine = np.random.default_rng(999)
    draws = [recall_gap(within_label_draw(label, mine)) for _ in range(REPLICATES)]
    low, high = np.percentile(draws, [2.5, 97.5])
    width = high - low
    assert recall_f.ci_low == pytest.approx(low, abs=0.08 * width)
    assert recall_f.ci_high == pytest.approx(high, abs=0.08 * width)


def test_counterfactual_intervals_agree_with_an_independent_resampler():
    """Mismatch ratio (pairs whose two copies disagree) and the women's copies' TPR, pairs resampled
    within label."""
    rng = np.random.default_rng(4)
    n = 300
    label = (rng.random(n) < 0.4).astype(int)
    base = np.where(label == 1, rng.random(n) < 0.7, rng.random(n) < 0.2)
    pred_female = base.astype(int)
    pred_male = np.where(rng.random(n) < 0.15, 1 - base, base).astype(int)
    summary = summarise_pairs(label, pred_female, pred_male, REPLICATES, np.random.default_rng(5))

    def mismatch(rows):
        return float(np.mean(pred_female[rows] != pred_male[rows]))

    def tpr_female(rows):
        return float(pred_female[rows][label[rows] == 1].mean())

    mine = np.random.default_rng(2024)
    draws = [within_label_draw(label, mine) for _ in range(REPLICATES)]
    for key, statistic in (("mismatch", mismatch), ("tpr_f", tpr_female)):
        assert summary.values[key] == pytest.approx(statistic(np.arange(n)))
        low, high = np.percentile([statistic(rows) for rows in draws], [2.5, 97.5])
        width = high - low
        assert summary.low[key] == pytest.approx(low, abs=0.08 * width), key
        assert summary.high[key] == pytest.approx(high, abs=0.08 * width), key
