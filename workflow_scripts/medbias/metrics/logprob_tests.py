"""Table 3's statistics on log-probability bias scores (Zhang et al. 2020, section 4.3).

Per category and target group: the scores of paired target words in the same template and attribute
(he with she, ...), the paper's two-sided Wilcoxon signed-rank test over the paired differences, and,
where a control category is configured, a Mann-Whitney U test of each category's attributes against
the control's. The Wilcoxon test takes every pair as independent; a tiny model carries a shared offset
between target words that it flags even where nothing was planted, which the control comparison does
not. The attribute is that test's unit, not the template item: an attribute's items share its word
pieces, so they move together (``category_vs_control_p``). The null of both tests is read from models
with fresh random weights (``random_initialised_score_frames``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from medbias.core.models import load_tokenizer, untrained_copy
from medbias.metrics.logprob import ScoringItem, build_items, log_probability_scores, target_token_ids


def score_frame(items: Sequence[ScoringItem], scores: np.ndarray, words: Sequence[str]) -> pd.DataFrame:
    """Long table of scores: one row per template x attribute x target word (item = row of ``scores``)."""
    rows = []
    for index, item in enumerate(items):
        for column, word in enumerate(words):
            rows.append((index, item.template, item.category, item.attribute, word, float(scores[index, column])))
    return pd.DataFrame(rows, columns=["item", "template", "category", "attribute", "word", "score"])


def random_initialised_score_frames(
    model_folder: str,
    templates: Sequence[tuple[str, str]],
    attributes: Sequence[tuple[str, str]],
    words: Sequence[str],
    n_models: int,
    seed: int,
    batch_size: int = 128,
) -> Iterator[pd.DataFrame]:
    """``score_frame`` of each of ``n_models`` masked LMs with the architecture and tokenizer of
    ``model_folder`` and fresh random weights (torch seeds ``seed``, ``seed`` + 1, ...): models that
    learned nothing, where no category can lean (the null of Table 3's tests)."""
    tokenizer = load_tokenizer(model_folder)
    items = build_items(templates, attributes, tokenizer)
    target_ids, _ = target_token_ids(tokenizer, words)
    for k in range(n_models):
        model = untrained_copy(model_folder, "masked", seed + k)
        yield score_frame(
            items, log_probability_scores(model, tokenizer, items, target_ids, batch_size), list(target_ids)
        )


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
        frames.append(
            pd.DataFrame(
                {
                    "item": a.index,
                    "pair": f"{first}/{second}",
                    "first_score": a.to_numpy(),
                    "second_score": b.to_numpy(),
                }
            )
        )
    columns = ["item", "pair", "first_score", "second_score", "difference", "category", "template", "attribute"]
    if not frames:
        return pd.DataFrame(columns=columns)
    pairs = pd.concat(frames, ignore_index=True)
    pairs = pairs.join(
        scores.drop_duplicates("item").set_index("item")[["category", "template", "attribute"]], on="item"
    )
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


def category_vs_control_p_floor(attributes: float, control_attributes: float) -> float:
    """The smallest p ``category_vs_control_p`` can give for ``attributes`` against ``control_attributes``
    attribute-level observations: its two-sided Mann-Whitney U p at complete separation, computed by the
    same test (the exact 2 / C(n + m, n) for small samples without ties). A design fact, fixed before
    any model is scored: however strong the lean, the p cannot go lower. NaN with an empty or unknown
    side (a model without a control row)."""
    from scipy.stats import mannwhitneyu

    if not (attributes >= 1 and control_attributes >= 1):
        return np.nan
    n, m = int(attributes), int(control_attributes)
    return float(mannwhitneyu(np.arange(n, dtype=float) + m, np.arange(m, dtype=float), alternative="two-sided").pvalue)


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
                    "target_set": set_name,
                    "reference_group": reference,
                    "group": group,
                    "category": category,
                    "reference_mean": cell["first_score"].mean(),
                    "group_mean": cell["second_score"].mean(),
                    "mean_difference": differences.mean(),
                    "templates": cell["template"].nunique(),
                    "attributes": cell["attribute"].nunique(),
                    "items": cell["item"].nunique(),
                    "pairs": len(cell),
                    "wilcoxon_p": float(wilcoxon(differences).pvalue) if testable else np.nan,
                }
                if control_category:
                    row["control_category"] = control_category
                    row["mannwhitney_vs_control_p"] = (
                        np.nan
                        if category == control_category
                        else category_vs_control_p(pairs, category, control_category)
                    )
                rows.append(row)
    return pd.DataFrame(rows)
