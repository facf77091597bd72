"""Counterfactual and group fairness on counterfactual pairs (Sogancioglu et al. 2023, eqs. 2-4).

Every test note appears twice, as written and with its gender terms swapped, so each pair holds one
copy that speaks of a woman (F) and one of a man (M), with the note's one label. On this doubled
test set:

- TPR_g = TP_g / (TP_g + FN_g) and FPR_g = FP_g / (FP_g + TN_g) over the copies of gender g (eqs. 2, 3);
- (T|F)PRR = rate of the disadvantaged group / rate of the advantaged group (eq. 4): the smaller
  over the larger, in [0, 1]; two rates of 0 are equal (ratio 1); undefined without positives
  (TPR) or negatives (FPR). The group with the higher rate is named (the paper's F/M subscript).
- mismatch ratio = pairs whose two copies get different predictions / all pairs; the group named
  is the one whose copy was predicted positive in more of the mismatched pairs.
- lean = (pairs whose M copy alone is predicted positive - pairs whose F copy alone is) / all pairs:
  the mismatch signed toward M, so that classifiers sensitive to gender both ways lean near 0 while
  the mismatch ratio stays above it; a planted label bias toward one gender is a lean of that sign;
- the mismatch's direction test: McNemar's exact test on the discordant pairs (F copy positive
  only vs M copy positive only; two-sided binomial with p = 1/2). When the model's decisions do
  not depend on the gender the note speaks of, the two kinds of discordant pair are equally
  likely whatever the mismatch ratio's size (noise flips both ways), so this p is the test that
  a mismatch *favours* one group; the ratio alone cannot be tested against 0 (it is never below).
- the mismatch against retrained classifiers (``null_rank_p``): McNemar's test holds its level for
  one trained classifier; whether a training set with a gender-label association made the mismatch
  is asked by ranking it among the mismatches of classifiers retrained with the training notes'
  genders permuted (``medbias.studies.mental.classifiers.gender_permutation_null``):
  p = (1 + #draws at least as large) / (draws + 1), one-sided.
- macro-F1 over all copies (both classes' F1, averaged; an F1 with an empty denominator is 0, as
  scikit-learn's ``zero_division=0``).

Every quantity is computed from pair weights, so a bootstrap replicate is one row of a weight
matrix (resample counts of the pairs) and all replicates are one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medbias.metrics.bootstrap import percentile_interval, resample_counts, within_label_resamples
from medbias.metrics.fairness import safe_ratio

METRICS: tuple[str, ...] = ("tprr", "fprr", "mismatch", "lean", "macro_f1", "tpr_f", "tpr_m", "fpr_f", "fpr_m")


def rate_ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """min(a, b) / max(a, b); 1 where both are 0; NaN where either is undefined."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    low, high = np.minimum(a, b), np.maximum(a, b)
    ratio = np.where(high > 0, low / np.where(high > 0, high, 1), 1.0)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, ratio)


def favoured_group(female: float, male: float) -> str:
    """'F' or 'M' for the group with the higher value; '' when equal or undefined."""
    if np.isnan(female) or np.isnan(male) or female == male:
        return ""
    return "F" if female > male else "M"


def _f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    denominator = 2 * tp + fp + fn
    return np.where(denominator > 0, 2 * tp / np.where(denominator > 0, denominator, 1), 0.0)


def pair_metrics(
    label: np.ndarray, pred_female: np.ndarray, pred_male: np.ndarray, weights: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """The metrics of the module docstring for pairs (``label``, prediction of the F copy, of the M
    copy), each weighted by ``weights`` ((replicates, pairs); None: every pair once). Returns arrays
    of one value per replicate, plus ``mismatch_female`` (share of mismatched pairs whose F copy was
    the positive one)."""
    y = np.asarray(label, dtype=float)
    pf, pm = np.asarray(pred_female, dtype=float), np.asarray(pred_male, dtype=float)
    w = np.ones((1, len(y))) if weights is None else np.asarray(weights, dtype=float)
    positives, negatives = w @ y, w @ (1 - y)
    tpr_f, tpr_m = safe_ratio(w @ (y * pf), positives), safe_ratio(w @ (y * pm), positives)
    fpr_f, fpr_m = safe_ratio(w @ ((1 - y) * pf), negatives), safe_ratio(w @ ((1 - y) * pm), negatives)
    differ = (pf != pm).astype(float)
    mismatched = w @ differ
    tp = w @ (y * (pf + pm))
    fn = w @ (y * (2 - pf - pm))
    fp = w @ ((1 - y) * (pf + pm))
    tn = w @ ((1 - y) * (2 - pf - pm))
    return {
        "tpr_f": tpr_f,
        "tpr_m": tpr_m,
        "fpr_f": fpr_f,
        "fpr_m": fpr_m,
        "tprr": rate_ratio(tpr_f, tpr_m),
        "fprr": rate_ratio(fpr_f, fpr_m),
        "mismatch": safe_ratio(mismatched, w.sum(axis=1)),
        "mismatch_female": safe_ratio(w @ (differ * pf), mismatched),
        "lean": safe_ratio(w @ (pm - pf), w.sum(axis=1)),
        "macro_f1": (_f1(tp, fp, fn) + _f1(tn, fn, fp)) / 2,
    }


def mismatch_direction_p(pred_female: np.ndarray, pred_male: np.ndarray) -> float:
    """McNemar's exact two-sided p for the pairs' discordant predictions (module docstring): the
    binomial probability, under p = 1/2, of a split of the discordant pairs at least as uneven as
    the observed one; 1.0 when no pair is discordant."""
    from scipy.stats import binomtest

    pf, pm = np.asarray(pred_female).astype(bool), np.asarray(pred_male).astype(bool)
    female_only, male_only = int(np.sum(pf & ~pm)), int(np.sum(pm & ~pf))
    if female_only + male_only == 0:
        return 1.0
    return float(binomtest(female_only, female_only + male_only, 0.5).pvalue)


@dataclass(frozen=True)
class PairSummary:
    """Point estimates, 95% percentile intervals and favoured groups for one model's pairs."""

    values: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    favoured: dict[str, str]
    pairs: int
    positives: int
    mismatch_p: float  # McNemar's exact test of the mismatch's direction


def summarise_pairs(
    label: np.ndarray,
    pred_female: np.ndarray,
    pred_male: np.ndarray,
    n_replicates: int,
    rng: np.random.Generator,
    level: float = 0.95,
) -> PairSummary:
    """``pair_metrics`` with bootstrap intervals: pairs resampled with replacement within each label
    (so every replicate keeps the test set's positives and negatives)."""
    point = {k: float(v[0]) for k, v in pair_metrics(label, pred_female, pred_male).items()}
    low, high = dict.fromkeys(METRICS, np.nan), dict.fromkeys(METRICS, np.nan)
    if n_replicates > 0:
        index = within_label_resamples(np.asarray(label), n_replicates, rng)
        weights = resample_counts(index, len(label))
        replicates = pair_metrics(label, pred_female, pred_male, weights)
        for key in METRICS:
            values = replicates[key][~np.isnan(replicates[key])]
            if len(values):
                low[key], high[key] = percentile_interval(values, level)
    mismatch_group = (
        ""
        if point["mismatch"] == 0 or np.isnan(point["mismatch_female"])
        else ("F" if point["mismatch_female"] > 0.5 else "M" if point["mismatch_female"] < 0.5 else "")
    )
    favoured = {
        "tprr": favoured_group(point["tpr_f"], point["tpr_m"]),
        "fprr": favoured_group(point["fpr_f"], point["fpr_m"]),
        "mismatch": mismatch_group,
    }
    return PairSummary(
        point, low, high, favoured, int(len(label)), int(np.sum(label)), mismatch_direction_p(pred_female, pred_male)
    )


@dataclass(frozen=True)
class LeanChange:
    """One classifier's lean before and after a treatment on the same test pairs, with bootstrap
    standard errors and covariance from resampling the pairs once for both."""

    before: float
    after: float
    se_before: float
    se_after: float
    covariance: float
    pairs: int


def paired_lean_change(
    label: np.ndarray,
    before: tuple[np.ndarray, np.ndarray],
    after: tuple[np.ndarray, np.ndarray],
    n_replicates: int,
    rng: np.random.Generator,
) -> LeanChange:
    """The lean (module docstring) of two classifiers' predictions (F copy, M copy) on the same pairs,
    and the bootstrap SEs and covariance of the two leans: each replicate resamples the pairs within
    each label, as ``summarise_pairs`` does, and weighs both classifiers' pairs alike."""
    index = within_label_resamples(np.asarray(label), n_replicates, rng)
    weights = resample_counts(index, len(label))
    leans = []
    for pred_female, pred_male in (before, after):
        point = pair_metrics(label, pred_female, pred_male)["lean"][0]
        leans.append((float(point), pair_metrics(label, pred_female, pred_male, weights)["lean"]))
    covariance = np.cov(np.vstack([leans[0][1], leans[1][1]]))
    return LeanChange(
        leans[0][0],
        leans[1][0],
        float(np.sqrt(covariance[0, 0])),
        float(np.sqrt(covariance[1, 1])),
        float(covariance[0, 1]),
        int(len(label)),
    )


def null_rank_p(observed: float, null: np.ndarray) -> float:
    """One-sided calibrated p of ``observed`` among the ``null`` draws: (1 + #draws >= observed) /
    (draws + 1), the observed value counted as one draw (ties within 1e-12 count as at least as large).
    NaN without draws."""
    null = np.asarray(null, dtype=float)
    if not len(null):
        return float("nan")
    return float((1 + np.sum(null >= observed - 1e-12)) / (len(null) + 1))
