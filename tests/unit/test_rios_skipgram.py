"""The rios study's affordable search (medbias.studies.rios.skipgram): token-capped document samples,
min_count scaled to a sample, the chosen setting trained on the whole decade, and seed replicates of
replicate 0's choice."""

from __future__ import annotations

import numpy as np
import pytest

from medbias.io.pubmed import tokenize
from medbias.studies.rios.documents import SelectedDocuments, sample_documents
from medbias.studies.rios.skipgram import (
    chosen_setting,
    retrain_chosen,
    scale_min_count,
    search_decade,
    search_skipgram,
)

SETTING = {"negative": 5, "sample": 0.0, "min_count": 1, "alpha": 0.025, "vector_size": 10, "window": 2}
PAIRS = [("alpha", "beta", 1500.0), ("gamma", "delta", 1400.0), ("alpha", "gamma", 100.0), ("beta", "delta", 50.0)]


def _corpus(n: int = 400) -> list[list[str]]:
    rng = np.random.default_rng(0)
    half = [["alpha", "beta", *rng.choice(["x", "y", "z", "w"], 6)] for _ in range(n // 2)]
    return half + [["gamma", "delta", *rng.choice(["x", "y", "z", "w"], 6)] for _ in range(n // 2)]


def test_sample_documents_caps_the_tokens_and_is_seeded():
    documents = [["w"] * length for length in (3, 5, 2, 7, 4, 1, 6)]  # 28 tokens
    whole = sample_documents(documents, 28, seed=1)
    assert whole.whole and whole.fraction == 1.0 and whole.of(documents) is documents
    assert sample_documents(documents, 0, seed=1).whole  # 0: never sampled
    sample = sample_documents(documents, 10, seed=1)
    order = np.random.default_rng(1).permutation(7)  # the documents taken: a prefix of this order
    lengths = np.array([3, 5, 2, 7, 4, 1, 6])
    taken = order[np.cumsum(lengths[order]) <= 10]
    assert sorted(np.flatnonzero(sample.keep)) == sorted(taken)
    assert sample.tokens == lengths[taken].sum() <= 10 and sample.total_tokens == 28
    assert sample.fraction == pytest.approx(sample.tokens / 28)
    assert (sample_documents(documents, 10, seed=1).keep == sample.keep).all()
    assert sample.summary() == {
        "documents": len(taken),
        "total_documents": 7,
        "tokens": int(lengths[taken].sum()),
        "total_tokens": 28,
        "token_fraction": round(sample.fraction, 6),
    }
    tiny = sample_documents(documents, 1, seed=3)  # even a cap below every long document keeps one document
    assert tiny.keep.sum() >= 1


def test_selected_documents_keep_corpus_order_on_every_pass_and_check_the_flags():
    documents = [["a"], ["b"], ["c"], ["d"]]
    selected = SelectedDocuments(documents, np.array([True, False, True, True]))
    assert list(selected) == [["a"], ["c"], ["d"]] == list(selected)
    with pytest.raises(ValueError):
        list(SelectedDocuments(documents, np.array([True, False])))


@pytest.mark.parametrize(
    ("count", "fraction", "expected"),
    [
        (5, 1.0, 5),
        (5, 0.1, 1),
        (1200, 0.01, 12),
        (2400, 0.005, 12),
        (0, 0.01, 0),
        (15, 0.1, 2),
        (10, 0.04, 1),
    ],
)
def test_min_count_scales_with_the_sample(count, fraction, expected):
    assert scale_min_count({**SETTING, "min_count": count}, fraction) == {**SETTING, "min_count": expected}


def test_search_on_the_whole_decade_returns_the_best_candidate_itself():
    corpus = _corpus()
    vectors, record = search_decade(
        corpus,
        PAIRS,
        tokenize,
        defaults=SETTING,
        grid={"window": [1, 4]},
        strategy="one_at_a_time",
        epochs=5,
        seed=1,
        workers=1,
        search_tokens=0,
    )
    reference, scores, best = search_skipgram(
        corpus, SETTING, {"window": [1, 4]}, "one_at_a_time", 5, 1, 1, PAIRS, tokenize
    )
    assert record["candidates"] == scores and record["best_candidate"] == best
    assert np.array_equal(vectors.vectors, reference.vectors)
    assert record["search_sample"]["token_fraction"] == 1.0 and record["final"]["rho"] == scores[best]["rho"]
    assert all(s["trained_min_count"] == s["min_count"] for s in scores)


def test_search_on_a_sample_trains_the_chosen_setting_on_the_whole_decade():
    corpus = _corpus()
    rare = [["zeta", "eta", "x", "y"] for _ in range(3)]  # a word seen 3 times: kept at min_count 2, not in a sample
    corpus = corpus[:200] + rare + corpus[200:]
    grid = {"window": [1], "min_count": [2]}
    vectors, record = search_decade(
        corpus,
        PAIRS,
        tokenize,
        defaults=SETTING,
        grid=grid,
        strategy="one_at_a_time",
        epochs=5,
        seed=1,
        workers=1,
        search_tokens=800,
    )
    sample = record["search_sample"]
    assert sample["tokens"] <= 800 < sample["total_tokens"] == 3212
    fraction = sample["tokens"] / sample["total_tokens"]
    by_count = {s["min_count"]: s for s in record["candidates"] if s["window"] == 2}
    assert by_count[2]["trained_min_count"] == max(1, round(2 * fraction)) == 1
    kept = sample_documents(corpus, 800, seed=1).keep  # the search's own sample (drawn under the search's seed)
    rare_in_sample = int(kept[200:203].sum())
    for candidate in record["candidates"]:  # each candidate trained on the sample, at its scaled min_count
        rare_kept = rare_in_sample >= max(1, candidate["trained_min_count"])
        assert candidate["vocabulary"] == 8 + 2 * rare_kept
    chosen = chosen_setting(record)
    assert chosen == {
        **SETTING,
        **{k: v for k, v in record["candidates"][record["best_candidate"]].items() if k in SETTING},
    }
    assert chosen["min_count"] in (1, 2)  # the decade's units, never the sample's
    assert ("zeta" in vectors) == (chosen["min_count"] <= 3)
    assert record["final"]["trained_on"].startswith("the whole decade (the chosen setting")
    assert record["final"]["vocabulary"] == len(vectors)


def test_replicates_retrain_replicate_0s_choice_under_their_own_seed():
    corpus = _corpus()
    first, record = search_decade(
        corpus,
        PAIRS,
        tokenize,
        defaults=SETTING,
        grid={"window": [4]},
        strategy="one_at_a_time",
        epochs=5,
        seed=1,
        workers=1,
        search_tokens=0,
    )
    again, same = retrain_chosen(corpus, record, PAIRS, tokenize, epochs=5, seed=1, workers=1)
    other, replicate = retrain_chosen(corpus, record, PAIRS, tokenize, epochs=5, seed=2, workers=1)
    assert replicate["setting"] == chosen_setting(record)
    assert np.array_equal(again.vectors, first.vectors)  # replicate 0's seed: replicate 0's model
    assert not np.array_equal(other.vectors, first.vectors)
    assert replicate["final"]["pairs_used"] == 4 and set(other.index_to_key) == set(first.index_to_key)
