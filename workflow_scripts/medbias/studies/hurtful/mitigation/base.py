"""What every mitigation method shares (``medbias.studies.hurtful.mitigation`` holds the registry):
the inputs a method may read, its declaration (``Mitigation``), the columns of its predictions and fit
report, and the helpers that build them.

A method turns one model's classifiers into mitigated test predictions for one protected attribute
at a time: per task and test stay a score (the ranking AUROC and AUPRC are computed on), a 0/1
prediction (one draw of the rule) and the decision: the probability that the rule predicts
positive, which is the prediction for a deterministic rule and, for a randomised one, what the
gaps and the costs at the decision are computed on (their expected values over the rule's draws).
Every method's predictions repeat byte for byte from the same config: the randomised ones
(fairlearn's post-processor and reductions) draw from a generator seeded per task and attribute
(``task_random_state``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

# the columns of a method's predictions (one row per attribute, task and test stay)
PREDICTION_COLUMNS: tuple[str, ...] = ("attribute", "task", "ICUSTAY_ID", "score", "prediction", "decision")
# a method whose fit is redone on resamples of the validation stays (``threshold`` with ``refits``) adds,
# per test stay, its decision under each refit: the first stage of the two-stage bootstrap
REFIT_COLUMN = "refit_decisions"
# the columns of a method's fit report (one row per attribute and task)
FIT_COLUMNS: tuple[str, ...] = ("attribute", "task", "fitted_groups", "unfitted_groups", "unfitted_test_rows", "note")


@dataclass
class MitigationInputs:
    """What a method may read: one model's test and validation predictions (``hurtful_classify``'s,
    with the protected attributes), the tasks, and for the methods that retrain, ``retrain``: the
    classifier's features and settings (``RetrainingInputs``); for ``adversarial``, ``encoders``:
    attribute -> the test predictions of the classifier on that attribute's adversarial encoder."""

    test: pd.DataFrame
    validation: pd.DataFrame
    tasks: pd.DataFrame
    seed: int
    retrain: RetrainingInputs | None = None
    encoders: Mapping[str, pd.DataFrame] = field(default_factory=dict)


@dataclass
class RetrainingInputs:
    """A model's frozen window features and what its classifiers were trained with: the feature
    matrix (a memory map) and its index, the task samples and windows, each task's chosen network
    and c (``selection.csv``), the training settings and worker count of ``train_task_classifiers``."""

    features: np.ndarray
    feature_index: pd.DataFrame
    samples: pd.DataFrame
    windows: pd.DataFrame
    selection: pd.DataFrame
    training: dict
    workers: int = 1
    threads: int = 1


# (inputs, attribute, the method's settings, log) -> (predictions, fit report)
Mitigate = Callable[[MitigationInputs, str, Mapping[str, Any], Any], tuple[pd.DataFrame, pd.DataFrame]]


@dataclass(frozen=True)
class Mitigation:
    """One method: its name, what it changes, what it assumes, whether it runs as a job of the
    mitigation stage (``runs_as_job``; ``none`` and ``adversarial`` read predictions that exist), whether
    that job needs the model's features (``retrains``), the function, and whether it changes the
    score (``changes_score``): a post-processor keeps the classifier's score and changes only the
    decision, so its ranking cost is measured on the decisions, against the classifier's own. A method
    whose job trains the classifiers' networks again says ``uses_classifier_gpus``: its job asks for the
    GPUs the classifiers train on (``hurtful.downstream.classify_gpus``). A method with settings of its own
    declares them (``settings``: its config section ``hurtful.mitigation.<name>`` as a JSON schema object
    without its type, ``description`` and ``properties``, each key with its default, description and
    ``x-source``); the config schema takes the section from here, and the method's job reads it."""

    name: str
    changes: str
    assumes: str
    runs_as_job: bool
    retrains: bool
    mitigate: Mitigate
    changes_score: bool = True
    uses_classifier_gpus: bool = False
    settings: Mapping[str, Any] = field(default_factory=dict)


def task_random_state(seed: int, task_number: int, attribute: str) -> int:
    """The integer seed of one task's and attribute's randomised predictions (fairlearn's
    ``random_state``): drawn from ``seed``, the task's position and the attribute's name, so adding a
    task or an attribute leaves the others' predictions unchanged."""
    entropy = [seed, task_number, *attribute.encode()]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0] & 0x7FFFFFFF)


def predictions_frame(
    attribute: str,
    task,
    stays: np.ndarray,
    score: np.ndarray,
    prediction: np.ndarray,
    decision: np.ndarray | None = None,
):
    """Mitigated predictions in ``PREDICTION_COLUMNS`` (``task``: one task's name, or each row's);
    ``decision``, a randomised rule's probability of predicting positive, is the prediction when
    None (a deterministic rule)."""
    prediction = np.asarray(prediction).astype(int)
    return pd.DataFrame(
        {
            "attribute": attribute,
            "task": np.asarray(task) if not isinstance(task, str) else task,
            "ICUSTAY_ID": np.asarray(stays),
            "score": np.asarray(score, dtype=float),
            "prediction": prediction,
            "decision": prediction.astype(float) if decision is None else np.asarray(decision, dtype=float),
        }
    )


def whole_task_fits(attribute: str, tasks, note) -> pd.DataFrame:
    """The fit report of a method that fits no groups: one row per task with ``note(task)``."""
    return pd.DataFrame(
        [
            {
                "attribute": attribute,
                "task": t,
                "fitted_groups": "",
                "unfitted_groups": "",
                "unfitted_test_rows": 0,
                "note": note(t),
            }
            for t in tasks
        ],
        columns=list(FIT_COLUMNS),
    )
