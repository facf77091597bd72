"""Log-probability bias score: a stub model with known probabilities, word-piece positions on a real
tiny BERT, batching equal to one-at-a-time, and the template file's fixes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import REPO

from medbias.core.errors import MedbiasInputError
from medbias.io.resources import read_attributes, read_templates
from medbias.metrics.logprob import build_items, log_probability_scores, mask_log_probs, target_token_ids
from medbias.synth.tiny_models import build_tiny_model, train_wordpiece

CORPUS = [
    "he has hypertension and copd",
    "she has a hx of heart failure",
    "he is prescribed morphine",
    "this is a 45 yo man with a pmh of diabetes",
    "she is given aspirin",
] * 40


@pytest.fixture(scope="module")
def tokenizer():
    return train_wordpiece(CORPUS, 120)


class StubLM(torch.nn.Module):
    """Logits at every position: ``base``, plus ``bonus`` when the token ``trigger`` is in the sentence."""

    def __init__(self, vocab: int, trigger: int):
        super().__init__()
        generator = torch.Generator().manual_seed(0)
        self.base = torch.nn.Parameter(torch.randn(vocab, generator=generator))
        self.bonus = torch.randn(vocab, generator=generator)
        self.trigger = trigger

    def forward(self, input_ids, **_):
        present = (input_ids == self.trigger).any(dim=1, keepdim=True).float()
        logits = self.base + present[..., None] * self.bonus
        return type("Out", (), {"logits": logits.expand(*input_ids.shape, -1)})()


def test_scores_equal_hand_computed_log_ratio(tokenizer):
    trigger = tokenizer("hypertension", add_special_tokens=False)["input_ids"][0]
    model = StubLM(len(tokenizer), trigger)
    items = build_items([("[GEND] has [HTN]", "HTN")], [("hypertension", "HTN")], tokenizer)
    targets, rejected = target_token_ids(tokenizer, ["he", "she", "nonexistentword"])
    assert rejected == ["nonexistentword"]
    scores = log_probability_scores(model, tokenizer, items, targets)
    with torch.no_grad():
        with_attr = torch.log_softmax(model.base + model.bonus, -1)
        without = torch.log_softmax(model.base, -1)
    expected = [(with_attr[i] - without[i]).item() for i in targets.values()]
    assert scores[0] == pytest.approx(expected, abs=1e-6)


def test_prior_masks_one_token_per_word_piece(tokenizer):
    pieces = tokenizer.tokenize("cardiomyopathy")
    assert len(pieces) > 1
    item = build_items([("[GEND] has a hx of [CVD]", "CVD")], [("cardiomyopathy", "CVD")], tokenizer)[0]
    assert item.prior_sentence.count(tokenizer.mask_token) == 1 + len(pieces)
    assert item.target_sentence.startswith(tokenizer.mask_token) and item.target_char == 0


def test_target_slot_found_on_word_pieces_after_split_words(tokenizer):
    # a multi-piece word BEFORE the target slot shifts whitespace positions but not piece offsets
    item = build_items([("cardiomyopathy pt [GEND] has [HTN]", "HTN")], [("hypertension", "HTN")], tokenizer)[0]
    trigger = tokenizer("hypertension", add_special_tokens=False)["input_ids"][0]
    model = StubLM(len(tokenizer), trigger)
    ids = [tokenizer.convert_tokens_to_ids("he")]
    got = mask_log_probs(model, tokenizer, [item.target_sentence], [item.target_char], ids)
    enc = tokenizer(item.target_sentence)
    assert enc["input_ids"].count(tokenizer.mask_token_id) == 1
    assert np.isfinite(got).all()


def test_bad_templates_are_reported(tokenizer):
    with pytest.raises(MedbiasInputError, match="needs both"):
        build_items([("this is a 82 yo", "CVD")], [("cad", "CVD")], tokenizer)
    with pytest.raises(MedbiasInputError, match="must come before"):
        build_items([("[HTN] in [GEND]", "HTN")], [("htn", "HTN")], tokenizer)


def test_batched_equals_one_at_a_time_and_head_shortcut_equals_full_logits(tokenizer):
    model = build_tiny_model(
        "bert",
        tokenizer,
        dict(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64
        ),
        seed=3,
    ).eval()
    templates = [("[GEND] has a hx of [CVD]", "CVD"), ("this is a 45 yo [GEND] with a pmh of [CVD]", "CVD")]
    attributes = [("heart failure", "CVD"), ("cardiomyopathy", "CVD"), ("chf", "CVD")]
    items = build_items(templates, attributes, tokenizer)
    targets, _ = target_token_ids(tokenizer, ["he", "she"])
    batched = log_probability_scores(model, tokenizer, items, targets, batch_size=64)
    single = log_probability_scores(model, tokenizer, items, targets, batch_size=1)
    assert np.abs(batched - single).max() < 1e-5
    # the MLM head applied at the mask only equals the full forward pass's logits there
    item = items[1]
    enc = tokenizer(item.target_sentence, return_tensors="pt")
    position = enc["input_ids"][0].tolist().index(tokenizer.mask_token_id)
    with torch.inference_mode():
        full = torch.log_softmax(model(**enc).prediction_logits[0, position], -1)
    ids = list(targets.values())
    shortcut = mask_log_probs(model, tokenizer, [item.target_sentence], [item.target_char], ids)[0]
    assert np.abs(shortcut - full[ids].numpy()).max() < 1e-5


def test_template_file_fixes():
    categories = {c for _, c in read_attributes(REPO / "config/resources/hurtfulwords-templates/attributes.csv")}
    templates, fixes = read_templates(REPO / "config/resources/hurtfulwords-templates/templates.txt", categories)
    assert "stripped Windows line ends (CRLF)" in fixes
    assert any("removed surrounding quotes" in f for f in fixes)
    assert any("'this is a 82 yo'" in f for f in fixes)
    assert ("88 yo [GEND], lives in nursing home, is [DNR]", "DNR") in templates
    assert all("\r" not in t for t, _ in templates) and {c for _, c in templates} <= categories
