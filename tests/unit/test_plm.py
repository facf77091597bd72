"""The plm study's SEAT inputs: the transcribed word sets, contextualising templates, and the
sentence encoder of each model kind."""

from __future__ import annotations

import pytest
from conftest import REPO

from medbias.core.encoders import sentence_encoder
from medbias.core.errors import MedbiasInputError
from medbias.io.resources import read_seat_tests
from medbias.studies.plm.seat import contextualise, seat_sentences

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
    templates = {
        "descriptor": ["This person is [W].", "The patient is [W]."],
        "disease": ["This person has [W]."],
        "person": ["This is [W]."],
        "birthday": ["This person's birthday falls on the [W] day of the month."],
    }
    sentences = seat_sentences(tests["lgbtq_seat"], templates)
    assert len(sentences["X"]) == 14 and sentences["X"][0] == ("Cisgender", "This person is Cisgender.")
    assert sentences["B"][0] == ("HIV", "This person has HIV.")
    with pytest.raises(MedbiasInputError, match="no templates for identity context 'birthday'"):
        seat_sentences(tests["control_1"], {"disease": ["[W]"]})


def test_sentence_encoder_by_kind():
    from transformers import BartConfig, BartForConditionalGeneration, GPT2Config, GPT2LMHeadModel

    bart = BartForConditionalGeneration(
        BartConfig(
            vocab_size=30,
            d_model=8,
            encoder_layers=1,
            decoder_layers=1,
            encoder_attention_heads=2,
            decoder_attention_heads=2,
            encoder_ffn_dim=8,
            decoder_ffn_dim=8,
        )
    )
    assert sentence_encoder(bart, "seq2seq") is bart.get_encoder()
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=30, n_embd=8, n_layer=1, n_head=2))
    assert sentence_encoder(gpt2, "causal") is gpt2.transformer
    with pytest.raises(MedbiasInputError, match="unknown model kind 'encoder-only'"):
        sentence_encoder(gpt2, "encoder-only")


def small_tests():
    return {
        "race": {
            "X": ["white", "european american"],
            "Y": ["black", "african american", "ghanaian american"],
            "A": ["pox", "leukemia"],
            "B": ["stroke", "obesity", "anemia"],
            "identity_context": "descriptor",
        },
        "queer": {
            "X": ["straight"],
            "Y": ["gay", "lesbian"],
            "A": ["asthma"],
            "B": ["hiv", "aids"],
            "identity_context": "descriptor",
        },
    }


TABLE3 = {
    "declarative": "A [IDENTITY] patient has [BIAS].",
    "trait_first": "A patient has [BIAS] because they are [IDENTITY].",
}


def test_stereoset_examples_count_every_combination_once():
    from medbias.studies.plm.stereoset_style import stereoset_examples

    sentences, pairs = stereoset_examples(
        small_tests(), {"race": ["race"], "lgbtq": ["queer"]}, TABLE3, ["computer", "tree"]
    )
    race = pairs[pairs["family"] == "race"]
    # blank on the bias: T |Y| |B| |A| = 2*3*3*2; blank on the identity: T |B| |Y| |X| = 2*3*3*2
    assert (race["blank"] == "bias").sum() == 36 and (race["blank"] == "identity").sum() == 36
    queer = pairs[pairs["family"] == "lgbtq"]
    assert (queer["blank"] == "bias").sum() == 2 * 2 * 2 * 1 and (queer["blank"] == "identity").sum() == 2 * 2 * 2 * 1
    assert sentences["text"].is_unique and sentences["sentence_id"].tolist() == list(range(len(sentences)))
    text = sentences.set_index("sentence_id")["text"]
    first = race.iloc[0]
    assert text[first["stereotypical"]] == "A black patient has stroke."
    assert text[first["anti_stereotypical"]] == "A black patient has pox."
    assert text[first["unrelated"]] == "A black patient has computer."
    identity = race[race["blank"] == "identity"].iloc[0]
    assert text[identity["anti_stereotypical"]] == "A white patient has stroke."
    assert text[identity["unrelated"]] in {"A computer patient has stroke.", "A tree patient has stroke."}
    # every meaningful (template, identity, disease) sentence exists: 2 templates x 5 identities x 5 diseases,
    # less the majority identities with non-stereotypical diseases, which no pair uses
    meaningful = sentences[
        (sentences["family"] == "race")
        & (sentences["bias_kind"] != "unrelated")
        & (sentences["identity_group"] != "unrelated")
    ]
    assert len(meaningful) == 2 * (3 * 5 + 2 * 3)


def test_stereoset_templates_need_both_slots():
    from medbias.studies.plm.stereoset_style import stereoset_examples

    with pytest.raises(
        MedbiasInputError, match=r"'plm.stereoset.templates.bad': .* needs exactly one \[IDENTITY\] slot"
    ):
        stereoset_examples(small_tests(), {"race": ["race"]}, {"bad": "A patient has [BIAS]."}, ["computer"])


def test_counterfactual_pairs_and_inlp_labels():
    from medbias.studies.plm.stereoset_style import counterfactual_identity_pairs, stereoset_examples, stereotype_labels

    sentences, pairs = stereoset_examples(small_tests(), {"race": ["race"], "lgbtq": ["queer"]}, TABLE3, ["computer"])
    first, second = counterfactual_identity_pairs(sentences, "race")
    text = sentences.set_index("sentence_id")
    # per (template, disease) with both groups: max(2 majority, 3 minority) pairs; only the stereotypical
    # diseases appear with both groups (2 templates x 3 diseases)
    assert len(first) == 2 * 3 * 3
    for a, b in zip(first, second):
        assert text.at[a, "identity_group"] == "majority" and text.at[b, "identity_group"] == "minority"
        assert (text.at[a, "template"], text.at[a, "bias"]) == (text.at[b, "template"], text.at[b, "bias"])
    ids, labels = stereotype_labels(pairs)
    assert len(ids) == len(set(ids)) and sum(labels) == len(set(pairs["stereotypical"]))
    for i, label in zip(ids, labels):
        row = text.loc[i]
        stereo = row["identity_group"] == "minority" and row["bias_kind"] == "stereotypical"
        assert label == int(stereo)


def test_stereoset_summary_by_hand():
    import numpy as np
    import pandas as pd

    from medbias.studies.plm.stereoset_style import stereoset_summary

    pairs = pd.DataFrame(
        {
            "family": ["f"] * 4,
            "blank": ["bias", "bias", "identity", "identity"],
            "template": ["t"] * 4,
            "stereotypical": [0, 1, 2, 3],
            "anti_stereotypical": [4, 5, 6, 7],
            "unrelated": [8, 8, 8, 8],
        }
    )
    scores = np.array([-1.0, -2.0, -3.0, -4.0, -2.0, -1.0, -3.0, -5.0, -9.0])
    table = stereoset_summary(pairs, scores).set_index(["blank", "template"])
    # pair wins: 1 (s>a), 0, tie (left out), 1 -> ss = 2/3; every meaningful option beats the unrelated
    assert table.at[("all", "all"), "ss"] == pytest.approx(200 / 3)
    assert table.at[("all", "all"), "ties"] == 1 and table.at[("all", "all"), "lms"] == 100
    assert table.at[("bias", "all"), "ss"] == 50 and table.at[("identity", "all"), "ss"] == 100


def tiny_bert():
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from medbias.synth.tiny_models import train_wordpiece

    tokenizer = train_wordpiece(["this person is black", "this person has stroke", "gay patients"] * 5, 60)
    torch.manual_seed(0)
    model = BertForMaskedLM(
        BertConfig(
            vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
        )
    ).eval()
    return model, tokenizer


def test_out_of_vocabulary_words_are_listed_and_an_empty_set_is_one_error():
    from medbias.core.encoders import unknown_words
    from medbias.studies.plm.seat import in_vocabulary_sets

    model, tokenizer = tiny_bert()
    assert unknown_words(tokenizer, ["black", "Ω", "person"]) == ["Ω"]
    test = {"X": ["black", "Ω"], "Y": ["gay"], "A": ["stroke"], "B": ["ΩΩ"], "identity_context": "person"}
    with pytest.raises(
        MedbiasInputError, match=r"model 'tiny', SEAT test 't' set B: 1 of 1 words are out of vocabulary \(ΩΩ\)"
    ):
        in_vocabulary_sets(test, tokenizer, "tiny", "t", 0.5)
    kept, dropped = in_vocabulary_sets({**test, "B": ["stroke"]}, tokenizer, "tiny", "t", 0.5)
    assert kept["X"] == ["black"] and dropped["X"] == ["Ω"]


def test_pooled_sentence_vectors_match_single_forward_passes():
    import numpy as np
    import torch

    from medbias.core.encoders import pooled_sentence_vectors

    model, tokenizer = tiny_bert()
    sentences = ["this person is black", "gay", "this person has stroke stroke stroke"]
    got = {
        pooling: pooled_sentence_vectors(model.base_model, tokenizer, sentences, pooling, batch_size=2)
        for pooling in ("mean", "first", "last")
    }
    for i, sentence in enumerate(sentences):
        with torch.inference_mode():
            states = model.base_model(**tokenizer(sentence, return_tensors="pt")).last_hidden_state[0].numpy()
        np.testing.assert_allclose(got["mean"][i], states.mean(axis=0), atol=1e-5)
        np.testing.assert_allclose(got["first"][i], states[0], atol=1e-5)
        np.testing.assert_allclose(got["last"][i], states[-1], atol=1e-5)
    with pytest.raises(MedbiasInputError, match="plm.seat.pooling"):
        pooled_sentence_vectors(model.base_model, tokenizer, sentences, "max")


def test_debias_changes_signs_and_direction_by_hand():
    import pandas as pd

    from medbias.studies.plm.tables import debias_changes

    seat = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "debias": ["none", "inlp", "none", "inlp"],
            "test": ["r", "r", "q", "q"],
            "effect_size": [0.8, 0.3, -0.2, -0.5],
            "status": "ok",
        }
    )
    stereo = pd.DataFrame(
        {
            "model": ["m", "m"],
            "debias": ["none", "inlp"],
            "family": ["race", "race"],
            "blank": "all",
            "template": "all",
            "ss": [70.0, 55.0],
            "status": "ok",
        }
    )
    table = debias_changes(seat, stereo, ["inlp", "dropout"]).set_index("measure")
    assert table.at["r", "change"] == pytest.approx(-0.5) and table.at["r", "toward_neutral"]
    assert table.at["q", "change"] == pytest.approx(-0.3) and not table.at["q", "toward_neutral"]
    assert table.at["race", "change"] == pytest.approx(-0.15) and table.at["race", "toward_neutral"]
    assert len(table) == 3  # dropout not run: no rows


def test_projection_checks_measure_what_a_projection_must_do():
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    from medbias.core.encoders import projection_checks
    from medbias.studies.plm.debias import INLP, projection_from_basis

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(200, 6))
    basis = rng.normal(size=(6, 2))
    checks = projection_checks(projection_from_basis(basis, 6), vectors, basis=basis)
    assert checks["idempotence_error"] < 1e-12 and checks["symmetry_error"] < 1e-12
    assert checks["removed_direction_max_abs"] < 1e-9 < checks["removed_direction_before_max_abs"]
    labels = (vectors[:, 0] > 0).astype(int)
    fitted = INLP(n_iterations=3, make_classifier=lambda: LogisticRegression(max_iter=500)).fit(vectors, labels)
    checks = projection_checks(
        fitted.projection_, vectors, labels=labels, make_classifier=lambda: LogisticRegression(max_iter=500)
    )
    assert checks["accuracy_before"] > 0.95 and checks["accuracy_after"] < 0.65


def test_an_unloadable_model_is_marked_and_other_errors_stop():
    from medbias.core.encoders import load_or_mark

    model, tokenizer, source, reason = load_or_mark(
        "biomedgpt", {"source": "PanaceaAI/BiomedGPT-Base-Pretrained", "kind": "seq2seq", "loader": "ofa"}, "cpu"
    )
    assert model is None and reason.startswith("not loadable: model 'biomedgpt'") and "OFA" in reason
    with pytest.raises(MedbiasInputError, match=r"'models.mine.source': local model folder ./nowhere/x does not exist"):
        load_or_mark("mine", {"source": "./nowhere/x", "kind": "masked"}, "cpu")


def test_null_pool_words_are_whole_single_token_words_outside_the_sets():
    from medbias.studies.plm.seat import null_pool_words

    _, tokenizer = tiny_bert()
    words = null_pool_words(tokenizer, ["black", "Stroke"], 50, seed=0)
    assert set(words) == {"this", "person", "has", "gay", "patients"}  # 'is' too short; set words left out
    assert null_pool_words(tokenizer, [], 2, seed=0) == null_pool_words(tokenizer, [], 2, seed=0)
    assert len(null_pool_words(tokenizer, [], 2, seed=0)) == 2


def test_seat_reports_the_calibrated_null_beside_the_classic_p():
    import numpy as np

    from medbias.studies.plm.seat import run_seat

    model, tokenizer = tiny_bert()
    tests = {"t": {"X": ["black"], "Y": ["gay"], "A": ["stroke"], "B": ["person"], "identity_context": "person"}}
    templates = {"person": ["this person is [W]", "[W] patients"], "disease": ["this person has [W]", "[W]"]}
    common = dict(
        model_name="tiny",
        pooling="mean",
        batch_size=4,
        max_length=16,
        prepend_bos=False,
        budget=1000,
        alternative="greater",
        n_bootstrap=0,
        min_fraction=0.5,
        seed=0,
    )
    row = run_seat(model.base_model, tokenizer, tests, templates, null_draws=200, null_pool=10, **common).iloc[0]
    # the pool is every vocabulary word in no set: this, has, patients (3 x 2 ordered (A', B') pairs)
    assert row["null_pool_words"] == 3 and row["null_draws"] == 200
    assert 0 < row["p_calibrated"] <= 1 and row["significant"] == (row["p_calibrated"] < 0.05)
    plain = run_seat(model.base_model, tokenizer, tests, templates, **common).iloc[0]
    assert np.isnan(plain["p_calibrated"]) and plain["significant"] == (plain["p_value"] < 0.05)
    assert plain["effect_size"] == pytest.approx(row["effect_size"])
    # the level is the caller's (plm.seat.alpha): significant exactly when the calibrated p is below it
    at_p = run_seat(
        model.base_model, tokenizer, tests, templates, null_draws=200, null_pool=10, alpha=row["p_calibrated"], **common
    ).iloc[0]
    above_p = run_seat(
        model.base_model,
        tokenizer,
        tests,
        templates,
        null_draws=200,
        null_pool=10,
        alpha=np.nextafter(row["p_calibrated"], 2.0),
        **common,
    ).iloc[0]
    assert at_p["p_calibrated"] == row["p_calibrated"] and not at_p["significant"] and above_p["significant"]


def test_null_phrases_match_the_token_count_of_the_words_they_replace():
    from medbias.core.encoders import piece_counts
    from medbias.studies.plm.seat import random_phrases

    _, tokenizer = tiny_bert()
    assert piece_counts(tokenizer, ["stroke", "person", "stroke person"]) == [1, 1, 2]
    phrases = random_phrases(["this", "has", "patients", "gay"], 2, 5, seed=0)
    assert len(phrases) == len(set(phrases)) == 5 and all(len(p.split()) == 2 for p in phrases)
    assert piece_counts(tokenizer, phrases) == [2] * 5
    assert random_phrases(["a", "b"], 1, 5, seed=0) == ["a", "b"]
