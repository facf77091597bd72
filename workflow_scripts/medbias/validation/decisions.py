"""Every test's decisions on the demo world's studies: one row per (unit, p-value kind), ``truth``
"control" (nothing planted: a flag is a false positive) or "planted" (a flag is a detection), and
``flagged`` whether the test rejected at its level.

Sources: the rios study's seed replicates (WEAT), the plm study's SEAT (the untrained model's every
test counts as a control: it learned nothing), the hurtful study's fairness gaps after BH and its
Table 3 log-probability score, and the mental study's counterfactual mismatch (McNemar's exact test of
its direction). The constructed null worlds add theirs (``null_worlds``); ``error_rates`` pools them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.fairness import benjamini_hochberg_by
from medbias.validation.truth import (
    demo_set_contrasts,
    intersection_truth,
    logprob_distances,
    mitigation_recall_truth,
    planted_strengths,
    recall_gap_truth,
)

DECISION_COLUMNS = ["test", "source", "unit", "truth", "p_kind", "p", "flagged", "level"]


def rios_weat_decisions(
    seeds: pd.DataFrame, pubmed_truth: Mapping[str, Any], level: float = 0.05, table: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every decade x WEAT test x seed: planted where the truth plants the test with strength > 0 in
    that decade, control for the control tests and for every test in a decade of strength 0. With
    ``table`` (Figure 1's, replicate 0) holding ``p_document``, the document-level null's decisions too."""
    strengths = planted_strengths(pubmed_truth)
    rows = []
    with_document = table is not None and "p_document" in table.columns
    document = table.set_index(["decade", "test"])["p_document"] if with_document else None
    for r in seeds.itertuples(index=False):
        strength = 0.0 if r.control else strengths.get(r.test, {}).get(r.decade, 0.0)
        truth = "planted" if strength > 0 else "control"
        unit = f"{r.decade} {r.test} seed {r.replicate}" + (f" (strength {strength})" if strength else "")
        kinds = [("classic permutation", r.p_value), ("calibrated null", r.p_calibrated)]
        if document is not None and r.replicate == 0:
            kinds.append(("document-level null", float(document.get((r.decade, r.test), np.nan))))
        for kind, p in kinds:
            if np.isfinite(p):
                rows.append(["WEAT", "rios demo world (word2vec per decade)", unit, truth, kind, p, p < level, level])
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def seat_decisions(seat: pd.DataFrame, plm_truth: Mapping[str, Any], level: float = 0.05) -> pd.DataFrame:
    """SEAT of every model without debiasing: on the trained models the truth's planted tests are
    planted and its controls controls; every test of a model that was not trained is a control."""
    rows = []
    trained = set(plm_truth["trained_models"])
    plain = seat[(seat["debias"] == "none") & (seat["status"] == "ok")]
    for r in plain.itertuples(index=False):
        if r.model in trained:
            truth = (
                "planted"
                if r.test in plm_truth["seat_planted"]
                else "control"
                if r.test in plm_truth["seat_controls"]
                else None
            )
        else:
            truth = "control"
        if truth is None:
            continue
        for kind, p in (("classic permutation", r.p_value), ("calibrated null", getattr(r, "p_calibrated", np.nan))):
            if np.isfinite(p):
                rows.append(
                    [
                        "SEAT",
                        "plm demo world (tiny BERT, GPT-2; untrained BART)",
                        f"{r.model} {r.test}",
                        truth,
                        kind,
                        p,
                        p < level,
                        level,
                    ]
                )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def gap_decisions(
    gaps: pd.DataFrame, mimic_truth: Mapping[str, Any], task_labels: Mapping[str, str], alpha: float = 0.05
) -> pd.DataFrame:
    """Recall gaps as ``recall_gap_truth`` marks them. Flags: BH over the score-test p (what Table C3
    uses), BH over the counted p (floored at 2/(R+1)), and the uncorrected 95% interval."""
    recall = recall_gap_truth(gaps, mimic_truth, task_labels)
    counted = benjamini_hochberg_by(recall, "p_bootstrap", ["model", "attribute", "group"], alpha)[1].to_numpy()
    rows = []
    for k, (_, r) in enumerate(recall.iterrows()):
        unit = f"{r['model']} {r['task']} {r['attribute']}={r['group']}"
        for kind, p, flagged in (
            ("score-test p, BH", r["p_bh"], bool(r["significant_bh"])),
            ("counted p, BH", r["p_bootstrap"], bool(counted[k])),
            ("95% interval excludes 0, uncorrected", np.nan, bool(r["significant"])),
        ):
            rows.append(
                ["fairness recall gap", "hurtful demo world (57 tasks)", unit, r["truth"], kind, p, flagged, alpha]
            )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def mitigation_decisions(
    changes: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    alpha: float = 0.05,
    model: str = "baseline",
    method: str = "threshold",
) -> pd.DataFrame:
    """The mitigation stage's recall gaps of ``method`` on ``model`` as ``recall_gap_truth`` marks
    them before mitigation. A planted gap is flagged when it is closed (``mitigation_effects.closures``:
    a narrowing significant after BH and the gap after equivalent to 0 within the stage's margin; the
    method's power to show a closure); a control when it is widened after BH over the tasks, or opened
    (a widening significant after BH from a gap equivalent to 0)."""
    recall = mitigation_recall_truth(changes, mimic_truth, task_labels, model, method)
    rows = []
    for _, r in recall.iterrows():
        unit = f"{model} {method} {r['task']} {r['attribute']}={r['group']}"
        if r["truth"] == "planted":
            kinds = [("closed: narrowed (BH), equivalent to 0 after (TOST)", r["p_change_bh"], bool(r["closed"]))]
        else:
            kinds = [
                ("widened: change test, BH", r["p_change_bh"], bool(r["significant_change_bh"] and r["change"] > 0)),
                ("opened: widened (BH) from a gap equivalent to 0 (TOST)", r["p_change_bh"], bool(r["opened"])),
            ]
        for kind, p, flagged in kinds:
            rows.append(
                [
                    f"mitigation ({method}) recall gap",
                    "hurtful demo world (57 tasks)",
                    unit,
                    r["truth"],
                    kind,
                    p,
                    flagged,
                    alpha,
                ]
            )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def intersection_decisions(
    worst: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    task_cohorts: Mapping[str, str],
    alpha: float = 0.05,
) -> pd.DataFrame:
    """The intersectional table's worst cells as ``intersection_truth`` marks them, the controls of
    tasks with a planted per-attribute gap counted apart (their own source). Flags: the max-T p of
    the worst cell under the main-effects model after BH over the tasks (what the table reports), the
    same p uncorrected, and the naive score test of the worst cell as if chosen in advance (the
    inflation the max-T test removes)."""
    rows = []
    for _, r in intersection_truth(worst, mimic_truth, task_labels, task_cohorts).iterrows():
        unit = f"{r['model']} {r['task']} {r['crossing']} {r['metric']}"
        source = (
            "hurtful demo world, tasks with a planted per-attribute gap"
            if r["per_attribute_plant"]
            else "hurtful demo world (57 tasks)"
        )
        for kind, p, flagged in (
            ("max-T p of the worst cell, BH", r["p_bh"], bool(r["significant_bh"])),
            ("max-T p of the worst cell, uncorrected", r["p_value"], r["p_value"] < alpha),
            ("naive score test of the worst cell, uncorrected", r["naive_p"], r["naive_p"] < alpha),
        ):
            rows.append(
                [
                    "intersectional worst cell",
                    source,
                    unit,
                    r["truth"],
                    kind,
                    p,
                    flagged,
                    alpha,
                ]
            )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def combine(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat([f for f in frames if len(f)], ignore_index=True)


def counterfactual_decisions(
    fairness: pd.DataFrame, mental_truth: Mapping[str, Any], learner: str = "svm", level: float = 0.05
) -> pd.DataFrame:
    """Table V's mismatch of the models trained on the original notes, by McNemar's exact test of its
    direction (``mismatch_p``) and by its rank among classifiers retrained with the genders permuted
    (``mismatch_null_p``, where drawn): planted for the task with a planted label bias, control for the
    truth's control tasks, on every embedding."""
    planted = {b["task"] for b in mental_truth["planted_label_bias"]}
    controls = set(mental_truth["control_tasks"])
    part = fairness[(fairness["learner"] == learner) & (fairness["treatment"] == "original")]
    rows = []
    for r in part.itertuples(index=False):
        truth = "planted" if r.task in planted else "control" if r.task in controls else None
        if truth is None:
            continue
        tests = [("McNemar exact", r.mismatch_p)]
        if getattr(r, "null_draws", 0):
            tests.append(("gender-permutation null, calibrated", r.mismatch_null_p))
        for kind, p in tests:
            rows.append(
                [
                    "counterfactual mismatch",
                    f"mental demo world ({learner}, original notes)",
                    f"{r.embedding} {r.task}",
                    truth,
                    kind,
                    p,
                    p < level,
                    level,
                ]
            )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def logprob_decisions(
    table: pd.DataFrame,
    logprob_truth: Mapping[str, Any],
    pretrained: Sequence[str],
    untrained: Sequence[str],
    level: float = 0.05,
) -> pd.DataFrame:
    """Table 3's Mann-Whitney p of each leaning category against the control category (gender set):
    planted on the pretrained models (found only on the side of the category's lean), control on
    the untrained one (it learned nothing)."""
    rows = []
    for r in logprob_distances(table, logprob_truth).itertuples(index=False):
        truth = "planted" if r.model in pretrained else "control" if r.model in untrained else None
        if truth is None:
            continue
        flagged = r.p < level and (r.on_lean_side or truth == "control")
        rows.append(
            [
                "log-probability score",
                "hurtful demo world (Table 3, gender)",
                f"{r.model} {r.category}",
                truth,
                LOGPROB_P_KINDS["attribute"],
                r.p,
                bool(flagged),
                level,
            ]
        )
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


LOGPROB_P_KINDS = {
    "attribute": "Mann-Whitney vs control, attribute as unit (Table 3)",
    "pair": "Mann-Whitney vs control, template item as unit",
}


VIGNETTE_P_KINDS = {"d_probability_p": "sign-flip, any difference", "d_probability_p_min": "sign-flip, beyond margin"}


def vignette_decisions(
    tables: Mapping[str, pd.DataFrame], vignette_truth: Mapping[str, Any], level: float = 0.05
) -> pd.DataFrame:
    """The vignette contrasts of the demo's trained vignette models on the demo set: the truth's
    planted contrast is planted; its demographic controls and every same-group name and town swap are
    controls. Each under both p-values (any difference; beyond the margin), flagged at ``level``."""
    planted = {(p["decision"], p["contrast"]) for p in vignette_truth["planted"]}
    rows = []
    for model, r in demo_set_contrasts(tables, vignette_truth):
        truth = "planted" if (r.decision, r.contrast) in planted else "control"
        unit = f"{model} {r.decision}: {r.contrast} ({r.kind})"
        for column, kind in VIGNETTE_P_KINDS.items():
            p = float(getattr(r, column))
            rows.append(["vignette contrast", "vignettes demo world (tiny plain and chat models)", unit, truth,
                         kind, p, p < level, level])  # fmt: skip
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)
