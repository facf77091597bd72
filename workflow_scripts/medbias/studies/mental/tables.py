"""Study "mental": Table V, the counterfactual fairness of every embedding, treatment, task and
learner, in long form with intervals and as the paper prints it (the SVM's, and a page with every
learner's), and Table IV, the gender classifiers on original and neutralized notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.tables import PaperPage, PaperTable, Section
from medbias.studies.mental.labels import TASK_TITLES


def fairness_table(predictions: pd.DataFrame, n_replicates: int, seed: int) -> pd.DataFrame:
    """Table V in long form: per (embedding, treatment, task, learner) the ratio, mismatch and
    macro-F1 measures of ``medbias.metrics.counterfactual`` with 95% bootstrap intervals and the
    favoured group. Each combination draws from its own generator (seeded by its position in the
    sorted keys), so adding a model changes no other row."""
    from medbias.metrics.counterfactual import METRICS, summarise_pairs

    keys = ["embedding", "treatment", "task", "learner"]
    rows = []
    for number, (key, part) in enumerate(predictions.groupby(keys, sort=True)):
        rng = np.random.default_rng([seed, number])
        summary = summarise_pairs(
            part["label"].to_numpy(), part["pred_female"].to_numpy(), part["pred_male"].to_numpy(), n_replicates, rng
        )
        row = dict(zip(keys, key))
        for metric in METRICS:
            row[metric] = summary.values[metric]
            row[f"{metric}_low"], row[f"{metric}_high"] = summary.low[metric], summary.high[metric]
        for metric, group in summary.favoured.items():
            row[f"{metric}_group"] = group
        row["mismatch_p"] = summary.mismatch_p
        row["pairs"], row["positives"] = summary.pairs, summary.positives
        rows.append(row)
    return pd.DataFrame(rows)


def treatment_leans(predictions: pd.DataFrame, n_replicates: int, seed: int) -> pd.DataFrame:
    """How each treatment moves a classifier's lean (``medbias.metrics.counterfactual``: the mismatch
    signed toward M): per (embedding, task, learner) and treatment other than "original", the lean of
    the classifier trained on the original notes and of the one trained under the treatment, on the
    same test pairs, with bootstrap SEs and their covariance (``paired_lean_change``: one resample of
    the pairs serves both). Each row draws from its own generator, seeded by its position."""
    from medbias.metrics.counterfactual import paired_lean_change

    keys = ["embedding", "task", "learner"]
    rows = []
    number = 0
    for key, part in predictions.groupby(keys, sort=True):
        by_treatment = {t: frame.set_index("ROW_ID") for t, frame in part.groupby("treatment")}
        if "original" not in by_treatment:
            continue
        original = by_treatment["original"]
        for treatment in sorted(t for t in by_treatment if t != "original"):
            treated = by_treatment[treatment].loc[original.index]
            change = paired_lean_change(
                original["label"].to_numpy(),
                (original["pred_female"].to_numpy(), original["pred_male"].to_numpy()),
                (treated["pred_female"].to_numpy(), treated["pred_male"].to_numpy()),
                n_replicates,
                np.random.default_rng([seed, 1, number]),
            )
            number += 1
            rows.append(
                {
                    **dict(zip(keys, key)),
                    "treatment": treatment,
                    "lean_original": change.before,
                    "lean_treated": change.after,
                    "se_original": change.se_before,
                    "se_treated": change.se_after,
                    "covariance": change.covariance,
                    "pairs": change.pairs,
                }
            )
    return pd.DataFrame(rows)


def with_gender_null(long: pd.DataFrame, null: pd.DataFrame) -> pd.DataFrame:
    """Table V's long form with the gender-permutation null beside each mismatch: per (embedding,
    task, learner) that has draws, every treatment's mismatch ranked among them (``mismatch_null_p``,
    ``medbias.metrics.counterfactual.null_rank_p``), the draws' median and their number (0 and NaN
    where the null was not drawn)."""
    from medbias.metrics.counterfactual import null_rank_p

    draws = {key: part["mismatch"].to_numpy() for key, part in null.groupby(["embedding", "task", "learner"])}
    out = long.copy()
    empty = np.array([])
    found = [draws.get((r.embedding, r.task, r.learner), empty) for r in out.itertuples(index=False)]
    out["mismatch_null_p"] = [null_rank_p(r.mismatch, d) for r, d in zip(out.itertuples(index=False), found)]
    out["mismatch_null_median"] = [float(np.median(d)) if len(d) else np.nan for d in found]
    out["null_draws"] = [len(d) for d in found]
    return out


def paper_layout(
    long: pd.DataFrame,
    learner: str,
    embeddings: Sequence[str],
    treatments: Sequence[str],
    tasks: Sequence[str],
    labels: Mapping[str, str],
) -> pd.DataFrame:
    """Table V as printed: one row per (embedding, treatment), per task the columns TPRR, FPRR,
    mismatch (each with the favoured group as a suffix, e.g. 0.90 F) and macro-F1."""
    part = long[long["learner"] == learner].set_index(["embedding", "treatment", "task"])
    rows = []
    for embedding in embeddings:
        for treatment in treatments:
            row: dict[str, Any] = {"embedding": labels.get(embedding, embedding), "treatment": treatment}
            for task in tasks:
                if (embedding, treatment, task) not in part.index:
                    continue
                cell = part.loc[(embedding, treatment, task)]
                title = TASK_TITLES[task]
                for metric, name in (("tprr", "TPRR"), ("fprr", "FPRR"), ("mismatch", "mismatch")):
                    value = cell[metric]
                    row[f"{title} {name}"] = "" if pd.isna(value) else f"{value:.2f} {cell[f'{metric}_group']}".strip()
                row[f"{title} F1"] = f"{cell['macro_f1']:.2f}"
            rows.append(row)
    return pd.DataFrame(rows)


TABLE5_EXPLANATION = (
    "TPRR, FPRR: the smaller group's true/false positive rate over the larger one's (eq. 4; 1 = equal), with the group "
    "that has the higher rate (F or M). Mismatch: share of counterfactual pairs (each test note and its gender-swapped "
    "copy) with different predictions, with the group whose copy was predicted positive in more of them. F1: "
    "macro-F1 on all copies. Intervals (95%, pairs resampled within label) are in table5_fairness_long.csv, with "
    "mismatch_p: McNemar's exact test that the mismatched pairs favour one group (discordant pairs split 50/50 under "
    "no gender effect), and mismatch_null_p: the mismatch ranked among those of classifiers retrained with the "
    "training notes' genders permuted, so that gender cannot predict the label (one-sided, (1 + k) / (draws + 1); "
    "null_draws of them, median mismatch_null_median). McNemar's p holds its level for the one trained classifier; "
    "the null's p asks whether the training notes' gender-label association made the mismatch."
)


def table5(long: pd.DataFrame, layout: Mapping[str, Any], settings: Sequence[str] = ()) -> PaperTable:
    """Table V as the paper prints it: the SVM classifiers (``paper_layout`` with ``layout``: the
    embeddings, treatments, tasks and labels)."""
    return PaperTable(
        paper_layout(long, "svm", **layout),
        "Table V: fairness and performance of the SVM classifiers",
        (TABLE5_EXPLANATION, *settings),
    )


def table5_all_learners(long: pd.DataFrame, learners: Sequence[str], layout: Mapping[str, Any]) -> PaperPage:
    """Table V for every learner, one section each (the paper's robustness check with RF and MLP)."""
    sections = [Section(paper_layout(long, learner, **layout), learner.upper()) for learner in learners]
    return PaperPage(
        "Table V for every learner (the paper's robustness check with RF and MLP)", (*sections, TABLE5_EXPLANATION)
    )


def table4(gender: pd.DataFrame, labels: Mapping[str, str], settings: Sequence[str] = ()) -> PaperTable:
    """Table IV: unweighted average recall of the gender classifiers trained on original and on
    neutralized notes, after the majority-gender baseline (``gender``: one row per classifier, the
    constant baseline's ``trained_on`` starting with "constant")."""
    constant = gender["trained_on"].str.startswith("constant")
    baseline = gender[constant].iloc[[0]].assign(embedding="Baseline", trained_on="-")
    trained = gender[~constant].assign(embedding=lambda f: f["embedding"].map(lambda e: labels.get(e, e)))
    table = pd.concat([baseline, trained], ignore_index=True).rename(
        columns={"embedding": "method", "uar": "gender_uar"}
    )
    notes = (
        "Tested on the original test notes of the task; the baseline predicts the training set's majority "
        "gender for every note (UAR 0.5 by construction, computed).",
        *settings,
    )
    return PaperTable(
        table[["method", "trained_on", "gender_uar", "task", "train_notes", "test_notes"]],
        "Table IV: unweighted average recall of gender classifiers (SVM) trained on original vs neutralized notes",
        notes,
    )
