"""Model search and UMNSRS scoring on constructed vectors."""

from __future__ import annotations

import numpy as np
import pytest

from medbias.core.errors import MedbiasInputError
from medbias.io.pubmed import tokenize
from medbias.metrics.similarity import similarity_spearman
from medbias.studies.rios.documents import SwappedDocuments, document_swap_flags, pair_mapping
from medbias.studies.rios.skipgram import candidate_settings, search_skipgram

DEFAULTS = {"negative": 5, "window": 5}


def test_one_at_a_time_and_grid():
    grid = {"negative": [5, 10], "window": [2, 8]}
    assert candidate_settings(DEFAULTS, grid, "one_at_a_time") == [
        {"negative": 5, "window": 5},
        {"negative": 10, "window": 5},
        {"negative": 5, "window": 2},
        {"negative": 5, "window": 8},
    ]
    assert len(candidate_settings(DEFAULTS, grid, "grid")) == 4
    with pytest.raises(ValueError):
        candidate_settings(DEFAULTS, grid, "random")


def test_similarity_spearman_known_answer_and_multiword():
    angle = {"a": 0.0, "b": 0.1, "c": 0.5, "d": 1.4, "heart": 0.02, "attack": 0.08}
    vectors = {w: np.array([np.cos(t), np.sin(t)]) for w, t in angle.items()}
    # ratings fall as the angle between the terms grows: perfect rank agreement
    pairs = [("a", "b", 1500.0), ("a", "c", 900.0), ("a", "d", 100.0), ("a", "Heart attack", 1600.0), ("a", "zzz", 5.0)]
    result = similarity_spearman(vectors, pairs, tokenize)
    assert result.rho == pytest.approx(1.0)
    assert (result.pairs_used, result.pairs_total, result.multiword_pairs_used) == (4, 5, 1)


def test_search_keeps_the_best_candidate():
    rng = np.random.default_rng(0)
    sentences = [["alpha", "beta"] + list(rng.choice(["x", "y", "z", "w"], 6)) for _ in range(200)]
    sentences += [["gamma", "delta"] + list(rng.choice(["x", "y", "z", "w"], 6)) for _ in range(200)]
    pairs = [("alpha", "beta", 1500.0), ("gamma", "delta", 1400.0), ("alpha", "gamma", 100.0), ("beta", "delta", 50.0)]
    vectors, scores, best = search_skipgram(
        sentences,
        {"negative": 5, "sample": 0.0, "min_count": 1, "alpha": 0.025, "vector_size": 10, "window": 2},
        {"window": [1, 4]},
        "one_at_a_time",
        5,
        1,
        1,
        pairs,
        tokenize,
    )
    assert len(scores) == 3 and best == int(np.nanargmax([s["rho"] for s in scores]))
    assert scores[best]["pairs_used"] == 4 and len(vectors) == 8


def test_pair_mapping_swaps_both_ways_and_names_bad_lists():
    assert pair_mapping(["he", "man"], ["she", "woman"]) == {"he": "she", "man": "woman", "she": "he", "woman": "man"}
    with pytest.raises(MedbiasInputError, match="'male' has 2 words and 'female' 1"):
        pair_mapping(["he", "man"], ["she"], ("male", "female"))
    with pytest.raises(MedbiasInputError, match="he occur"):
        pair_mapping(["he", "man"], ["she", "he"])


def test_swapped_documents_swap_the_flagged_documents_on_every_pass():
    documents = [["he", "is", "a", "man"], ["she", "saw", "him"], ["nothing", "here"]]
    swapped = SwappedDocuments(
        documents, pair_mapping(["he", "man", "him"], ["she", "woman", "her"]), np.array([True, False, True])
    )
    expected = [["she", "is", "a", "woman"], ["she", "saw", "him"], ["nothing", "here"]]
    assert list(swapped) == expected and list(swapped) == expected  # restartable: gensim makes several passes
    assert documents[0] == ["he", "is", "a", "man"]  # the source is left as it was
    assert sum(1 for _ in swapped) == 3
    with pytest.raises(ValueError, match="2 documents for 3 swap flags"):
        list(SwappedDocuments(documents[:2], {}, np.ones(3, dtype=bool)))
    with pytest.raises(ValueError, match="more documents than the 2 swap flags"):
        list(SwappedDocuments(documents, {}, np.ones(2, dtype=bool)))
    flags = document_swap_flags(10_000, np.random.default_rng(0))
    assert flags.dtype == bool and abs(flags.mean() - 0.5) < 0.02
