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


@pytest.mark.parametrize("kind", ["masked", "causal", "seq2seq"])
def test_chunked_loss_is_the_whole_batchs_loss_for_each_kind(kind):
    from medbias.core.lm_training import chunked_loss

    sentences = ["he has chf.", "the straight patient has asthma and copd today.", "pain.", "she reports hiv on art."]
    tokenizer = (
        train_wordpiece(sentences * 5, 80)
        if kind == "masked"
        else train_byte_bpe(sentences * 5, 300, kind == "seq2seq")
    )
    arch = {"masked": "bert", "causal": "gpt2", "seq2seq": "bart"}[kind]
    params = {"bert": {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
                       "max_position_embeddings": 64},
              "gpt2": {"n_embd": 16, "n_layer": 1, "n_head": 2, "n_positions": 64},
              "bart": {"d_model": 16, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 2,
                       "decoder_attention_heads": 2, "encoder_ffn_dim": 32, "decoder_ffn_dim": 32,
                       "max_position_embeddings": 64}}[arch]  # fmt: skip
    batch = training_batch(tokenizer, kind, sentences, np.random.default_rng(2), 64, 0.3)
    assert len(set(batch["attention_mask"].sum(1).tolist())) > 2  # rows of different lengths
    results = []
    for chunks in (1, 3):
        model = build_tiny_model(arch, tokenizer, params, seed=1, masked_only=True)
        model.eval()  # no dropout (BART's is functional), so the two runs are comparable
        loss = chunked_loss(model, batch, kind, chunks)
        loss.backward()
        results.append((loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    (plain, plain_grads), (chunked, chunked_grads) = results
    assert torch.isclose(plain, chunked, atol=1e-5)
    assert plain_grads.keys() == chunked_grads.keys()
    for name, grad in plain_grads.items():
        assert torch.allclose(chunked_grads[name], grad, atol=1e-5), name
