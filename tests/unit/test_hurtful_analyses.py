"""Analyses of the hurtful study on hand-made inputs: Table 3's paired tests, the discharge-note gender
ratio, fill-in-the-blank on a stub model whose predictions are known, the Table D4 probe (a separable
attribute and a control with nothing to find), [CLS] features and the adversary's held-out accuracy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import mannwhitneyu, wilcoxon

from medbias.core.errors import MedbiasInputError
from medbias.core.fill_blank import fill_in_the_blanks
from medbias.metrics.logprob import ScoringItem
from medbias.metrics.logprob_tests import (
    category_vs_control_p,
    category_vs_control_p_floor,
    logprob_table,
    paired_differences,
    random_initialised_score_frames,
    score_frame,
)
from medbias.studies.hurtful.gender_ratio import gender_ratio
from medbias.studies.hurtful.probe import probe_attribute, split_by_subject
from medbias.synth.tiny_models import build_tiny_model, train_wordpiece
from medbias.validation.decisions import LOGPROB_P_KINDS
from medbias.validation.null_worlds import logprob_null_model_decisions


def _scores(values: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    """values[(category, word)] = scores of that word over the category's items, in item order."""
    rows, item = [], 0
    categories = sorted({c for c, _ in values})
    for category in categories:
        words = [w for c, w in values if c == category]
        n = len(values[(category, words[0])])
        for k in range(n):
            for word in words:
                rows.append(
                    (item, f"t{k % 2} [GEND] [{category}]", category, f"a{k}", word, values[(category, word)][k])
                )
            item += 1
    return pd.DataFrame(rows, columns=["item", "template", "category", "attribute", "word", "score"])


def test_score_frame_is_one_row_per_item_and_word():
    items = [ScoringItem("[GEND] has [X]", "X", f"a{i}", "", "", 0) for i in range(3)]
    frame = score_frame(items, np.arange(6.0).reshape(3, 2), ["he", "she"])
    assert len(frame) == 6 and frame.loc[(frame["item"] == 2) & (frame["word"] == "she"), "score"].item() == 5.0


def test_logprob_table_means_and_tests_equal_scipy_on_the_pairs():
    he_a, she_a = [0.5, 0.9, 0.2, 0.7, 1.1, 0.4], [0.1, 0.3, 0.2, -0.2, 0.0, 0.5]
    he_c, she_c = [0.1, 0.0, 0.3, 0.2, -0.1, 0.2, 0.0, 0.1], [0.0, 0.1, 0.2, 0.2, 0.0, 0.1, 0.1, 0.0]
    scores = _scores({("A", "he"): he_a, ("A", "she"): she_a, ("CTRL", "he"): he_c, ("CTRL", "she"): she_c})
    table = logprob_table(scores, {"gender": {"male": ["he"], "female": ["she"]}}, control_category="CTRL")
    row = table.set_index("category").loc["A"]
    diff_a = np.subtract(he_a, she_a)
    assert row["reference_mean"] == pytest.approx(np.mean(he_a)) and row["group_mean"] == pytest.approx(np.mean(she_a))
    assert row["mean_difference"] == pytest.approx(diff_a.mean())
    assert row["wilcoxon_p"] == pytest.approx(wilcoxon(diff_a).pvalue)
    diff_c = np.subtract(he_c, she_c)
    assert row["mannwhitney_vs_control_p"] == pytest.approx(
        mannwhitneyu(diff_a, diff_c, alternative="two-sided").pvalue
    )
    assert (row["pairs"], row["items"], row["templates"]) == (6, 6, 2)
    assert np.isnan(table.set_index("category").loc["CTRL", "mannwhitney_vs_control_p"])


def test_control_comparison_takes_the_attribute_as_its_unit():
    """Three attributes of A, each in two templates, all above the four control attributes: the
    attribute-level test is the exact Mann-Whitney of 3 against 4 fully separated values, p = 2 / C(7, 3);
    counting the 6 against 8 template items as independent gives a p 17 times smaller."""
    rows, item = [], 0
    values = {
        ("A", "x"): [1.0, 3.0],
        ("A", "y"): [0.5, 1.5],
        ("A", "z"): [2.0, 2.2],
        ("C", "c1"): [0.1, -0.1],
        ("C", "c2"): [0.0, 0.2],
        ("C", "c3"): [-0.3, 0.4],
        ("C", "c4"): [0.2, 0.4],
    }
    for (category, attribute), differences in values.items():
        for k, difference in enumerate(differences):
            rows += [
                (item, f"t{k} [GEND] [{category}]", category, attribute, "he", difference),
                (item, f"t{k} [GEND] [{category}]", category, attribute, "she", 0.0),
            ]
            item += 1
    scores = pd.DataFrame(rows, columns=["item", "template", "category", "attribute", "word", "score"])
    table = logprob_table(scores, {"gender": {"male": ["he"], "female": ["she"]}}, control_category="C")
    row = table.set_index("category").loc["A"]
    assert row["mannwhitney_vs_control_p"] == pytest.approx(2 / 35)
    assert (row["attributes"], row["items"], row["templates"]) == (3, 6, 2)
    pairs = paired_differences(scores, ["he"], ["she"])
    by_pair = category_vs_control_p(pairs, "A", "C", unit="pair")
    assert by_pair == pytest.approx(
        mannwhitneyu(
            sum((values["A", a] for a in "xyz"), []), sum((values["C", f"c{i}"] for i in range(1, 5)), [])
        ).pvalue
    )
    assert by_pair * 17 < row["mannwhitney_vs_control_p"]
    assert np.isnan(category_vs_control_p(pairs, "A", "missing"))
    with pytest.raises(ValueError, match="unit"):
        category_vs_control_p(pairs, "A", "C", unit="item")


def test_the_control_comparisons_smallest_p_is_that_of_complete_separation():
    """Fully separated attributes reach the test's floor, the exact two-sided 2 / C(n + m, n): 3 against 4
    is the separated case above (2 / 35); Table 3's 5 leaning against 9 control attributes, 2 / 2002."""
    from math import comb

    assert category_vs_control_p_floor(3, 4) == pytest.approx(2 / 35)
    assert category_vs_control_p_floor(5, 9) == pytest.approx(2 / comb(14, 5))
    assert category_vs_control_p_floor(9, 5) == pytest.approx(2 / comb(14, 5))
    assert np.isnan(category_vs_control_p_floor(0, 9))


def test_word_pairs_with_an_unscored_word_are_skipped():
    scores = _scores({("A", "he"): [1.0, 2.0], ("A", "she"): [0.0, 0.5], ("A", "man"): [3.0, 3.0]})
    pairs = paired_differences(scores, ["he", "man"], ["she", "woman"])  # woman was not scored
    assert set(pairs["pair"]) == {"he/she"} and pairs["difference"].tolist() == [1.0, 1.5]


def test_gender_ratio_counts_patients_with_discharge_mentions():
    notes = pd.DataFrame(
        {
            "SUBJECT_ID": [1, 1, 2, 3, 4, 5, 6],
            "CATEGORY": [
                "Discharge summary",
                "Discharge summary",
                "Discharge summary ",
                "Nursing",
                "Discharge summary",
                "Discharge summary",
                "Discharge summary",
            ],
            "TEXT": ["Hx of HIV.", "hiv again", "on haart for hiv", "hiv", "hivx and cvd", "no mention", "CVD"],
        }
    )
    genders = pd.Series({1: "M", 2: "F", 3: "M", 4: "F", 5: "M"})  # subject 6 has no recorded gender
    ratio = gender_ratio(notes, genders, [("hiv", "HIV"), ("cvd", "CVD"), ("heart disease", "CVD")]).set_index(
        "category"
    )
    # HIV: subjects 1 and 2 (3's mention is not in a discharge note; 4's "hivx" is another word)
    assert ratio.loc["HIV", ["patients", "male", "female"]].tolist() == [2, 1, 1]
    assert ratio.loc["HIV", "male_share"] == 0.5
    assert ratio.loc["CVD", ["patients", "male", "female", "unknown_gender"]].tolist() == [2, 0, 1, 1]
    assert ratio.loc["CVD", "female_share"] == 1.0


class ChainLM(torch.nn.Module):
    """At every position predicts (the previous token's id + 1) with probability about 0.9."""

    def __init__(self, vocab: int):
        super().__init__()
        self.vocab = vocab
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids, **_):
        previous = torch.roll(input_ids, 1, dims=1)
        logits = torch.zeros(*input_ids.shape, self.vocab)
        logits.scatter_(2, ((previous + 1) % self.vocab)[..., None], 8.0)
        return type("Out", (), {"logits": logits})()


class FakeTokenizer:
    mask_token, mask_token_id, pad_token_id = "[MASK]", 3, 0

    def __init__(self):
        self.vocab = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[MASK]": 3, "pt": 10, "white": 20, "black": 30}

    def __call__(self, texts):
        return {"input_ids": [[1] + [self.vocab[w] for w in text.split()] + [2] for text in texts]}

    def convert_ids_to_tokens(self, ids):
        return [f"t{i}" for i in ids] if isinstance(ids, list) else f"t{ids}"


def test_fill_in_the_blanks_greedy_feeds_back_and_top_k_keeps_masks_open():
    table = fill_in_the_blanks(ChainLM(64), FakeTokenizer(), ["[RACE] pt [MASK] [MASK]"], ["white", "black"], top_k=2)
    white = table[table["fill"] == "white"].set_index("mask")
    # greedy: the first mask follows "pt" (10 -> 11), the second follows the filled 11 -> 12
    assert white["greedy"].tolist() == ["t11", "t12"]
    # with both masks open the second follows [MASK] (3 -> 4)
    assert white.loc[2, "top_k"].startswith("t4 (")
    probability = float(white.loc[1, "top_k"].split("(")[1].split(")")[0])
    assert probability == pytest.approx(np.exp(8) / (np.exp(8) + 63), abs=1e-3)
    assert len(table) == 4


def one_sentence_at_a_time(model, tokenizer, sentence: str, top_k: int) -> tuple[list[str], list[list[float]]]:
    """The reference: one sentence per forward pass, no padding; (greedy tokens, top-k probabilities
    per mask with every mask open)."""
    encoded = tokenizer(sentence, return_tensors="pt")
    ids = encoded["input_ids"].clone()
    positions = (ids[0] == tokenizer.mask_token_id).nonzero().flatten().tolist()
    with torch.inference_mode():
        open_probs = torch.softmax(model(**encoded).logits[0, positions], dim=-1).topk(top_k, dim=-1).values
        greedy = []
        for position in positions:
            token = int(model(input_ids=ids).logits[0, position].argmax())
            ids[0, position] = token
            greedy.append(tokenizer.convert_ids_to_tokens(token))
    return greedy, open_probs.tolist()


def test_batched_fill_in_the_blanks_equal_one_sentence_at_a_time_on_a_tiny_bert():
    """Templates of different lengths and mask counts share padded batches of two: every greedy token
    and top-k probability equals the unpadded one-sentence reference."""
    from medbias.synth.tiny_models import build_tiny_model, train_wordpiece

    texts = ["the patient was white and calm", "a black patient with pain was seen today", "pt was hispanic"] * 20
    tokenizer = train_wordpiece(texts, 80)
    model = build_tiny_model(
        "bert",
        tokenizer,
        {"hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 32},
        seed=3,
        masked_only=True,
    ).eval()
    templates = ["[RACE] patient was [MASK]", "the [RACE] patient with pain was seen [MASK] [MASK] today"]
    table = fill_in_the_blanks(model, tokenizer, templates, ["white", "black", "hispanic"], top_k=3, batch_size=2)
    assert len(table) == 3 * 1 + 3 * 2
    for (template, fill), rows in table.groupby(["template", "fill"], sort=False):
        sentence = template.replace("[RACE]", fill)
        greedy, probabilities = one_sentence_at_a_time(model, tokenizer, sentence, top_k=3)
        assert rows["greedy"].tolist() == greedy
        shown = [[float(part.split("(")[1].rstrip(")")) for part in cell.split(", ")] for cell in rows["top_k"]]
        assert np.allclose(shown, probabilities, atol=6e-4)


def test_fill_in_the_blank_template_needs_its_slots():
    with pytest.raises(MedbiasInputError, match=r"needs \[RACE\]"):
        fill_in_the_blanks(ChainLM(64), FakeTokenizer(), ["pt [MASK]"], ["white"])


def test_split_by_subject_keeps_subjects_whole_and_is_seeded():
    subjects = np.repeat(np.arange(40), 3)
    test = split_by_subject(subjects, 0.5, seed=1)
    assert not set(subjects[test]) & set(subjects[~test]) and len(set(subjects[test])) == 20
    assert np.array_equal(test, split_by_subject(subjects, 0.5, seed=1))


def test_probe_finds_a_separable_attribute_and_nothing_in_noise():
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1], 300)
    subjects = np.arange(600)
    is_test = split_by_subject(subjects, 0.5, seed=0)
    separable = rng.normal(size=(600, 8)) + labels[:, None] * 3.0
    strong = probe_attribute(separable, labels, is_test, hidden=[16], seed=0)
    assert strong["auroc"] > 0.99 and strong["recall"] > 0.9 and strong["log_loss"] < 0.3
    noise = probe_attribute(rng.normal(size=(600, 8)), labels, is_test, hidden=[16], seed=0)
    assert 0.35 < noise["auroc"] < 0.65 and noise["log_loss"] > 0.6
    assert noise["test_rows"] == is_test.sum() and noise["majority_rate"] == pytest.approx(0.5, abs=0.1)


def test_probe_multiclass_macro_and_rare_classes_dropped_and_counted():
    rng = np.random.default_rng(1)
    labels = np.repeat([0, 1, 2], 200)
    labels[:3] = 5  # a class present only in the first three rows
    is_test = np.zeros(600, bool)
    is_test[3:303:2] = True
    is_test[303::2] = True
    features = rng.normal(size=(600, 6)) + np.eye(6)[labels % 6] * 4.0
    metrics = probe_attribute(features, labels, is_test, hidden=[16], seed=0)
    assert metrics["classes"] == 3 and metrics["rows_dropped_rare_class"] == 3
    assert metrics["auroc"] > 0.95


def test_cls_vectors_keep_order_match_single_runs_and_concatenate_layers():
    from transformers import BertConfig, BertModel

    from medbias.core.batching import cls_vectors
    from medbias.synth.tiny_models import train_wordpiece

    texts = ["he has copd", "she reports depression on sertraline and more words", "pain", "he is better today"]
    tokenizer = train_wordpiece(texts * 20, 100)
    torch.manual_seed(0)
    encoder = BertModel(
        BertConfig(
            vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32
        ),
        add_pooling_layer=False,
    ).eval()
    batched = cls_vectors(encoder, tokenizer, texts, layers=(-4, -3, -2, -1), batch_size=3)
    assert batched.shape == (4, 64)
    for i, text in enumerate(texts):
        single = cls_vectors(encoder, tokenizer, [text], layers=(-4, -3, -2, -1), batch_size=1)
        np.testing.assert_allclose(batched[i], single[0], atol=1e-5)
    last = cls_vectors(encoder, tokenizer, texts)
    np.testing.assert_allclose(last, batched[:, 48:], atol=1e-6)


def test_adversary_accuracy_against_known_predictions():
    from transformers import BertConfig, BertForPreTraining

    from medbias.studies.hurtful.pretrain import AdversarialPretrainer, adversary_accuracy

    torch.manual_seed(0)
    bert = BertForPreTraining(
        BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    )
    model = AdversarialPretrainer(bert, n_classes=2).eval()
    for disc in model.discriminators:  # always predict class 1
        last = disc.layers[-1]
        torch.nn.init.zeros_(last.weight)
        last.bias.data = torch.tensor([0.0, 5.0])
    ids = torch.randint(5, 50, (10, 7))
    batch = {
        "input_ids": ids,
        "attention_mask": torch.ones_like(ids),
        "token_type_ids": torch.zeros_like(ids),
        "attribute": torch.tensor([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]),
        "second_attribute": torch.ones(10, dtype=torch.long),
    }
    result = adversary_accuracy(model, [batch])
    assert result["heldout_accuracy_0"] == 0.3 and result["heldout_majority_0"] == 0.7
    assert result["heldout_accuracy_1"] == 1.0 and result["heldout_majority_1"] == 1.0


def test_random_initialised_copies_score_as_the_base_model_does_and_feed_the_null_decisions(tmp_path):
    """Copies of a saved tiny BERT with fresh weights: one score frame per copy, the same items and
    words, different scores per seed and the same ones again for the same seed; every category of
    every copy is a control, tested with both units as ``category_vs_control_p`` computes them."""
    corpus = [
        "he reports gout",
        "she reports fibromyalgia",
        "per family he has asthma",
        "she has eczema now",
        "he has copd",
        "she reports migraine",
        "he reports acne",
        "she has lupus",
    ] * 20
    tokenizer = train_wordpiece(corpus, 80)
    model = build_tiny_model(
        "bert",
        tokenizer,
        dict(
            hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, max_position_embeddings=32
        ),
        seed=1,
    )
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    templates = [("[GEND] reports [{c}].".format(c=c), c) for c in ("A", "B", "CTRL")]
    templates += [("per family [GEND] has [{c}].".format(c=c), c) for c in ("A", "B", "CTRL")]
    attributes = [
        ("gout", "A"),
        ("copd", "A"),
        ("acne", "B"),
        ("lupus", "B"),
        ("asthma", "CTRL"),
        ("eczema", "CTRL"),
        ("migraine", "CTRL"),
    ]
    frames = list(random_initialised_score_frames(str(tmp_path), templates, attributes, ["he", "she"], 3, seed=5))
    assert len(frames) == 3
    assert all(f[["item", "word"]].equals(frames[0][["item", "word"]]) for f in frames)
    assert not np.allclose(frames[0]["score"], frames[1]["score"])
    again = next(random_initialised_score_frames(str(tmp_path), templates, attributes, ["he", "she"], 1, seed=5))
    assert np.allclose(again["score"], frames[0]["score"])

    decisions = logprob_null_model_decisions(frames, {"male": ["he"], "female": ["she"]}, "CTRL")
    assert len(decisions) == 3 * 2 * 2 and set(decisions["truth"]) == {"control"}
    pairs = paired_differences(frames[2], ["he"], ["she"])
    for unit, kind in LOGPROB_P_KINDS.items():
        row = decisions[(decisions["unit"] == "model 2 B") & (decisions["p_kind"] == kind)].iloc[0]
        assert row["p"] == pytest.approx(category_vs_control_p(pairs, "B", "CTRL", unit=unit))
        assert row["flagged"] == (row["p"] < 0.05)
