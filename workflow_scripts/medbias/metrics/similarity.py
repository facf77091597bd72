"""Word-similarity evaluation of word vectors against human ratings (UMNSRS "UMLS-Sim" in Rios et al.
2020, Table 3): Spearman's rho between cosine similarity and the ratings over the pairs in the
vocabulary, multi-word terms averaged over their tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import spearmanr


@dataclass(frozen=True)
class SimilarityEvaluation:
    rho: float
    pairs_used: int
    pairs_total: int
    multiword_pairs_used: int


def term_vector(vectors, term: str, tokenize, lookup=None) -> np.ndarray | None:
    """A term's vector: its single token's, or the mean of its tokens' vectors for a multi-word
    term; None when any token is out of vocabulary. ``lookup(token)`` (vector or None) replaces the
    exact lookup in ``vectors`` (e.g. a lower-case fallback)."""
    tokens = tokenize(term)
    found = [lookup(t) if lookup is not None else (vectors[t] if t in vectors else None) for t in tokens]
    if not tokens or any(v is None for v in found):
        return None
    return np.mean(found, axis=0)


def similarity_spearman(vectors, pairs: Sequence[tuple[str, str, float]], tokenize) -> SimilarityEvaluation:
    """Spearman's rho between cosine similarity and human ratings over the pairs whose terms are
    in the vocabulary (UMNSRS "UMLS-Sim" in Rios et al. Table 3); multi-word terms are averaged."""
    cosines, ratings, multi = [], [], 0
    for a, b, rating in pairs:
        va, vb = term_vector(vectors, a, tokenize), term_vector(vectors, b, tokenize)
        if va is None or vb is None:
            continue
        denom = np.linalg.norm(va) * np.linalg.norm(vb)
        cosines.append(float(va @ vb / denom) if denom else 0.0)
        ratings.append(rating)
        multi += len(tokenize(a)) > 1 or len(tokenize(b)) > 1
    rho = float(spearmanr(cosines, ratings).statistic) if len(cosines) >= 3 else float("nan")
    return SimilarityEvaluation(rho, len(cosines), len(pairs), multi)


SIMILARITY_KEYS: tuple[str, ...] = ("rho", "pairs_used", "multiword_pairs_used", "vocabulary")


def similarity_record(vectors, pairs: Sequence[tuple[str, str, float]], tokenize) -> dict[str, Any]:
    """One model's UMNSRS similarity as a search records it (``SIMILARITY_KEYS``): Spearman's rho
    (``similarity_spearman``), the pairs and multi-word pairs used, and the vocabulary's size."""
    evaluation = similarity_spearman(vectors, pairs, tokenize)
    return dict(
        zip(SIMILARITY_KEYS, (evaluation.rho, evaluation.pairs_used, evaluation.multiword_pairs_used, len(vectors)))
    )
