"""Known answers for sentence likelihoods (Xie et al. 2024, section 3.2): the batched
pseudo-log-likelihood equals the one-masked-copy-at-a-time computation, the causal score equals a
manual sum after BOS, the seq2seq score equals the model's own loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from likelihood_reference import pseudo_log_likelihood_one_at_a_time, tiny_masked_model

from medbias.core.sentence_likelihood import (
    causal_log_likelihood,
    masked_copies,
    pseudo_log_likelihood,
    sentence_log_likelihood,
    seq2seq_log_likelihood,
)
from medbias.synth.tiny_models import train_byte_bpe, train_wordpiece

TEXTS = [
    "the gay patient needs treatment for hiv",
    "the black patient has sickle cell disease",
    "this person has a birthday in may",
    "the patient needs treatment for pneumonia today",
]
SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


@pytest.fixture(scope="module")
def bert():
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = train_wordpiece(TEXTS * 10, 150)
    torch.manual_seed(0)
    return BertForMaskedLM(BertConfig(vocab_size=len(tokenizer), **SMALL)).eval(), tokenizer


def test_masked_copies_mask_each_scoreable_token_once():
    copies, owner, position, target = masked_copies([[101, 7, 8, 102], [101, 9, 102]], {101, 102}, 103)
    assert copies == [[101, 103, 8, 102], [101, 7, 103, 102], [101, 103, 102]]
    assert owner.tolist() == [0, 0, 1] and position.tolist() == [1, 2, 1] and target.tolist() == [7, 8, 9]


def test_batched_pll_equals_one_copy_at_a_time(bert):
    model, tokenizer = bert
    batched, tokens = pseudo_log_likelihood(model, tokenizer, TEXTS, batch_size=5)
    for i, text in enumerate(TEXTS):
        assert batched[i] == pytest.approx(pseudo_log_likelihood_one_at_a_time(model, tokenizer, text), abs=1e-4)
        assert tokens[i] == len(tokenizer(text)["input_ids"]) - 2
    assert (batched < 0).all()


def test_causal_score_is_the_sum_after_bos():
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = train_byte_bpe(TEXTS * 10, 300, add_bos_eos=False)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(tokenizer),
            n_embd=32,
            n_layer=2,
            n_head=2,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    ).eval()
    scores, tokens = causal_log_likelihood(model, tokenizer, TEXTS, batch_size=3)
    for i, text in enumerate(TEXTS):
        ids = [tokenizer.bos_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]
        manual = 0.0
        with torch.inference_mode():
            log_probs = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], dim=-1)
        for t in range(1, len(ids)):
            manual += float(log_probs[t - 1, ids[t]])
        assert scores[i] == pytest.approx(manual, abs=1e-4) and tokens[i] == len(ids) - 1
    assert sentence_log_likelihood(model, tokenizer, "causal", TEXTS[:1])[0][0] == pytest.approx(scores[0], abs=1e-5)


def test_seq2seq_score_is_minus_the_models_summed_loss():
    from transformers import BartConfig, BartForConditionalGeneration

    tokenizer = train_byte_bpe(TEXTS * 10, 300, add_bos_eos=True)
    torch.manual_seed(0)
    model = BartForConditionalGeneration(
        BartConfig(
            vocab_size=len(tokenizer),
            d_model=32,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            decoder_start_token_id=tokenizer.eos_token_id,
        )
    ).eval()
    scores, tokens = seq2seq_log_likelihood(model, tokenizer, TEXTS, batch_size=3)
    for i, text in enumerate(TEXTS):
        ids = torch.tensor([tokenizer(text)["input_ids"]])
        with torch.inference_mode():
            loss = model(input_ids=ids, labels=ids).loss  # mean over the label tokens
        assert scores[i] == pytest.approx(-float(loss) * ids.shape[1], abs=1e-3) and tokens[i] == ids.shape[1]


def test_unknown_kind_is_one_clear_error(bert):
    with pytest.raises(ValueError, match="unknown model kind 'encoder'"):
        sentence_log_likelihood(*bert, "encoder", TEXTS)


def test_stereotype_scores_by_hand():
    from medbias.metrics.stereoset_style import stereotype_scores

    stereo = np.array([-1.0, -2.0, -3.0, -4.0, -5.0])
    anti = np.array([-2.0, -1.0, -4.0, -4.0, -6.0])  # stereotypical wins 3, loses 1, ties 1
    unrelated = np.array([-9.0, -1.5, -9.0, -4.0, -9.0])
    score = stereotype_scores(stereo, anti, unrelated)
    assert score.ties == 1 and score.ss == pytest.approx(75.0)
    # meaningful vs unrelated: stereo wins 3 and ties 1 (3.5), anti wins 4 and ties 1 (4.5)
    assert score.lms == pytest.approx(100 * (3.5 + 4.5) / 10)
    assert score.icat == pytest.approx(score.lms * 25 / 50)
    assert stereotype_scores(stereo, anti, ties_as_half=True).ss == pytest.approx(100 * 3.5 / 5)
    assert stereotype_scores(stereo, stereo).ss != stereotype_scores(stereo, stereo).ss  # all tied: undefined


@pytest.mark.parametrize(
    "architecture", ["bert", "roberta", "albert", "distilbert", "electra", "electra_same_sizes", "deberta_v2"]
)
def test_batched_pll_equals_one_copy_at_a_time_for_every_masked_architecture(architecture):
    tokenizer = train_wordpiece(TEXTS * 10, 150)
    model = tiny_masked_model(architecture, len(tokenizer))
    batched, _ = pseudo_log_likelihood(model, tokenizer, TEXTS, batch_size=4)
    for i, text in enumerate(TEXTS):
        assert batched[i] == pytest.approx(pseudo_log_likelihood_one_at_a_time(model, tokenizer, text), abs=1e-4), i
