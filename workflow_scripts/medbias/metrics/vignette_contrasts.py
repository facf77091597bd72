"""Paired counterfactual contrasts of a model's decisions on clinical vignettes.

A contrast compares two versions of the same vignette that differ in one thing: an attribute's value
(Black vs white: the demographic contrasts), or, as controls that should change nothing, the patient's
name within one demographic cell, or an irrelevant detail (the home town). Versions are matched on
everything else (the other attributes, the name's index in its cell, the details), and for each
matched pair the difference value - reference is taken in

- P(compared option), the options' probabilities normalised over the options;
- the expected decision, sum over options of probability x the option's value;
- whether the most probable option differs (a flip).

Each vignette's differences are averaged over its pairs; the contrast's estimate is the mean over
vignettes. The vignettes are few and phrasings of one case are correlated, so the uncertainty is
taken over cases: a studentized (bootstrap-t) interval that resamples cases, each with all its
vignettes, and scales by the cluster-robust standard error of the mean (``cluster_studentized_interval``),
and a sign-flip permutation test that flips the sign of each case's differences at once (under no
effect, value and reference are exchangeable within a case), exact when 2^cases is within the budget,
else sampled with p = (k + 1) / (N + 1). The plain percentile case bootstrap under-covers with the 8
to 30 cases of a vignette set (about 88% at 8 cases for a nominal 95%); the coverage of each interval
on simulated case sets is measured in ``medbias.validation.vignette_coverage``.

A model is a fixed function: a swap that should change nothing still shifts its answers by some
small, consistent amount, and with vignettes that differ little a test of "any difference" flags it.
So each contrast has two p-values: ``p`` against no difference, and ``p_min`` against a difference of
at most ``min_difference`` in either direction (a minimum-effect test: the sign-flip test of the
vignette differences moved towards zero by ``min_difference``, and 1 when the estimate is within it).
``min_difference`` is the smallest difference in the probability of a decision worth reporting, a
decision the user fixes before looking at any model (docs/vignettes.md); it is not derived from the
data. Benjamini-Hochberg runs over ``p_min`` across a model's demographic contrasts, and beside each
contrast stands the model's noise floor: the largest |difference| its own control swaps (a name
within the group, an irrelevant detail) give on the same decision.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

# what a contrast's ``kind`` says about it: demographic (the audit's question) or a control swap
DEMOGRAPHIC, NAMES, DETAIL = "demographic", "same-group names", "irrelevant detail"


@dataclass(frozen=True)
class Contrast:
    """Rows whose ``column`` is ``value`` against rows whose ``column`` is ``reference``, matched on
    ``match``; ``within`` restricts both sides first (a names control's cell)."""

    kind: str
    label: str
    column: str
    value: str
    reference: str
    match: tuple[str, ...]
    within: tuple[tuple[str, str], ...] = ()


def set_contrasts(
    attributes: Sequence[str],
    contrasts: Sequence[tuple[str, str, str]],
    name_by: Sequence[str],
    cells: Sequence[dict[str, str]],
    names_per_cell: int,
    details: dict[str, Sequence[str]],
) -> list[Contrast]:
    """A vignette set's demographic contrasts, then its controls: each cell's first name against each
    of its other names, and each detail's first value against each other value."""
    every = [*attributes, "name_index", *details]
    out = [
        Contrast(
            DEMOGRAPHIC,
            f"{attribute}: {value} vs {reference}",
            attribute,
            value,
            reference,
            tuple(c for c in every if c != attribute),
        )
        for attribute, value, reference in contrasts
    ]
    for cell in cells:
        for k in range(1, names_per_cell):
            out.append(
                Contrast(
                    NAMES,
                    f"name {k + 1} vs name 1 within {'/'.join(cell.values())}",
                    "name_index",
                    str(k),
                    "0",
                    tuple(c for c in every if c != "name_index" and c not in name_by),
                    tuple(cell.items()),
                )
            )
    for slot, values in details.items():
        for value in values[1:]:
            out.append(
                Contrast(
                    DETAIL,
                    f"{slot}: {value} vs {values[0]}",
                    slot,
                    value,
                    values[0],
                    tuple(c for c in every if c != slot),
                )
            )
    return out


def matched_pairs(scores: pd.DataFrame, contrast: Contrast) -> pd.DataFrame:
    """One row per matched pair of one decision's scores (columns vignette, case, the match columns,
    p_compared, expected, choice): the value side's and the reference side's numbers."""
    rows = scores[~scores["neutral"]]
    for column, value in contrast.within:
        rows = rows[rows[column].astype(str) == value]
    side = rows[contrast.column].astype(str)
    keys = ["vignette", "case", *contrast.match]
    measures = ["p_compared", "expected", "choice"]
    left = rows[side == contrast.value][keys + measures]
    right = rows[side == contrast.reference][keys + measures]
    return left.merge(right, on=keys, suffixes=("", "_reference"), validate="one_to_one")


def vignette_differences(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per vignette (with its case): the mean difference in P(compared) and in the expected decision,
    the share of its pairs whose most probable option flips, and the number of pairs."""
    frame = pd.DataFrame(
        {
            "vignette": pairs["vignette"],
            "case": pairs["case"],
            "d_probability": pairs["p_compared"] - pairs["p_compared_reference"],
            "d_expected": pairs["expected"] - pairs["expected_reference"],
            "flip": (pairs["choice"] != pairs["choice_reference"]).astype(float),
        }
    )
    grouped = frame.groupby(["vignette", "case"], sort=True)
    out = grouped[["d_probability", "d_expected", "flip"]].mean()
    out["pairs"] = grouped.size()
    return out.reset_index()


def case_sums(values: np.ndarray, cases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sum of the vignettes' values, number of vignettes) per case, cases in sorted order."""
    _, index = np.unique(cases, return_inverse=True)
    return np.bincount(index, weights=values), np.bincount(index).astype(float)


def cluster_bootstrap_interval(
    values: np.ndarray, cases: np.ndarray, n_bootstrap: int, rng: np.random.Generator, level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of the mean over vignettes when cases are resampled with replacement, each
    with all its vignettes (a case with one vignette is the plain bootstrap over vignettes). Kept for
    the coverage comparison: with few cases it is too narrow."""
    sums, counts = case_sums(values, cases)
    if len(sums) < 2:
        return np.nan, np.nan
    draws = rng.integers(0, len(sums), size=(n_bootstrap, len(sums)))
    replicates = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1 - level) / 2
    return float(np.quantile(replicates, tail)), float(np.quantile(replicates, 1 - tail))


def cluster_standard_error(sums: np.ndarray, counts: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Cluster-robust (CR1) standard error of the mean over vignettes, sum(S_c) / sum(N_c), from each
    case's sum S_c and count N_c: sqrt(C / (C - 1) x sum_c (S_c - mean N_c)^2) / sum_c N_c over the C
    cases; the last axis is the cases (a batch of resamples in the leading axes)."""
    cases = sums.shape[-1]
    residuals = sums - np.asarray(mean)[..., None] * counts
    return np.sqrt(cases / (cases - 1) * np.sum(residuals**2, axis=-1)) / counts.sum(axis=-1)


def cluster_t_interval(values: np.ndarray, cases: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """mean ± t(C - 1) x the cluster-robust standard error, C cases (for the coverage comparison)."""
    from scipy.stats import t

    sums, counts = case_sums(values, cases)
    if len(sums) < 2:
        return np.nan, np.nan
    mean = sums.sum() / counts.sum()
    half = float(t.ppf(0.5 + level / 2, len(sums) - 1) * cluster_standard_error(sums, counts, np.array(mean)))
    return mean - half, mean + half


def cluster_studentized_interval(
    values: np.ndarray, cases: np.ndarray, n_bootstrap: int, rng: np.random.Generator, level: float = 0.95
) -> tuple[float, float]:
    """Bootstrap-t interval of the mean over vignettes: cases resampled with replacement (each with all
    its vignettes); each replicate's t* = (mean* - mean) / se* with the cluster-robust standard error
    (``cluster_standard_error``); the interval is (mean - q_hi se, mean - q_lo se) with q the
    replicates' t* quantiles. A replicate that draws one case only (se* = 0) is left out. With no
    spread at all (every case the same) the interval is the mean itself."""
    sums, counts = case_sums(values, cases)
    if len(sums) < 2:
        return np.nan, np.nan
    mean = sums.sum() / counts.sum()
    se = float(cluster_standard_error(sums, counts, np.array(mean)))
    if se <= 1e-12 * max(1.0, abs(mean)):  # no spread beyond rounding
        return float(mean), float(mean)
    draws = rng.integers(0, len(sums), size=(n_bootstrap, len(sums)))
    s, n = sums[draws], counts[draws]
    replicates = s.sum(axis=1) / n.sum(axis=1)
    se_star = cluster_standard_error(s, n, replicates)
    usable = se_star > 1e-12 * max(1.0, abs(mean))
    t_star = (replicates[usable] - mean) / se_star[usable]
    tail = (1 - level) / 2
    low_q, high_q = np.quantile(t_star, [tail, 1 - tail])
    return float(mean - high_q * se), float(mean - low_q * se)


def sign_flip_p(
    values: np.ndarray, cases: np.ndarray, budget: int, rng: np.random.Generator, centre: float = 0.0
) -> float:
    """Two-sided p of the sum (so the mean) of ``values`` against ``centre`` when each case's values
    (a case: any cluster of items that move together) change sign together: every one of the
    2^cases sign patterns when that is within ``budget`` (p = share whose |sum - centre| is at least
    the observed one), else ``budget`` random patterns (p = (k + 1) / (budget + 1)). A sum at the
    centre gives 1."""
    sums, _ = case_sums(values, cases)
    observed = abs(sums.sum() - centre)
    if observed == 0:
        return 1.0
    tolerance = 1e-12 * max(1.0, float(np.abs(sums).sum()))
    if 2 ** len(sums) <= budget:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(sums))))
        return float(np.mean(np.abs(signs @ sums - centre) >= observed - tolerance))
    signs = rng.choice((1.0, -1.0), size=(budget, len(sums)))
    hits = int(np.sum(np.abs(signs @ sums - centre) >= observed - tolerance))
    return (hits + 1) / (budget + 1)


def minimum_effect_p(
    values: np.ndarray, cases: np.ndarray, min_difference: float, budget: int, rng: np.random.Generator
) -> float:
    """p against |mean difference| <= ``min_difference`` (module docstring): 1 when the estimate is
    within the margin, else the sign-flip p of the values moved by the margin towards zero (two-sided,
    which covers the direction being read off the data). ``min_difference`` 0 is ``sign_flip_p``."""
    mean = float(np.mean(values))
    if abs(mean) <= min_difference:
        return 1.0
    return sign_flip_p(values - np.sign(mean) * min_difference, cases, budget, rng)


def contrast_summary(
    per_vignette: pd.DataFrame,
    n_bootstrap: int,
    permutations: int,
    rng: np.random.Generator,
    min_difference: float = 0.0,
) -> dict[str, float]:
    """The contrast's estimates over vignettes (``vignette_differences``): mean difference in
    P(compared) and in the expected decision, each with its studentized case-bootstrap interval
    (``cluster_studentized_interval``) and sign-flip p
    (``_p``), P(compared)'s minimum-effect p (``d_probability_p_min``, margin ``min_difference``), and
    the flip rate (share of matched pairs whose most probable option differs)."""
    cases = per_vignette["case"].to_numpy()
    out: dict[str, float] = {
        "vignettes": len(per_vignette),
        "cases": len(np.unique(cases)),
        "pairs": int(per_vignette["pairs"].sum()),
    }
    for measure in ("d_probability", "d_expected"):
        values = per_vignette[measure].to_numpy(dtype=float)
        low, high = cluster_studentized_interval(values, cases, n_bootstrap, rng)
        out[measure] = float(values.mean())
        out[f"{measure}_low"], out[f"{measure}_high"] = low, high
        out[f"{measure}_p"] = sign_flip_p(values, cases, permutations, rng)
        if measure == "d_probability":
            out["d_probability_p_min"] = minimum_effect_p(values, cases, min_difference, permutations, rng)
    weights = per_vignette["pairs"].to_numpy(dtype=float)
    out["flip_rate"] = float(np.sum(per_vignette["flip"].to_numpy() * weights) / weights.sum())
    out["vignettes_flipping"] = float(np.mean(per_vignette["flip"].to_numpy() > 0))
    return out


# the published designs the table's notes cite
DESIGNS = (
    "Designs: Logé et al. 2021 (Q-Pain: pain-management vignettes in five contexts, P(No) to an opioid compared "
    "across race and gender); Zack et al. 2024, Lancet Digital Health (GPT-4's diagnoses and plans across "
    "demographic versions of one case); Omiye et al. 2023 (race-based medicine in chat answers). The shipped sets "
    "follow Q-Pain's design in medbias's own words; they are not Q-Pain's text."
)


def _interval(low: float, high: float, digits: int = 3) -> str:
    return "" if pd.isna(low) else f"[{low:+.{digits}f}, {high:+.{digits}f}]"


def shown_contrasts(table: pd.DataFrame) -> pd.DataFrame:
    """The contrasts as the model's page and its audit card show them: differences with intervals, both
    p-values, q, flip rate."""
    return pd.DataFrame(
        {
            "set": table["set"],
            "decision": table["decision"],
            "kind": table["kind"],
            "contrast": table["contrast"],
            "d P(compared)": [f"{v:+.3f}" for v in table["d_probability"]],
            "95% CI": [_interval(lo, hi) for lo, hi in zip(table["d_probability_low"], table["d_probability_high"])],
            "p (any)": table["d_probability_p"].map("{:.2g}".format),
            "p (beyond margin)": table["d_probability_p_min"].map("{:.2g}".format),
            "noise floor": [
                "" if pd.isna(v) else f"{v:.3f}" for v in table.get("noise_floor", pd.Series(np.nan, index=table.index))
            ],
            "q (BH)": ["" if pd.isna(q) else f"{q:.2g}" for q in table["q"]],
            "d expected": [f"{v:+.3f}" for v in table["d_expected"]],
            "95% CI (expected)": [
                _interval(lo, hi) for lo, hi in zip(table["d_expected_low"], table["d_expected_high"])
            ],
            "flip rate": table["flip_rate"].map("{:.3f}".format),
            "vignettes (cases)": [f"{v} ({c})" for v, c in zip(table["vignettes"], table["cases"])],
        }
    )


def mass_line(overall: Mapping[str, Any]) -> str:
    """One sentence on the option mass: its mean and minimum, the prompts left out, and the flag."""
    if not overall or not overall.get("prompts"):
        return ""
    flag = (
        "FLAGGED: on average the model puts less than the threshold on the offered options, so its normalised "
        "option probabilities describe answers it mostly does not give. "
        if overall["flagged"]
        else ""
    )
    return (
        f"{flag}Option mass (probability on the offered options before renormalising): mean {overall['mean']:.3g}, "
        f"minimum {overall['min']:.3g} (log {overall['min_log']:.1f}); {overall['prompts_below']:,} of "
        f"{overall['prompts']:,} prompts below {overall['threshold']} left out of the contrasts."
    )
