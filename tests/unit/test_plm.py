"""The plm study's SEAT inputs: the transcribed word sets, contextualising templates, and the
sentence encoder of each model kind."""

from __future__ import annotations

import pytest

from conftest import REPO
from medbias.errors import MedbiasInputError
from medbias.plm import contextualise, read_seat_tests, seat_sentences, sentence_encoder

WORDSETS = REPO / "config/resources/wordsets/xie2024.yaml"


def test_appendix_a_sets_are_transcribed_with_their_fixes():
    tests = read_seat_tests(WORDSETS)
    assert set(tests) == {"race_seat_1", "race_seat_2", "lgbtq_seat", "control_1", "control_2"}
    assert [len(tests["lgbtq_seat"][s]) for s in "XYAB"] == [7, 9, 10, 14]
    assert "scoliosis" in tests["race_seat_1"]["A"] and "Tanisha" in tests["race_seat_1"]["Y"]
    assert tests["control_1"]["A"] == tests["race_seat_1"]["A"] and tests["control_2"]["B"] == tests["lgbtq_seat"]["B"]
    assert len(tests["control_1"]["X"]) + len(tests["control_1"]["Y"]) == 31  # days of a month


def test_bad_word_sets_and_templates_are_one_clear_error(tmp_path):
    path = tmp_path / "sets.yaml"
    path.write_text("tests:\n  t: {X: [a, a], Y: [b], A: [c], B: [d], identity_context: person}\n")
    with pytest.raises(MedbiasInputError, match=r"test 't' set X lists 'a' more than once"):
        read_seat_tests(path)
    path.write_text("tests:\n  t: {X: [a], Y: [], A: [c], B: [d], identity_context: person}\n")
    with pytest.raises(MedbiasInputError, match=r"test 't' has no \(or an empty\) 'Y'"):
        read_seat_tests(path)
    with pytest.raises(MedbiasInputError, match=r"'plm.seat.templates.person': template 'This is here.' needs"):
        contextualise(["Adam"], ["This is here."], "plm.seat.templates.person")


def test_sentences_use_the_identity_context_templates():
    tests = read_seat_tests(WORDSETS)
    templates = {"descriptor": ["This person is [W].", "The patient is [W]."], "disease": ["This person has [W]."],
                 "person": ["This is [W]."], "birthday": ["This person's birthday falls on the [W] day of the month."]}
    sentences = seat_sentences(tests["lgbtq_seat"], templates)
    assert len(sentences["X"]) == 14 and sentences["X"][0] == ("Cisgender", "This person is Cisgender.")
    assert sentences["B"][0] == ("HIV", "This person has HIV.")
    with pytest.raises(MedbiasInputError, match="no templates for identity context 'birthday'"):
        seat_sentences(tests["control_1"], {"disease": ["[W]"]})


def test_sentence_encoder_by_kind():
    from transformers import BartConfig, BartForConditionalGeneration, GPT2Config, GPT2LMHeadModel

    bart = BartForConditionalGeneration(BartConfig(vocab_size=30, d_model=8, encoder_layers=1, decoder_layers=1,
                                                   encoder_attention_heads=2, decoder_attention_heads=2,
                                                   encoder_ffn_dim=8, decoder_ffn_dim=8))
    assert sentence_encoder(bart, "seq2seq") is bart.get_encoder()
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=8, n_layer=1, n_head=2))
    assert sentence_encoder(gpt2, "causal") is gpt2.transformer
    with pytest.raises(MedbiasInputError, match="unknown model kind 'encoder-only'"):
        sentence_encoder(gpt2, "encoder-only")
