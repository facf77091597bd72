"""LIME for text (Ribeiro et al. 2016), as Sogancioglu et al. 2023 use it for Figure 3.

The interpretable features are the note's distinct words. Each perturbed sample removes a random
number of distinct words (every occurrence); the first sample is the note itself. Samples are
weighted by an exponential kernel on the cosine distance to the note (x100, width 25, LIME's text
defaults) and a weighted ridge regression (alpha 1) of the positive-class probability on the
word-presence matrix gives each word's weight: positive pushes towards the positive class.
Only words and numbers leave this module, never sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd


def perturbation_masks(n_words: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """(n_samples, n_words) 0/1 word-presence matrix: row 0 keeps every word, each other row removes
    a uniformly drawn number (1 .. n_words - 1, or 1 for a one-word text) of uniformly drawn words."""
    masks = np.ones((n_samples, n_words), dtype=np.float64)
    for row in range(1, n_samples):
        k = int(rng.integers(1, max(n_words, 2)))
        masks[row, rng.choice(n_words, size=min(k, n_words), replace=False)] = 0
    return masks


def lime_weights(
    words: Sequence[str],
    predict_positive: Callable[[list[str]], np.ndarray],
    n_samples: int,
    seed: int,
    kernel_width: float = 25.0,
) -> tuple[list[tuple[str, float]], float]:
    """(word, weight) for every distinct word of ``words`` (a tokenised text), largest |weight|
    first, and the model's positive-class probability for the text itself. ``predict_positive``
    maps texts (words joined by spaces) to positive-class probabilities."""
    from sklearn.linear_model import Ridge

    distinct = list(dict.fromkeys(words))
    position = {w: i for i, w in enumerate(distinct)}
    ids = np.array([position[w] for w in words])
    masks = perturbation_masks(len(distinct), n_samples, np.random.default_rng(seed))
    texts = [" ".join(words[j] for j in range(len(words)) if mask[ids[j]]) for mask in masks]
    probability = np.asarray(predict_positive(texts), dtype=float)
    kept = masks.sum(axis=1)
    distance = (1 - kept / np.sqrt(kept * len(distinct) + 1e-12)) * 100
    kernel = np.sqrt(np.exp(-(distance**2) / kernel_width**2))
    model = Ridge(alpha=1.0, fit_intercept=True).fit(masks, probability, sample_weight=kernel)
    ranked = sorted(zip(distinct, model.coef_.tolist()), key=lambda item: (-abs(item[1]), item[0]))
    return ranked, float(probability[0])


def pairs_to_explain(
    predictions: pd.DataFrame, *, task: str, learner: str, n_pairs: int
) -> tuple[pd.DataFrame, dict[int, str], int]:
    """Figure 3's pairs: the first test notes (by ROW_ID) whose two copies the original-data model
    predicts differently, then, if too few, other positive notes. Returns the chosen prediction
    rows, why each was chosen, and how many pairs were mismatched."""
    original = predictions[
        (predictions["task"] == task) & (predictions["treatment"] == "original") & (predictions["learner"] == learner)
    ].sort_values("ROW_ID")
    mismatched = original[original["pred_female"] != original["pred_male"]]
    chosen = mismatched.head(n_pairs)
    reason = {int(r): "mismatched under original" for r in chosen["ROW_ID"]}
    if len(chosen) < n_pairs:
        extra = original[(original["label"] == 1) & ~original["ROW_ID"].isin(chosen["ROW_ID"])].head(
            n_pairs - len(chosen)
        )
        reason.update({int(r): "positive note (too few mismatched pairs)" for r in extra["ROW_ID"]})
        chosen = pd.concat([chosen, extra])
    return chosen, reason, len(mismatched)


def explain_pairs(
    chosen: pd.DataFrame,
    reason: dict[int, str],
    texts: pd.Series,
    models: dict,
    featurize,
    *,
    lime: dict,
    seed: int,
    log,
) -> pd.DataFrame:
    """For each chosen pair and each configured treatment's model, the top ``lime['top']`` words by
    LIME weight of the F and the M copy, with the model's probability and prediction. ``texts`` is
    indexed by (ROW_ID, version); ``featurize(texts)`` gives the classifier's input rows. Only single
    words are written."""
    rows = []
    for number, pair in enumerate(chosen.itertuples()):
        female_version = "original" if pair.gender == "F" else "swapped"
        male_version = "swapped" if pair.gender == "F" else "original"
        for treatment in lime["treatments"]:
            classifier = models[(lime["task"], treatment, lime["learner"])]
            for copy, version in (("F", female_version), ("M", male_version)):
                words = texts[(pair.ROW_ID, version)].split()
                ranked, probability = lime_weights(
                    words,
                    lambda batch: classifier.predict_proba(featurize(batch))[:, 1],
                    lime["samples"],
                    seed + number,
                )
                predicted = int(classifier.predict(featurize([" ".join(words)]))[0])
                for rank, (word, weight) in enumerate(ranked[: lime["top"]], start=1):
                    rows.append(
                        {
                            "pair": number + 1,
                            "ROW_ID": int(pair.ROW_ID),
                            "why_chosen": reason[int(pair.ROW_ID)],
                            "label": int(pair.label),
                            "treatment": treatment,
                            "copy": copy,
                            "probability": probability,
                            "predicted": predicted,
                            "rank": rank,
                            "word": word,
                            "weight": weight,
                        }
                    )
                log.info("pair %d %s %s copy: p = %.3f", number + 1, treatment, copy, probability)
    return pd.DataFrame(rows)
