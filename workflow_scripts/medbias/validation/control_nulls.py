"""Whether the hurtful study's recall-gap controls are nulls of their test for each model's classifiers.

The demo world balances each control phenotype's labels by gender (``balanced_phenotypes``), so a
classifier that ignores gender predicts positives at the same rate for women and men on those tasks, up
to test-set sampling: its demographic-parity gap has p below alpha on a share alpha of them. A model
whose classifiers have it on many more predicts by gender where the labels do not. Its recall gaps on
those tasks are then real gaps of its classifiers, which a recall-gap control can flag although the
world planted none: the control is a null of the labels, not of the classifier the test reads.

The rule the verdict follows, fixed before the fresh worlds that measure its power: a model whose
classifiers predict by an attribute (``classifiers_reading``) has its recall-gap controls on that
attribute reported apart as no null of their test and not counted; every other model's are counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from medbias.validation.truth import mirror_rows, recall_gap_truth, task_maps

DEPENDENCE_COLUMNS = [
    "model",
    "attribute",
    "control_tasks",
    "parity_p_below_alpha",
    "expected_if_blind",
    "binomial_p",
    "predicts_by_attribute",
]


def prediction_rate_dependence(
    gaps: pd.DataFrame,
    tasks: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    attribute: str = "gender",
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Per model: of the tasks whose ``attribute`` recall gaps the validation counts as controls
    (``recall_gap_truth``), on how many its classifiers' parity gap (the difference in predicted-positive
    rate between the attribute's groups, Table C3's ``parity``) has a p below ``alpha``, against the
    ``alpha`` share a classifier blind to the attribute has; ``binomial_p``: one-sided exact binomial test
    of that count against ``alpha``; ``predicts_by_attribute``: binomial p below ``alpha``. A gap and its
    mirror are one test, so the attribute must have two groups. ``tasks``: tasks.csv (task, label, cohort)."""
    from scipy.stats import binomtest

    labels, cohorts = task_maps(tasks)
    recall = recall_gap_truth(gaps, mimic_truth, labels, cohorts)
    controls = recall[(recall["truth"] == "control") & (recall["attribute"] == attribute)]
    control_tasks = controls[["model", "task"]].drop_duplicates()
    parity = gaps[(gaps["metric"] == "parity") & (gaps["attribute"] == attribute) & gaps["p_value"].notna()]
    parity = parity[~mirror_rows(parity)].merge(control_tasks, on=["model", "task"])
    if parity.duplicated(["model", "task"]).any():
        raise ValueError(
            f"prediction_rate_dependence: {attribute!r} has more than two groups; it tests two-group attributes"
        )
    rows = []
    for model, own in parity.groupby("model", sort=False):
        count, below = len(own), int((own["p_value"] < alpha).sum())
        p = float(binomtest(below, count, alpha, alternative="greater").pvalue)
        rows.append([model, attribute, count, below, round(alpha * count, 2), p, p < alpha])
    return pd.DataFrame(rows, columns=DEPENDENCE_COLUMNS)


def classifiers_reading(dependence: pd.DataFrame) -> dict[str, list[str]]:
    """Attribute -> the models whose classifiers predict by it (``predicts_by_attribute`` of
    ``prediction_rate_dependence``'s table): the recall-gap controls the verdict does not count."""
    reading = dependence[dependence["predicts_by_attribute"].astype(bool)]
    return {attribute: list(own["model"]) for attribute, own in reading.groupby("attribute", sort=False)}
