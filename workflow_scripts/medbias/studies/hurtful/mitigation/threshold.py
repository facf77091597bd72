"""``threshold``: post-processing with fairlearn's ``ThresholdOptimizer`` (Hardt et al. 2016), fitted
per task on the validation stays' scores of the chosen classifier and applied to the test stays.

For each group of the attribute it picks a (randomised) threshold on the classifier's score so that
the constraint holds on validation (``hurtful.mitigation.threshold.constraints``: equal true-positive
rates by default, the recall gap of Table 4) while the objective is best. The test prediction of a
stay between a group's two thresholds is drawn with ``random_state`` seeded per task and attribute;
its decision is the probability of a positive prediction (fairlearn's ``_pmf_predict``), over which
the gaps and costs are expected values. The score stays the classifier's: a post-processor does not
rank stays, so its AUROC is measured on the decisions, against the classifier's own decisions.

A group needs ``min_positives`` positives and ``min_negatives`` negatives among the validation stays
to get thresholds of its own; the validation rows of smaller groups are left out of the fit and their
test rows keep the classifier's own prediction and score (the fit report names them). Post-processing
needs the protected attribute of every stay at prediction time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from medbias.studies.hurtful.mitigation import (
    FIT_COLUMNS,
    Mitigation,
    MitigationInputs,
    predictions_frame,
    task_random_state,
)


@functools.cache
def score_as_prediction() -> type:
    """The class of an already fitted estimator whose prediction is the design matrix's one column
    (the classifier's score), for ``ThresholdOptimizer(prefit=True, predict_method="predict")``;
    built on first use, so that planning the DAG does not import scikit-learn."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class ScoreAsPrediction(ClassifierMixin, BaseEstimator):
        def fit(self, X, y=None):  # noqa: N803 (scikit-learn's argument names)
            return self

        def predict(self, X):  # noqa: N803
            return np.asarray(X, dtype=float)[:, 0]

        def __sklearn_is_fitted__(self) -> bool:
            return True

    return ScoreAsPrediction


def fittable_groups(validation: pd.DataFrame, attribute: str, min_positives: int, min_negatives: int) -> list[str]:
    """The attribute's groups with at least ``min_positives`` positives and ``min_negatives``
    negatives among these validation stays, sorted."""
    counts = validation.groupby(validation[attribute].astype(str))["label"].agg(["sum", "size"])
    keep = (counts["sum"] >= min_positives) & (counts["size"] - counts["sum"] >= min_negatives)
    return sorted(counts.index[keep])


def fit_threshold_optimizer(validation: pd.DataFrame, attribute: str, settings: Mapping[str, Any]):
    """fairlearn's ``ThresholdOptimizer`` fitted on these validation stays (score: ``probability``)."""
    from fairlearn.postprocessing import ThresholdOptimizer

    optimizer = ThresholdOptimizer(
        estimator=score_as_prediction()(),
        constraints=settings["constraints"],
        objective=settings["objective"],
        grid_size=settings["grid_size"],
        prefit=True,
        predict_method="predict",
    )
    return optimizer.fit(
        validation[["probability"]].to_numpy(),
        validation["label"].to_numpy(),
        sensitive_features=validation[attribute].astype(str).to_numpy(),
    )


def threshold_predictions(
    inputs: MitigationInputs, attribute: str, settings: Mapping[str, Any], log
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per task: ``fit_threshold_optimizer`` on the validation stays of the groups that
    ``fittable_groups`` keeps, then the test stays' scores and seeded predictions."""
    frames, fits = [], []
    for t, task in enumerate(inputs.tasks["task"]):
        validation = inputs.validation[inputs.validation["task"] == task]
        test = inputs.test[inputs.test["task"] == task]
        groups = fittable_groups(validation, attribute, settings["min_positives"], settings["min_negatives"])
        score = test["probability"].to_numpy(dtype=float)
        prediction = test["prediction"].to_numpy().astype(int).copy()
        decision = prediction.astype(float)
        fitted = test[attribute].astype(str).isin(groups).to_numpy().copy()
        note = ""
        if len(groups) >= 2:
            optimizer = fit_threshold_optimizer(
                validation[validation[attribute].astype(str).isin(groups)], attribute, settings
            )
            x = test.loc[fitted, ["probability"]].to_numpy()
            sensitive = test.loc[fitted, attribute].astype(str).to_numpy()
            if fitted.any():
                decision[fitted] = optimizer._pmf_predict(x, sensitive_features=sensitive)[:, 1]
                prediction[fitted] = optimizer.predict(
                    x, sensitive_features=sensitive, random_state=task_random_state(inputs.seed, t, attribute)
                )
        else:
            fitted[:] = False
            note = "fewer than two groups with enough validation positives and negatives: not mitigated"
        unfitted = sorted(set(test[attribute].astype(str)) - set(groups)) if len(groups) >= 2 else []
        frames.append(predictions_frame(attribute, task, test["ICUSTAY_ID"], score, prediction, decision))
        fits.append(
            {
                "attribute": attribute,
                "task": task,
                "fitted_groups": ", ".join(groups) if len(groups) >= 2 else "",
                "unfitted_groups": ", ".join(unfitted),
                "unfitted_test_rows": int((~fitted).sum()),
                "note": note,
            }
        )
        if note:
            log.info("threshold %s %s: %s", task, attribute, note)
    return pd.concat(frames, ignore_index=True), pd.DataFrame(fits, columns=list(FIT_COLUMNS))


METHOD = Mitigation(
    name="threshold",
    changes="the decision: a threshold per group on the classifier's validation scores (fairlearn ThresholdOptimizer)",
    assumes="the protected attribute of every stay at prediction time; validation stays of every group",
    runs_as_job=True,
    retrains=False,
    mitigate=threshold_predictions,
    changes_score=False,
)
