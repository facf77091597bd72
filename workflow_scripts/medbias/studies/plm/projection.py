"""Fitting Xie et al. 2024's projection debiasers (section 5) on one model's sentence vectors.

SentenceDebias (Liang et al. 2020): per family (race, LGBTQ+), PCA of the pair-centred vectors of
counterfactual StereoSet-style sentences (same template and disease, majority vs minority identity);
the families' top components are joined into one subspace and projected out. INLP (Ravfogel et al.
2020, as Xie et al. 2024 section 5.3): linear classifiers trained to tell the stereotypical from the
anti-stereotypical sentences, their directions projected out, iteratively. The estimators live in
``medbias.studies.plm.debias``; the checks of the result in ``medbias.core.encoders.projection_checks``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.encoders import pooled_sentence_vectors, projection_checks
from medbias.studies.plm.debias import INLP, SentenceDebias, projection_from_basis
from medbias.studies.plm.stereoset_style import counterfactual_identity_pairs, stereotype_labels


def stereoset_vectors(
    encoder, tokenizer, sentences: pd.DataFrame, *, pooling: str, batch_size: int, max_length: int, prepend_bos: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(vectors indexed by sentence_id, the ids of the meaningful sentences): pooled vectors of the
    sentences with an identity and a bias (the unrelated ones stay zero; no fit reads them)."""
    meaningful = sentences[(sentences["bias_kind"] != "unrelated") & (sentences["identity_group"] != "unrelated")]
    ids = meaningful["sentence_id"].to_numpy()
    vectors = np.zeros((len(sentences), encoder.config.hidden_size), dtype=np.float64)
    vectors[ids] = pooled_sentence_vectors(
        encoder, tokenizer, meaningful["text"].tolist(), pooling, batch_size, max_length, prepend_bos=prepend_bos
    )
    return vectors, ids


def fit_projection(
    method: str,
    vectors: np.ndarray,
    meaningful: np.ndarray,
    sentences: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    families: Sequence[str],
    settings: Mapping[str, Any],
    seed: int,
    log,
) -> tuple[np.ndarray, dict[str, Any]]:
    """The projection matrix of ``method`` (sentencedebias or inlp) and its report: the pairs or
    sentences it was fitted on, explained variance or per-iteration accuracies, and the checks."""
    report: dict[str, Any] = {}
    dim = vectors.shape[1]
    if method == "sentencedebias":
        bases = []
        for family in families:
            first, second = counterfactual_identity_pairs(sentences, family)
            fitted = SentenceDebias(k=settings["components"]).fit(vectors[first], vectors[second])
            bases.append(fitted.basis_)
            report[f"{family}_pairs"] = len(first)
            report[f"{family}_explained_variance_ratio"] = fitted.explained_variance_ratio_.tolist()
            log.info(
                "SentenceDebias %s: %d counterfactual pairs, explained variance %s",
                family,
                len(first),
                np.round(fitted.explained_variance_ratio_, 3).tolist(),
            )
        basis = np.hstack(bases)
        projection = projection_from_basis(basis, dim)
        report.update(projection_checks(projection, vectors[meaningful], basis=basis))
        return projection, report
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    ids, labels = stereotype_labels(pairs)
    make = {
        "linear_svc": lambda: LinearSVC(dual="auto", max_iter=5000),
        "logistic": lambda: LogisticRegression(max_iter=2000),
    }[settings["classifier"]]
    fitted = INLP(n_iterations=settings["iterations"], make_classifier=make, seed=seed).fit(
        vectors[ids], np.asarray(labels)
    )
    report["sentences"] = len(ids)
    report["stereotypical"] = int(sum(labels))
    report["iteration_accuracies"] = fitted.accuracies_
    report.update(projection_checks(fitted.projection_, vectors[ids], labels=np.asarray(labels), make_classifier=make))
    log.info(
        "INLP: accuracy by iteration %s; after: %.3f",
        np.round(fitted.accuracies_, 3).tolist(),
        report["accuracy_after"],
    )
    return fitted.projection_, report
