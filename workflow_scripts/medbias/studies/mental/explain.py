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


def perturbation_masks(n_words: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """(n_samples, n_words) 0/1 word-presence matrix: row 0 keeps every word, each other row removes
    a uniformly drawn number (1 .. n_words - 1, or 1 for a one-word text) of uniformly drawn words."""
    masks = np.ones((n_samples, n_words), dtype=np.float64)
    for row in range(1, n_samples):
        k = int(rng.integers(1, max(n_words, 2)))
        masks[row, rng.choice(n_words, size=min(k, n_words), replace=False)] = 0
    return masks


def lime_weights(words: Sequence[str], predict_positive: Callable[[list[str]], np.ndarray], n_samples: int,
                 seed: int, kernel_width: float = 25.0) -> tuple[list[tuple[str, float]], float]:
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
