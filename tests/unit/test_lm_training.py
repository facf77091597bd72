"""Language-model training batches per kind, and the training loop's determinism and learning."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from medbias.core.errors import MedbiasInputError
from medbias.core.lm_training import dropout_overrides, mask_tokens, train_language_model, training_batch
from medbias.synth.tiny_models import build_tiny_model, train_byte_bpe, train_wordpiece

SENTENCES = ["the gay patient has hiv.", "the straight patient has asthma.", "this person has stroke."] * 20


def test_masking_picks_only_maskable_positions_and_at_least_one_per_row():
    ids = np.arange(12).reshape(3, 4)
    maskable = np.array([[False, True, True, False], [False, True, False, False], [False] * 4])
    chosen = mask_tokens(ids, maskable, 0.0, np.random.default_rng(0))
    assert chosen[0].sum() == 1 and chosen[1].tolist() == [False, True, False, False] and not chosen[2].any()
    assert not (chosen & ~maskable).any()


@pytest.mark.parametrize("kind", ["masked", "causal", "seq2seq"])
def test_batches_follow_each_kinds_objective(kind):
    tokenizer = (
        train_wordpiece(SENTENCES, 80) if kind == "masked" else train_byte_bpe(SENTENCES, 300, kind == "seq2seq")
    )
    batch = training_batch(tokenizer, kind, SENTENCES[:3], np.random.default_rng(0), 32, 0.3)
    ids, labels = batch["input_ids"].numpy(), batch["labels"].numpy()
    real = batch["attention_mask"].numpy() == 1
    if kind == "causal":  # BOS in front (the scorer conditions on it), every real token a label
        assert (ids[:, 0] == tokenizer.bos_token_id).all()
        assert (labels[real] == ids[real]).all() and (labels[~real] == -100).all()
        return
    original = tokenizer(SENTENCES[:3], padding=True, return_tensors="np")["input_ids"]
    masked = ids == tokenizer.mask_token_id
    if kind == "masked":  # loss on the chosen positions (masked, swapped or kept), on the original token
        chosen = labels != -100
        assert chosen.any(axis=1).all() and not (masked & ~chosen).any()
        assert (labels[chosen] == original[chosen]).all() and (ids[~chosen] == original[~chosen]).all()
    else:  # denoising: the decoder reads back the whole original sentence
        assert masked.any(axis=1).all()
        assert (labels[real] == original[real]).all()


def test_bert_corruption_masks_80_swaps_10_keeps_10_percent():
    from medbias.core.lm_training import bert_corruption

    tokenizer = train_wordpiece(SENTENCES, 80)
    rng = np.random.default_rng(0)
    ids = rng.integers(5, len(tokenizer), size=(200, 100))
    chosen = rng.random(ids.shape) < 0.5
    corrupted = bert_corruption(ids, chosen, tokenizer, rng)
    assert (corrupted[~chosen] == ids[~chosen]).all()
    n = chosen.sum()
    masked = (corrupted == tokenizer.mask_token_id) & chosen
    assert abs(masked.sum() / n - 0.8) < 0.01
    changed = chosen & ~masked & (corrupted != ids)
    assert not np.isin(corrupted[changed], tokenizer.all_special_ids).any()
    # swaps are 10%, less the 1/|vocab| of them that draw the same token again
    assert abs(changed.sum() / n - 0.1) < 0.01


def test_training_is_deterministic_and_learns():
    tokenizer = train_wordpiece(SENTENCES, 80)
    params = {
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 32,
    }
    runs = []
    for _ in range(2):
        model = build_tiny_model("bert", tokenizer, params, seed=3, masked_only=True)
        losses = train_language_model(
            model, tokenizer, "masked", SENTENCES, steps=60, batch_size=8, learning_rate=1e-2, seed=5
        )
        runs.append((losses, next(model.parameters()).detach().clone()))
    assert runs[0][0] == runs[1][0] and torch.equal(runs[0][1], runs[1][1])
    assert np.mean(runs[0][0][-10:]) < np.mean(runs[0][0][:10]) - 0.5


def test_dropout_overrides_name_the_architectures_keys():
    from transformers import BartConfig, BertConfig, GPT2Config

    assert dropout_overrides(BertConfig(), 0.2) == {"hidden_dropout_prob": 0.2}
    assert dropout_overrides(GPT2Config(), 0.2) == {"resid_pdrop": 0.2, "embd_pdrop": 0.2}
    assert dropout_overrides(BartConfig(), 0.2) == {"dropout": 0.2}

    class Other:
        model_type = "mystery"

    with pytest.raises(MedbiasInputError, match="model type 'mystery'"):
        dropout_overrides(Other(), 0.1)


def test_length_grouped_order_keeps_each_row_once_and_batches_rows_of_similar_length():
    from medbias.core.batching import length_grouped_order

    lengths = np.array([5, 1, 9, 3, 7, 2, 8, 4, 6, 10, 11])  # row i has length lengths[i]
    order = np.arange(11)
    # batches of 2 in runs of 2 batches: rows 0-3 sorted by length -> 1, 3, 0, 2; rows 4-7 -> 5, 7, 4, 6;
    # rows 8-9 (one batch, the last run) -> 8, 9; row 10 (no whole batch) stays last
    identity = np.random.default_rng(0)
    grouped = length_grouped_order(order, lengths, 2, 2, identity)
    batches = [tuple(grouped[k : k + 2]) for k in range(0, 10, 2)]
    assert sorted(batches) == sorted([(1, 3), (0, 2), (5, 7), (4, 6), (8, 9)]) and grouped[-1] == 10
    assert sorted(grouped.tolist()) == list(range(11))
    assert np.array_equal(length_grouped_order(order, lengths, 2, 1, identity), order)  # 1: unchanged

    rng = np.random.default_rng(4)
    many = rng.integers(5, 120, size=6400)
    permuted = rng.permutation(6400)
    padded = lambda o: np.mean([many[o[k : k + 64]].max() for k in range(0, 6400, 64)])  # noqa: E731
    grouped = length_grouped_order(permuted, many, 64, 50, rng)
    assert padded(grouped) < many.mean() + 5 < padded(permuted) - 40  # random batches pad to near the longest


def test_training_with_length_grouped_batches_is_deterministic_and_learns():
    tokenizer = train_wordpiece(SENTENCES, 80)
    params = {
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 32,
    }
    runs = []
    for group_batches in (4, 4, 1):
        model = build_tiny_model("bert", tokenizer, params, seed=3, masked_only=True)
        losses = train_language_model(
            model,
            tokenizer,
            "masked",
            SENTENCES,
            steps=60,
            batch_size=8,
            learning_rate=1e-2,
            seed=5,
            group_batches=group_batches,
        )
        runs.append(losses)
    assert runs[0] == runs[1] and runs[0] != runs[2]
    assert np.mean(runs[0][-10:]) < np.mean(runs[0][:10]) - 0.5
