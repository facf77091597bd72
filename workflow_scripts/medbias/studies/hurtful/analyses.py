"""Analyses of the "hurtful" study (Zhang et al. 2020) on top of the scoring engines.

- Table 3: log-probability bias scores per category and target group, the paper's Wilcoxon
  signed-rank test between paired groups (section 4.3), and, where a control category is configured,
  a Mann-Whitney U test of each category's attributes against the control's (a tiny model carries a
  shared offset between target words that the plain Wilcoxon test flags even where nothing was
  planted; shared/notes/demo-calibration.md). The attribute is the test's unit, not the template
  item: an attribute's items share its word pieces, so they move together (``category_vs_control_p``).
- The gender ratio per category among patients whose discharge notes mention the category's words
  (section 4.3, last paragraph).
- Fill-in-the-blank completions (Figure 1, Appendix B).
- Table D4: a post-hoc classifier predicting a protected attribute from [CLS] vectors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.core.templates import fill_template
from medbias.metrics.logprob import ScoringItem, build_items, log_probability_scores, target_token_ids


def score_frame(items: Sequence[ScoringItem], scores: np.ndarray, words: Sequence[str]) -> pd.DataFrame:
    """Long table of scores: one row per template x attribute x target word (item = row of ``scores``)."""
    rows = []
    for index, item in enumerate(items):
        for column, word in enumerate(words):
            rows.append((index, item.template, item.category, item.attribute, word, float(scores[index, column])))
    return pd.DataFrame(rows, columns=["item", "template", "category", "attribute", "word", "score"])


def random_initialised_score_frames(model_folder: str, templates: Sequence[tuple[str, str]],
                                    attributes: Sequence[tuple[str, str]], words: Sequence[str], n_models: int,
                                    seed: int, batch_size: int = 128) -> Iterator[pd.DataFrame]:
    """``score_frame`` of each of ``n_models`` masked LMs with the architecture and tokenizer of
    ``model_folder`` and fresh random weights (torch seeds ``seed``, ``seed`` + 1, ...): models that
    learned nothing, where no category can lean (the null of Table 3's tests)."""
    import torch
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_folder)
    config = AutoConfig.from_pretrained(model_folder)
    items = build_items(templates, attributes, tokenizer)
    target_ids, _ = target_token_ids(tokenizer, words)
    for k in range(n_models):
        torch.manual_seed(seed + k)
        model = AutoModelForMaskedLM.from_config(config).eval()
        yield score_frame(items, log_probability_scores(model, tokenizer, items, target_ids, batch_size),
                          list(target_ids))


def paired_differences(scores: pd.DataFrame, first_words: Sequence[str], second_words: Sequence[str]) -> pd.DataFrame:
    """Pairs (item, i): the score of ``first_words[i]`` and of ``second_words[i]`` in the same template
    and attribute (he with she, man with woman, ...), and their difference first - second. Word
    pairs with a word that was not scored (not one word piece in the model's vocabulary) are skipped;
    the caller reports those words."""
    by_word = scores.set_index(["item", "word"])["score"]
    present = set(scores["word"])
    frames = []
    for first, second in zip(first_words, second_words):
        if first not in present or second not in present:
            continue
        a = by_word.xs(first, level="word")
        b = by_word.xs(second, level="word").loc[a.index]
        frames.append(pd.DataFrame({"item": a.index, "pair": f"{first}/{second}", "first_score": a.to_numpy(),
                                    "second_score": b.to_numpy()}))
    columns = ["item", "pair", "first_score", "second_score", "difference", "category", "template", "attribute"]
    if not frames:
        return pd.DataFrame(columns=columns)
    pairs = pd.concat(frames, ignore_index=True)
    pairs = pairs.join(scores.drop_duplicates("item").set_index("item")[["category", "template", "attribute"]], on="item")
    pairs["difference"] = pairs["first_score"] - pairs["second_score"]
    return pairs[columns]


PAIR_UNITS = ("attribute", "pair")


def category_vs_control_p(pairs: pd.DataFrame, category: str, control_category: str, unit: str = "attribute") -> float:
    """Two-sided Mann-Whitney U p of ``category``'s paired differences against ``control_category``'s
    (``pairs`` as ``paired_differences`` gives them).

    ``unit="attribute"`` (what Table 3 reports): one observation per attribute, its mean difference over
    its templates and word pairs. ``unit="pair"``: every template x attribute x word-pair difference is
    one observation, as if they were independent. They are not: an attribute's items share its word
    pieces, so a model's quirk for one attribute moves all of them. On 250 random-initialised tiny BERTs
    of the demo (nothing learned) the pair-level test flagged 7.6% of leaning categories at the 1% level
    and the attribute-level one 0.8% (``results/validation/error_rates.md``). The attribute-level p
    cannot go below 2 / C(n + m, n) for n and m attributes (3 against 9: 0.009). NaN with an empty side."""
    from scipy.stats import mannwhitneyu

    if unit not in PAIR_UNITS:
        raise ValueError(f"unit must be one of {PAIR_UNITS}, got {unit!r}")

    def observations(name: str) -> np.ndarray:
        cell = pairs[pairs["category"] == name]
        values = cell.groupby("attribute")["difference"].mean() if unit == "attribute" else cell["difference"]
        return values.to_numpy(dtype=float)

    first, control = observations(category), observations(control_category)
    if not len(first) or not len(control):
        return np.nan
    return float(mannwhitneyu(first, control, alternative="two-sided").pvalue)


def logprob_table(
    scores: pd.DataFrame,
    target_sets: Mapping[str, Mapping[str, Sequence[str]]],
    control_category: str | None = None,
) -> pd.DataFrame:
    """Table 3 in long form. For each target set, each group after the first (the first listed is the
    reference: male in the gender set) and each category: both groups' mean score, the number of
    templates, attributes, items and word pairs, the mean paired difference (reference - group), the
    two-sided Wilcoxon signed-rank p over the paired scores (the paper's test, its pairs taken as
    independent), and, when ``control_category`` is given, ``mannwhitney_vs_control_p``: the
    attribute-level Mann-Whitney U p of the category against the control (``category_vs_control_p``)."""
    from scipy.stats import wilcoxon

    rows = []
    for set_name, groups in target_sets.items():
        names = list(groups)
        reference = names[0]
        for group in names[1:]:
            pairs = paired_differences(scores, groups[reference], groups[group])
            for category, cell in pairs.groupby("category", sort=True):
                differences = cell["difference"].to_numpy(dtype=float)
                testable = len(differences) > 1 and np.any(differences != 0)
                row = {
                    "target_set": set_name, "reference_group": reference, "group": group, "category": category,
                    "reference_mean": cell["first_score"].mean(), "group_mean": cell["second_score"].mean(),
                    "mean_difference": differences.mean(), "templates": cell["template"].nunique(),
                    "attributes": cell["attribute"].nunique(), "items": cell["item"].nunique(), "pairs": len(cell),
                    "wilcoxon_p": float(wilcoxon(differences).pvalue) if testable else np.nan,
                }
                if control_category:
                    row["control_category"] = control_category
                    row["mannwhitney_vs_control_p"] = (
                        np.nan if category == control_category
                        else category_vs_control_p(pairs, category, control_category))
                rows.append(row)
    return pd.DataFrame(rows)


def _category_patterns(attributes: Sequence[tuple[str, str]]) -> dict[str, re.Pattern]:
    by_category: dict[str, list[str]] = {}
    for attribute, category in attributes:
        by_category.setdefault(category, []).append(re.escape(attribute.lower()))
    return {c: re.compile(r"\b(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")\b")
            for c, words in by_category.items()}


def discharge_summaries(notes: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``notes`` whose CATEGORY is a discharge summary (case and spaces ignored)."""
    return notes[notes["CATEGORY"].str.strip().str.lower() == "discharge summary"]


def gender_ratio(notes: pd.DataFrame, genders: pd.Series, attributes: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Per category: patients with a discharge note that mentions any of the category's attribute
    strings (case-insensitive, whole words), and the share of them that are male and female.

    ``notes``: SUBJECT_ID, CATEGORY, TEXT; ``genders``: M/F indexed by SUBJECT_ID. Patients without a
    recorded gender are counted in ``unknown_gender``.
    """
    discharge = discharge_summaries(notes)
    text = discharge["TEXT"].str.lower()
    rows = []
    for category, pattern in _category_patterns(attributes).items():
        subjects = pd.Index(discharge.loc[text.str.contains(pattern), "SUBJECT_ID"].unique())
        g = genders.reindex(subjects)
        known = g.isin(["M", "F"])
        n = int(known.sum())
        rows.append({"category": category, "patients": len(subjects), "male": int((g == "M").sum()),
                     "female": int((g == "F").sum()), "unknown_gender": int((~known).sum()),
                     "male_share": (g == "M").sum() / n if n else np.nan,
                     "female_share": (g == "F").sum() / n if n else np.nan})
    return pd.DataFrame(rows)


def fill_in_the_blanks(model, tokenizer, templates: Sequence[str], fills: Sequence[str], slot: str = "[RACE]",
                       top_k: int = 5) -> pd.DataFrame:
    """Figure 1 / Appendix B: for each template and each word put in ``slot``, the model's completion
    of every ``[MASK]``: greedy (left to right, each filled mask fed back before the next) and the
    top-k tokens with their probabilities when all masks are open at once."""
    import torch

    if not templates:
        return pd.DataFrame()
    rows = []
    mask_id = tokenizer.mask_token_id
    for template in templates:
        if slot not in template or "[MASK]" not in template:
            raise MedbiasInputError(f"fill-in-the-blank template {template!r}: needs {slot} and at least one [MASK]")
        for fill in fills:
            sentence = fill_template(template, {slot: fill, "[MASK]": tokenizer.mask_token})
            encoded = tokenizer(sentence, return_tensors="pt")
            ids = encoded["input_ids"]
            positions = (ids[0] == mask_id).nonzero().flatten().tolist()
            with torch.inference_mode():
                probs = torch.softmax(model(**encoded).logits[0, positions].float(), dim=-1)
                top = probs.topk(top_k, dim=-1)
                greedy_ids = ids.clone()
                greedy = []
                for position in positions:
                    logits = model(input_ids=greedy_ids, attention_mask=encoded["attention_mask"]).logits[0, position]
                    token = int(logits.argmax())
                    greedy_ids[0, position] = token
                    greedy.append(tokenizer.convert_ids_to_tokens(token))
            for k, position in enumerate(positions):
                tokens = tokenizer.convert_ids_to_tokens(top.indices[k].tolist())
                rows.append({"template": template, "fill": fill, "mask": k + 1, "greedy": greedy[k],
                             "top_k": ", ".join(f"{t} ({p:.3f})" for t, p in zip(tokens, top.values[k].tolist()))})
    return pd.DataFrame(rows)


def split_by_subject(subjects: np.ndarray, test_fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of the rows whose subject falls in a seeded test share of the subjects."""
    unique = np.unique(subjects)
    rng = np.random.default_rng(seed)
    test = set(rng.permutation(unique)[: max(1, round(test_fraction * len(unique)))].tolist())
    return np.array([s in test for s in subjects])


def probe_attribute(features: np.ndarray, labels: np.ndarray, is_test: np.ndarray, hidden: Sequence[int],
                    seed: int, positive: int = 1) -> dict[str, float]:
    """Table D4: a fully connected network (scikit-learn MLP on standardised features) trained to
    predict the attribute on the training rows, evaluated on the test rows: AUROC, precision, recall,
    AUPRC and log loss. Binary attributes use class ``positive`` as the positive class; attributes with
    more classes use macro averages over one-vs-rest (classes absent from either split are dropped
    from the probe and counted)."""
    from sklearn.metrics import average_precision_score, log_loss, precision_score, recall_score, roc_auc_score
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train, test = ~is_test, is_test
    shared = np.intersect1d(np.unique(labels[train]), np.unique(labels[test]))
    keep = np.isin(labels, shared)
    dropped = int((~keep).sum())
    train, test = train & keep, test & keep
    if len(shared) < 2:
        raise MedbiasInputError(f"probe: fewer than two attribute classes in both splits (classes {shared.tolist()})")
    probe = make_pipeline(StandardScaler(), MLPClassifier(hidden_layer_sizes=tuple(hidden), max_iter=1000, n_iter_no_change=30,
                                                          early_stopping=True, random_state=seed))
    probe.fit(features[train], labels[train])
    proba = probe.predict_proba(features[test])
    predicted = probe.predict(features[test])
    truth = labels[test]
    classes = probe.classes_
    if len(classes) == 2:
        column = int(np.flatnonzero(classes == positive)[0]) if positive in classes else 1
        pos = classes[column]
        metrics = {
            "auroc": roc_auc_score(truth == pos, proba[:, column]),
            "precision": precision_score(truth == pos, predicted == pos, zero_division=0),
            "recall": recall_score(truth == pos, predicted == pos, zero_division=0),
            "auprc": average_precision_score(truth == pos, proba[:, column]),
        }
    else:
        onehot = (truth[:, None] == classes[None, :]).astype(int)
        metrics = {
            "auroc": roc_auc_score(onehot, proba, average="macro"),
            "precision": precision_score(truth, predicted, average="macro", zero_division=0),
            "recall": recall_score(truth, predicted, average="macro", zero_division=0),
            "auprc": average_precision_score(onehot, proba, average="macro"),
        }
    metrics["log_loss"] = log_loss(truth, proba, labels=classes)
    metrics.update({"train_rows": int(train.sum()), "test_rows": int(test.sum()), "classes": len(classes),
                    "rows_dropped_rare_class": dropped,
                    "majority_rate": float(np.max(np.unique(truth, return_counts=True)[1]) / len(truth))})
    return {k: float(v) for k, v in metrics.items()}
