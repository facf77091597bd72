"""``reweighing``: Kamiran and Calders (2012)'s weights in the classifier's training loss. Each
training stay of group a and label y weighs

    w(a, y) = P(A = a) P(Y = y) / P(A = a, Y = y)

(the frequencies over the task's training stays), so that in the weighted training set the label is
independent of the attribute; each of a stay's windows carries its stay's weight. Each task's chosen
network and c (``selection.csv``) is trained again under the same seed with these weights, and its
threshold chosen again at the best validation F1. Only the training loss changes: the features, the
network, the validation loss that stops training and the prediction rule are the classifier's own,
and the attribute is not needed at prediction time.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from medbias.studies.hurtful.classify import chosen_grids, train_task_classifiers
from medbias.studies.hurtful.mitigation.base import Mitigation, MitigationInputs, predictions_frame, whole_task_fits


def kamiran_calders_weights(group: np.ndarray, label: np.ndarray) -> np.ndarray:
    """w(a, y) = P(A = a) P(Y = y) / P(A = a, Y = y) per row, the frequencies over these rows (every
    (a, y) of a row is present, so no denominator is 0). The weights average 1 over the rows."""
    frame = pd.DataFrame({"a": np.asarray(group).astype(str), "y": np.asarray(label).astype(int)})
    n = len(frame)
    p_group = frame["a"].map(frame["a"].value_counts() / n)
    p_label = frame["y"].map(frame["y"].value_counts() / n)
    p_joint = frame.groupby(["a", "y"])["y"].transform("size") / n
    return (p_group * p_label / p_joint).to_numpy(dtype=float)


def stay_weights(train_rows: pd.DataFrame, attribute: str) -> np.ndarray:
    """Each training window's weight: its stay's ``kamiran_calders_weights`` over the task's training
    stays (one row per stay, whatever its number of windows)."""
    stays = train_rows.drop_duplicates("ICUSTAY_ID")
    weights = kamiran_calders_weights(stays[attribute].to_numpy(), stays["label"].to_numpy())
    return train_rows["ICUSTAY_ID"].map(dict(zip(stays["ICUSTAY_ID"], weights))).to_numpy(dtype=np.float32)


def reweighed_predictions(
    inputs: MitigationInputs, attribute: str, settings: Mapping[str, Any], log
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every task's chosen classifier trained again with ``stay_weights`` for ``attribute``."""
    retrain = inputs.retrain
    if retrain is None:
        raise ValueError("reweighing retrains the classifiers: it needs the model's features (RetrainingInputs)")
    result = train_task_classifiers(
        retrain.features,
        retrain.feature_index,
        retrain.samples,
        retrain.windows,
        inputs.tasks,
        [],
        [],
        seed=inputs.seed,
        training=retrain.training,
        log=log,
        workers=retrain.workers,
        threads=retrain.threads,
        task_grids=chosen_grids(retrain.selection),
        stack_tasks=retrain.training.get("device", "cpu") == "cuda",
        weigh_rows=partial(stay_weights, attribute=attribute),
    )
    test = result.predictions
    frame = predictions_frame(attribute, test["task"], test["ICUSTAY_ID"], test["probability"], test["prediction"])
    selection = result.selections.set_index("task")
    fit = whole_task_fits(
        attribute,
        inputs.tasks["task"],
        lambda t: (
            f"retrained {int(selection.loc[t, 'epochs'])} epochs; threshold {selection.loc[t, 'threshold']:.4f} "
            f"(best validation F1 {selection.loc[t, 'validation_f1']:.3f})"
        ),
    )
    return frame, fit


METHOD = Mitigation(
    name="reweighing",
    changes="the training loss: each stay weighs P(a) P(y) / P(a, y) (Kamiran and Calders 2012)",
    assumes="the protected attribute of the training stays only; the classifier is trained again",
    runs_as_job=True,
    retrains=True,
    mitigate=reweighed_predictions,
    uses_classifier_gpus=True,
)
