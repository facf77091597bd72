"""Sogancioglu et al. 2023's classifiers of one embedding (sections III-C and IV): every (task,
treatment, learner) classifier trained on the treated training notes and tested on the
counterfactual pairs of the test notes (Table V's inputs), and Table IV's gender classifiers
(original vs neutralized training notes, tested on the original test notes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medbias.studies.mental.features import counterfactual_pairs, gender_permuted_design, training_design
from medbias.studies.mental.learners import build_learner, fit_learner


@dataclass
class CounterfactualClassifiers:
    predictions: pd.DataFrame  # task, treatment, learner, ROW_ID, label, gender, pred/prob of each side
    selection: pd.DataFrame  # the chosen hyper-parameters and training sizes per classifier
    fitted: dict  # (task, treatment, learner) -> the fitted model


def counterfactual_classifiers(
    features: np.ndarray,
    rows: Mapping[tuple[int, str], int],
    labels: pd.DataFrame,
    *,
    tasks: Sequence[str],
    treatments: Sequence[str],
    learners: Sequence[str],
    settings: Mapping[str, Mapping[str, Any]],
    seed: int,
    log,
) -> CounterfactualClassifiers:
    """Every classifier trained on the treated training notes (``training_design``), each predicting
    both sides of every counterfactual pair of the test notes (``counterfactual_pairs``)."""
    predictions, selection, fitted = [], [], {}
    for task in tasks:
        frame = labels[labels["task"] == task]
        pairs = counterfactual_pairs(frame, rows)
        for treatment in treatments:
            train_rows, train_y, groups = training_design(frame, treatment, rows)
            if len(np.unique(train_y)) < 2:
                raise RuntimeError(f"task {task}: the training notes hold one class only; Table II shows the split")
            for learner_name in learners:
                model, chosen = fit_learner(
                    build_learner(learner_name, settings[learner_name], seed), features[train_rows], train_y, groups
                )
                fitted[(task, treatment, learner_name)] = model
                result = pairs[["ROW_ID", "label", "gender"]].copy()
                for side, column in (("female", "row_female"), ("male", "row_male")):
                    x = features[pairs[column].to_numpy()]
                    result[f"pred_{side}"] = model.predict(x).astype(int)
                    result[f"prob_{side}"] = model.predict_proba(x)[:, 1]
                result.insert(0, "learner", learner_name)
                result.insert(0, "treatment", treatment)
                result.insert(0, "task", task)
                predictions.append(result)
                mismatch = float((result["pred_female"] != result["pred_male"]).mean())
                selection.append(
                    {
                        "task": task,
                        "treatment": treatment,
                        "learner": learner_name,
                        "train_notes": len(train_y),
                        "train_positive": int(train_y.sum()),
                        **chosen,
                    }
                )
                log.info(
                    "%s %s %s: %d training rows, mismatch %.3f over %d pairs %s",
                    task,
                    treatment,
                    learner_name,
                    len(train_y),
                    mismatch,
                    len(result),
                    chosen,
                )
    return CounterfactualClassifiers(pd.concat(predictions, ignore_index=True), pd.DataFrame(selection), fitted)


def mismatch(model, pairs: pd.DataFrame, features: np.ndarray) -> float:
    """Share of the counterfactual pairs whose two copies ``model`` predicts differently."""
    female = model.predict(features[pairs["row_female"].to_numpy()])
    male = model.predict(features[pairs["row_male"].to_numpy()])
    return float(np.mean(female != male))


def gender_permutation_null(
    features: np.ndarray,
    rows: Mapping[tuple[int, str], int],
    labels: pd.DataFrame,
    *,
    tasks: Sequence[str],
    learner: str,
    settings: Mapping[str, Any],
    seed: int,
    draws: int,
    log,
) -> pd.DataFrame:
    """The mismatch of classifiers trained where gender cannot predict the label: per task and draw,
    ``learner`` (chosen as the observed one is) is trained on the training notes with their genders
    permuted (``gender_permuted_design``) and tested on the same counterfactual pairs. A classifier of
    contextual features is gender-sensitive whatever its labels say; these draws show how much, so
    that the observed mismatch can be ranked among them (``medbias.metrics.counterfactual.null_rank_p``)
    instead of being tested with McNemar's test, which holds its level for one trained classifier, not
    across trainings."""
    out = []
    for task in tasks:
        frame = labels[labels["task"] == task]
        pairs = counterfactual_pairs(frame, rows)
        rng = np.random.default_rng([seed, tasks.index(task)])
        values = []
        for draw in range(draws):
            train_rows, train_y, groups = gender_permuted_design(frame, rows, rng)
            model, _ = fit_learner(
                build_learner(learner, settings, seed, probability=False), features[train_rows], train_y, groups
            )
            values.append(mismatch(model, pairs, features))
        out += [{"task": task, "learner": learner, "draw": d, "mismatch": v} for d, v in enumerate(values)]
        log.info(
            "%s %s: gender-permutation null over %d draws: mismatch median %.3f, 95th percentile %.3f",
            task,
            learner,
            draws,
            float(np.median(values)) if values else float("nan"),
            float(np.quantile(values, 0.95)) if values else float("nan"),
        )
    return pd.DataFrame(out, columns=["task", "learner", "draw", "mismatch"])


def gender_from_features(
    features: np.ndarray,
    rows: Mapping[tuple[int, str], int],
    labels: pd.DataFrame,
    *,
    task: str,
    embedding: str,
    svm: Mapping[str, Any],
    seed: int,
    log,
) -> pd.DataFrame:
    """Table IV: can gender be read from the training notes' features? The UAR on the original test
    notes of an SVM trained on the original, then on the neutralized training notes of ``task``,
    beside the constant classifier that predicts the training notes' majority gender."""
    from sklearn.metrics import balanced_accuracy_score

    frame = labels[labels["task"] == task]
    train, test = frame[frame["split"] == "train"], frame[frame["split"] == "test"]
    test_x = features[[rows[(int(r), "original")] for r in test["ROW_ID"]]]
    test_gender = test["gender"].to_numpy()
    majority = train["gender"].value_counts().sort_index().idxmax()
    table = [
        {
            "embedding": embedding,
            "trained_on": "constant (majority gender of training)",
            "uar": balanced_accuracy_score(test_gender, np.full(len(test_gender), majority)),
        }
    ]
    for version in ("original", "neutralized"):
        train_x = features[[rows[(int(r), version)] for r in train["ROW_ID"]]]
        model, _ = fit_learner(
            build_learner("svm", svm, seed), train_x, train["gender"].to_numpy(), train["ROW_ID"].to_numpy()
        )
        uar = balanced_accuracy_score(test_gender, model.predict(test_x))
        table.append({"embedding": embedding, "trained_on": version, "uar": uar})
        log.info(
            "gender classifier trained on %s notes of %s: UAR %.3f on %d original test notes",
            version,
            task,
            uar,
            len(test_gender),
        )
    return pd.DataFrame(table).assign(task=task, train_notes=len(train), test_notes=len(test))
