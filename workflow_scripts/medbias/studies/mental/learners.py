"""Study "mental": the learners (section III-D): an SVM chosen by grouped cross-validation, and the
random forest and MLP of the robustness analysis.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from medbias.core.errors import MedbiasInputError


def build_learner(name: str, settings: Mapping[str, Any], seed: int, probability: bool = True):
    """An unfitted scikit-learn pipeline (z-normalisation on the training data, then the learner).
    ``svm`` is a grid search over C and kernel by grouped, stratified k-fold macro-F1 (copies of one
    note stay in one fold); ``rf`` and ``mlp`` are the paper's robustness learners with fixed settings.
    ``probability=False`` leaves out the SVM's Platt scaling (an internal five-fold fit per candidate):
    the SVM and its predictions are the same, but it has no ``predict_proba``."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import GridSearchCV, StratifiedGroupKFold
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    if name == "svm":
        pipeline = Pipeline([("scale", StandardScaler()), ("svm", SVC(probability=probability, random_state=seed))])
        grid = {"svm__C": list(settings["C"]), "svm__kernel": list(settings["kernel"])}
        folds = StratifiedGroupKFold(n_splits=int(settings["folds"]), shuffle=True, random_state=seed)
        return GridSearchCV(pipeline, grid, scoring="f1_macro", cv=folds, n_jobs=1, refit=True)
    if name == "rf":
        forest = RandomForestClassifier(
            n_estimators=int(settings["n_estimators"]),
            min_samples_leaf=int(settings["min_samples_leaf"]),
            random_state=seed,
            n_jobs=1,
        )
        return Pipeline([("scale", StandardScaler()), ("rf", forest)])
    if name == "mlp":
        mlp = MLPClassifier(
            hidden_layer_sizes=tuple(settings["hidden"]),
            alpha=float(settings["alpha"]),
            max_iter=int(settings["max_iter"]),
            random_state=seed,
        )
        return Pipeline([("scale", StandardScaler()), ("mlp", mlp)])
    raise MedbiasInputError(f"config key 'mental.learners': unknown learner {name!r} (svm, rf, mlp)")


def fit_learner(learner, features: np.ndarray, label: np.ndarray, groups: np.ndarray):
    """Fit ``learner`` (a grid search gets the note ids as groups); returns the fitted estimator and
    a description of the chosen parameters with the cross-validated macro-F1 where there is one."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if isinstance(learner, GridSearchCV):
            learner.fit(features, label, groups=groups)
            params = {k.split("__", 1)[1]: v for k, v in learner.best_params_.items()}
            return learner.best_estimator_, {**params, "cv_macro_f1": float(learner.best_score_)}
        learner.fit(features, label)
    return learner, {}
