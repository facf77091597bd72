"""Known answers for the projection debiasers (Xie et al. 2024): SentenceDebias and INLP on
constructed data, and the projection applied inside a model as one matrix product."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from medbias.studies.plm.debias import INLP, SentenceDebias, attach_projection, projection_from_basis

REPO = Path(__file__).resolve().parents[2]


def test_projection_is_symmetric_idempotent_and_removes_its_basis():
    rng = np.random.default_rng(0)
    basis = rng.normal(size=(6, 2))
    p = projection_from_basis(basis, 6)
    np.testing.assert_allclose(p, p.T, atol=1e-12)
    np.testing.assert_allclose(p @ p, p, atol=1e-12)
    np.testing.assert_allclose(basis.T @ p, 0, atol=1e-12)
    np.testing.assert_allclose(projection_from_basis(np.zeros((6, 0)), 6), np.eye(6))


def test_sentence_debias_finds_and_removes_the_counterfactual_direction():
    rng = np.random.default_rng(1)
    direction = np.zeros(8)
    direction[3] = 1.0
    content = rng.normal(size=(200, 8))
    first = content + 2.0 * direction + 0.05 * rng.normal(size=(200, 8))
    second = content - 2.0 * direction + 0.05 * rng.normal(size=(200, 8))
    debias = SentenceDebias(k=1).fit(first, second)
    assert abs(debias.basis_[:, 0] @ direction) > 0.99 and debias.explained_variance_ratio_[0] > 0.9
    debiased = debias.transform(np.vstack([first, second]))
    assert np.abs(debiased @ direction).max() < 0.1  # the removed direction has (almost) zero projection
    np.testing.assert_allclose(debias.transform(debiased), debiased, atol=1e-10)
    with pytest.raises(ValueError, match="one shape"):
        SentenceDebias().fit(first, second[:10])


def test_inlp_removes_linear_separability():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 600)
    x = rng.normal(size=(600, 10))
    x[:, 0] += 3.0 * (2 * labels - 1)
    x[:, 1] += 1.0 * (2 * labels - 1)
    inlp = INLP(n_iterations=4).fit(x, labels)
    assert inlp.accuracies_[0] > 0.95
    projected = inlp.transform(x)
    after = LogisticRegression(max_iter=1000).fit(projected, labels).score(projected, labels)
    assert after < 0.6
    np.testing.assert_allclose(inlp.projection_ @ inlp.projection_, inlp.projection_, atol=1e-10)


def test_attached_projection_acts_on_the_hidden_states_and_detaches():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(
        BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16),
        add_pooling_layer=False,
    ).eval()
    ids = torch.tensor([[1, 5, 7, 2]])
    with torch.inference_mode():
        plain = model(input_ids=ids).last_hidden_state
    p = projection_from_basis(np.eye(8)[:, :1], 8)
    handle = attach_projection(model.base_model, p)
    with torch.inference_mode():
        debiased = model(input_ids=ids).last_hidden_state
    torch.testing.assert_close(debiased, plain @ torch.as_tensor(p, dtype=torch.float32))
    assert torch.all(debiased[..., 0].abs() < 1e-6)
    handle.remove()
    with torch.inference_mode():
        torch.testing.assert_close(model(input_ids=ids).last_hidden_state, plain)


def test_cda_swaps_both_ways_whole_words_and_resolves_her_by_the_next_word():
    from medbias.core.augmentation import swap_mapping, two_sided_augmentation
    from medbias.core.errors import MedbiasInputError

    mapping = swap_mapping({"gender": [["he", "she"], ["his", "her"], ["him", "her"]], "race": [["black", "white"]]})
    assert mapping == {
        "he": "she",
        "she": "he",
        "his": "her",
        "her": "his",
        "him": "her",
        "black": "white",
        "white": "black",
    }
    texts = [
        "She gave her the blackboard.",
        "Nothing to swap.",
        "SHE met a White man; she thanked him.",
        "Her chest pain began after her husband told her.",
        "He asked her to sit; her own chart was with her, and his too.",
    ]
    augmented, counts = two_sided_augmentation(texts, mapping)
    assert counts.counterfactuals == 4 and augmented[:5] == texts  # the originals are kept, in order
    assert augmented[5:] == [
        "He gave him the blackboard.",  # object "her" before a determiner
        "HE met a Black man; he thanked her.",
        "His chest pain began after his husband told him.",  # possessive before a noun; object at the end
        "She asked him to sit; his own chart was with him, and her too.",
    ]
    assert counts.swaps == 2 + 3 + 4 + 5 and not counts.kept
    with pytest.raises(MedbiasInputError, match=r"plm.debias.cda.pairs.race': \['black', 'Black'\]"):
        swap_mapping({"race": [["black", "Black"]]})


def test_cda_keeps_medical_and_idiomatic_phrases_and_counts_them():
    from medbias.core.augmentation import read_kept_phrases, swap_mapping, two_sided_augmentation

    kept = read_kept_phrases(REPO / "config" / "resources" / "cda" / "kept_phrases.tsv")
    phrases = {phrase for phrase, _ in kept}
    assert {"white matter", "white blood cells", "straight leg raise", "black stool"} <= phrases
    mapping = swap_mapping({"race": [["black", "white"]], "sexual_orientation": [["gay", "straight"]]})
    texts = [
        "White matter lesions and a raised white blood cell count in a black patient.",
        "Positive straight leg raise; the straight patient and his gay partner.",
        "Black  stool noted.",  # two spaces: still the kept phrase
    ]
    augmented, counts = two_sided_augmentation(texts, mapping, sorted(phrases))
    assert augmented[3:] == [
        "White matter lesions and a raised white blood cell count in a white patient.",
        "Positive straight leg raise; the gay patient and his straight partner.",
    ]  # the third text has no swap outside a kept phrase: no counterfactual
    assert counts.counterfactuals == 2 and counts.swaps == 3
    assert counts.kept == {"white matter": 1, "white blood cell count": 1, "straight leg raise": 1, "black stool": 1}


def test_cda_evaluations_follow_their_model_list():
    from medbias.studies.plm.plan import plm_benchmark_evaluations, plm_evaluations

    registry = {"a": {"kind": "masked"}, "b": {"kind": "causal"}, "c": {"kind": "seq2seq", "loader": "ofa"}}
    plm = {
        "models": ["a", "b", "c"],
        "debias": {
            "methods": ["dropout", "cda", "inlp"],
            "dropout": {"models": ["a"]},
            "cda": {"models": ["b"], "bias_types": ["gender", "race"]},
        },
        "benchmarks": {"self_debias": {"enabled": True}},
    }
    assert plm_evaluations(plm, registry) == [
        ("a", "none"),
        ("a", "dropout"),
        ("a", "inlp"),
        ("b", "none"),
        ("b", "cda_gender"),  # one CDA model per bias type, as bias-bench trains them
        ("b", "cda_race"),
        ("b", "inlp"),
        ("c", "none"),
    ]
    assert plm_benchmark_evaluations(plm, registry)[:2] == [("a", "none"), ("a", "selfdebias")]
    assert ("c", "selfdebias") not in plm_benchmark_evaluations(plm, registry)  # not loadable
