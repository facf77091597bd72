"""Known-answer tests of the "mental" study's pieces: gender swapping and neutralization (Table III),
majority vote with ties, the balanced split, the counterfactual metrics, Direct Bias, LIME."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from medbias.core.note_text import clean_for_embedding, her_counterpart, neutralize_gender, swap_gender
from medbias.io.formats import ANNOTATION_PHENOTYPES
from medbias.metrics.association import direct_bias
from medbias.metrics.bootstrap import within_label_resamples
from medbias.metrics.counterfactual import (
    favoured_group,
    mismatch_direction_p,
    pair_metrics,
    paired_lean_change,
    rate_ratio,
    summarise_pairs,
)
from medbias.studies.mental.explain import lime_weights, perturbation_masks
from medbias.studies.mental.features import counterfactual_pairs, mean_word_vectors, training_design
from medbias.studies.mental.labels import join_notes, majority_vote, task_labels
from medbias.studies.mental.split import balanced_split, treated_texts

# --- Table III ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "swapped"),
    [
        ("He said his wife left him.", "She said her wife left her."),
        ("She took her pills and gave them to her.", "He took his pills and gave them to him."),
        ("Her mother told her that HER dog bit her", "His mother told him that HIS dog bit him"),
        ("a 71 yo woman; male pattern; Female", "a 71 yo man; female pattern; Male"),
        ("the woman's chart; the man's chart", "the man's chart; the woman's chart"),
    ],
)
def test_swap_is_token_aware_and_case_preserving(text, swapped):
    assert swap_gender(text) == swapped


def test_swap_leaves_words_inside_words_and_stray_letters_alone():
    text = "the shelf, hemoglobin, human, manage, female-like? Theme. T 98.6 F, 5 M NaCl, F/U, M-mode"
    assert swap_gender(text) == text.replace("female-like", "male-like")
    assert neutralize_gender("shelf human themes") == "shelf human themes"


def test_sex_field_flips_and_neutralizes_but_temperatures_do_not():
    note = "Date of Birth: [**x**] Sex: F\nService: MEDICINE\nT 98.6 F HR 80"
    assert swap_gender(note) == "Date of Birth: [**x**] Sex: M\nService: MEDICINE\nT 98.6 F HR 80"
    assert neutralize_gender(note) == "Date of Birth: [**x**] Sex: \nService: MEDICINE\nT 98.6 F HR 80"
    assert swap_gender("SEX:   m") == "SEX:   F"


def test_her_rule_reads_the_next_word():
    text = "gave her the pills. her home meds, told her to, saw her"
    ends = [i + 3 for i in range(len(text)) if text.startswith("her", i)]
    assert [her_counterpart(text, end) for end in ends] == ["him", "his", "him", "him"]


def test_neutralize_follows_table_iii():
    assert (
        neutralize_gender("He says his son saw him; she is a Woman, male.")
        == "Patient says its son saw its; patient is a Patient, ."
    )
    assert swap_gender(swap_gender("he saw his dog and him")) == "he saw his dog and him"


def test_cleaning_removes_digits_symbols_punctuation_and_one_letter_words():
    assert clean_for_embedding("Pt's BP 120/80, T 98.6 F; [**Name**] a-fib!") == "Pt BP Name fib"
    versions = treated_texts("Sex: M. He has 3 dogs.")
    assert versions == {
        "original": "Sex He has dogs",
        "swapped": "Sex She has dogs",
        "neutralized": "Sex Patient has dogs",
    }


# --- labels and the split ------------------------------------------------------------------------


def _annotations(rows):
    frame = pd.DataFrame(rows)
    for column in ANNOTATION_PHENOTYPES:
        frame[column] = frame.get(column, 0)
    return frame.fillna(0)


def test_majority_vote_breaks_ties_towards_the_positive_class():
    frame = _annotations(
        [
            {"ROW_ID": 1, "SUBJECT_ID": 10, "OPERATOR": "a", "DEPRESSION": 1},
            {"ROW_ID": 1, "SUBJECT_ID": 10, "OPERATOR": "b", "DEPRESSION": 0},  # tie -> positive
            {"ROW_ID": 2, "SUBJECT_ID": 20, "OPERATOR": "a", "DEPRESSION": 1},
            {"ROW_ID": 2, "SUBJECT_ID": 20, "OPERATOR": "b", "DEPRESSION": 0},
            {"ROW_ID": 2, "SUBJECT_ID": 20, "OPERATOR": "c", "DEPRESSION": 0},  # 1 of 3 -> negative
            {"ROW_ID": 3, "SUBJECT_ID": 30, "OPERATOR": "a", "ALCOHOL.ABUSE": 1},
            {"ROW_ID": 3, "SUBJECT_ID": 30, "OPERATOR": "b", "ALCOHOL.ABUSE": 1},
        ]
    )
    votes = majority_vote(frame)
    assert votes["DEPRESSION"].tolist() == [1, 0, 0]
    assert votes["none"].tolist() == [0, 1, 0] and votes["annotators"].tolist() == [2, 3, 2]
    depression = task_labels(votes, "depression")
    assert depression.to_dict() == {1: 1, 2: 0}  # note 3 is positive for another phenotype only: not in the task


def test_join_reports_what_did_not_join():
    votes = majority_vote(
        _annotations([{"ROW_ID": r, "SUBJECT_ID": s, "OPERATOR": "a"} for r, s in [(1, 10), (2, 20), (3, 30), (4, 40)]])
    )
    notes = pd.DataFrame({"ROW_ID": [1, 2, 3], "SUBJECT_ID": [10, 99, 30], "TEXT": ["a", "b", "c"]})
    patients = pd.DataFrame({"SUBJECT_ID": [10, 30], "GENDER": ["F", None]})
    joined, report = join_notes(votes, notes, patients)
    assert joined.index.tolist() == [1]
    assert (report.missing_note, report.subject_mismatch, report.missing_gender) == ((4,), (2,), (3,))


def test_balanced_split_caps_every_cell_and_lets_a_scarce_cell_give_what_it_has():
    sizes = {(1, "F"): 10, (1, "M"): 60, (0, "F"): 80, (0, "M"): 100}
    rows = [(label, gender) for (label, gender), n in sizes.items() for _ in range(n)]
    frame = pd.DataFrame(rows, columns=["label", "gender"], index=np.arange(1000, 1000 + len(rows)))
    train = balanced_split(frame, 0.8, None, seed=3)
    counts = frame[train].groupby(["label", "gender"]).size().to_dict()
    # cap = floor(0.8 * 60) = 48 (the second-smallest cell); the 10-note cell gives floor(0.8 * 10) = 8
    assert counts == {(0, "F"): 48, (0, "M"): 48, (1, "F"): 8, (1, "M"): 48}
    assert balanced_split(frame, 0.8, None, seed=3).equals(train)
    capped = frame[balanced_split(frame, 0.8, 30, seed=3)].groupby(["label", "gender"]).size().to_dict()
    assert capped == {(0, "F"): 30, (0, "M"): 30, (1, "F"): 8, (1, "M"): 30}
    # equal cells: the scarce cell's 8 shrink the others to 8, so gender does not predict the label in
    # training; a size every cell can give is kept
    equal = frame[balanced_split(frame, 0.8, 30, seed=3, equal_cells=True)].groupby(["label", "gender"]).size()
    assert equal.to_dict() == {(0, "F"): 8, (0, "M"): 8, (1, "F"): 8, (1, "M"): 8}
    plenty = frame[balanced_split(frame, 0.8, 6, seed=3, equal_cells=True)].groupby(["label", "gender"]).size()
    assert plenty.to_dict() == {(0, "F"): 6, (0, "M"): 6, (1, "F"): 6, (1, "M"): 6}


def test_training_design_and_test_pairs_use_the_right_copies():
    frame = pd.DataFrame(
        {"ROW_ID": [1, 2, 3], "label": [1, 0, 1], "gender": ["F", "M", "M"], "split": ["train", "train", "test"]}
    )
    rows = {
        (r, v): i for i, (r, v) in enumerate((r, v) for r in (1, 2, 3) for v in ("original", "swapped", "neutralized"))
    }
    features, labels, groups = training_design(frame, "augmented", rows)
    assert features.tolist() == [0, 3, 1, 4] and labels.tolist() == [1, 0, 1, 0] and groups.tolist() == [1, 2, 1, 2]
    assert training_design(frame, "neutralized", rows)[0].tolist() == [2, 5]
    pairs = counterfactual_pairs(frame, rows)
    # note 3 is a man's: its original copy is the M copy, its swapped copy the F copy
    assert pairs[["row_female", "row_male"]].values.tolist() == [[7, 6]]


def test_mean_word_vectors_count_coverage():
    from gensim.models import KeyedVectors

    vectors = KeyedVectors(vector_size=2)
    vectors.add_vectors(["sad", "Mary"], [np.array([1.0, 0.0]), np.array([0.0, 2.0])])
    features, tokens, found = mean_word_vectors(["sad SAD xyz Mary", "xyz"], vectors)
    # "SAD" falls back to "sad"; "xyz" has no vector
    assert features[0].tolist() == pytest.approx([2 / 3, 2 / 3]) and features[1].tolist() == [0, 0]
    assert tokens.tolist() == [4, 1] and found.tolist() == [3, 0]


# --- counterfactual metrics -----------------------------------------------------------------------


def test_pair_metrics_by_hand():
    label = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    female = np.array([1, 1, 1, 0, 1, 0, 0, 0])
    male = np.array([1, 1, 0, 0, 1, 1, 1, 0])
    m = {k: float(v[0]) for k, v in pair_metrics(label, female, male).items()}
    assert (m["tpr_f"], m["tpr_m"], m["fpr_f"], m["fpr_m"]) == (0.75, 0.5, 0.25, 0.75)
    assert m["tprr"] == pytest.approx(0.5 / 0.75) and m["fprr"] == pytest.approx(0.25 / 0.75)
    assert m["mismatch"] == 3 / 8 and m["mismatch_female"] == pytest.approx(1 / 3)
    # pairs 6 and 7 have their M copy alone positive, pair 3 its F copy: lean (2 - 1) / 8 toward M
    assert m["lean"] == pytest.approx(1 / 8)
    doubled_label = np.concatenate([label, label])
    assert m["macro_f1"] == pytest.approx(f1_score(doubled_label, np.concatenate([female, male]), average="macro"))


def test_paired_leans_share_one_resample_of_the_pairs():
    """Before: 4 of 8 pairs lean M; after: 1 of 8 leans M and 1 leans F. The leans are (4 - 0) / 8 and
    (1 - 1) / 8; their bootstrap SEs and covariance equal those of the per-pair differences m - f
    resampled within label by hand with the same generator."""
    label = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    before = (np.zeros(8, int), np.array([1, 1, 0, 0, 1, 1, 0, 0]))
    after = (np.array([0, 0, 0, 1, 0, 0, 0, 0]), np.array([1, 0, 0, 0, 0, 0, 0, 0]))
    change = paired_lean_change(label, before, after, 4000, np.random.default_rng(3))
    assert (change.before, change.after, change.pairs) == (0.5, 0.0, 8)
    index = within_label_resamples(label, 4000, np.random.default_rng(3))
    per_pair = [m - f for f, m in (before, after)]
    replicates = np.array([d[index].mean(axis=1) for d in per_pair])
    covariance = np.cov(replicates)
    assert change.se_before == pytest.approx(np.sqrt(covariance[0, 0]))
    assert change.se_after == pytest.approx(np.sqrt(covariance[1, 1]))
    assert change.covariance == pytest.approx(covariance[0, 1])
    # the leans' SE by the delta method: within each label of 4 pairs, var of a mean = p(1 - p) / 4 halves
    assert change.se_before == pytest.approx(np.sqrt(2 * 0.25 / 4) / 2, rel=0.05)


def test_ratio_conventions():
    assert rate_ratio(np.array([0.0]), np.array([0.0]))[0] == 1.0
    assert np.isnan(rate_ratio(np.array([np.nan]), np.array([0.5]))[0])
    assert favoured_group(0.2, 0.4) == "M" and favoured_group(0.4, 0.4) == "" and favoured_group(0.5, 0.1) == "F"


def test_weighted_metrics_equal_the_metrics_of_the_repeated_pairs():
    rng = np.random.default_rng(0)
    label, female, male = (rng.integers(0, 2, 40) for _ in range(3))
    weights = rng.integers(0, 3, size=(1, 40))
    repeated = np.repeat(np.arange(40), weights[0])
    direct = pair_metrics(label[repeated], female[repeated], male[repeated])
    weighted = pair_metrics(label, female, male, weights)
    for key in direct:
        assert weighted[key][0] == pytest.approx(direct[key][0], nan_ok=True)


def test_identical_copies_are_perfectly_fair_with_a_degenerate_interval():
    rng = np.random.default_rng(1)
    label = rng.integers(0, 2, 50)
    prediction = rng.integers(0, 2, 50)
    summary = summarise_pairs(label, prediction, prediction, 200, np.random.default_rng(2))
    assert summary.values["mismatch"] == 0 and summary.values["tprr"] == 1 and summary.values["fprr"] == 1
    assert summary.low["mismatch"] == summary.high["mismatch"] == 0
    assert summary.favoured == {"tprr": "", "fprr": "", "mismatch": ""}


def test_mismatch_direction_is_mcnemars_exact_test():
    """Hand-computed: 5 discordant pairs all favouring F: p = 2 * (1/2)^5; a 1-1 split: p = 1;
    pairs that agree do not count; no discordant pair: p = 1. Then calibration: copies that flip
    at random either way (no gender effect, mismatch near 0.3) are flagged in about 5% of 400
    test sets; copies where the F copy flips up more often are flagged nearly always."""
    female = np.array([1, 1, 1, 1, 1, 0, 1, 0])
    male = np.array([0, 0, 0, 0, 0, 0, 1, 0])
    assert mismatch_direction_p(female, male) == pytest.approx(2 / 32)
    assert mismatch_direction_p(np.array([1, 0, 1]), np.array([0, 1, 1])) == 1.0
    assert mismatch_direction_p(np.array([1, 0]), np.array([1, 0])) == 1.0
    rng = np.random.default_rng(3)
    null_flags, planted_flags = [], []
    for _ in range(400):
        base = rng.integers(0, 2, 200)
        flip = rng.random(200) < 0.3
        other = np.where(flip, 1 - base, base)
        null_flags.append(mismatch_direction_p(base, other) < 0.05)
        biased = np.where(rng.random(200) < 0.2, 1, base)  # the F copy is predicted positive more often
        planted_flags.append(mismatch_direction_p(biased, base) < 0.05)
    assert 0.02 <= np.mean(null_flags) <= 0.08
    assert np.mean(planted_flags) > 0.95
    summary = summarise_pairs(np.ones(8), female, male, 0, np.random.default_rng(0))
    assert summary.mismatch_p == pytest.approx(2 / 32) and summary.favoured["mismatch"] == "F"


# --- Direct Bias ---------------------------------------------------------------------------------


def test_direct_bias_on_constructed_vectors():
    rng = np.random.default_rng(0)
    g = np.array([1.0, 0, 0, 0])
    base = rng.normal(size=(5, 4)) * np.array([0, 1, 1, 1])
    female, male = base + 0.5 * g, base - 0.5 * g
    orthogonal = np.array([[0, 1.0, 0, 0], [0, 0, 1.0, 0]])
    assert direct_bias(orthogonal, female, male).direct_bias == pytest.approx(0, abs=1e-12)
    leaning_male = np.array([[-1.0, 1, 0, 0], [-1.0, 0, 1, 0]])  # cos = -1/sqrt(2) each
    result = direct_bias(leaning_male, female, male, n_replicates=100, rng=np.random.default_rng(1))
    assert result.direct_bias == pytest.approx(1 / np.sqrt(2)) and result.signed == pytest.approx(-1 / np.sqrt(2))
    assert result.explained_variance == pytest.approx(1.0) and result.pairs == 5
    mixed = np.array([[1.0, 1, 0, 0], [-1.0, 0, 1, 0]])
    assert direct_bias(mixed, female, male).signed == pytest.approx(0, abs=1e-12)
    assert direct_bias(mixed, female, male).direct_bias == pytest.approx(1 / np.sqrt(2))
    # the mixed words: |cos| is 1/sqrt(2) for both, so every resample's Direct Bias is that value, while
    # the signed mean of a resample is -1/sqrt(2), 0 or +1/sqrt(2)
    result = direct_bias(mixed, female, male, n_replicates=400, rng=np.random.default_rng(2))
    assert result.direct_bias_low == pytest.approx(1 / np.sqrt(2)) and result.direct_bias_high == pytest.approx(
        1 / np.sqrt(2)
    )
    assert result.signed_low == pytest.approx(-1 / np.sqrt(2)) and result.signed_high == pytest.approx(1 / np.sqrt(2))


def test_direct_bias_interval_is_the_percentile_interval_of_the_resampled_mean_abs_cosine():
    rng = np.random.default_rng(3)
    female, male = rng.normal(size=(6, 8)), rng.normal(size=(6, 8))
    words = rng.normal(size=(30, 8))
    result = direct_bias(words, female, male, n_replicates=500, rng=np.random.default_rng(11))
    from medbias.metrics.association import relation_vector, unit_rows
    from medbias.metrics.bootstrap import percentile_interval, resample_indices

    cosines = unit_rows(words) @ relation_vector(female, male)
    resampled = cosines[resample_indices(30, 500, np.random.default_rng(11))]  # the same draws
    assert (result.direct_bias_low, result.direct_bias_high) == percentile_interval(np.abs(resampled).mean(axis=1))
    assert (result.signed_low, result.signed_high) == percentile_interval(resampled.mean(axis=1))
    assert result.direct_bias_low <= result.direct_bias <= result.direct_bias_high
    assert (
        direct_bias(words, female, male).direct_bias_low != direct_bias(words, female, male).direct_bias_low
    )  # NaN without replicates


def test_the_calibrated_lean_compares_with_random_sets_of_the_same_size():
    from medbias.metrics.association import lean_against_random_words

    rng = np.random.default_rng(0)
    # every random word leans -0.25 (a shared offset): a set at -0.25 is ordinary, p = 1 (both tails hold
    # every draw); a set at -0.5 lies below every draw, p = 2 x 1/(draws + 1)
    flat = np.full(500, -0.25)
    assert lean_against_random_words(-0.25, flat, 20, 99, rng) == (-0.25, 1.0)
    assert lean_against_random_words(-0.5, flat, 20, 99, rng) == (-0.25, pytest.approx(2 / 100))
    # by hand: pool {0, 1}, sets of one word, observed 1: every draw is <= 1, and k of the 9 draws are 1,
    # so p = 2 x (1 + k) / 10, at most 1
    mean, p = lean_against_random_words(1.0, np.array([0.0, 1.0]), 1, 9, np.random.default_rng(4))
    k = round(mean * 9)
    assert mean == k / 9 and p == pytest.approx(min(1.0, 2 * (1 + k) / 10))
    # calibrated: a set drawn from the random words themselves has p < 0.05 in about 5% of trials
    pool = rng.normal(-0.03, 0.1, size=2000)
    rates = [
        lean_against_random_words(pool[rng.choice(2000, 50, replace=False)].mean(), pool, 50, 199, rng)[1] < 0.05
        for _ in range(300)
    ]
    assert 0.01 <= np.mean(rates) <= 0.10  # 5% +- about 2.5 binomial standard errors


def test_random_words_are_frequent_whole_words_not_excluded():
    from medbias.studies.mental.direct_bias import random_words

    vocabulary = ["the", "he", "she", "##ing", "[CLS]", "sad", "1999", "Paris", "table", "river", "chair", "lamp"]
    rng = np.random.default_rng(0)
    assert random_words(vocabulary, {"sad"}, 10, rng) == ["the", "she", "table", "river", "chair", "lamp"]
    assert random_words(vocabulary, set(), 10, rng, most_frequent=6) == ["the", "she", "sad"]
    two = random_words(vocabulary, set(), 2, rng)
    assert len(two) == 2 and set(two) <= {"the", "she", "sad", "table", "river", "chair", "lamp"}


# --- LIME ----------------------------------------------------------------------------------------


def test_perturbations_keep_the_text_first_and_remove_at_least_one_word_after():
    masks = perturbation_masks(6, 50, np.random.default_rng(0))
    assert masks[0].all() and (masks[1:].sum(axis=1) <= 5).all() and (masks[1:].sum(axis=1) >= 1).all()


def test_lime_finds_the_words_a_known_model_uses():
    def model(texts):
        words = [set(t.split()) for t in texts]
        score = np.array([2.5 * ("alcohol" in w) - 1.5 * ("she" in w) for w in words])
        return 1 / (1 + np.exp(-score))

    text = "she reports alcohol use and feels tired today per the family".split()
    ranked, probability = lime_weights(text, model, 500, seed=0)
    assert [w for w, _ in ranked[:2]] == ["alcohol", "she"]
    assert ranked[0][1] > 0 > ranked[1][1]
    assert all(abs(weight) < 0.05 for _, weight in ranked[2:])
    assert probability == pytest.approx(model([" ".join(text)])[0])


# --- contextual features -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_bert():
    import torch
    from transformers import BertConfig, BertModel

    from medbias.synth.tiny_models import train_wordpiece

    texts = ["he has depression and feels sad", "she reports anhedonia today", "the patient is better", "pain"]
    tokenizer = train_wordpiece(texts * 20, 120)
    torch.manual_seed(0)
    encoder = BertModel(
        BertConfig(
            vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32
        ),
        add_pooling_layer=False,
    ).eval()
    return encoder, tokenizer


def _manual_last_states(encoder, ids):
    import torch

    with torch.inference_mode():
        return encoder(input_ids=torch.tensor([ids])).last_hidden_state[0].numpy()


def test_mean_pooling_is_mask_aware_and_token_weighted_over_windows(tiny_bert):
    from medbias.core.batching import mean_pooled_vectors

    encoder, tokenizer = tiny_bert
    texts = ["he has depression and feels sad " * 3, "pain", "she reports anhedonia today"]
    pooled, windows = mean_pooled_vectors(encoder, tokenizer, texts, max_length=8, stride=3, batch_size=2)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    for i, text in enumerate(texts):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        starts = [0]
        while starts[-1] + 6 < len(ids):
            starts.append(starts[-1] + 3)
        states = [_manual_last_states(encoder, [cls, *ids[s : s + 6], sep]) for s in starts]
        expected = np.concatenate(states).mean(axis=0)  # every token of every window, padding never seen
        assert windows[i] == len(starts)
        np.testing.assert_allclose(pooled[i], expected, atol=1e-5)
    assert windows[0] > 1 and windows[1] == 1


def test_span_vectors_take_the_words_own_pieces(tiny_bert):
    from medbias.core.batching import span_vectors

    encoder, tokenizer = tiny_bert
    sentences = ["she is here.", "anhedonia is a synonym of depression."]
    spans = [(0, 3), (0, 9)]
    vectors, unknown = span_vectors(encoder, tokenizer, sentences, spans)
    for i, (sentence, (start, end)) in enumerate(zip(sentences, spans)):
        encoded = tokenizer(sentence, return_offsets_mapping=True)
        rows = [j for j, (a, b) in enumerate(encoded["offset_mapping"]) if b > a and a >= start and b <= end]
        np.testing.assert_allclose(
            vectors[i], _manual_last_states(encoder, encoded["input_ids"])[rows].mean(axis=0), atol=1e-5
        )
    assert not unknown.any()


# --- Tables I and III ------------------------------------------------------------------------------


def test_table3_is_the_papers_list_of_gender_terms():
    """Sogancioglu et al. 2023, Table III, transcribed: male, female and neutralized terms."""
    from medbias.studies.mental.reference_tables import table3_gender_terms

    paper = [
        ("he", "she", "patient"),
        ("man", "woman", "patient"),
        ("his", "her", "its"),
        ("him", "her", "its"),
        ("male", "female", "(removed)"),
        ("Sex: M", "Sex: F", "Sex: (removed)"),
    ]
    table = table3_gender_terms()
    assert [tuple(r) for r in table.frame.itertuples(index=False)] == paper
    assert "'her' swaps to 'him' when it is an object" in table.notes[0]


def test_table1_defines_each_configured_phenotype():
    from medbias.studies.mental.reference_tables import table1_phenotypes

    table = table1_phenotypes(["depression", "substance_abuse"])
    assert table.frame["Phenotype"].tolist() == ["Depression", "Substance abuse"]
    assert table.frame["Definition"].iloc[1].startswith("Include any intravenous drug abuse (IVDU)")
    with pytest.raises(KeyError):
        table1_phenotypes(["anxiety"])


# --- the gender-permutation null of the mismatch ----------------------------------------------------


def test_permuted_design_keeps_the_gender_counts_and_breaks_their_tie_to_the_label():
    from medbias.studies.mental.features import gender_permuted_design

    # every positive training note is a woman's, every negative a man's: gender predicts the label
    frame = pd.DataFrame(
        {"ROW_ID": np.arange(40), "label": [1] * 20 + [0] * 20, "gender": ["F"] * 20 + ["M"] * 20, "split": "train"}
    )
    rows = {(r, v): 2 * r + (v == "swapped") for r in range(40) for v in ("original", "swapped")}
    rng = np.random.default_rng(5)
    women_among_positives = []
    for _ in range(300):
        features, labels, groups = gender_permuted_design(frame, rows, rng)
        swapped = features % 2 == 1
        assert (features // 2).tolist() == groups.tolist() == list(range(40)) and labels.tolist() == [1] * 20 + [0] * 20
        speaks_of_a_woman = (frame["gender"].to_numpy() == "F") != swapped
        assert speaks_of_a_woman.sum() == 20  # the gender counts stay those of the notes
        women_among_positives.append(speaks_of_a_woman[:20].sum())
    # hypergeometric: 20 of 40 notes speak of a woman, 20 are positive: 10 women among them on average
    assert np.mean(women_among_positives) == pytest.approx(10, abs=0.5)


def test_null_rank_p_counts_the_observed_value_as_one_draw():
    from medbias.metrics.counterfactual import null_rank_p

    assert null_rank_p(0.2, np.array([0.1, 0.2, 0.3])) == pytest.approx(3 / 4)
    assert null_rank_p(0.5, np.array([0.1, 0.2, 0.3])) == pytest.approx(1 / 4)
    assert np.isnan(null_rank_p(0.5, np.array([])))


def test_an_svm_without_platt_scaling_chooses_and_predicts_the_same():
    from medbias.studies.mental.learners import build_learner, fit_learner

    rng = np.random.default_rng(2)
    x, y = rng.normal(size=(60, 4)), np.repeat([0, 1], 30)
    x[y == 1, 0] += 1.0
    settings = {"C": [0.1, 1, 10], "kernel": ["rbf", "linear"], "folds": 3}
    groups = np.arange(60)
    with_platt, chosen = fit_learner(build_learner("svm", settings, 7), x, y, groups)
    without, chosen_without = fit_learner(build_learner("svm", settings, 7, probability=False), x, y, groups)
    assert chosen == chosen_without
    assert with_platt.predict(x).tolist() == without.predict(x).tolist()


def _gendered_notes(n_train: int, share_women_among_positives: float, seed: int):
    """Features of notes whose first coordinate is the gender the note speaks of (+1 a woman, -1 a man;
    the swapped copy flips it) and whose second carries the label weakly; test notes balanced."""
    rng = np.random.default_rng(seed)
    half = n_train // 2
    women_pos = int(round(share_women_among_positives * half))
    train_gender = ["F"] * women_pos + ["M"] * (half - women_pos) + ["M"] * women_pos + ["F"] * (half - women_pos)
    train_label = [1] * half + [0] * half
    test_gender, test_label = ["F", "M"] * 20, [1, 1, 0, 0] * 10
    frame = pd.DataFrame(
        {
            "ROW_ID": np.arange(n_train + 40),
            "label": train_label + test_label,
            "gender": train_gender + test_gender,
            "split": ["train"] * n_train + ["test"] * 40,
            "task": "t",
        }
    )
    features, rows = [], {}
    for r in frame.itertuples(index=False):
        sign = 1.0 if r.gender == "F" else -1.0
        signal = 0.6 * (2 * r.label - 1) + rng.normal()
        for version, g in (("original", sign), ("swapped", -sign)):
            rows[(int(r.ROW_ID), version)] = len(features)
            features.append([g + 0.1 * rng.normal(), signal])
    return np.array(features), rows, frame


@pytest.mark.parametrize(("women_among_positives", "biased"), [(0.95, True), (0.5, False)])
def test_the_null_separates_a_learned_label_bias_from_a_balanced_training_set(women_among_positives, biased):
    import logging

    from medbias.studies.mental.classifiers import gender_permutation_null, mismatch
    from medbias.studies.mental.learners import build_learner, fit_learner

    features, rows, frame = _gendered_notes(80, women_among_positives, seed=11)
    settings = {"C": [1.0], "kernel": ["linear"], "folds": 3}
    train_rows, train_y, groups = training_design(frame, "original", rows)
    observed, _ = fit_learner(build_learner("svm", settings, 0), features[train_rows], train_y, groups)
    observed_mismatch = mismatch(observed, counterfactual_pairs(frame, rows), features)
    null = gender_permutation_null(
        features,
        rows,
        frame,
        tasks=["t"],
        learner="svm",
        settings=settings,
        seed=0,
        draws=19,
        log=logging.getLogger("test"),
    )
    assert len(null) == 19 and set(null.columns) == {"task", "learner", "draw", "mismatch"}
    from medbias.metrics.counterfactual import null_rank_p

    p = null_rank_p(observed_mismatch, null["mismatch"].to_numpy())
    if biased:  # gender told the label in training: the classifier flips far more pairs than any retraining
        assert observed_mismatch > 0.5 and p == pytest.approx(1 / 20)
    else:
        assert p > 0.2
