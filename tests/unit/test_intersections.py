"""Intersectional groups (medbias.studies.hurtful.intersections): age bands and cells by hand, the
cell-against-rest gaps, Foulds et al.'s smoothed differential fairness by hand, the permutation test
of the worst cell holding its level where the naive test of the raw maximum does not, a planted cell
found, and the truth and recovery of the demo world's intersectional plant."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medbias.studies.hurtful.intersections import (
    age_bands,
    cell_rates,
    crossing_cells,
    gaps_against_rest,
    intersectional_table,
    intersectional_task,
    score_statistics_against_rest,
    smoothed_epsilon,
    worst_cell_test,
)

SETTINGS = {
    "age_bands": [18, 45, 65, 80],
    "min_cell": {"rows": 20, "positives": 5, "negatives": 5},
    "permutations": 999,
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


def test_score_statistics_against_the_rest_by_hand():
    """Cells A 1/2, B 2/2, C 0/1: pooled rate 3/5; A against the rest: (1/2 - 2/3) / sqrt(0.24 (1/2 + 1/3));
    the two-sided normal p of each statistic is pooled_rate_p's; a crossing where every row succeeds
    has statistic 0."""
    from scipy.stats import norm

    from medbias.metrics.fairness import pooled_rate_p

    hits, rows = np.array([1.0, 2.0, 0.0]), np.array([2.0, 2.0, 1.0])
    statistics = score_statistics_against_rest(hits, rows)
    assert statistics[0] == pytest.approx((0.5 - 2 / 3) / np.sqrt(0.24 * (1 / 2 + 1 / 3)))
    assert statistics[2] == pytest.approx(-0.75 / np.sqrt(0.24 * (1 + 1 / 4)))
    for k in range(3):
        p = pooled_rate_p(hits[k], rows[k], hits.sum() - hits[k], rows.sum() - rows[k])
        assert 2 * norm.sf(abs(statistics[k])) == pytest.approx(p)
    assert score_statistics_against_rest(np.array([2.0, 3.0]), np.array([2.0, 3.0])).tolist() == [0.0, 0.0]
    assert np.isnan(score_statistics_against_rest(np.array([0.0, 3.0]), np.array([0.0, 3.0]))[0])


def test_the_worst_cell_is_the_largest_gap_in_standard_errors_not_the_largest_raw_gap():
    """A large cell missing half its positives (20 of 40) against a small one missing 4 of 5, four
    other cells finding 45 of 50 each: the small cell's raw gap is larger (-0.63 against -0.38)
    but the large cell's is more standard errors from 0, so it is the worst cell and the max-T test
    finds it."""
    label = np.ones(245, dtype=int)
    others = [f"other{k}" for k in range(4)]
    cells = np.array(["large"] * 40 + ["small"] * 5 + [c for c in others for _ in range(50)])
    prediction = np.concatenate([np.repeat([1, 0], 20), [1, 0, 0, 0, 0], np.tile(np.repeat([1, 0], [45, 5]), 4)])
    order = ["large", *others, "small"]
    test = worst_cell_test(prediction, label, cells, order, np.ones(6, bool), "recall", 999, np.random.default_rng(0))
    raw = dict(zip(order, test["cell_gaps"]))
    assert raw["small"] < raw["large"] < 0
    assert test["worst_cell"] == "large" and test["gap"] == pytest.approx(raw["large"])
    assert test["p_permutation"] == pytest.approx(1 / 1000)


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


def test_the_permutation_test_of_the_worst_cell_holds_its_level_where_the_raw_maximum_does_not():
    rng = np.random.default_rng(0)
    naive, permutation = [], []
    for _ in range(200):
        frame = _null_task(rng)
        cells = crossing_cells(frame, ["gender", "ethnicity", "insurance"], {}, SETTINGS["age_bands"]).to_numpy()
        order = sorted(set(cells))
        positives = frame["label"] == 1
        sizes = pd.Series(cells[positives]).value_counts().reindex(order, fill_value=0).to_numpy()
        test = worst_cell_test(
            frame["prediction"].to_numpy(), frame["label"].to_numpy(), cells, order, sizes >= 5, "recall", 199, rng
        )
        naive.append(test["naive_p"] < 0.05)
        permutation.append(test["p_permutation"] < 0.05)
    # about a dozen cells are tested: the raw maximum's naive test flags far above 5%; the permutation
    # test of the maximum stays at its level (binomial 99% bound for 200 draws at 0.05: 19)
    assert np.mean(naive) > 0.2
    assert np.sum(permutation) <= 19


def test_a_cell_that_alone_misses_its_positives_is_the_worst_and_significant():
    rng = np.random.default_rng(3)
    frame = _null_task(rng, 600)
    frame["prediction"] = frame["label"]
    planted = (frame["gender"] == "F") & (frame["age"] >= 80)
    frame.loc[planted & (frame["label"] == 1), "prediction"] = 0
    settings = {**SETTINGS, "min_cell": {"rows": 5, "positives": 3, "negatives": 3}}
    rows, cells = intersectional_task(frame, ["gender", "age_band"], settings, {}, 200, rng)
    recall = next(r for r in rows if r["metric"] == "recall")
    assert recall["worst_cell"] == "F & 80+" and recall["value"] < -0.9
    assert recall["p_value"] == pytest.approx(1 / 1000) and recall["ci_high"] < 0
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
                "p_value": p,
                "p_bh": p * 4,
                "significant_bh": p * 4 < 0.05,
                "naive_p": p / 10,
            }
            for t, cell, v, p in (
                ("pa_hypertension", "F & 80+", -0.8, 0.0002),
                ("pf_hypertension", "F & 80+", -0.3, 0.3),  # the plant's other cohort: left out
                ("pa_chronic", "F & 80+", -0.3, 0.01),
                ("pa_acute_renal", "F & 65-79", -0.9, 0.0002),
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
    assert set(truth.loc[truth["truth"] == "control", "task"]) == {"pa_shock"}  # the plants' reach left out
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
    # a per-attribute gap significant after BH on the planted task means the plant was not intersection-only
    flagged = gaps.assign(significant_bh=[True, False], p_bh=[0.01, 0.9])
    assert not intersection_recovery(worst, flagged, _truth(), labels, cohorts).loc[0, "recovered"]
    # the per-attribute gaps of the intersectional plant's tasks are no controls
    recall = recall_gap_truth(gaps, _truth(), labels)
    assert recall["task"].tolist() == ["pa_shock"]
