"""Intersectional groups (medbias.studies.hurtful.intersections): age bands and cells by hand, the
cell-against-rest gaps, the interaction score statistic against statsmodels' score test, Foulds et
al.'s smoothed differential fairness by hand with its permutation null, the max-T test of the worst
cell holding its level where the naive test does not, also on tasks whose attributes carry gaps of
their own, a planted cell found, and the truth and recovery of the demo world's intersectional plant."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medbias.studies.hurtful.intersections import (
    age_bands,
    cell_rates,
    crossing_cells,
    epsilon_null,
    fit_main_effects,
    gaps_against_rest,
    interaction_statistics,
    intersectional_table,
    intersectional_task,
    main_effects_design,
    smoothed_epsilon,
    worst_cell_test,
)

SETTINGS = {
    "age_bands": [18, 45, 65, 80],
    "min_cell": {"rows": 20, "positives": 5, "negatives": 5},
    "null_draws": 999,
    "smoothing": 0.5,
}


def test_age_bands_and_cells_by_hand():
    bands = age_bands(np.array([17, 18, 44, 45, 79, 80, 300, np.nan]), [18, 45, 65, 80])
    assert bands.tolist() == ["<18", "18-44", "18-44", "45-64", "65-79", "80+", "80+", "unknown age"]
    frame = pd.DataFrame({"gender": ["F", "M", "F"], "ethnicity": ["BLACK", "UNKNOWN", "WHITE"], "age": [82, 50, 30]})
    cells = crossing_cells(frame, ["gender", "ethnicity", "age_band"], {"ethnicity": ["UNKNOWN"]}, [18, 45, 65, 80])
    assert cells.isna().tolist() == [False, True, False]  # the excluded subgroup's stay is in no cell
    assert cells[cells.notna()].tolist() == ["F & BLACK & 80+", "F & WHITE & 18-44"]


def test_gaps_against_the_rest_by_hand():
    # cells A (rates 1/2), B (2/2), C (0/1): A vs rest 1/2 - 2/3, B vs rest 1 - 1/3, C vs rest 0 - 3/4
    success = np.array([1, 0, 1, 1, 0])
    index = np.array([0, 0, 1, 1, 2])
    hits, rows = cell_rates(success, index, 3)
    assert hits.tolist() == [1, 2, 0] and rows.tolist() == [2, 2, 1]
    assert gaps_against_rest(hits, rows) == pytest.approx([0.5 - 2 / 3, 1 - 1 / 3, -0.75])
    # the same counts from a matrix of draws
    draws_hits, draws_rows = cell_rates(success, np.stack([index, index[::-1]]), 3)
    # reversed, cells of rows 0..4 are 2, 1, 1, 0, 0: hits [1, 1, 1] of rows [2, 2, 1]
    assert draws_hits[0].tolist() == [1, 2, 0] and draws_hits[1].tolist() == [1, 1, 1]
    assert draws_rows[1].tolist() == [2, 2, 1]


def test_the_interaction_statistic_is_the_score_test_of_the_cell_beyond_the_main_effects():
    """statsmodels' score test for adding a cell's indicator to the main-effects logistic regression
    (an implementation of its own) gives the same chi-square as z squared, for every cell of a
    gender x ethnicity crossing (the ridge that keeps separation finite moves it by under 0.1%)."""
    import statsmodels.api as sm

    rng = np.random.default_rng(4)
    n = 600
    gender = rng.choice(["F", "M"], n)
    ethnicity = rng.choice(["ASIAN", "BLACK", "WHITE"], n, p=[0.2, 0.3, 0.5])
    interaction = (gender == "F") & (ethnicity == "ASIAN")
    logit = -0.3 + 0.8 * (gender == "M") - 0.5 * (ethnicity == "BLACK") + 0.9 * interaction
    success = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
    design = main_effects_design([gender, ethnicity])
    assert design.shape == (n, 4)  # intercept, M, BLACK, WHITE
    fitted = fit_main_effects(design, success)
    cells = np.char.add(np.char.add(gender.astype(str), " & "), ethnicity.astype(str))
    order = sorted(set(cells))
    index = np.array([order.index(c) for c in cells])
    z = interaction_statistics(design, fitted, index, len(order), success - fitted)
    result = sm.GLM(success, design, family=sm.families.Binomial()).fit()
    assert np.allclose(result.fittedvalues, fitted, atol=1e-3)
    for k, cell in enumerate(order):
        chi2 = result.score_test(exog_extra=(cells == cell).astype(float)[:, None])[0]
        assert z[k] ** 2 == pytest.approx(float(np.squeeze(chi2)), rel=1e-3), cell
    assert order[int(np.argmax(np.abs(z)))] == "F & ASIAN" and z[order.index("F & ASIAN")] > 2


def test_a_gap_of_one_attribute_moves_no_cell_beyond_the_main_effects():
    """Women's recall 0.3 and men's 0.9 on every cell, nothing else: every cell's gap against the rest is
    large (the against-the-rest reading would call one of them intersectional), but no cell departs
    from the main effects, so the worst cell is not significant."""
    rng = np.random.default_rng(8)
    n = 900
    frame = pd.DataFrame(
        {
            "label": np.ones(n, dtype=int),
            "gender": rng.choice(["F", "M"], n),
            "ethnicity": rng.choice(["WHITE", "BLACK", "ASIAN"], n, p=[0.6, 0.25, 0.15]),
        }
    )
    frame["prediction"] = (rng.random(n) < np.where(frame["gender"] == "F", 0.3, 0.9)).astype(int)
    parts = [frame["gender"].to_numpy(), frame["ethnicity"].to_numpy()]
    cells = crossing_cells(frame, ["gender", "ethnicity"], {}, [18]).to_numpy()
    order = sorted(set(cells))
    test = worst_cell_test(
        frame["prediction"].to_numpy(),
        frame["label"].to_numpy(),
        cells,
        parts,
        order,
        np.ones(6, bool),
        "recall",
        999,
        rng,
    )
    assert np.nanmax(np.abs(test["cell_gaps"])) > 0.4  # every cell sits far from the rest
    assert test["p_permutation"] > 0.05 and abs(test["interaction_z"]) < 3


def test_smoothed_differential_fairness_by_hand():
    # Foulds et al. eq. 6 with concentration 1: P(1 | s) = (N1 + 0.5) / (N + 1)
    # cell 1: 3 of 9 positive -> 0.35; cell 2: 7 of 9 -> 0.75
    epsilon = smoothed_epsilon(np.array([3.0, 7.0]), np.array([9.0, 9.0]), 0.5)
    expected = max(abs(np.log(0.35) - np.log(0.75)), abs(np.log(0.65) - np.log(0.25)))
    assert epsilon == pytest.approx(expected)
    assert smoothed_epsilon(np.array([4.0, 4.0]), np.array([9.0, 9.0]), 0.5) == pytest.approx(0.0)


def _null_task(rng, n=400):
    """Stays of one task in which nothing depends on the cell: prediction = label flipped at random."""
    label = (rng.random(n) < 0.4).astype(int)
    return pd.DataFrame(
        {
            "label": label,
            "prediction": np.where(rng.random(n) < 0.75, label, 1 - label),
            "gender": rng.choice(["F", "M"], n),
            "ethnicity": rng.choice(["WHITE", "BLACK", "ASIAN", "HISPANIC/LATINO"], n, p=[0.55, 0.2, 0.1, 0.15]),
            "insurance": rng.choice(["Medicare", "Private", "Medicaid"], n),
            "age": rng.normal(64, 16, n),
        }
    )


@pytest.mark.parametrize("gender_gap", [0.0, 0.3], ids=["no gap", "a per-gender recall gap"])
def test_the_max_t_test_of_the_worst_cell_holds_its_level_where_the_naive_test_does_not(gender_gap):
    """200 tasks with no interaction (``intersection_null_world_decisions``: 400 stays, gender x
    ethnicity x insurance), with and without a per-gender recall gap (women's positives found 30 points
    less often on every cell): the naive test of the worst cell flags far above 5%; the max-T test under
    the main-effects model stays at its level in both."""
    from medbias.validation.null_worlds import intersection_null_world_decisions

    decisions = intersection_null_world_decisions(200, 0, gender_gap=gender_gap)
    naive = decisions.loc[decisions["p_kind"] == "naive score test of the worst cell", "flagged"]
    max_t = decisions.loc[decisions["p_kind"] == "max-T under the main-effects model", "flagged"]
    assert len(naive) == len(max_t) == 200
    # about a dozen cells are tested: the naive test of the maximum flags far above 5%; the max-T test
    # stays at its level (binomial 99% bound for 200 draws at 0.05: 19)
    assert np.mean(naive) > 0.2
    assert np.sum(max_t) <= 19


def test_epsilon_has_a_permutation_null_that_small_cells_raise():
    """Nothing depends on the cell: epsilon over 24 cells, many small, is large, and its permutation
    null is as large (p well above 0.05); a cell predicted positive far more often moves it beyond."""
    rng = np.random.default_rng(2)
    frame = _null_task(rng, 400)
    settings = {**SETTINGS, "null_draws": 499}
    rows, _ = intersectional_task(frame, ["gender", "ethnicity", "insurance"], settings, {}, 100, rng)
    epsilon = next(r for r in rows if r["metric"] == "epsilon")
    assert epsilon["value"] > 0.5 and epsilon["null_median"] > 0.5 and epsilon["p_value"] > 0.05
    assert epsilon["cells_tested"] == epsilon["cells"]  # every cell, smoothed, as Foulds et al. keep them
    index = np.repeat(np.arange(4), 50)
    skewed = np.concatenate([np.ones(50, int), np.tile([1, 0], 75)])  # cell 0 all positive, the rest half
    hits, rows_per_cell = np.bincount(index, weights=skewed, minlength=4), np.bincount(index, minlength=4)
    observed = smoothed_epsilon(hits, rows_per_cell.astype(float), 0.5)
    null = epsilon_null(skewed, index, 4, 0.5, 200, np.random.default_rng(0))
    assert len(null) == 200 and (null >= 0).all() and observed > np.quantile(null, 0.99)


def test_a_cell_that_alone_misses_its_positives_is_the_worst_and_significant():
    rng = np.random.default_rng(3)
    frame = _null_task(rng, 600)  # three in four predictions right, in every cell
    planted = (frame["gender"] == "F") & (frame["age"] >= 80)
    frame.loc[planted & (frame["label"] == 1), "prediction"] = 0
    settings = {**SETTINGS, "min_cell": {"rows": 5, "positives": 3, "negatives": 3}}
    rows, cells = intersectional_task(frame, ["gender", "age_band"], settings, {}, 200, rng)
    recall = next(r for r in rows if r["metric"] == "recall")
    assert recall["worst_cell"] == "F & 80+" and recall["value"] < -0.6
    assert recall["p_value"] == pytest.approx(1 / 1000) and recall["ci_high"] < 0 and recall["interaction_z"] < -3
    # parity and specificity see little, and the cell table has every cell with its sizes
    cell = next(c for c in cells if c["cell"] == "F & 80+")
    assert cell["positives"] == int((planted & (frame["label"] == 1)).sum()) and cell["recall_tested"]
    epsilon = next(r for r in rows if r["metric"] == "epsilon")
    assert epsilon["value"] > 0 and epsilon["ci_low"] <= epsilon["value"] <= epsilon["ci_high"]


def test_small_cells_are_reported_and_not_tested_and_bh_runs_over_tasks():
    rng = np.random.default_rng(5)
    frame = pd.concat([_null_task(rng, 300).assign(task=t) for t in ("t1", "t2", "t3")], ignore_index=True)
    table, cells = intersectional_table(
        frame, ["t1", "t2", "t3"], [["gender", "ethnicity", "insurance"]], SETTINGS, {}, 100, 1
    )
    assert set(table["metric"]) == {"parity", "recall", "specificity", "epsilon"}
    small = cells[(cells["positives"] < 5) & (cells["task"] == "t1")]
    assert len(small) and not small["recall_tested"].any() and small["recall_gap"].isna().all()
    recall = table[table["metric"] == "recall"]
    assert (recall["p_bh"] >= recall["p_value"]).all() and recall["p_bh"].notna().all()
    again, _ = intersectional_table(
        frame, ["t1", "t2", "t3"], [["gender", "ethnicity", "insurance"]], SETTINGS, {}, 100, 1
    )
    pd.testing.assert_frame_equal(table, again)


def _truth():
    return {
        "phenotypes": {
            "Essential hypertension": {"type": "chronic"},
            "Acute and unspecified renal failure": {"type": "acute"},
            "Shock": {"type": "acute"},
        },
        "planted_recall_gaps": [
            {"phenotype": "Acute and unspecified renal failure", "attribute": "gender", "disadvantaged": "F"}
        ],
        "planted_intersectional_gaps": [
            {
                "phenotype": "Essential hypertension",
                "crossing": ["gender", "age_band"],
                "cell": "F & 80+",
                "cohorts": ["pa"],
            }
        ],
    }


def test_the_intersectional_plant_is_planted_its_reach_left_out_and_other_tasks_controls():
    from medbias.validation.recovery import intersection_recovery
    from medbias.validation.truth import intersection_truth, recall_gap_truth

    labels = {
        "pa_hypertension": "Essential hypertension",
        "pf_hypertension": "Essential hypertension",
        "pa_chronic": "any_chronic",
        "pa_acute_renal": "Acute and unspecified renal failure",
        "pa_shock": "Shock",
    }
    cohorts = {task: task.split("_")[0] for task in labels}
    worst = pd.DataFrame(
        [
            {
                "model": "baseline",
                "task": t,
                "crossing": c,
                "metric": m,
                "worst_cell": cell,
                "value": v,
                "ci_low": v - 0.2,
                "ci_high": v + 0.2,
                "interaction_z": -4.0 if p < 0.01 else 1.0,
                "p_value": p,
                "p_bh": p * 4,
                "significant_bh": p * 4 < 0.05,
                "naive_p": p / 10,
            }
            for t, cell, v, p in (
                ("pa_hypertension", "F & 80+", -0.8, 0.0002),
                ("pf_hypertension", "F & 80+", -0.3, 0.3),  # the plant's other cohort: left out
                ("pa_chronic", "F & 80+", -0.3, 0.01),
                ("pa_acute_renal", "F & 65-79", -0.9, 0.3),  # its gap is per gender: no interaction
                ("pa_shock", "M & 45-64", 0.2, 0.4),
            )
            for c in ("gender x age_band", "gender x ethnicity x insurance")
            for m in ("recall", "specificity")
        ]
    )
    truth = intersection_truth(worst, _truth(), labels, cohorts)
    planted = truth[truth["truth"] == "planted"]
    assert planted[["task", "crossing", "metric"]].values.tolist() == [
        ["pa_hypertension", "gender x age_band", "recall"]
    ]
    # the intersectional plant's reach is left out; a per-attribute plant's task is a control of the test
    # beyond the main effects, marked as such
    controls = truth[truth["truth"] == "control"]
    assert set(controls["task"]) == {"pa_shock", "pa_acute_renal"}
    assert dict(zip(controls["task"], controls["per_attribute_plant"])) == {"pa_shock": False, "pa_acute_renal": True}
    assert set(truth["metric"]) == {"recall"}  # specificity differs with age in truth: no control
    gaps = pd.DataFrame(
        [
            {
                "model": "baseline",
                "task": "pa_hypertension",
                "attribute": "gender",
                "group": "F",
                "metric": "recall",
                "gap": -0.1,
                "p_bh": 0.4,
                "significant_bh": False,
                "compared_with": "M",
            },
            {
                "model": "baseline",
                "task": "pa_shock",
                "attribute": "gender",
                "group": "F",
                "metric": "recall",
                "gap": 0.05,
                "p_bh": 0.9,
                "significant_bh": False,
                "compared_with": "M",
            },
        ]
    )
    recovery = intersection_recovery(worst, gaps, _truth(), labels, cohorts)
    assert recovery.loc[recovery["truth"] == "planted", "recovered"].tolist() == [True]
    assert recovery.loc[recovery["truth"] == "control", "recovered"].all()
    # a worst cell significant on a task whose gap is planted per gender is a false positive of the test
    beyond = worst.assign(p_value=np.where(worst["task"] == "pa_acute_renal", 0.0002, worst["p_value"]))
    beyond["significant_bh"] = beyond["p_value"] * 4 < 0.05
    flagged_controls = intersection_recovery(beyond, gaps, _truth(), labels, cohorts).query("~recovered")
    assert len(flagged_controls) == 2 and flagged_controls["effect"].str.contains("a planted per-attribute gap").all()
    # a per-attribute gap significant after BH on the planted task means the plant was not intersection-only
    flagged = gaps.assign(significant_bh=[True, False], p_bh=[0.01, 0.9])
    assert not intersection_recovery(worst, flagged, _truth(), labels, cohorts).loc[0, "recovered"]
    # the per-attribute gaps of the intersectional plant's tasks are no controls
    recall = recall_gap_truth(gaps, _truth(), labels)
    assert recall["task"].tolist() == ["pa_shock"]


def test_an_intersectional_plant_is_asserted_on_the_models_it_names_and_missed_where_one_has_no_row():
    """A plant naming its models is planted on their worst cells only; another model's cells on the
    plant's tasks are neither plant nor control; a named model without a tested worst cell is a miss
    that says why."""
    from medbias.validation.recovery import intersection_recovery
    from medbias.validation.truth import intersection_truth

    labels = {"pa_hypertension": "Essential hypertension", "pa_shock": "Shock"}
    cohorts = {task: "pa" for task in labels}
    row = dict(crossing="gender x age_band", metric="recall", ci_low=-0.9, ci_high=-0.5, interaction_z=-4.0)
    worst = pd.DataFrame(
        [
            {
                **row,
                "model": model,
                "task": task,
                "worst_cell": cell,
                "value": value,
                "p_value": p,
                "p_bh": p * 2,
                "significant_bh": p * 2 < 0.05,
                "naive_p": p / 10,
            }
            for model, task, cell, value, p in (
                ("scibert", "pa_hypertension", "F & 80+", -0.7, 0.0002),
                ("baseline", "pa_hypertension", "M & 18-44", -0.1, 0.6),  # not read by the plant's test
                ("baseline", "pa_shock", "M & 45-64", 0.2, 0.4),
                ("scibert", "pa_shock", "F & 45-64", -0.2, 0.5),
            )
        ]
    )
    truth = _truth()
    truth["planted_intersectional_gaps"][0]["models"] = ["scibert"]
    marked = intersection_truth(worst, truth, labels, cohorts)
    assert marked[["model", "task", "truth"]].values.tolist() == [
        ["scibert", "pa_hypertension", "planted"],
        ["baseline", "pa_shock", "control"],
        ["scibert", "pa_shock", "control"],
    ]
    gaps = pd.DataFrame(
        [
            {
                "model": "scibert",
                "task": "pa_hypertension",
                "attribute": "gender",
                "group": "F",
                "metric": "recall",
                "gap": 0.0,
                "p_bh": 0.9,
                "significant_bh": False,
                "compared_with": "M",
            }
        ]
    )
    recovery = intersection_recovery(worst, gaps, truth, labels, cohorts, null_draws=4999)
    assert recovery.loc[recovery["truth"] == "planted", "recovered"].tolist() == [True]
    truth["planted_intersectional_gaps"][0]["models"] = ["scibert", "clinical_bert"]
    recovery = intersection_recovery(worst, gaps, truth, labels, cohorts, null_draws=4999)
    missed = recovery[(recovery["truth"] == "planted") & ~recovery["recovered"]]
    assert len(missed) == 1 and missed["effect"].str.startswith("clinical_bert Essential hypertension").all()
    assert "is clinical_bert in hurtful.intersections.models?" in missed["observed"].iloc[0]
