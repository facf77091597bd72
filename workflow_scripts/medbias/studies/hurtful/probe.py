"""Table D4 of Zhang et al. 2020: how well a post-hoc classifier predicts a protected attribute from
[CLS] vectors, on a split of the rows by subject."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.io.tables import PaperTable


def split_by_subject(subjects: np.ndarray, test_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the rows whose subject falls in a seeded test share of the subjects."""
    unique = np.unique(subjects)
    rng = np.random.default_rng(seed)
    test = set(rng.permutation(unique)[: max(1, round(test_fraction * len(unique)))].tolist())
    return np.array([s in test for s in subjects])


def probe_attribute(
    features: np.ndarray, labels: np.ndarray, is_test: np.ndarray, hidden: Sequence[int], seed: int, positive: int = 1
) -> dict[str, float]:
    """Table D4: a fully connected network (scikit-learn MLP on standardised features) trained to
    predict the attribute on the training rows, evaluated on the test rows: AUROC, precision, recall,
    AUPRC and log loss. Binary attributes use class ``positive`` as the positive class; attributes with
    more classes use macro averages over one-vs-rest (classes absent from either split are dropped
    from the probe and counted)."""
    from sklearn.metrics import average_precision_score, log_loss, precision_score, recall_score, roc_auc_score
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train, test = ~is_test, is_test
    shared = np.intersect1d(np.unique(labels[train]), np.unique(labels[test]))
    keep = np.isin(labels, shared)
    dropped = int((~keep).sum())
    train, test = train & keep, test & keep
    if len(shared) < 2:
        raise MedbiasInputError(f"probe: fewer than two attribute classes in both splits (classes {shared.tolist()})")
    probe = make_pipeline(
        StandardScaler(),
        MLPClassifier(
            hidden_layer_sizes=tuple(hidden), max_iter=1000, n_iter_no_change=30, early_stopping=True, random_state=seed
        ),
    )
    probe.fit(features[train], labels[train])
    proba = probe.predict_proba(features[test])
    predicted = probe.predict(features[test])
    truth = labels[test]
    classes = probe.classes_
    if len(classes) == 2:
        column = int(np.flatnonzero(classes == positive)[0]) if positive in classes else 1
        pos = classes[column]
        metrics = {
            "auroc": roc_auc_score(truth == pos, proba[:, column]),
            "precision": precision_score(truth == pos, predicted == pos, zero_division=0),
            "recall": recall_score(truth == pos, predicted == pos, zero_division=0),
            "auprc": average_precision_score(truth == pos, proba[:, column]),
        }
    else:
        onehot = (truth[:, None] == classes[None, :]).astype(int)
        metrics = {
            "auroc": roc_auc_score(onehot, proba, average="macro"),
            "precision": precision_score(truth, predicted, average="macro", zero_division=0),
            "recall": recall_score(truth, predicted, average="macro", zero_division=0),
            "auprc": average_precision_score(onehot, proba, average="macro"),
        }
    metrics["log_loss"] = log_loss(truth, proba, labels=classes)
    metrics.update(
        {
            "train_rows": int(train.sum()),
            "test_rows": int(test.sum()),
            "classes": len(classes),
            "rows_dropped_rare_class": dropped,
            "majority_rate": float(np.max(np.unique(truth, return_counts=True)[1]) / len(truth)),
        }
    )
    return {k: float(v) for k, v in metrics.items()}


PROBE_METRICS = ("auroc", "precision", "recall", "auprc", "log_loss")


def table_d4(long: pd.DataFrame, settings: tuple[str, ...] = ()) -> PaperTable:
    """Table D4 as printed: per attribute and metric, the probe on the baseline's and on the debiased
    model's vectors (``long``: one ``probe_attribute`` row per attribute and model)."""
    wide = (
        long.melt(id_vars=["attribute", "model"], value_vars=list(PROBE_METRICS), var_name="metric")
        .pivot_table(index=["attribute", "metric"], columns="model", values="value", sort=False)
        .reset_index()
    )
    notes = (
        "Post-hoc MLP on standardised final-layer [CLS] vectors of held-out test subjects' sequences, "
        "split by subject. Gender: F is the positive class; attributes with more classes: macro "
        "one-vs-rest averages. Sizes and majority rates in tableD4_probe_long.csv.",
        *settings,
    )
    return PaperTable(
        wide[["attribute", "metric", "baseline", "debiased"]],
        "Table D4: predicting the protected attribute from baseline vs debiased [CLS] vectors",
        notes,
        digits=4,
    )
