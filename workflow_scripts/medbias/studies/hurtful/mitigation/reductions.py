"""``reductions``: fairlearn's ``ExponentiatedGradient`` (Agarwal et al. 2018), which trains a
randomised mixture of classifiers under a fairness constraint by reweighting the training rows. The
classifier it reweights must take sample weights, which the study's window network in its grid
search does not cheaply do (the reduction fits it about ``max_iter`` times per task), so the learner
here is a logistic regression (``C``) on the same frozen features: each stay's windows' rows of the
task's design matrix (the [CLS] features and the age and acuity scores, standardised on training),
averaged. The constraint (``constraints``: equal true-positive rates by default) is imposed on the
training stays; the test prediction is drawn with a ``random_state`` seeded per task and attribute,
and the score, which is also the decision the gaps and costs are expected over, is the mixture's
probability of a positive prediction.

Its change therefore mixes two things: the constraint and the change of learner (a linear model on
stay averages in place of the window network with eq. 1's merge); the fit report says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from medbias.studies.hurtful.classify import design_key, design_matrix, ordered_task_rows
from medbias.studies.hurtful.mitigation.base import (
    FIT_COLUMNS,
    Mitigation,
    MitigationInputs,
    predictions_frame,
    task_random_state,
)

CONSTRAINTS = {
    "true_positive_rate_parity": "TruePositiveRateParity",
    "equalized_odds": "EqualizedOdds",
    "demographic_parity": "DemographicParity",
    "false_positive_rate_parity": "FalsePositiveRateParity",
}


def stay_features(rows: pd.DataFrame, x: np.ndarray) -> pd.DataFrame:
    """The mean of each stay's window rows of the design matrix ``x`` (rows aligned with ``rows``),
    one row per stay with its split, label and protected attributes (sorted by stay)."""
    frame = pd.DataFrame(x, index=rows.index)
    frame["ICUSTAY_ID"] = rows["ICUSTAY_ID"].to_numpy()
    means = frame.groupby("ICUSTAY_ID").mean()
    first = rows.drop_duplicates("ICUSTAY_ID").set_index("ICUSTAY_ID").loc[means.index]
    return pd.concat([first[["split", "label", "gender", "language", "ethnicity", "insurance"]], means], axis=1)


def fit_exponentiated_gradient(x: np.ndarray, label: np.ndarray, group: np.ndarray, settings: Mapping[str, Any]):
    """``ExponentiatedGradient`` over ``LogisticRegression(C)`` under ``settings['constraints']``."""
    import warnings

    from fairlearn import reductions
    from sklearn.linear_model import LogisticRegression

    constraint = getattr(reductions, CONSTRAINTS[settings["constraints"]])()
    reduction = reductions.ExponentiatedGradient(
        LogisticRegression(C=settings["C"], max_iter=settings["solver_iterations"]),
        constraint,
        eps=settings["eps"],
        max_iter=settings["max_iter"],
    )
    with warnings.catch_warnings():
        # fairlearn 0.15 sets Series items in ways pandas 3 deprecates (it still does what it means)
        warnings.filterwarnings("ignore", message="Setting (an item|a value)", module=r"fairlearn\.")
        return reduction.fit(x, label, sensitive_features=group)


def reduction_predictions(
    inputs: MitigationInputs, attribute: str, settings: Mapping[str, Any], log
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per task: ``fit_exponentiated_gradient`` on the training stays' ``stay_features``, then the
    test stays' scores and seeded predictions. Tasks that share their design matrix share its build."""
    retrain = inputs.retrain
    if retrain is None:
        raise ValueError("reductions retrains the classifiers: it needs the model's features (RetrainingInputs)")
    designs: dict[bytes, np.ndarray] = {}
    frames, fits = [], []
    for t, task in enumerate(inputs.tasks.itertuples(index=False)):
        rows = ordered_task_rows(
            {"task": task.task, "cohort": task.cohort}, retrain.samples, retrain.windows, retrain.feature_index
        )
        key = design_key(rows)
        if key not in designs:
            designs[key] = design_matrix(rows, retrain.features, rows["split"].to_numpy() == "train")
        stays = stay_features(rows, designs[key])
        features = [c for c in stays.columns if not isinstance(c, str)]
        train, test = stays[stays["split"] == "train"], stays[stays["split"] == "test"]
        reduction = fit_exponentiated_gradient(
            train[features].to_numpy(), train["label"].to_numpy(), train[attribute].astype(str).to_numpy(), settings
        )
        x = test[features].to_numpy()
        score = np.clip(reduction._pmf_predict(x)[:, 1], 0.0, 1.0)  # the mixture's sum can exceed 1 by a rounding
        prediction = reduction.predict(x, random_state=task_random_state(inputs.seed, t, attribute))
        frames.append(predictions_frame(attribute, task.task, test.index.to_numpy(), score, prediction, score))
        fits.append(
            {
                "attribute": attribute,
                "task": task.task,
                "fitted_groups": ", ".join(sorted(set(train[attribute].astype(str)))),
                "unfitted_groups": ", ".join(
                    sorted(set(test[attribute].astype(str)) - set(train[attribute].astype(str)))
                ),
                "unfitted_test_rows": 0,
                "note": f"logistic regression on stay-averaged features; {len(reduction.predictors_)} predictors "
                f"in the mixture",
            }
        )
        log.info(
            "reductions %s %s: %d training stays, %d predictors",
            task.task,
            attribute,
            len(train),
            len(reduction.predictors_),
        )
    return pd.concat(frames, ignore_index=True), pd.DataFrame(fits, columns=list(FIT_COLUMNS))


SETTINGS = {
    "description": "fairlearn ExponentiatedGradient over a logistic regression on the stay-averaged features",
    "properties": {
        "constraints": {
            "description": "the parity imposed on the training stays",
            "x-source": "our choice: as threshold.constraints",
            "type": "string",
            "enum": ["true_positive_rate_parity", "equalized_odds", "demographic_parity", "false_positive_rate_parity"],
            "default": "true_positive_rate_parity",
        },
        "eps": {
            "description": "the largest constraint violation allowed",
            "x-source": "cited default: fairlearn 0.15",
            "type": "number",
            "exclusiveMinimum": 0,
            "default": 0.01,
        },
        "max_iter": {
            "description": "iterations of the reduction (each fits one logistic regression)",
            "x-source": "cited default: fairlearn 0.15",
            "type": "integer",
            "minimum": 1,
            "default": 50,
        },
        "C": {
            "description": "the logistic regression's inverse L2 strength",
            "x-source": "cited default: scikit-learn LogisticRegression",
            "type": "number",
            "exclusiveMinimum": 0,
            "default": 1.0,
        },
        "solver_iterations": {
            "description": "lbfgs iterations of each logistic regression",
            "x-source": "run setting: convergence only",
            "type": "integer",
            "minimum": 1,
            "default": 1000,
        },
    },
}


METHOD = Mitigation(
    name="reductions",
    changes="the learner: a constrained mixture of logistic regressions on the same features (fairlearn "
    "ExponentiatedGradient)",
    assumes="the protected attribute of the training stays only; a learner that takes sample weights, "
    "trained about max_iter times per task",
    runs_as_job=True,
    retrains=True,
    mitigate=reduction_predictions,
    settings=SETTINGS,
)
