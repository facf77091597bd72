"""``threshold``: post-processing with fairlearn's ``ThresholdOptimizer`` (Hardt et al. 2016), fitted
per task on the validation stays' scores of the chosen classifier and applied to the test stays.

For each group of the attribute it picks a (randomised) threshold on the classifier's score so that
the constraint holds on validation (``hurtful.mitigation.threshold.constraints``: equal true-positive
rates by default, the recall gap of Table 4) while the objective is best. The test prediction of a
stay between a group's two thresholds is drawn with ``random_state`` seeded per task and attribute;
its decision is the probability of a positive prediction (fairlearn's ``_pmf_predict``), over which
the gaps and costs are expected values. The score stays the classifier's: a post-processor does not
rank stays, so its AUROC is measured on the decisions, against the classifier's own decisions.

With ``refits`` R > 0 the fit is also redone on R resamples of the validation stays, within each
(group, label) stratum so that every group keeps its positives and negatives, and each test stay's
decision under each refit is written beside its decision (``REFIT_COLUMN``): the first stage of the
two-stage bootstrap with which ``mitigation_effects`` puts the fitting's own variance into the
intervals of the gaps and costs after (replicate b of the test stays is scored by refit b mod R). With
R = 0 the thresholds are treated as known. The stage's intervals that treat them as known covered the
procedure's expected recall gap in 81% of simulated tasks of the demo's size, the two-stage ones in
97% (``tests/performance/bench_post_processor_coverage.py``).

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

from medbias.metrics.bootstrap import within_strata_resamples
from medbias.studies.hurtful.mitigation.base import (
    FIT_COLUMNS,
    REFIT_COLUMN,
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


def decision_probabilities(optimizer, stays: pd.DataFrame, attribute: str) -> np.ndarray:
    """The fitted rule's probability of a positive decision for each of these stays (fairlearn's
    ``_pmf_predict``): the expected decision over the rule's draws."""
    x = stays[["probability"]].to_numpy()
    return optimizer._pmf_predict(x, sensitive_features=stays[attribute].astype(str).to_numpy())[:, 1]


def refit_decisions(
    validation: pd.DataFrame,
    test: pd.DataFrame,
    attribute: str,
    settings: Mapping[str, Any],
    refits: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """(test rows, ``refits``) decision probabilities of the ``test`` stays under ``fit_threshold_optimizer``
    refitted on each of ``refits`` resamples of the ``validation`` stays drawn within every (group,
    label) stratum (``within_strata_resamples``)."""
    strata = validation[attribute].astype(str).to_numpy() + "|" + validation["label"].astype(int).astype(str).to_numpy()
    rows = [np.flatnonzero(strata == stratum) for stratum in sorted(set(strata))]
    index = within_strata_resamples(rows, len(validation), refits, rng)
    decisions = np.empty((len(test), refits))
    for r in range(refits):
        optimizer = fit_threshold_optimizer(validation.iloc[index[r]], attribute, settings)
        decisions[:, r] = decision_probabilities(optimizer, test, attribute)
    return decisions


def threshold_predictions(
    inputs: MitigationInputs, attribute: str, settings: Mapping[str, Any], log
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per task: ``fit_threshold_optimizer`` on the validation stays of the groups that
    ``fittable_groups`` keeps, then the test stays' scores and seeded predictions; with ``refits`` > 0
    each test stay's decisions under the refits too (``refit_decisions``; a stay the rule does not
    reach keeps the classifier's prediction in every refit)."""
    frames, fits = [], []
    refits = int(settings["refits"])
    for t, task in enumerate(inputs.tasks["task"]):
        validation = inputs.validation[inputs.validation["task"] == task]
        test = inputs.test[inputs.test["task"] == task]
        groups = fittable_groups(validation, attribute, settings["min_positives"], settings["min_negatives"])
        score = test["probability"].to_numpy(dtype=float)
        prediction = test["prediction"].to_numpy().astype(int).copy()
        decision = prediction.astype(float)
        refitted = np.repeat(decision[:, None], refits, axis=1)
        fitted = test[attribute].astype(str).isin(groups).to_numpy().copy()
        note = ""
        if len(groups) >= 2:
            fit_rows = validation[validation[attribute].astype(str).isin(groups)]
            optimizer = fit_threshold_optimizer(fit_rows, attribute, settings)
            if fitted.any():
                decision[fitted] = decision_probabilities(optimizer, test[fitted], attribute)
                prediction[fitted] = optimizer.predict(
                    test.loc[fitted, ["probability"]].to_numpy(),
                    sensitive_features=test.loc[fitted, attribute].astype(str).to_numpy(),
                    random_state=task_random_state(inputs.seed, t, attribute),
                )
                if refits:
                    rng = np.random.default_rng(task_random_state(inputs.seed, t, attribute + ":refits"))
                    refitted[fitted] = refit_decisions(fit_rows, test[fitted], attribute, settings, refits, rng)
        else:
            fitted[:] = False
            note = "fewer than two groups with enough validation positives and negatives: not mitigated"
        unfitted = sorted(set(test[attribute].astype(str)) - set(groups)) if len(groups) >= 2 else []
        frame = predictions_frame(attribute, task, test["ICUSTAY_ID"], score, prediction, decision)
        if refits:
            frame[REFIT_COLUMN] = list(refitted)
        frames.append(frame)
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
    if refits:
        log.info(
            "threshold %s: each fitted task refitted on %d resamples of its validation stays (within group and label)",
            attribute,
            refits,
        )
    return pd.concat(frames, ignore_index=True), pd.DataFrame(fits, columns=list(FIT_COLUMNS))


SETTINGS = {
    "description": "fairlearn ThresholdOptimizer, fitted on the validation stays' scores",
    "properties": {
        "constraints": {
            "description": "the parity imposed (true_positive_rate_parity equalises recall, Table 4's recall gap)",
            "x-source": "our choice: the recall gap is the paper's headline gap",
            "type": "string",
            "enum": [
                "true_positive_rate_parity",
                "equalized_odds",
                "demographic_parity",
                "false_positive_rate_parity",
                "false_negative_rate_parity",
                "true_negative_rate_parity",
            ],
            "default": "true_positive_rate_parity",
        },
        "objective": {
            "description": "what the thresholds maximise under the constraint",
            "x-source": "our choice: balanced accuracy, since most tasks have few positives",
            "type": "string",
            "enum": ["balanced_accuracy_score", "accuracy_score"],
            "default": "balanced_accuracy_score",
        },
        "grid_size": {
            "description": "candidate thresholds per group",
            "x-source": "cited default: fairlearn 0.15",
            "type": "integer",
            "minimum": 10,
            "default": 1000,
        },
        "min_positives": {
            "description": "fewest validation positives of a group that gets "
            "thresholds of its own (smaller groups keep the "
            "classifier's prediction)",
            "x-source": "our choice: a group's recall on fewer positives moves in steps too coarse to equalise",
            "type": "integer",
            "minimum": 1,
            "default": 5,
        },
        "min_negatives": {
            "description": "fewest validation negatives of a group that gets thresholds of its own",
            "x-source": "our choice: as min_positives",
            "type": "integer",
            "minimum": 1,
            "default": 5,
        },
        "refits": {
            "description": "refits of the post-processor on resamples of the validation stays "
            "(within group and label) whose decisions give the intervals after "
            "their first stage (a two-stage bootstrap: test resample b is "
            "scored by refit b mod refits); 0 treats the fitted thresholds as "
            "known",
            "x-source": "our choice: on simulated tasks of the demo's size the intervals that "
            "treat the thresholds as known covered the procedure's expected "
            "recall gap 81% of the time, two-stage ones 97% with 200 refits and "
            "95% with 20 (docs/mitigation.md); a fit of 173 validation stays is "
            "about 0.016 s of one core",
            "type": "integer",
            "minimum": 0,
            "default": 200,
        },
    },
}


METHOD = Mitigation(
    name="threshold",
    changes="the decision: a threshold per group on the classifier's validation scores (fairlearn ThresholdOptimizer)",
    assumes="the protected attribute of every stay at prediction time; validation stays of every group",
    runs_as_job=True,
    retrains=False,
    mitigate=threshold_predictions,
    changes_score=False,
    settings=SETTINGS,
)
