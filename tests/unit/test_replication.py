"""Known answers for seed replicates, the decade-trend permutation test, Clopper-Pearson error rates
and the validation decisions built from a truth file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from medbias.core.seeds import document_null_seed, replicate_seed
from medbias.metrics.error_rate import error_rate
from medbias.metrics.trends import decade_trend, ols_slope
from medbias.validation.decisions import gap_decisions, rios_weat_decisions
from medbias.validation.error_rates import error_rates
from medbias.validation.null_worlds import null_world_decisions
from medbias.validation.truth import mirror_rows


def test_replicate_zero_keeps_the_seed_and_the_others_differ():
    assert replicate_seed(42, 0) == 42
    seeds = [replicate_seed(42, r) for r in range(1, 6)]
    assert len(set(seeds)) == 5 and 42 not in seeds and seeds == [replicate_seed(42, r) for r in range(1, 6)]
    assert replicate_seed(43, 1) != replicate_seed(42, 1)


def test_document_null_seeds_are_their_own_stream():
    draws = [document_null_seed(42, k) for k in range(20)]
    replicates = {replicate_seed(42, r) for r in range(20)}
    assert len(set(draws)) == 20 and not set(draws) & replicates
    assert draws == [document_null_seed(42, k) for k in range(20)]


def test_trend_by_hand():
    assert ols_slope(np.array([0.0, 1.0, 2.0])) == pytest.approx(1.0)
    # three decades, one seed: of the 6 orderings only the observed and its reverse reach |slope| = 1
    trend = decade_trend(np.array([[0.0, 1.0, 2.0]]))
    assert (trend.slope, trend.p_value, trend.orderings, trend.seeds) == (
        pytest.approx(1.0),
        pytest.approx(2 / 6),
        6,
        1,
    )
    assert np.isnan(trend.slope_seed_sd)
    # seeds are averaged before the decades are permuted; their slopes' spread is reported
    values = np.array([[0.0, 1.0, 2.0, 3.0, 4.0], [0.2, 0.8, 2.2, 2.8, 4.2]])
    trend = decade_trend(values)
    assert trend.slope == pytest.approx(ols_slope(values.mean(axis=0)))
    assert trend.slope_seed_sd == pytest.approx(np.std([ols_slope(values[0]), ols_slope(values[1])], ddof=1))
    assert trend.p_value == pytest.approx(2 / 120)
    flat = decade_trend(np.array([[0.1, -0.2, 0.15, -0.05, 0.0, 0.05]]))
    assert flat.p_value > 0.3


def test_error_rate_is_clopper_pearson():
    flags = np.array([True] * 3 + [False] * 37)
    rate = error_rate(flags)
    exact = binomtest(3, 40).proportion_ci(0.95, method="exact")
    assert (rate.flagged, rate.decisions, rate.rate) == (3, 40, 0.075)
    assert (rate.low, rate.high) == (pytest.approx(exact.low), pytest.approx(exact.high))
    none = error_rate(np.zeros(33, dtype=bool))
    assert none.low == 0.0 and none.high == pytest.approx(binomtest(0, 33).proportion_ci(0.95, method="exact").high)


def test_rios_decisions_follow_the_truth():
    truth = {
        "decades": [{"decade": "1960"}, {"decade": "2010"}],
        "planted_pairs": [{"name": "career", "strengths": [0.5, 0.0]}],
    }
    seeds = pd.DataFrame(
        {
            "decade": ["1960", "1960", "2010", "2010", "1960"],
            "test": ["career", "weapons", "career", "weapons", "career"],
            "replicate": [0, 0, 0, 0, 1],
            "control": [False, True, False, True, False],
            "p_value": [0.001, 0.01, 0.03, 0.5, 0.002],
            "p_calibrated": [0.002, 0.2, 0.3, 0.6, 0.001],
        }
    )
    decisions = rios_weat_decisions(seeds, truth)
    calibrated = decisions[decisions["p_kind"] == "calibrated null"]
    assert calibrated["truth"].tolist() == ["planted", "control", "control", "control", "planted"]
    table = error_rates(decisions).set_index(["p_kind", "truth"])
    assert table.loc[("classic permutation", "control"), "flagged"] == 2  # 0.01 and 0.03 of 3 controls
    assert table.loc[("calibrated null", "control"), "flagged"] == 0
    assert table.loc[("calibrated null", "planted"), ["flagged", "decisions"]].tolist() == [2, 2]
    assert table.loc[("classic permutation", "control"), "rate_over_level"] == pytest.approx((2 / 3) / 0.05)
    # Figure 1's table (replicate 0) adds the document-level null's decisions; a NaN p (no draws) is no decision
    figure = pd.DataFrame(
        {
            "decade": ["1960", "1960", "2010", "2010"],
            "test": ["career", "weapons", "career", "weapons"],
            "p_document": [0.025, 0.3, np.nan, 0.04],
        }
    )
    document = rios_weat_decisions(seeds, truth, table=figure)
    document = document[document["p_kind"] == "document-level null"]
    assert document["unit"].tolist() == [
        "1960 career seed 0 (strength 0.5)",
        "1960 weapons seed 0",
        "2010 weapons seed 0",
    ]
    assert document["truth"].tolist() == ["planted", "control", "control"]
    assert document["flagged"].tolist() == [True, False, True]


def test_gap_decisions_count_the_planted_group_and_leave_its_mirror_out():
    truth = {
        "planted_recall_gaps": [{"attribute": "gender", "disadvantaged": "F", "phenotype": "Renal failure"}],
        "phenotypes": {"Renal failure": {"type": "acute"}},
    }
    labels = {"pf_renal": "Renal failure", "pf_sepsis": "Sepsis", "pf_any_acute": "any_acute"}
    # the last three carry the plant without being it: an intersection with gender on the planted task,
    # and the planted attribute and its intersection on the aggregate task the phenotype feeds
    gaps = pd.DataFrame(
        {
            "model": "m",
            "task": [
                "pf_renal",
                "pf_renal",
                "pf_sepsis",
                "pf_sepsis",
                "pf_renal",
                "pf_renal",
                "pf_any_acute",
                "pf_any_acute",
            ],
            "attribute": [
                "gender",
                "gender",
                "gender",
                "gender",
                "language",
                "gender x ethnicity",
                "gender",
                "gender x ethnicity",
            ],
            "group": ["F", "M", "F", "M", "ENGL", "F & WHITE", "F", "M & WHITE"],
            "compared_with": ["M", "F", "M", "F", "OTHER", "M & BLACK", "M", "F & WHITE"],
            "metric": "recall",
            "gap": [-0.8, 0.8, 0.01, -0.01, 0.05, -0.7, -0.3, 0.3],
            "p_value": [1e-9, 1e-9, 0.9, 0.9, 0.5, 1e-6, 1e-3, 1e-3],
            "p_bootstrap": [0.002, 0.002, 0.9, 0.9, 0.5, 0.002, 0.002, 0.002],
            "significant": [True, True, False, False, False, True, True, True],
        }
    )
    gaps["p_bh"], gaps["significant_bh"] = gaps["p_value"], gaps["p_value"] < 0.05
    decisions = gap_decisions(gaps, truth, labels)
    se = decisions[decisions["p_kind"] == "score-test p, BH"]
    # language on the planted task is left out too: a language group with more women inherits the gap;
    # pf_sepsis gender=M mirrors gender=F (the same test), so it is counted once
    assert se["unit"].tolist() == ["m pf_renal gender=F", "m pf_sepsis gender=F"]
    assert se["truth"].tolist() == ["planted", "control"]
    counted = decisions[decisions["p_kind"] == "counted p, BH"]
    assert counted["flagged"].tolist() == [True, False]  # BH per (model, attribute, group)


def test_mirror_rows_are_the_second_group_of_a_pair_compared_with_each_other():
    gaps = pd.DataFrame(
        {
            "model": "m",
            "task": "t",
            "metric": "recall",
            "attribute": ["gender", "gender", "ethnicity", "ethnicity", "ethnicity"],
            "group": ["M", "F", "WHITE", "BLACK", "ASIAN"],
            "compared_with": ["F", "M", "ASIAN", "ASIAN", "WHITE"],
        }
    )
    # M mirrors F; WHITE and ASIAN are compared with each other, and ASIAN sorts first, so WHITE's row
    # is the mirror; BLACK is compared with ASIAN but ASIAN not with BLACK: a test of its own
    assert mirror_rows(gaps).tolist() == [True, False, True, False, False]


def test_null_worlds_show_the_permutation_test_anti_conservative_on_clustered_targets():
    table = error_rates(null_world_decisions(60, 0, draws=500)).set_index(["source", "p_kind"])
    clustered = table.loc[("constructed null worlds (clustered targets)", "classic permutation")]
    assert clustered["rate"] > 0.3 and not clustered["holds_level"]
    assert table.loc[("constructed null worlds (clustered targets)", "calibrated null"), "holds_level"]
    assert table.loc[("constructed null worlds (exchangeable targets)", "calibrated null"), "holds_level"]
