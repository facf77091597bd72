"""The rios study's document-level WEAT null (medbias.studies.rios.analyses.document_null_columns) on
constructed corpora.

Known answers: the p-value by hand; the draws' statistic equals WEAT's own; and on tiny trained
corpora where every article uses one gender's words and one topic's words, a chance imbalance
between male and female articles (12:8 against 8:12, Fisher's exact p = 0.34) makes the classic
permutation test reject (all male words share it) while the document-level null does not, and a
planted association (20:0 against 0:20) gets the document null's smallest p, 1/(K+1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medbias.core.seeds import document_null_seed
from medbias.core.skipgram import train_skipgram
from medbias.metrics.association import weat
from medbias.studies.rios.analyses import document_null_columns, gender_swap_mapping, weat_by_decade, weat_statistics
from medbias.studies.rios.documents import SwappedDocuments, document_swap_flags, pair_mapping

MALE, FEMALE = [f"m{i}" for i in range(6)], [f"f{i}" for i in range(6)]
A, B = [f"a{i}" for i in range(6)], [f"b{i}" for i in range(6)]
FILLER = [f"w{i}" for i in range(30)]
WORDSETS = {
    "attributes": {"male": MALE, "female": FEMALE},
    "weat_tests": {"topic": {"title": "A vs B", "a": A, "b": B}},
}
SETTING = {"negative": 5, "sample": 0.0, "min_count": 1, "alpha": 0.025, "vector_size": 10, "window": 10}
DRAWS = 19


def test_p_document_by_hand():
    table = pd.DataFrame({"decade": ["d1", "d2"], "test": ["t", "t"], "mean_difference": [0.30, -0.05]})
    null = pd.DataFrame(
        {
            "decade": ["d1"] * 4 + ["d2"] * 4,
            "test": "t",
            "mean_difference": [0.1, 0.35, -0.2, np.nan, 0.04, -0.06, 0.01, 0.02],
        }
    )
    greater = document_null_columns(table, null, "greater").set_index("decade")
    # d1: one of 3 finite draws reaches 0.30 -> (1+1)/(3+1); the NaN draw is counted as unscored
    assert greater.loc["d1", ["p_document", "document_draws", "document_draws_unscored"]].tolist() == [0.5, 3, 1]
    assert greater.loc["d1", "md_document_null_mean"] == pytest.approx(np.mean([0.1, 0.35, -0.2]))
    assert greater.loc["d1", "md_document_null_sd"] == pytest.approx(np.std([0.1, 0.35, -0.2], ddof=1))
    assert greater.loc["d2", "p_document"] == pytest.approx((3 + 1) / 5)  # all but -0.06 reach -0.05
    both = document_null_columns(table, null, "two-sided").set_index("decade")
    assert both.loc["d2", "p_document"] == pytest.approx((1 + 1) / 5)  # only |-0.06| >= 0.05


def test_a_sampled_null_is_compared_with_its_own_sample_model_not_replicate_0():
    # d1's draws trained on a sample: draw -1 (the sample's model without swaps, 0.12) is the observed
    # value and no draw of the null; d2 used the whole decade: replicate 0's 0.30 is compared
    table = pd.DataFrame({"decade": ["d1", "d2"], "test": ["t", "t"], "mean_difference": [0.30, 0.30]})
    null = pd.DataFrame(
        {
            "decade": ["d1"] * 4 + ["d2"] * 3,
            "test": "t",
            "draw": [-1, 0, 1, 2, 0, 1, 2],
            "mean_difference": [0.12, 0.1, 0.35, -0.2, 0.1, 0.35, -0.2],
        }
    )
    result = document_null_columns(table, null, "greater").set_index("decade")
    assert result.loc["d1", ["md_document_observed", "p_document", "document_draws"]].tolist() == [0.12, 0.5, 3]
    assert result.loc["d2", ["md_document_observed", "p_document", "document_draws"]].tolist() == [0.30, 0.5, 3]
    assert result.loc["d1", "md_document_null_mean"] == pytest.approx(np.mean([0.1, 0.35, -0.2]))
    null.loc[0, "mean_difference"] = 0.4  # above every draw: the smallest p
    assert document_null_columns(table, null, "greater").set_index("decade").loc["d1", "p_document"] == 0.25


def test_draw_statistics_equal_weat_and_missing_sets_are_nan():
    rng = np.random.default_rng(1)
    vectors = {w: rng.normal(size=8) for w in [*MALE, *FEMALE, *A, *B]}
    stats = weat_statistics(vectors, WORDSETS, 0.5).set_index("test")
    full = weat(vectors, MALE, FEMALE, A, B, rng=np.random.default_rng(0), n_bootstrap=0)
    assert stats.loc["topic", "mean_difference"] == pytest.approx(full.mean_difference)
    assert stats.loc["topic", "effect_size"] == pytest.approx(full.effect_size)
    sparse = {w: v for w, v in vectors.items() if w not in A[:4]}  # 2 of 6 A words left: below 0.5
    assert weat_statistics(sparse, WORDSETS, 0.5)["mean_difference"].isna().all()
    no_male = {w: v for w, v in vectors.items() if w not in MALE}
    assert weat_statistics(no_male, WORDSETS, 0.5)[["test", "mean_difference"]].to_dict("list") == {
        "test": ["topic"],
        "mean_difference": [pytest.approx(np.nan, nan_ok=True)],
    }


def test_gender_swap_mapping_pairs_the_word_set_files_lists_by_position():
    wordsets = {"attributes": {"male": ["He", "man"], "female": ["she", "Woman"]}}
    assert gender_swap_mapping(wordsets) == {"he": "she", "man": "woman", "she": "he", "woman": "man"}


def _corpus(cells: dict[tuple[str, str], int], rng: np.random.Generator, length: int = 30) -> list[list[str]]:
    """Articles of one gender's words and one topic's words each, ``cells`` = (gender, topic) -> articles."""
    documents = []
    for (gender, topic), n in cells.items():
        for _ in range(n):
            tokens = [
                *rng.choice(MALE if gender == "m" else FEMALE, 6),
                *rng.choice(A if topic == "a" else B, 6),
                *rng.choice(FILLER, length - 12),
            ]
            rng.shuffle(tokens)
            documents.append(tokens)
    return [documents[i] for i in rng.permutation(len(documents))]


def _document_null(cells: dict[tuple[str, str], int]) -> pd.Series:
    documents = _corpus(cells, np.random.default_rng(0))
    observed = train_skipgram(documents, SETTING, 10, 0, 1)
    table, _, _ = weat_by_decade(
        {"d": [observed]}, WORDSETS, seed=0, budget=100_000, alternative="greater", n_bootstrap=0, min_fraction=0.5
    )
    mapping, frames = pair_mapping(MALE, FEMALE), []
    for draw in range(DRAWS):
        seed = document_null_seed(0, draw)
        flags = document_swap_flags(len(documents), np.random.default_rng(seed))
        vectors = train_skipgram(SwappedDocuments(documents, mapping, flags), SETTING, 10, seed, 1)
        frames.append(weat_statistics(vectors, WORDSETS, 0.5).assign(decade="d", draw=draw))
    return document_null_columns(table, pd.concat(frames), "greater").iloc[0]


def test_chance_imbalance_fools_the_permutation_test_not_the_document_null():
    row = _document_null({("m", "a"): 12, ("m", "b"): 8, ("f", "a"): 8, ("f", "b"): 12})
    assert row["p_value"] < 0.01  # the classic test: the 12 gender words move together
    assert row["p_document"] >= 0.1 and row["document_draws"] == DRAWS
    assert abs(row["md_document_null_mean"]) < row["md_document_null_sd"]  # the null is centred on 0


def test_planted_association_gets_the_smallest_document_p():
    row = _document_null({("m", "a"): 20, ("f", "b"): 20})
    assert row["p_document"] == pytest.approx(1 / (DRAWS + 1))
    assert row["mean_difference"] > 2 * row["md_document_null_sd"]


def test_document_null_draws_on_a_sample_record_the_samples_own_model_as_draw_minus_1():
    import logging

    from medbias.studies.rios.documents import SelectedDocuments, sample_documents
    from medbias.studies.rios.skipgram import DOCUMENT_NULL_COLUMNS, document_null_draws, scale_min_count

    documents = _corpus({("m", "a"): 20, ("f", "b"): 20}, np.random.default_rng(0))  # 40 articles of 30 tokens
    run = dict(decade="d", draws=2, epochs=3, seed=5, workers=1, min_fraction=0.5, log=logging.getLogger("test"))
    whole = document_null_draws(documents, WORDSETS, SETTING, sample_tokens=0, **run)
    assert list(whole.columns) == DOCUMENT_NULL_COLUMNS and sorted(whole["draw"].unique()) == [0, 1]
    assert (whole["documents"] == 40).all() and (whole["decade_documents"] == 40).all()
    setting = {**SETTING, "min_count": 10}
    sampled = document_null_draws(documents, WORDSETS, setting, sample_tokens=600, **run)
    assert sorted(sampled["draw"].unique()) == [-1, 0, 1]
    assert (sampled["documents"] == 20).all() and (sampled["decade_documents"] == 40).all()
    assert (sampled["min_count"] == 5).all()  # 10 x 600/1200 tokens
    own = sampled[sampled["draw"] == -1]
    assert (own["swapped_documents"] == 0).all() and (sampled.loc[sampled["draw"] >= 0, "swapped_documents"] > 0).all()
    # draw -1 is the setting trained on the sample (drawn under the rule's seed) without swaps, under that seed
    sample = sample_documents(documents, 600, 5)
    expected = weat_statistics(
        train_skipgram(SelectedDocuments(documents, sample.keep), scale_min_count(setting, sample.fraction), 3, 5, 1),
        WORDSETS,
        0.5,
    )
    assert own["mean_difference"].tolist() == pytest.approx(expected["mean_difference"].tolist())
