"""Coverage of the post-processor's "after" recall-gap intervals on simulated tasks with a known gap.

Each simulated task draws validation and test stays of the demo's size (80 women and 93 men, a
quarter positive) from one population: scores Beta(4, 2) for positives and Beta(2, 4) for negatives,
women's positives scored lower (Beta(2.5, 3)), so the classifier's recall gap is planted. fairlearn's
ThresholdOptimizer is fitted on the validation stays (``fit_threshold_optimizer``) and its decision
probabilities taken on the test stays. Two intervals are compared, both 95% percentile intervals over
resamples of the test stays within label, as ``mitigation_effects`` computes them:

- *test stays only*: the fitted thresholds treated as known (``refits`` 0);
- *two-stage*: the post-processor refitted on ``refits`` resamples of the validation stays within group
  and label (``refit_decisions``), test resample b scored by refit b mod R (``replicates_over_refits``).

The estimand is the procedure's expected gap: the population recall gap of the fitted rule (on 40,000
fresh stays), averaged over ``truth_fits`` validation draws. The test-stays-only interval's coverage of
each task's own population gap (thresholds as fitted) is given beside it. Coverage is the share of tasks
whose interval holds the target, with its Monte Carlo SE.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.bootstrap import within_label_resamples
from medbias.metrics.fairness import bootstrap_gaps, gaps_of, group_counts
from medbias.studies.hurtful.mitigation.threshold import (
    decision_probabilities,
    fit_threshold_optimizer,
    refit_decisions,
)
from medbias.studies.hurtful.mitigation_effects import replicates_over_refits

WOMEN, MEN = 80, 93  # validation (and test) stays per task on the demo
POPULATION = 20_000  # stays per gender of the population whose gap a fitted rule achieves
COLUMNS = ("interval", "target", "tasks", "covered", "coverage", "mc_se", "median_width", "refits", "replicates")


def simulated_stays(women: int, men: int, rng: np.random.Generator) -> pd.DataFrame:
    """Stays with a classifier's ``probability``, ``label`` (a quarter positive) and ``gender``; women's
    positives are scored lower, a planted recall gap."""
    gender = np.array(["F"] * women + ["M"] * men)
    label = (rng.random(len(gender)) < 0.25).astype(int)
    positive_score = np.where(gender == "F", rng.beta(2.5, 3, len(gender)), rng.beta(4, 2, len(gender)))
    score = np.where(label == 1, positive_score, rng.beta(2, 4, len(gender)))
    return pd.DataFrame({"probability": score, "label": label, "gender": gender})


def recall_gap_of_women(decision: np.ndarray, stays: pd.DataFrame, index: np.ndarray | None = None) -> np.ndarray:
    """Women's expected recall minus men's under these decision probabilities: the observed value, or
    one per resample of the index matrix ``index``."""
    group = (stays["gender"].to_numpy() == "M").astype(int)
    label = stays["label"].to_numpy()
    if index is None:
        return gaps_of(group_counts(decision, label, group, 2))["recall"][0]
    return bootstrap_gaps(decision, label, group, 2, index)["recall"][:, 0]


def post_processor_coverage(
    tasks: int,
    replicates: int,
    refits: int,
    truth_fits: int,
    settings: Mapping[str, Any],
    seed: int,
    log=None,
) -> pd.DataFrame:
    """The coverage table (``COLUMNS``): per interval and target, over ``tasks`` simulated tasks with
    ``replicates`` test resamples each (module docstring). ``settings``: the post-processor's
    (``hurtful.mitigation.threshold``)."""
    if tasks < 1 or replicates < 2 or truth_fits < 1:
        raise ValueError("post-processor coverage needs at least 1 task, 2 replicates and 1 truth fit")
    rng = np.random.default_rng(seed)
    population = simulated_stays(POPULATION, POPULATION, rng)

    def rule_gap(validation: pd.DataFrame) -> float:
        optimizer = fit_threshold_optimizer(validation, "gender", settings)
        return float(recall_gap_of_women(decision_probabilities(optimizer, population, "gender"), population))

    expected = float(np.mean([rule_gap(simulated_stays(WOMEN, MEN, rng)) for _ in range(truth_fits)]))
    two_stage = f"two-stage ({refits} refits)"
    kinds = [("test stays only", "the procedure's expected gap"), ("test stays only", "the fitted rule's gap")]
    kinds += [(two_stage, "the procedure's expected gap")] if refits else []
    hits = {kind: [] for kind in kinds}
    widths = {kind: [] for kind in kinds}
    for task in range(tasks):
        validation, test = simulated_stays(WOMEN, MEN, rng), simulated_stays(WOMEN, MEN, rng)
        optimizer = fit_threshold_optimizer(validation, "gender", settings)
        index = within_label_resamples(test["label"].to_numpy(), replicates, rng)
        gaps = {"test stays only": recall_gap_of_women(decision_probabilities(optimizer, test, "gender"), test, index)}
        if refits:
            refitted = refit_decisions(validation, test, "gender", settings, refits, rng)
            gaps[two_stage] = replicates_over_refits(
                lambda refit, chosen: {"gap": recall_gap_of_women(refit, test, index[chosen])}, refitted, replicates
            )["gap"]
        targets = {
            "the procedure's expected gap": expected,
            "the fitted rule's gap": float(
                recall_gap_of_women(decision_probabilities(optimizer, population, "gender"), population)
            ),
        }
        for interval, target in kinds:
            low, high = np.nanpercentile(gaps[interval], [2.5, 97.5])
            hits[(interval, target)].append(low <= targets[target] <= high)
            widths[(interval, target)].append(high - low)
        if log and (task + 1) % 25 == 0:
            log.info("post-processor coverage: %d of %d simulated tasks", task + 1, tasks)
    rows = []
    for interval, target in kinds:
        share = float(np.mean(hits[(interval, target)]))
        rows.append(
            {
                "interval": interval,
                "target": target,
                "tasks": tasks,
                "covered": int(np.sum(hits[(interval, target)])),
                "coverage": share,
                "mc_se": float(np.sqrt(share * (1 - share) / tasks)),
                "median_width": float(np.median(widths[(interval, target)])),
                "refits": refits if interval == two_stage else 0,
                "replicates": replicates,
            }
        )
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame.attrs["expected_gap"] = expected
    return frame


NOTES = (
    "Coverage of the post-processor's 95% 'after' recall-gap intervals on simulated tasks of the demo's size "
    f"(medbias.validation.post_processor_coverage): {WOMEN} women and {MEN} men of validation and of test stays, a "
    "quarter positive, women's positives scored lower (a planted recall gap); fairlearn's ThresholdOptimizer with "
    "the stage's settings. Target: the procedure's expected gap (the fitted rule's population gap averaged over "
    "validation draws), or each task's fitted rule's own population gap. test stays only: the thresholds treated as "
    "known; two-stage: refitted on resamples of the validation stays within group and label, as "
    "hurtful.mitigation.threshold.refits does in the mitigation tables. mc_se: Monte Carlo SE of the coverage."
)
