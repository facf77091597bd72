"""StereoSet-style examples of Xie et al. 2024 (section 3, Tables 3 and 4): the identity and bias
slots of the templates, the sentence pairs they give, and the summary of their likelihood scores
(``medbias.metrics.stereoset_style`` computes the scores)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from medbias.core.errors import MedbiasInputError
from medbias.core.templates import BIAS_SLOT, IDENTITY_SLOT, check_templates, fill_template


def stereoset_examples(
    tests: Mapping[str, Mapping[str, Any]],
    families: Mapping[str, Sequence[str]],
    templates: Mapping[str, str],
    unrelated: Sequence[str],
):
    """The StereoSet-style sentences and the pairs compared (Xie et al. 2024, section 3.2).

    For every family (race, LGBTQ+), every SEAT test in it and every template:
    - blank on the bias: for each minority identity y, stereotypical disease b and non-stereotypical
      disease a, the stereotypical sentence (y, b) against the anti-stereotypical (y, a);
    - blank on the identity: for each stereotypical disease b, minority identity y and majority
      identity x, (y, b) against (x, b).
    Each pair has an unrelated option: the blank filled with an unrelated word (cycled through the
    list). Returns (sentences, pairs) as DataFrames; sentences are unique per text and carry
    ``sentence_id``, the pairs refer to them. Counts: blank-bias pairs = T |Y| |B| |A|,
    blank-identity pairs = T |B| |Y| |X| per test.
    """
    import pandas as pd

    check_templates(templates, (IDENTITY_SLOT, BIAS_SLOT), "plm.stereoset.templates")
    if not unrelated:
        raise MedbiasInputError("config key 'plm.stereoset.unrelated': no unrelated words")
    index: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []

    def sentence(family, test, template_name, identity, identity_group, bias, bias_kind) -> int:
        text = fill_template(templates[template_name], {IDENTITY_SLOT: identity, BIAS_SLOT: bias})
        if text not in index:
            index[text] = len(rows)
            rows.append(
                {
                    "sentence_id": len(rows),
                    "family": family,
                    "test": test,
                    "template": template_name,
                    "identity": identity,
                    "identity_group": identity_group,
                    "bias": bias,
                    "bias_kind": bias_kind,
                    "text": text,
                }
            )
        return index[text]

    for family, test_names in families.items():
        for test_name in test_names:
            if test_name not in tests:
                raise MedbiasInputError(f"config key 'plm.stereoset.families.{family}': no SEAT test {test_name!r}")
            test = tests[test_name]
            majority, minority, non_stereo, stereo = test["X"], test["Y"], test["A"], test["B"]
            for name in templates:
                k = 0
                for y in minority:
                    for b in stereo:
                        for a in non_stereo:
                            u = unrelated[k % len(unrelated)]
                            k += 1
                            pairs.append(
                                {
                                    "family": family,
                                    "test": test_name,
                                    "template": name,
                                    "blank": "bias",
                                    "stereotypical": sentence(
                                        family, test_name, name, y, "minority", b, "stereotypical"
                                    ),
                                    "anti_stereotypical": sentence(
                                        family, test_name, name, y, "minority", a, "non_stereotypical"
                                    ),
                                    "unrelated": sentence(family, test_name, name, y, "minority", u, "unrelated"),
                                }
                            )
                for b in stereo:
                    for y in minority:
                        for x in majority:
                            u = unrelated[k % len(unrelated)]
                            k += 1
                            pairs.append(
                                {
                                    "family": family,
                                    "test": test_name,
                                    "template": name,
                                    "blank": "identity",
                                    "stereotypical": sentence(
                                        family, test_name, name, y, "minority", b, "stereotypical"
                                    ),
                                    "anti_stereotypical": sentence(
                                        family, test_name, name, x, "majority", b, "stereotypical"
                                    ),
                                    "unrelated": sentence(family, test_name, name, u, "unrelated", b, "stereotypical"),
                                }
                            )
    return pd.DataFrame(rows), pd.DataFrame(pairs)


def counterfactual_identity_pairs(sentences, family: str) -> tuple[list[int], list[int]]:
    """SentenceDebias' counterfactual pairs among the StereoSet-style sentences of ``family``: the
    same template and disease with a majority and a minority identity, the two identity lists
    zipped (the shorter cycled)."""
    first, second = [], []
    frame = sentences[
        (sentences["family"] == family)
        & sentences["identity_group"].isin(["majority", "minority"])
        & (sentences["bias_kind"] != "unrelated")
    ]
    for _, group in frame.groupby(["test", "template", "bias"], sort=True):
        majority = group[group["identity_group"] == "majority"]["sentence_id"].tolist()
        minority = group[group["identity_group"] == "minority"]["sentence_id"].tolist()
        if not majority or not minority:
            continue
        for i in range(max(len(majority), len(minority))):
            first.append(majority[i % len(majority)])
            second.append(minority[i % len(minority)])
    return first, second


def stereotype_labels(pairs) -> tuple[list[int], list[int]]:
    """INLP's training sentences (Xie et al. 2024, section 5.3): (sentence ids, labels) with label 1
    for the stereotypical sentences of the pairs and 0 for the anti-stereotypical ones."""
    stereo = sorted(set(pairs["stereotypical"]))
    anti = sorted(set(pairs["anti_stereotypical"]) - set(stereo))
    return stereo + anti, [1] * len(stereo) + [0] * len(anti)


# --- SEAT sentence vectors ---------------------------------------------------------------------------


def stereoset_summary(pairs, scores: np.ndarray, ties_as_half: bool = False):
    """Stereotype score, language-modelling score and ICAT (``metrics.stereoset``) per family, over
    all its pairs and per blank position and template; ``scores`` are the sentences' log-likelihoods
    indexed by ``sentence_id``."""
    import pandas as pd

    from medbias.metrics.stereoset_style import stereotype_scores

    frame = pairs.assign(
        s=scores[pairs["stereotypical"].to_numpy()],
        a=scores[pairs["anti_stereotypical"].to_numpy()],
        u=scores[pairs["unrelated"].to_numpy()],
    )
    rows = []
    for family, group in frame.groupby("family", sort=False):
        subsets = [("all", "all", group)]
        subsets += [(blank, "all", g) for blank, g in group.groupby("blank", sort=False)]
        subsets += [("all", template, g) for template, g in group.groupby("template", sort=False)]
        for blank, template, subset in subsets:
            score = stereotype_scores(subset["s"], subset["a"], subset["u"], ties_as_half)
            rows.append(
                {
                    "family": family,
                    "blank": blank,
                    "template": template,
                    "ss": score.ss,
                    "lms": score.lms,
                    "icat": score.icat,
                    "pairs": score.examples,
                    "ties": score.ties,
                }
            )
    return pd.DataFrame(rows)
