"""The mitigation stage and the intersectional analysis as the DAG runs them: on the demo world, the
post-processor the stage fitted is fairlearn's ThresholdOptimizer refitted directly on the saved validation
scores (and so are its refits on validation resamples), it narrows the planted recall gap (and calls it
closed only by its equivalence test), the intersectional table finds a gap planted in one cell that no
per-attribute gap carries (when the world has one), and no worst intersectional recall cell of a task
without an intersectional plant is significant after BH, the tasks with a per-gender plant included; on
the wiring world every method, attribute and crossing has its outputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import run_config

from medbias.core.seeds import rule_seed
from medbias.studies.hurtful.mitigation import REFIT_COLUMN, task_random_state
from medbias.studies.hurtful.mitigation.threshold import fit_threshold_optimizer, fittable_groups, refit_decisions

PLANTED_TARGETS = ("hurtful",)
WIRING_TARGETS = ("hurtful",)


@pytest.fixture(scope="module")
def planted_run(planted_study):
    return planted_study(*PLANTED_TARGETS)


@pytest.fixture(scope="module")
def wiring_run(wiring_study):
    return wiring_study(*WIRING_TARGETS)


def test_the_stage_is_thresholdoptimizer_refitted_on_the_saved_validation_scores(planted_run):
    """One demo task (the planted acute renal failure, all notes) and attribute (gender): fairlearn's
    post-processor fitted here on validation_predictions.parquet, with the stage's settings and seed,
    predicts exactly the stage's test predictions."""
    config = run_config(planted_run)
    downstream = planted_run / "results" / "hurtful" / "downstream"
    settings = config["hurtful"]["mitigation"]["threshold"]
    tasks = pd.read_csv(planted_run / "results" / "mimic" / "tasks.csv")["task"].tolist()
    task = "pa_acute_renal"
    validation = pd.read_parquet(downstream / "baseline" / "validation_predictions.parquet")
    validation = validation[validation["task"] == task]
    test = pd.read_parquet(downstream / "baseline" / "test_predictions.parquet")
    test = test[test["task"] == task]
    groups = fittable_groups(validation, "gender", settings["min_positives"], settings["min_negatives"])
    assert groups == ["F", "M"]
    optimizer = fit_threshold_optimizer(validation, "gender", settings)
    seed = rule_seed(config["seed"], "hurtful_mitigate")
    expected = optimizer.predict(
        test[["probability"]].to_numpy(),
        sensitive_features=test["gender"].to_numpy(),
        random_state=task_random_state(seed, tasks.index(task), "gender"),
    )
    stage = pd.read_parquet(downstream / "baseline" / "mitigation" / "threshold" / "predictions.parquet")
    stage = stage[(stage["task"] == task) & (stage["attribute"] == "gender")]
    assert stage["ICUSTAY_ID"].tolist() == test["ICUSTAY_ID"].tolist()
    assert np.array_equal(stage["prediction"].to_numpy(), expected)
    # the two-stage bootstrap's first stage: the same refits on the same validation resamples
    rng = np.random.default_rng(task_random_state(seed, tasks.index(task), "gender:refits"))
    refits = refit_decisions(validation, test, "gender", settings, settings["refits"], rng)
    assert refits.shape == (len(test), settings["refits"]) > (len(test), 0)
    assert np.array_equal(np.vstack(stage[REFIT_COLUMN].to_numpy()), refits)
    changes = pd.read_parquet(downstream / "mitigation" / "gap_changes.parquet")
    assert set(changes.loc[changes["method"] == "threshold", "after_refits"]) == {settings["refits"]}
    assert set(changes.loc[changes["method"] != "threshold", "after_refits"]) == {0}


def test_the_planted_gaps_are_closed_or_found_and_no_control_cell_flagged(planted_run, demo_truth):
    downstream = planted_run / "results" / "hurtful" / "downstream"
    changes = pd.read_parquet(downstream / "mitigation" / "gap_changes.parquet")
    closed = changes[
        (changes["method"] == "threshold")
        & changes["task"].isin(["pa_acute_renal", "pf_acute_renal"])
        & (changes["attribute"] == "gender")
        & (changes["group"] == "F")
        & (changes["metric"] == "recall")
    ]
    # the post-processor narrows the planted gap on the cohort it is asserted on (the truth file's cohorts: the
    # first-note task's gap is known before its result to lack power at this size, and the validation reports
    # it apart); "closed" is a claim of its own: the narrowing significant after BH and the gap after within
    # the margin by two one-sided tests (at the demo's size the second has little power, so it is recomputed
    # here, not required)
    assert len(closed) == 2
    cohorts = {c for plant in demo_truth["mimic"]["planted_recall_gaps"] for c in plant["cohorts"]}
    task_cohort = pd.read_csv(planted_run / "results" / "mimic" / "tasks.csv").set_index("task")["cohort"]
    asserted = closed[closed["task"].map(task_cohort).isin(cohorts)]
    assert len(asserted) == 1 and (asserted["ci_high_before"] < 0).all() and (asserted["change"] < 0).all()
    margin = run_config(planted_run)["hurtful"]["mitigation"]["equivalence_margin"]
    within = (margin - closed["gap_after"].abs()) / closed["se_after"] >= 1.6448536
    assert closed["equivalent_after"].tolist() == within.tolist()
    assert closed["closed"].tolist() == (closed["significant_change_bh"] & within).tolist()
    worst = pd.read_csv(downstream / "intersections" / "worst_cells.csv")
    recall = worst[(worst["metric"] == "recall") & worst["p_value"].notna()]
    tasks = pd.read_csv(planted_run / "results" / "mimic" / "tasks.csv")
    analysed = run_config(planted_run)["hurtful"]["intersections"]["models"]
    for plant in demo_truth["mimic"].get("planted_intersectional_gaps", []):
        in_scope = (tasks["label"] == plant["phenotype"]) & tasks["cohort"].isin(plant["cohorts"])
        plant_tasks = tasks.loc[in_scope, "task"]
        for model in plant.get("models") or analysed:
            found = recall[
                (recall["model"] == model)
                & recall["task"].isin(plant_tasks)
                & (recall["crossing"] == " x ".join(plant["crossing"]))
            ]
            assert len(found) == len(plant["cohorts"]) and (found["worst_cell"] == plant["cell"]).all(), found
            assert (found["value"] < 0).all() and (found["ci_high"] < 0).all(), found
            assert found["significant_bh"].all(), found
            gaps = pd.read_parquet(downstream / model / "gaps.parquet")
            per_attribute = gaps[
                gaps["task"].isin(plant_tasks) & (gaps["metric"] == "recall") & ~gaps["attribute"].str.contains(" x ")
            ]
            assert len(per_attribute) > 0 and not per_attribute["significant_bh"].astype(bool).any()
    from medbias.validation.truth import intersection_touched_labels

    # every task no intersectional plant reaches is a control, those with a per-gender plant among them:
    # the worst cell is tested beyond the attributes' own gaps
    touched = set(tasks.loc[tasks["label"].isin(intersection_touched_labels(demo_truth["mimic"])), "task"])
    controls = recall[~recall["task"].isin(touched)]
    # each family (model, crossing) flags anything with at most 5% chance under the null; two at once, 0.25%
    flagged_families = controls[controls["significant_bh"]].groupby(["model", "crossing"]).ngroups
    assert len(controls) > 40 and flagged_families <= 1, controls[controls["significant_bh"]]
    assert controls["task"].isin(["pa_acute_renal", "pf_acute_renal"]).any()
    # the worst cell read as if chosen in advance flags no fewer controls than the max-T test (on one world
    # they can tie, 5 and 5 on the balanced world; the gap at scale is known-answer tested on 200 null tasks
    # in test_intersections and counted on 400 in error_rates.md)
    assert (controls["naive_p"] < 0.05).sum() >= (controls["p_value"] < 0.05).sum()


def test_every_method_attribute_and_crossing_has_its_outputs(wiring_run):
    config = run_config(wiring_run)
    mitigation, intersections = config["hurtful"]["mitigation"], config["hurtful"]["intersections"]
    downstream = wiring_run / "results" / "hurtful" / "downstream"
    test = pd.read_parquet(downstream / "baseline" / "test_predictions.parquet")
    assert {"age", "gender"} <= set(test.columns)
    validation = pd.read_parquet(downstream / "baseline" / "validation_predictions.parquet")
    assert set(validation["task"]) == set(test["task"]) and not set(validation["ICUSTAY_ID"]) & set(test["ICUSTAY_ID"])
    for method in ("threshold", "reductions", "reweighing"):
        predictions = pd.read_parquet(downstream / "baseline" / "mitigation" / method / "predictions.parquet")
        assert set(predictions["attribute"]) == set(mitigation["attributes"])
        for attribute in mitigation["attributes"]:
            part = predictions[predictions["attribute"] == attribute]
            assert len(part) == len(test) and part["score"].between(0, 1).all() and part["decision"].between(0, 1).all()
    summary = pd.read_csv(downstream / "mitigation" / "summary.csv")
    assert set(summary["method"]) == set(mitigation["methods"])
    assert set(summary["attribute"]) == set(mitigation["attributes"])
    adversarial = summary[summary["method"] == "adversarial"]
    assert set(adversarial["attribute"]) == {"gender"}  # the wiring world pretrains adv_gender only
    performance = pd.read_csv(downstream / "mitigation" / "performance_changes.csv")
    decided = {"accuracy", "balanced_accuracy", "tpr", "fpr", "ppv"}
    # a post-processor keeps the score: its ranking is of its decisions, every other method's of its scores
    for method, part in performance.groupby("method"):
        ranked = {"auroc_of_decisions", "auprc_of_decisions"} if method == "threshold" else {"auroc", "auprc"}
        assert set(part["metric"]) == decided | ranked, method
    assert (performance["before_low"] <= performance["before_high"]).all()
    for name in ("gap_vs_cost.png", "gap_vs_cost.pdf", "fit.csv", "summary.md", "cost.md", "predictions.parquet"):
        assert (downstream / "mitigation" / name).stat().st_size > 0
    worst = pd.read_csv(downstream / "intersections" / "worst_cells.csv")
    assert set(worst["crossing"]) == {" x ".join(c) for c in intersections["crossings"]}
    assert set(worst["metric"]) == {"parity", "recall", "specificity", "epsilon"}
    cells = pd.read_csv(downstream / "intersections" / "cells.csv")
    assert (~cells["recall_tested"] | (cells["positives"] >= intersections["min_cell"]["positives"])).all()
    for crossing in intersections["crossings"]:
        assert (downstream / "intersections" / f"cells_{'_x_'.join(crossing)}.png").stat().st_size > 10_000
