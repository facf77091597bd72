"""The mitigation stage (medbias.studies.hurtful.mitigation and mitigation_effects): Kamiran-Calders
weights by hand, weighted training, fairlearn's post-processor and reductions as the stage calls them
(refitted directly, byte-for-byte repeatable), paired before/after gaps against hand counts and
against gap_table's own intervals, and the registry and plan."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from medbias.metrics.bootstrap import within_label_resamples, within_strata_resamples
from medbias.studies.hurtful.mitigation import (
    MITIGATIONS,
    REFIT_COLUMN,
    MitigationInputs,
    RetrainingInputs,
    mitigation,
    run_mitigation,
    task_random_state,
)
from medbias.studies.hurtful.mitigation.reweighing import kamiran_calders_weights, stay_weights
from medbias.studies.hurtful.mitigation.threshold import fit_threshold_optimizer, fittable_groups, refit_decisions
from medbias.studies.hurtful.mitigation_effects import (
    bootstrap_z_p,
    closures,
    cost_summary,
    mitigation_effects,
    mitigation_summary,
    paired_gap_changes,
    paired_performance,
    replicates_over_refits,
)

LOG = logging.getLogger("test")
THRESHOLD = {
    "constraints": "true_positive_rate_parity",
    "objective": "balanced_accuracy_score",
    "grid_size": 1000,
    "min_positives": 5,
    "min_negatives": 5,
    "refits": 0,
}
REDUCTIONS = {
    "constraints": "true_positive_rate_parity",
    "eps": 0.01,
    "max_iter": 20,
    "C": 1.0,
    "solver_iterations": 500,
}


def test_kamiran_calders_weights_by_hand():
    # A: labels 1, 0, 0; B: labels 1, 1, 0. P(A) = P(B) = 1/2, P(y=1) = P(y=0) = 1/2.
    # w(A,1) = 1/4 / (1/6) = 1.5; w(A,0) = 1/4 / (2/6) = 0.75; w(B,1) = 0.75; w(B,0) = 1.5
    weights = kamiran_calders_weights(np.array(["A", "A", "A", "B", "B", "B"]), np.array([1, 0, 0, 1, 1, 0]))
    assert weights == pytest.approx([1.5, 0.75, 0.75, 0.75, 0.75, 1.5])
    assert weights.mean() == pytest.approx(1.0)  # every (a, y) present
    # in the weighted rows the label no longer depends on the group
    for group in ("A", "B"):
        member = np.array(["A", "A", "A", "B", "B", "B"]) == group
        positive = np.array([1, 0, 0, 1, 1, 0])[member] == 1
        assert weights[member][positive].sum() / weights[member].sum() == pytest.approx(0.5)


def test_stay_weights_count_each_stay_once_and_give_its_weight_to_every_window():
    rows = pd.DataFrame(
        {"ICUSTAY_ID": [1, 1, 1, 2, 3, 4], "gender": ["F", "F", "F", "F", "M", "M"], "label": [1, 1, 1, 0, 1, 1]}
    )
    # stays: F 1, F 0, M 1, M 1 -> P(F) = 1/2, P(y=1) = 3/4; w(F,1) = 3/8 / (1/4) = 1.5, w(F,0) = 1/8 / (1/4) = 0.5,
    # w(M,1) = 3/8 / (1/2) = 0.75
    assert stay_weights(rows, "gender") == pytest.approx([1.5, 1.5, 1.5, 0.5, 0.75, 0.75])


def test_unit_weights_train_exactly_as_no_weights_and_a_wrong_shape_is_refused():
    import torch

    from medbias.studies.hurtful.classify import NetworkConfig, train_networks

    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(80, 6)).astype(np.float32), (rng.random((80, 1)) < 0.4).astype(np.float32)
    config = NetworkConfig(2, 2, 0.0)
    training = {"max_epochs": 3, "patience": 2, "batch_size": 16}
    plain = train_networks(x, y, x[:20], y[:20], config, [5], **training)[0]
    ones = train_networks(x, y, x[:20], y[:20], config, [5], train_weights=np.ones_like(y), **training)[0]
    for key, value in plain.state.items():
        assert torch.equal(value, ones.state[key])
    doubled = train_networks(x, y, x[:20], y[:20], config, [5], train_weights=rng.random(y.shape) * 3, **training)[0]
    assert any(not torch.equal(value, doubled.state[key]) for key, value in plain.state.items())
    with pytest.raises(ValueError, match="train_weights of shape"):
        train_networks(x, y, x[:20], y[:20], config, [5], train_weights=np.ones(80), **training)


def _scored_world(seed: int = 0, n: int = 600):
    """Validation and test stays of two tasks whose scores are weaker evidence for group F's
    positives (a recall gap at one threshold), with the study's prediction columns."""
    rng = np.random.default_rng(seed)
    frames = []
    for split in ("validation", "test"):
        for task in ("t1", "t2"):
            gender = rng.choice(["F", "M"], n)
            label = (rng.random(n) < 0.3).astype(int)
            strength = np.where(gender == "F", 0.8, 2.0) if task == "t1" else 1.5
            score = 1 / (1 + np.exp(-(rng.normal(size=n) + strength * label - 1)))
            frames.append(
                pd.DataFrame(
                    {
                        "split": split,
                        "task": task,
                        "ICUSTAY_ID": np.arange(n) + (0 if split == "validation" else 10_000),
                        "probability": score,
                        "label": label,
                        "prediction": (score >= 0.5).astype(int),
                        "gender": gender,
                        "language": "ENGL",
                        "ethnicity": rng.choice(["WHITE", "BLACK"], n),
                        "insurance": "Medicare",
                    }
                )
            )
    world = pd.concat(frames, ignore_index=True)
    return world[world["split"] == "validation"].drop(columns="split"), world[world["split"] == "test"].drop(
        columns="split"
    )


def _inputs(validation, test, **kwargs):
    tasks = pd.DataFrame({"task": ["t1", "t2"], "cohort": ["c1", "c1"]})
    return MitigationInputs(test=test, validation=validation, tasks=tasks, seed=11, **kwargs)


def test_threshold_is_fairlearns_post_processor_refitted_on_the_validation_scores_and_repeats_exactly():
    validation, test = _scored_world()
    predictions, fit = run_mitigation("threshold", _inputs(validation, test), ["gender"], THRESHOLD, LOG)
    for t, task in enumerate(["t1", "t2"]):
        optimizer = fit_threshold_optimizer(validation[validation["task"] == task], "gender", THRESHOLD)
        rows = test[test["task"] == task]
        expected = optimizer.predict(
            rows[["probability"]].to_numpy(),
            sensitive_features=rows["gender"].to_numpy(),
            random_state=task_random_state(11, t, "gender"),
        )
        got = predictions[predictions["task"] == task]
        assert got["ICUSTAY_ID"].tolist() == rows["ICUSTAY_ID"].tolist()
        assert np.array_equal(got["prediction"].to_numpy(), expected)
    again, _ = run_mitigation("threshold", _inputs(validation, test), ["gender"], THRESHOLD, LOG)
    assert pd.util.hash_pandas_object(again).equals(pd.util.hash_pandas_object(predictions))
    assert fit["fitted_groups"].tolist() == ["F, M", "F, M"] and fit["unfitted_test_rows"].tolist() == [0, 0]
    # on t1 the classifier's own threshold leaves F's recall far below M's; the post-processor narrows it
    rows = test[test["task"] == "t1"].assign(after=predictions[predictions["task"] == "t1"]["prediction"].to_numpy())
    positive = rows[rows["label"] == 1]
    before = positive.groupby("gender")["prediction"].mean()
    after = positive.groupby("gender")["after"].mean()
    assert abs(after["F"] - after["M"]) < abs(before["F"] - before["M"]) / 2


def test_a_group_too_small_to_fit_keeps_the_classifiers_predictions():
    validation, test = _scored_world()
    # ethnicity BLACK keeps only 3 validation positives in t1: it gets no thresholds of its own
    small = validation[(validation["ethnicity"] == "BLACK") & (validation["label"] == 1) & (validation["task"] == "t1")]
    validation = validation.drop(small.index[3:])
    assert fittable_groups(validation[validation["task"] == "t1"], "ethnicity", 5, 5) == ["WHITE"]
    predictions, fit = run_mitigation("threshold", _inputs(validation, test), ["ethnicity"], THRESHOLD, LOG)
    t1 = fit.set_index("task").loc["t1"]
    assert t1["fitted_groups"] == "" and "not mitigated" in t1["note"]
    assert t1["unfitted_test_rows"] == int((test["task"] == "t1").sum())
    got = predictions[predictions["task"] == "t1"]["prediction"].to_numpy()
    assert np.array_equal(got, test[test["task"] == "t1"]["prediction"].to_numpy())


def test_strata_resamples_keep_every_stratum_s_rows_and_size():
    strata = [np.array([4, 0]), np.array([1, 2, 5]), np.array([3])]
    index = within_strata_resamples(strata, 6, 300, np.random.default_rng(0))
    assert index.shape == (300, 6)
    assert set(index[:, :2].ravel()) == {0, 4} and set(index[:, 2:5].ravel()) == {1, 2, 5}
    assert (index[:, 5] == 3).all()
    # the labels' resample is the two-stratum case, positives first
    label = np.array([0, 1, 1, 0, 1])
    assert np.array_equal(
        within_label_resamples(label, 50, np.random.default_rng(3)),
        within_strata_resamples([np.array([1, 2, 4]), np.array([0, 3])], 5, 50, np.random.default_rng(3)),
    )
    with pytest.raises(ValueError, match="cover 5 rows, not 6"):
        within_strata_resamples([np.array([0, 1]), np.array([2, 3, 4])], 6, 2, np.random.default_rng(0))


def test_replicate_b_is_scored_by_refit_b_mod_r():
    refits = np.array([[0.0, 1.0, 0.5], [1.0, 1.0, 0.0]])  # two rows, three refits

    def compute(decisions, chosen):
        # the replicate numbers and the decisions they were given, so the pairing can be read back
        return {"sum": decisions.sum() + 0 * chosen, "replicate": chosen.astype(float)}

    values = replicates_over_refits(compute, refits, 7)
    assert values["replicate"].tolist() == list(range(7))
    assert values["sum"].tolist() == [1.0, 2.0, 0.5, 1.0, 2.0, 0.5, 1.0]
    # fewer replicates than refits: the first ones only
    assert replicates_over_refits(compute, refits, 2)["sum"].tolist() == [1.0, 2.0]


def test_refits_that_repeat_the_fit_give_the_one_stage_intervals_and_varying_refits_widen_them():
    label = np.array([1, 1, 0, 0, 1, 1, 0, 0] * 3)
    group = np.array((["M"] * 4 + ["F"] * 4) * 3)
    before = np.array([1, 0, 1, 0, 1, 1, 0, 0] * 3)
    after = np.array([0.5, 1, 0.2, 0, 1, 0.7, 0, 0.1] * 3)
    index = within_label_resamples(label, 400, np.random.default_rng(0))
    minimum = {"rows": 1, "positives": 1, "negatives": 1}

    def rows(refits):
        changes = paired_gap_changes(before, after, label, group, ["M", "F"], index, minimum, after_refits=refits)
        return {(r["group"], r["metric"]): r for r in changes}

    one_stage, same = rows(None), rows(np.repeat(after[:, None], 25, axis=1))
    for key, row in one_stage.items():
        for column in ("gap_after", "ci_low_after", "ci_high_after", "se_after", "change", "p_change"):
            assert same[key][column] == pytest.approx(row[column], nan_ok=True)
    # refits whose recall of M swings between 0.25 and 1 around the fitted rule's
    swing = np.repeat(after[:, None], 20, axis=1)
    swing[(group == "M") & (label == 1), :10], swing[(group == "M") & (label == 1), 10:] = 0.25, 1.0
    two_stage = rows(swing)
    assert two_stage[("M", "recall")]["gap_after"] == one_stage[("M", "recall")]["gap_after"]  # the fit's value
    assert two_stage[("M", "recall")]["se_after"] > 2 * one_stage[("M", "recall")]["se_after"]
    performance = {
        r["metric"]: r
        for r in paired_performance(
            np.linspace(0, 1, 24), before, np.linspace(0, 1, 24), after, label, index, changes_score=False
        )
    }
    refitted = {
        r["metric"]: r
        for r in paired_performance(
            np.linspace(0, 1, 24),
            before,
            np.linspace(0, 1, 24),
            after,
            label,
            index,
            changes_score=False,
            after_refits=np.repeat(after[:, None], 25, axis=1),
        )
    }
    for metric, row in performance.items():
        assert refitted[metric]["after_low"] == pytest.approx(row["after_low"], nan_ok=True)
        assert refitted[metric]["p_change"] == pytest.approx(row["p_change"], nan_ok=True)
    with pytest.raises(ValueError, match="keeps the classifier's score"):
        paired_performance(before, before, after, after, label, index, after_refits=swing)


def test_threshold_refits_are_fairlearn_refitted_on_resamples_within_group_and_label():
    validation, test = _scored_world(n=300)
    settings = {**THRESHOLD, "refits": 6}
    predictions, _ = run_mitigation("threshold", _inputs(validation, test), ["gender"], settings, LOG)
    one_stage, _ = run_mitigation("threshold", _inputs(validation, test), ["gender"], THRESHOLD, LOG)
    assert REFIT_COLUMN not in one_stage
    # the fitted rule's own predictions are those of the run without refits
    assert predictions.drop(columns=REFIT_COLUMN).equals(one_stage)
    refits = np.vstack(predictions[REFIT_COLUMN].to_numpy())
    assert refits.shape == (len(test), 6) and ((refits >= 0) & (refits <= 1)).all()
    # by hand for t2: the same resamples, refitted with fairlearn
    t = 1
    rows_v, rows_t = validation[validation["task"] == "t2"], test[test["task"] == "t2"]
    rng = np.random.default_rng(task_random_state(11, t, "gender:refits"))
    expected = refit_decisions(rows_v, rows_t, "gender", settings, 6, rng)
    assert np.array_equal(refits[(predictions["task"] == "t2").to_numpy()], expected)
    strata = rows_v["gender"] + "|" + rows_v["label"].astype(str)
    index = within_strata_resamples(
        [np.flatnonzero(strata.to_numpy() == s) for s in sorted(set(strata))],
        len(rows_v),
        6,
        np.random.default_rng(task_random_state(11, t, "gender:refits")),
    )
    optimizer = fit_threshold_optimizer(rows_v.iloc[index[2]], "gender", settings)
    by_hand = optimizer._pmf_predict(rows_t[["probability"]].to_numpy(), sensitive_features=rows_t["gender"])[:, 1]
    assert np.allclose(expected[:, 2], by_hand)
    assert refits.std(axis=1).max() > 0  # the refits differ from one another


def test_reweighing_and_reductions_retrain_on_the_features_and_repeat_exactly(tmp_path):
    from unit.test_classify import _task_world

    from medbias.studies.hurtful.classify import NetworkConfig, train_task_classifiers

    path, index, samples, windows, tasks = _task_world(tmp_path)
    training = {"max_epochs": 6, "patience": 2, "batch_size": 32, "learning_rate": 0.05}
    grid = [NetworkConfig(1, 2, 0.0), NetworkConfig(2, 2, 0.0)]
    classified = train_task_classifiers(
        np.load(path), index, samples, windows, tasks, grid, [0.5, 2.0], seed=3, training=training, log=LOG
    )
    retrain = RetrainingInputs(np.load(path, mmap_mode="r"), index, samples, windows, classified.selections, training)
    inputs = MitigationInputs(
        test=classified.predictions, validation=classified.validation, tasks=tasks, seed=3, retrain=retrain
    )
    for method, settings in (("reweighing", {}), ("reductions", REDUCTIONS)):
        first, fit = run_mitigation(method, inputs, ["gender"], settings, LOG)
        second, _ = run_mitigation(method, inputs, ["gender"], settings, LOG)
        assert pd.util.hash_pandas_object(first).equals(pd.util.hash_pandas_object(second)), method
        for task in tasks["task"]:
            expected = classified.predictions[classified.predictions["task"] == task]["ICUSTAY_ID"].tolist()
            assert first[first["task"] == task]["ICUSTAY_ID"].tolist() == expected, method
        assert first["score"].between(0, 1).all() and set(first["prediction"]) <= {0, 1}
        assert len(fit) == len(tasks)
    # the learnt tasks stay learnt under reweighing (feature 0 carries t1's and t3's label)
    reweighed, _ = run_mitigation("reweighing", inputs, ["gender"], {}, LOG)
    merged = reweighed.merge(classified.predictions[["task", "ICUSTAY_ID", "label"]], on=["task", "ICUSTAY_ID"])
    from sklearn.metrics import roc_auc_score

    t1 = merged[merged["task"] == "t1"]
    assert roc_auc_score(t1["label"], t1["score"]) > 0.85
    with pytest.raises(ValueError, match="needs the model's features"):
        run_mitigation("reweighing", _inputs(*_scored_world()), ["gender"], {}, LOG)


def _gap_rows(before: np.ndarray, after: np.ndarray, replicates: int = 200, **settings) -> dict:
    """``paired_gap_changes`` of four men then four women, labels 1 1 0 0 each, keyed by (group, metric)."""
    label = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    group = np.array(["M"] * 4 + ["F"] * 4)
    index = within_label_resamples(label, replicates, np.random.default_rng(0))
    minimum = {"rows": 1, "positives": 1, "negatives": 1}
    changes = paired_gap_changes(before, after, label, group, ["M", "F"], index, minimum, **settings)
    return {(r["group"], r["metric"]): r for r in changes}


def test_paired_gap_changes_by_hand():
    # M: labels 1 1 0 0, before 1 0 1 0 (recall 1/2), after 1 1 1 0 (recall 1);
    # F: labels 1 1 0 0, before 1 1 0 0 (recall 1), after 1 1 0 0 (recall 1)
    before = np.array([1, 0, 1, 0, 1, 1, 0, 0])
    after = np.array([1, 1, 1, 0, 1, 1, 0, 0])
    rows = _gap_rows(before, after)
    recall = rows[("M", "recall")]
    assert recall["gap_before"] == pytest.approx(-0.5) and recall["gap_after"] == pytest.approx(0.0)
    assert recall["change"] == pytest.approx(-0.5)
    # parity: M 2/4 -> 3/4, F 2/4 -> 2/4: gap 0 -> +0.25, |gap| widens by 0.25
    assert rows[("M", "parity")]["gap_before"] == pytest.approx(0.0)
    assert rows[("M", "parity")]["change"] == pytest.approx(0.25)
    # nothing changes where the predictions do not
    same = _gap_rows(before, before).values()
    assert all(r["change"] == 0 and r["change_low"] == 0 and r["change_high"] == 0 for r in same)
    assert all(r["p_change"] == 1.0 for r in same)


def test_a_randomised_rule_gives_expected_gaps_and_two_one_sided_tests_decide_equivalence():
    # M: positives decided with probability 0.5 and 1, negatives 0 and 0: expected recall 0.75;
    # F: positives 1 and 1: recall 1. The expected gap of M is -0.25, the mean over the rule's draws.
    decision = np.array([0.5, 1, 0, 0, 1, 1, 0, 0])
    rows = _gap_rows(decision, decision, 400, equivalence_margin=1)
    assert rows[("M", "recall")]["gap_after"] == pytest.approx(-0.25)
    draws = np.random.default_rng(1).random((20_000, 8)) < decision  # the rule's draws, each a 0/1 prediction
    recall_m = draws[:, :2].sum(axis=1) / 2
    assert np.mean(recall_m - 1.0) == pytest.approx(-0.25, abs=0.01)
    # equivalence: (margin - |gap|) / SE >= z_0.95, on the gap's bootstrap SE
    se = rows[("M", "recall")]["se_after"]
    assert se > 0 and rows[("M", "recall")]["equivalent_after"] == ((1.0 - 0.25) / se >= 1.644854)
    narrow = _gap_rows(decision, decision, 400, equivalence_margin=0.1)
    assert not narrow[("M", "recall")]["equivalent_after"]  # |gap| 0.25 lies outside +-0.1
    # the specificity gap is 0 in every resample: a point inside any margin
    assert narrow[("M", "specificity")]["se_after"] == 0 and narrow[("M", "specificity")]["equivalent_after"]


def test_closed_needs_a_significant_narrowing_and_equivalence_after_and_opened_the_mirror():
    rows = pd.DataFrame(
        {
            "significant_change_bh": [True, True, False, True, True],
            "change": [-0.3, -0.3, -0.3, 0.2, 0.2],
            "equivalent_after": [True, False, True, False, False],
            "equivalent_before": [False, False, False, True, False],
        }
    )
    closed, opened = closures(rows)
    # an interval that merely includes 0 after is not enough (row 2: not equivalent), nor is equivalence
    # without a significant narrowing (row 3)
    assert closed.tolist() == [True, False, False, False, False]
    assert opened.tolist() == [False, False, False, True, False]


def test_the_before_intervals_are_those_of_gap_table():
    """The stage draws the resamples hurtful_gaps draws for the same task and attribute: the 'before'
    gaps and intervals equal gaps.parquet's."""
    from medbias.studies.hurtful.gaps import gap_table

    _, test = _scored_world(3)
    after = test.assign(
        attribute="gender",
        score=test["probability"],
        prediction=1 - test["prediction"],
        decision=(1 - test["prediction"]).astype(float),
    )
    attributes = ["gender", "ethnicity"]
    minimum = {"rows": 10, "positives": 5, "negatives": 5}
    gaps, _ = mitigation_effects(test, {"reweighing": after}, ["t1", "t2"], attributes, {}, minimum, 100, 21)
    reference, _ = gap_table(test, ["t1", "t2"], attributes, {}, 100, 21, minimum=minimum)
    merged = gaps.merge(reference, on=["task", "attribute", "group", "metric"])
    assert len(merged) == len(gaps) == 12
    assert np.allclose(merged["gap_before"], merged["gap"])
    assert np.allclose(merged["ci_low_before"], merged["ci_low"]) and np.allclose(
        merged["ci_high_before"], merged["ci_high"]
    )
    assert (merged["significant_before"] == merged["significant"]).all()


def test_paired_performance_by_hand_and_the_change_test():
    label = np.array([1, 1, 0, 0])
    index = within_label_resamples(label, 50, np.random.default_rng(0))
    rows = {
        r["metric"]: r
        for r in paired_performance(
            np.array([0.9, 0.2, 0.4, 0.1]),
            np.array([1, 0, 0, 0]),
            np.array([0.9, 0.8, 0.4, 0.1]),
            np.array([1, 1, 0, 0]),
            label,
            index,
        )
    }
    # before: pairs (0.9 > 0.4, 0.9 > 0.1, 0.2 < 0.4, 0.2 > 0.1) -> AUROC 3/4; after: 1
    assert rows["auroc"]["before"] == pytest.approx(0.75) and rows["auroc"]["after"] == pytest.approx(1.0)
    assert rows["accuracy"]["before"] == pytest.approx(0.75) and rows["accuracy"]["change"] == pytest.approx(0.25)
    assert rows["auroc"]["measured_on"] == "scores"
    # the decisions' costs: before TP 1 of 2, FP 0 of 2; after TP 2, FP 0
    assert rows["tpr"]["before"] == pytest.approx(0.5) and rows["tpr"]["after"] == pytest.approx(1.0)
    assert rows["balanced_accuracy"]["before"] == pytest.approx(0.75) and rows["ppv"]["after"] == pytest.approx(1.0)
    # the z test on the bootstrap SE: a change of 1.96 SDs has p 0.05
    replicates = np.random.default_rng(1).normal(size=100_000)
    assert bootstrap_z_p(1.96 * replicates.std(ddof=1), replicates) == pytest.approx(0.05, abs=1e-3)
    assert np.isnan(bootstrap_z_p(float("nan"), replicates))


def test_a_post_processor_is_costed_on_its_expected_decisions_against_the_classifier_s_own():
    label = np.array([1, 1, 1, 0, 0, 0])
    classifier = np.array([1, 0, 0, 1, 0, 0])  # TPR 1/3, FPR 1/3
    decision = np.array([1, 0.5, 0.5, 0.5, 0, 0])  # expected TP 2, FP 0.5
    index = within_label_resamples(label, 50, np.random.default_rng(0))
    score = np.array([0.9, 0.3, 0.2, 0.6, 0.1, 0.05])
    rows = {
        r["metric"]: r
        for r in paired_performance(score, classifier, score, decision, label, index, changes_score=False)
    }
    assert "auroc" not in rows and rows["auroc_of_decisions"]["measured_on"].startswith("decisions")
    assert rows["tpr"]["after"] == pytest.approx(2 / 3) and rows["fpr"]["after"] == pytest.approx(0.5 / 3)
    assert rows["ppv"]["after"] == pytest.approx(2 / 2.5) and rows["accuracy"]["after"] == pytest.approx(4.5 / 6)
    # the AUROC of 0/1 decisions is their balanced accuracy: (1/3 + 2/3) / 2
    assert rows["auroc_of_decisions"]["before"] == pytest.approx(0.5)
    assert rows["balanced_accuracy"]["before"] == pytest.approx(0.5)
    # the decision probabilities ranked: positives (1, 0.5, 0.5) against negatives (0.5, 0, 0) win
    # 3 + 2 x (0.5 + 1 + 1) = 8 of 9 pairs, a tie counting one half
    assert rows["auroc_of_decisions"]["after"] == pytest.approx(8 / 9)


def test_the_summary_counts_closed_and_opened_gaps():
    validation, test = _scored_world(5)
    predictions, _ = run_mitigation("threshold", _inputs(validation, test), ["gender"], THRESHOLD, LOG)
    gaps, performance = mitigation_effects(
        test,
        {"threshold": predictions},
        ["t1", "t2"],
        ["gender"],
        {},
        {"rows": 10, "positives": 5, "negatives": 5},
        200,
        7,
    )
    summary = mitigation_summary(gaps.assign(model="m"))
    # M's gaps mirror F's (two groups): one row per metric, F's
    assert len(summary) == 3 and set(summary["group"]) == {"F"}
    mirrored = gaps[gaps["group"] == "M"].set_index(["task", "metric"])
    own = gaps[gaps["group"] == "F"].set_index(["task", "metric"])
    assert np.allclose(mirrored["gap_after"], -own["gap_after"], equal_nan=True)
    assert (mirrored["closed"] == own["closed"]).all()
    summary = summary.set_index("metric")
    recall = gaps[(gaps["metric"] == "recall") & (gaps["group"] == "F")]
    assert summary.loc["recall", "closed"] == int(recall["closed"].sum())
    assert summary.loc["recall", "gaps"] == len(recall) and summary.loc["recall", "unchanged_tasks"] == 0
    # the planted t1 recall gap: significant before, narrowed; closed only if equivalent to 0 after
    t1 = recall[(recall["task"] == "t1") & (recall["group"] == "F")].iloc[0]
    assert t1["significant_before"] and t1["gap_before"] < 0 and t1["change"] < 0
    assert t1["closed"] == (t1["significant_change_bh"] and t1["equivalent_after"])
    cost = cost_summary(performance.assign(model="m")).set_index("metric")
    assert set(cost.index) == {
        "accuracy",
        "balanced_accuracy",
        "tpr",
        "fpr",
        "ppv",
        "auroc_of_decisions",
        "auprc_of_decisions",
    }
    t = performance[performance["metric"] == "balanced_accuracy"]
    assert cost.loc["balanced_accuracy", "median_change"] == pytest.approx(t["change"].median())


def test_the_summaries_count_untouched_tasks_apart():
    """A task the method left as the classifier's is counted in unchanged_tasks, not in the medians or
    the gap counts (a method that touched one task of two reports that task's cost, not half of it)."""
    _, test = _scored_world(5)
    touched = test.assign(
        attribute="gender",
        score=test["probability"],
        decision=np.where(test["task"] == "t1", 1 - test["prediction"], test["prediction"]).astype(float),
        prediction=np.where(test["task"] == "t1", 1 - test["prediction"], test["prediction"]),
    )
    gaps, performance = mitigation_effects(
        test,
        {"reweighing": touched},
        ["t1", "t2"],
        ["gender"],
        {},
        {"rows": 10, "positives": 5, "negatives": 5},
        100,
        7,
    )
    assert dict(zip(performance["task"], performance["changed"])) == {"t1": True, "t2": False}
    cost = cost_summary(performance.assign(model="m")).set_index("metric")
    accuracy = performance[(performance["metric"] == "accuracy") & (performance["task"] == "t1")]["change"].iloc[0]
    assert cost.loc["accuracy", "median_change"] == pytest.approx(accuracy)
    assert cost.loc["accuracy", "tasks"] == 1 and cost.loc["accuracy", "unchanged_tasks"] == 1
    summary = mitigation_summary(gaps.assign(model="m"))
    assert (summary["gaps"] <= 1).all() and (summary["unchanged_tasks"] == 1).all()


def test_task_random_state_is_fixed_per_task_and_attribute():
    assert task_random_state(1, 0, "gender") == task_random_state(1, 0, "gender")
    assert len({task_random_state(1, t, a) for t in range(3) for a in ("gender", "ethnicity")}) == 6


def test_the_registry_and_the_plan():
    from medbias.pipeline import plan

    assert list(MITIGATIONS) == ["none", "adversarial", "threshold", "reductions", "reweighing"]
    with pytest.raises(ValueError, match="unknown mitigation method 'platt'"):
        mitigation("platt")
    settings = {
        "models": ["baseline", "scibert"],
        "methods": ["adversarial", "threshold", "reweighing"],
        "attributes": ["gender"],
    }
    assert plan.mitigation_jobs(settings) == [
        ("baseline", "threshold"),
        ("baseline", "reweighing"),
        ("scibert", "threshold"),
        ("scibert", "reweighing"),
    ]
    assert plan.adversarial_encoders(["baseline", "adv_gender"], settings) == {"gender": "adv_gender"}
    assert plan.adversarial_encoders(["baseline"], settings) == {}


def test_the_planted_gap_is_found_closed_and_the_controls_not_widened():
    from medbias.validation.recovery import mitigation_recovery

    truth = {
        "phenotypes": {"Acute and unspecified renal failure": {"type": "acute"}, "Shock": {"type": "acute"}},
        "planted_recall_gaps": [
            {"phenotype": "Acute and unspecified renal failure", "attribute": "gender", "disadvantaged": "F"}
        ],
    }
    labels = {"pa_acute_renal": "Acute and unspecified renal failure", "pa_shock": "Shock"}

    def change(task, group, before, after, se_after, p=(0.5, 0.5), widened=False):
        return {
            "model": "baseline",
            "method": "threshold",
            "task": task,
            "attribute": "gender",
            "group": group,
            "metric": "recall",
            "compared_with_before": "M" if group == "F" else "F",
            "gap_before": before[0],
            "ci_low_before": before[1],
            "ci_high_before": before[2],
            "gap_after": after[0],
            "ci_low_after": after[1],
            "ci_high_after": after[2],
            "se_after": se_after,
            "change": abs(after[0]) - abs(before[0]),
            "p_change": p[0],
            "p_change_bh": p[1],
            "significant_change_bh": widened or p[1] < 0.05,
        }

    narrowed = (0.001, 0.002)  # BH's threshold at this rank: 0.05 x 0.001 / 0.002 = 0.025
    changes = pd.DataFrame(
        [
            change("pa_acute_renal", "F", (-0.6, -0.9, -0.3), (0.01, -0.03, 0.05), 0.02, narrowed),
            change("pa_acute_renal", "M", (0.6, 0.3, 0.9), (-0.01, -0.05, 0.03), 0.02, narrowed),
            change("pa_shock", "F", (0.0, -0.2, 0.2), (0.05, -0.15, 0.25), 0.1),
            change("pa_shock", "M", (0.0, -0.2, 0.2), (-0.05, -0.25, 0.15), 0.1),
        ]
    )
    performance = pd.DataFrame(
        [
            {
                "model": "baseline",
                "method": "threshold",
                "attribute": "gender",
                "task": t,
                "metric": "auroc_of_decisions",
                "before": 0.7,
                "after": 0.72,
                "change": 0.02,
                "change_low": -0.01,
                "change_high": 0.05,
            }
            for t in labels
        ]
    )
    recovery = mitigation_recovery(changes, performance, truth, labels)
    planted = recovery[recovery["truth"] == "planted"]
    assert len(planted) == 1 and planted["recovered"].all()
    assert "auroc of decisions 0.700 -> 0.720" in planted["observed"].iloc[0]
    # three parts: before, the near end -0.3 lies 0.3 / (0.6 / 3.919928) = 1.959964 SE below 0; the narrowing,
    # z(0.001) - z(0.025) two-sided = 3.290527 - 2.241403 = 1.049124; after, (0.1 - 0.01) / 0.02 - 1.644854 =
    # 2.855146. The weakest is the narrowing.
    assert planted["margin_se"].iloc[0] == pytest.approx(1.049124, abs=1e-5)
    # equivalence after without a significant narrowing is not a closure
    unsure = changes.assign(p_change=0.2, p_change_bh=0.4, significant_change_bh=False)
    (row,) = mitigation_recovery(unsure, performance, truth, labels).query("truth == 'planted'").itertuples()
    assert not row.recovered and row.margin_se < 0
    # an interval after that merely includes 0 accepts a null: at SE 0.10 the test has no power to show the
    # gap within 0.1, so the row is reported as lacking power, and not closed
    wide = changes.assign(gap_after=np.where(changes["group"] == "F", -0.1, 0.1), se_after=0.1)
    (row,) = mitigation_recovery(wide, performance, truth, labels).query("truth != 'control'").itertuples()
    assert row.truth == "below power" and not row.recovered and "power 0.00" in row.margin_basis
    controls = recovery[recovery["truth"] == "control"]
    assert len(controls) == 1 and controls["recovered"].all()  # a mirrored pair is one test
    renal = changes["task"] == "pa_acute_renal"
    still_open = changes.assign(gap_after=np.where(renal, -0.2, changes["gap_after"]))  # SE 0.02: well measured
    assert (
        not mitigation_recovery(still_open, performance, truth, labels).query("truth == 'planted'")["recovered"].any()
    )
    assert mitigation_recovery(changes, performance, truth, labels, method="reductions").empty


def test_a_mitigated_model_without_classifiers_is_one_config_error():
    from medbias.pipeline.config import MedbiasInputError, check_downstream_subsets

    hurtful = {
        "downstream": {"models": ["baseline"]},
        "mitigation": {"models": ["baseline"]},
        "intersections": {"models": ["scibert"]},
    }
    with pytest.raises(
        MedbiasInputError, match="'hurtful.intersections.models': 'scibert' has no downstream classifiers"
    ):
        check_downstream_subsets(hurtful)
    check_downstream_subsets({**hurtful, "intersections": {"models": []}})


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([45, 18, 80, 65], r"\[45, 18, 80, 65\] must rise strictly \(18 follows 45\)"),
        ([18, 45, 45, 80], r"\[18, 45, 45, 80\] must rise strictly \(45 follows 45\)"),
    ],
)
def test_age_bands_that_cannot_be_meant_are_one_config_error(edges, message):
    from medbias.pipeline.config import MedbiasInputError, check_age_bands

    with pytest.raises(MedbiasInputError, match=r"'hurtful.intersections.age_bands': " + message):
        check_age_bands(edges)
    check_age_bands([18, 45, 65, 80])
    check_age_bands([18])


def _toy_predictions(inputs, attribute, settings, log):
    """A toy method: the classifier's score thresholded at its setting ``cutoff`` for every group."""
    from medbias.studies.hurtful.mitigation.base import predictions_frame, whole_task_fits

    test = inputs.test
    frame = predictions_frame(
        attribute, test["task"], test["ICUSTAY_ID"], test["probability"], test["probability"] > settings["cutoff"]
    )
    return frame, whole_task_fits(attribute, inputs.tasks["task"], lambda _: "one threshold for all")


def test_a_method_added_to_the_registry_alone_is_configured_planned_run_and_compared(monkeypatch):
    """One module's Mitigation and one registry entry: the config accepts its name and its settings section
    (with the defaults and bounds it declares), the plan gives it a job and the GPUs it declares, and the
    stage runs and compares it like the others."""
    from conftest import REPO

    from medbias.core.errors import MedbiasInputError
    from medbias.pipeline import plan
    from medbias.pipeline.config import load_config, resolve_config
    from medbias.studies.hurtful.mitigation import Mitigation, model_methods, run_mitigation

    cutoff = {"description": "the one threshold", "x-source": "our choice", "type": "number", "minimum": 0,
              "maximum": 1, "default": 0.3}  # fmt: skip
    toy = Mitigation("toy", "the threshold", "nothing", runs_as_job=True, retrains=False, mitigate=_toy_predictions,
                     changes_score=False, uses_classifier_gpus=True,
                     settings={"description": "a toy method", "properties": {"cutoff": cutoff}})  # fmt: skip
    monkeypatch.setitem(MITIGATIONS, "toy", toy)
    given = load_config(REPO / "config" / "config.yaml")
    given["hurtful"]["mitigation"]["methods"] = ["threshold", "toy"]
    config = resolve_config(given, REPO / "config" / "schema.yaml")
    assert config["hurtful"]["mitigation"]["toy"] == {"cutoff": 0.3}  # its declared default
    assert plan.mitigation_jobs(config["hurtful"]["mitigation"]) == [("baseline", "threshold"), ("baseline", "toy")]
    assert plan.mitigation_gpus("toy", 2) == 2 and plan.mitigation_gpus("threshold", 2) == 0
    given["hurtful"]["mitigation"]["methods"] = ["platt"]
    with pytest.raises(
        MedbiasInputError, match=r"hurtful\.mitigation\.methods\.0': got 'platt', expected one of .*toy"
    ):
        resolve_config(given, REPO / "config" / "schema.yaml")
    given["hurtful"]["mitigation"]["methods"] = ["toy"]
    given["hurtful"]["mitigation"]["toy"] = {"cutoff": 1.5}
    with pytest.raises(MedbiasInputError, match=r"hurtful\.mitigation\.toy\.cutoff': got 1\.5"):
        resolve_config(given, REPO / "config" / "schema.yaml")
    validation, test = _scored_world()
    job, _ = run_mitigation("toy", _inputs(validation, test), ["gender"], {"cutoff": 0.6}, LOG)  # the job's section
    assert (job["prediction"] == (test["probability"] > 0.6).astype(int).to_numpy()).all()
    computed = {
        "toy": run_mitigation("toy", _inputs(validation, test), ["gender"], config["hurtful"]["mitigation"]["toy"], LOG)
    }
    predictions, fits, after = model_methods("baseline", ["toy"], computed, _inputs(validation, test), ["gender"], LOG)
    assert set(predictions["method"]) == {"none", "toy"} and list(after) == ["toy"]
    assert (after["toy"]["prediction"] == (test["probability"] > 0.3).astype(int).to_numpy()).all()
    minimum = {"rows": 10, "positives": 5, "negatives": 5}
    gaps, _ = mitigation_effects(test, after, ["t1", "t2"], ["gender"], {}, minimum, 50, 3)
    summary = mitigation_summary(gaps.assign(model="baseline"))
    assert set(summary["method"]) == {"toy"} and (summary["gaps"] >= 1).all()
