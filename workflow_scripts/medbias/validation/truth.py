"""The demo world's truth file read against the tables: which decade, task, group, category or
embedding carries a planted effect and which is a control.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

BELOW_POWER = "below power"
"""The truth of a planted effect's row on a test known before the data to lack power (a plant's task
outside the ``cohorts`` it is asserted on): reported with its margin, not counted in the verdict."""


NOT_A_NULL = "not a null"
"""The truth of a control row whose construction does not make it a null of the test that reads it
(nothing is planted, yet the test's null does not describe it): reported with its result and why, not
counted among the controls."""


def planted_strengths(pubmed_truth: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """Planted pair -> decade label -> planted strength, from the truth file's own decade labels."""
    decades = [d["decade"] for d in pubmed_truth["decades"]]
    return {p["name"]: dict(zip(decades, p["strengths"])) for p in pubmed_truth["planted_pairs"]}


def mirror_rows(gaps: pd.DataFrame) -> pd.Series:
    """True for a gap whose mirror is also in ``gaps``: the row of group h compared with g, where
    g (sorting before h) is compared with h in the same model, task, attribute and metric."""
    keys = ["model", "task", "attribute", "metric"]
    pairs = set(zip(*(gaps[k] for k in keys), gaps["group"].astype(str), gaps["compared_with"].astype(str)))
    return pd.Series(
        [
            (*key, other, group) in pairs and other < group
            for *key, group, other in zip(
                *(gaps[k] for k in keys), gaps["group"].astype(str), gaps["compared_with"].astype(str)
            )
        ],
        index=gaps.index,
    )


def recall_gap_truth(
    gaps: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    task_cohorts: Mapping[str, str] | None = None,
    classifiers_reading: Mapping[str, Collection[str]] | None = None,
) -> pd.DataFrame:
    """The defined recall gaps of every model, task, attribute and group with a ``truth`` column:
    planted for the disadvantaged group of each planted recall gap on every task whose label
    (``task_labels``: task id -> phenotype, from tasks.csv) is its phenotype, control elsewhere.
    Left out, being neither: every other gap on those tasks and on the aggregate tasks the phenotype
    feeds (any_<type>, any_disease). The other group of a two-group attribute mirrors the planted
    gap, an intersection with the planted attribute carries it (F & WHITE), and any attribute whose
    groups differ in their share of the disadvantaged group inherits part of it (ethnicity, where
    one ethnicity has more women).

    A gap and its mirror (group h against g where g is compared with h: the same two rates, the
    same p) are one test, so only the row of the group that sorts first is kept; counted twice, one
    flag would count as two families.

    With ``task_cohorts`` (task id -> cohort, from tasks.csv), a plant that names the ``cohorts`` it is
    asserted on marks its rows on the other cohorts' tasks ``BELOW_POWER`` instead of planted.

    ``classifiers_reading`` (attribute -> the models whose classifiers predict by it where the labels do
    not: ``control_nulls.classifiers_reading``) marks those models' controls on that attribute
    ``NOT_A_NULL``, and so its controls on every crossing of that attribute (gender x ethnicity): the labels
    are balanced over it, but the classifier the test reads is not blind to it, so a gap there can be the
    classifier's own."""
    recall = gaps[(gaps["metric"] == "recall") & gaps["gap"].notna()].copy()
    recall = recall[~mirror_rows(recall)]
    label = recall["task"].map(task_labels)
    planted_units, left_out, below_power = set(), set(), set()
    for plant in mimic_truth["planted_recall_gaps"]:
        touched = label.isin(plant_labels(mimic_truth, plant["phenotype"]))
        exact = (
            (label == plant["phenotype"])
            & (recall["attribute"] == plant["attribute"])
            & (recall["group"] == plant["disadvantaged"])
        )
        planted_units |= set(recall.index[exact])
        left_out |= set(recall.index[touched & ~exact])
        if task_cohorts is not None and "cohorts" in plant:
            asserted = recall["task"].map(task_cohorts).isin(plant["cohorts"])
            below_power |= set(recall.index[exact & ~asserted])
    # an intersectional plant leaves a share of its gap in every attribute of its tasks: none is a control
    left_out |= set(recall.index[label.isin(intersection_touched_labels(mimic_truth))])
    recall = recall.drop(index=list(left_out - planted_units))
    recall["truth"] = [
        BELOW_POWER if i in below_power else "planted" if i in planted_units else "control" for i in recall.index
    ]
    for attribute, models in (classifiers_reading or {}).items():
        crosses = recall["attribute"].map(lambda a: attribute in str(a).split(" x "))
        read = (recall["truth"] == "control") & crosses & recall["model"].isin(models)
        recall.loc[read, "truth"] = NOT_A_NULL
    return recall


def plant_labels(mimic_truth: Mapping[str, Any], phenotype: str) -> list[str]:
    """The task labels a plant on ``phenotype`` reaches: the phenotype and the aggregates it feeds."""
    kind = mimic_truth["phenotypes"][phenotype]["type"]
    return [phenotype, f"any_{kind}", "any_disease"]


def mitigation_recall_truth(
    changes: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    model: str = "baseline",
    method: str = "threshold",
    task_cohorts: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The mitigation stage's recall gaps (``gap_changes.parquet``) of ``method`` on ``model`` that
    are defined before and after, marked by ``recall_gap_truth`` on their gaps before mitigation
    (``gap`` and ``compared_with`` are the 'before' columns); empty when the stage did not run it."""
    chosen = changes[(changes["model"] == model) & (changes["method"] == method)]
    if chosen.empty:
        return chosen.assign(truth=pd.Series(dtype=str))
    before = chosen.rename(columns={"compared_with_before": "compared_with", "gap_before": "gap"})
    return recall_gap_truth(before[before["gap_after"].notna()], mimic_truth, task_labels, task_cohorts)


def intersection_touched_labels(mimic_truth: Mapping[str, Any]) -> set[str]:
    """The task labels the planted intersectional gaps reach (``plant_labels``)."""
    return {
        label
        for plant in mimic_truth.get("planted_intersectional_gaps", [])
        for label in plant_labels(mimic_truth, plant["phenotype"])
    }


def recall_gap_touched_labels(mimic_truth: Mapping[str, Any]) -> set[str]:
    """The task labels the planted per-attribute recall gaps reach (``plant_labels``)."""
    return {
        label for plant in mimic_truth["planted_recall_gaps"] for label in plant_labels(mimic_truth, plant["phenotype"])
    }


def touched_labels(mimic_truth: Mapping[str, Any]) -> set[str]:
    """The task labels any plant reaches, per attribute or intersectional (``plant_labels``)."""
    return intersection_touched_labels(mimic_truth) | recall_gap_touched_labels(mimic_truth)


def task_maps(tasks: pd.DataFrame) -> tuple[dict[str, str], dict[str, str]]:
    """tasks.csv read as the validation reads it: task id -> phenotype label, and task id -> cohort."""
    return dict(zip(tasks["task"], tasks["label"])), dict(zip(tasks["task"], tasks["cohort"]))


def plant_models(plant: Mapping[str, Any], analysed: Sequence[str]) -> list[str]:
    """The models a planted intersectional gap is asserted on: those it names (``models``), else every
    ``analysed`` model."""
    return list(plant.get("models") or analysed)


def intersection_truth(
    worst: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    task_cohorts: Mapping[str, str],
) -> pd.DataFrame:
    """The intersectional table's tested worst recall cells with a ``truth`` column: planted for a
    planted intersectional gap's crossing on each task of its phenotype in one of its ``cohorts``
    (``task_cohorts``: task id -> cohort, from tasks.csv), for the models it names (``models``; every
    model when it names none), control on every task no intersectional plant reaches
    (``intersection_touched_labels``), left out otherwise (another model's cells on the plant's tasks:
    its classifier may not read the evidence withheld, so its worst cell is neither a plant nor a
    null). The worst cell is tested beyond the crossed attributes' main effects, so a task whose
    per-attribute gap is planted is a control too, marked in ``per_attribute_plant`` (the level of the
    test where the attributes carry gaps of their own). Parity and specificity are no controls: the
    classifier reads age and the acuity scores, and prevalence rises with age in the demo world, so
    older cells differ in truth."""
    rows = worst[(worst["metric"] == "recall") & worst["p_value"].notna()].copy()
    label = rows["task"].map(task_labels)
    planted = pd.Series(False, index=rows.index)
    for plant in mimic_truth.get("planted_intersectional_gaps", []):
        planted |= (
            (label == plant["phenotype"])
            & rows["task"].map(task_cohorts).isin(plant["cohorts"])
            & (rows["crossing"] == " x ".join(plant["crossing"]))
            & rows["model"].isin(plant_models(plant, rows["model"].unique()))
        )
    rows = rows[planted | ~label.isin(intersection_touched_labels(mimic_truth))]
    rows["truth"] = np.where(planted[rows.index], "planted", "control")
    rows["per_attribute_plant"] = label[rows.index].isin(recall_gap_touched_labels(mimic_truth))
    return rows


def logprob_distances(table: pd.DataFrame, logprob_truth: Mapping[str, Any]) -> pd.DataFrame:
    """Table 3 (gender set), one row per model and leaning category of the truth file: its mean
    difference minus the control category's (``distance``), the Mann-Whitney p against the control,
    ``on_lean_side`` (distance > 0 for a male lean, < 0 for a female one), and the number of attributes
    of the category and of the control (the test's sample sizes)."""
    control = logprob_truth["control_category"]
    gender = table[table["target_set"] == "gender"]
    controls = gender[gender["category"] == control].set_index("model")
    reference = controls["mean_difference"]
    cells = gender[(gender["category"] != control) & gender["category"].isin(list(logprob_truth["categories"]))]
    lean = cells["category"].map(lambda c: logprob_truth["categories"][c]["lean"])
    distance = cells["mean_difference"] - cells["model"].map(reference)
    return pd.DataFrame(
        {
            "model": cells["model"],
            "category": cells["category"],
            "lean": lean,
            "distance": distance,
            "p": cells["mannwhitney_vs_control_p"],
            "on_lean_side": distance * lean.map({"male": 1, "female": -1}) > 0,
            "attributes": cells["attributes"],
            "control_attributes": cells["model"].map(controls["attributes"]),
        }
    )


def logprob_model_roles(
    logprob_models: Sequence[str], variants: Sequence[str], base_model: str
) -> tuple[list[str], list[str]]:
    """Table 3's models split into those pretrained on the demo notes (the hurtful variants) and the
    untrained one (the demo's base model is a randomly initialised tiny BERT)."""
    return ([m for m in logprob_models if m in variants], [m for m in logprob_models if m == base_model])


def corpus_embeddings(embeddings: Mapping[str, Mapping[str, Any]], corpora: Sequence[str]) -> dict[str, str]:
    """Demo world: which configured embedding was trained on which truth corpus (its source file is
    ``<corpus>-w2v.bin``, as rules/synth.smk writes it)."""
    found = {}
    for corpus in corpora:
        names = [n for n, e in embeddings.items() if Path(str(e["source"])).name == f"{corpus}-w2v.bin"]
        if len(names) != 1:
            raise ValueError(f"demo world: expected one embedding whose source is {corpus}-w2v.bin, found {names}")
        found[corpus] = names[0]
    return found


def demo_set_contrasts(tables: Mapping[str, pd.DataFrame], vignette_truth: Mapping[str, Any]):
    """(model, row) for every contrast of the demo world's vignette set in the tables of the truth's
    trained vignette models (a model without a table is left out)."""
    for model in vignette_truth["trained_models"]:
        table = tables.get(model)
        if table is not None:
            for row in table[table["set"] == vignette_truth["set"]].itertuples(index=False):
                yield model, row
