"""The downstream gap analysis: exclusions per attribute only, intersectional cells, BH across tasks,
Table 4's counts, and the performance table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medbias.studies.hurtful.gaps import (
    gap_table,
    intersectional_cells,
    seed_spread,
    significance_counts,
    significance_counts_over_seeds,
    task_performance,
)


def _predictions(n=200, seed=0, tasks=("t1", "t2", "t3")):
    rng = np.random.default_rng(seed)
    frames = []
    for task in tasks:
        label = (rng.random(n) < 0.4).astype(int)
        frames.append(
            pd.DataFrame(
                {
                    "task": task,
                    "ICUSTAY_ID": np.arange(n),
                    "label": label,
                    "prediction": np.where(rng.random(n) < 0.8, label, 1 - label),
                    "probability": rng.random(n),
                    "gender": rng.choice(["M", "F"], n),
                    "language": rng.choice(["English", "Other", "Missing"], n),
                    "ethnicity": rng.choice(["WHITE", "BLACK", "UNKNOWN"], n),
                    "insurance": "Medicare",
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_exclusions_apply_to_their_own_attribute_only():
    predictions = _predictions()
    gaps, _ = gap_table(predictions, ["t1", "t2", "t3"], ["gender", "language"], {"language": ["Missing"]}, 200, seed=1)
    t1 = predictions[predictions["task"] == "t1"]
    gender = gaps[(gaps["task"] == "t1") & (gaps["attribute"] == "gender")]
    assert gender["n"].sum() == 3 * len(t1)  # every row counted once per metric: Missing language kept
    assert (gender["excluded_rows"] == 0).all()
    language = gaps[(gaps["task"] == "t1") & (gaps["attribute"] == "language")]
    assert set(language["group"]) == {"English", "Other"}
    assert (language["excluded_rows"] == (t1["language"] == "Missing").sum()).all()
    assert language["n"].sum() == 3 * (t1["language"] != "Missing").sum()


def test_bh_runs_across_tasks_per_attribute_group_and_metric():
    from statsmodels.stats.multitest import multipletests

    gaps, _ = gap_table(_predictions(), ["t1", "t2", "t3"], ["gender"], {}, 200, seed=1)
    block = gaps[(gaps["group"] == "F") & (gaps["metric"] == "recall")].sort_values("task")
    assert len(block) == 3
    np.testing.assert_allclose(block["p_bh"], multipletests(block["p_value"], method="fdr_bh")[1])


def test_seeded_per_task_so_adding_a_task_changes_nothing_else():
    predictions = _predictions()
    first, _ = gap_table(predictions, ["t1", "t2"], ["gender"], {}, 200, seed=1)
    again, _ = gap_table(predictions, ["t1", "t2", "t3"], ["gender"], {}, 200, seed=1)
    keep = ["task", "group", "metric", "gap", "ci_low", "ci_high", "p_value"]
    pd.testing.assert_frame_equal(first[keep], again[again["task"] != "t3"][keep].reset_index(drop=True))


def test_intersectional_cells_skip_small_ones_and_list_them():
    frame = pd.DataFrame(
        {
            "gender": ["M"] * 30 + ["F"] * 30 + ["F"] * 3,
            "ethnicity": ["WHITE"] * 60 + ["BLACK"] * 3,
            "label": [1, 0] * 15 + [0] * 28 + [1, 1] + [1, 0, 0],
        }
    )
    kept, table = intersectional_cells(
        frame, ["gender", "ethnicity"], {"ethnicity": ["UNKNOWN"]}, min_rows=10, min_positives=5
    )
    assert kept == ["M & WHITE"]
    reasons = table.set_index("cell")["reason"]
    assert reasons["F & WHITE"] == "fewer than 5 positives" and reasons["F & BLACK"] == "fewer than 10 rows"
    assert "M & UNKNOWN" not in reasons.index


def test_significance_counts_by_hand():
    gaps = pd.DataFrame(
        {
            "attribute": "gender",
            "group": "M",
            "metric": ["recall", "recall", "recall", "parity"],
            "gap": [0.2, -0.1, 0.3, 0.1],
            "significant": [True, True, False, False],
        }
    )
    row = significance_counts(gaps).iloc[0]
    assert row["recall gap"] == "2 (50%)" and row["parity gap"] == "0 (0%)" and row["recall_favouring"] == 1


def _seed_gaps(gap: list[float], significant_bh: list[bool]) -> pd.DataFrame:
    """Two recall gaps (tasks a, b) of one model, gender=F, as one seed replicate's gaps.parquet."""
    return pd.DataFrame(
        {
            "model": "m",
            "task": ["a", "b"],
            "attribute": "gender",
            "group": "F",
            "metric": "recall",
            "gap": gap,
            "significant": significant_bh,
            "significant_bh": significant_bh,
        }
    )


def test_seed_spread_by_hand():
    replicates = [
        _seed_gaps([-0.6, 0.1], [True, False]),
        _seed_gaps([-0.2, 0.3], [False, True]),
        _seed_gaps([-0.4, -0.2], [True, True]),
    ]
    spread = seed_spread(replicates).set_index("task")
    a, b = spread.loc["a"], spread.loc["b"]
    assert a["gap"] == -0.6 and a["significant_bh"]  # replicate 0's own value and decision
    assert a["gap_seed_mean"] == pytest.approx(-0.4) and a["gap_seed_sd"] == pytest.approx(0.2)
    assert (a["gap_seed_min"], a["gap_seed_max"]) == (-0.6, -0.2)
    assert (a["significant_bh_seeds"], a["significant_bh_below_seeds"], a["significant_bh_above_seeds"]) == (2, 2, 0)
    assert (b["significant_bh_seeds"], b["significant_bh_below_seeds"], b["significant_bh_above_seeds"]) == (2, 1, 1)
    assert b["gap_seed_sd"] == pytest.approx(np.std([0.1, 0.3, -0.2], ddof=1))
    assert (spread["replicates"] == 3).all()


def test_seed_spread_refuses_replicates_with_different_gaps():
    with pytest.raises(ValueError, match="missing from some seed replicates"):
        seed_spread([_seed_gaps([-0.6, 0.1], [True, False]), _seed_gaps([-0.2, 0.3], [False, True]).iloc[:1]])


def test_significance_counts_carry_the_range_over_seeds():
    """Replicate 0 gives 'N (P%)'; the bracket is the lowest and highest N over the replicates."""
    replicates = [
        _seed_gaps([-0.6, 0.1], [True, False]),
        _seed_gaps([-0.2, 0.3], [False, False]),
        _seed_gaps([-0.4, -0.2], [True, True]),
    ]
    row = significance_counts_over_seeds(replicates, "significant_bh").iloc[0]
    assert row["recall gap"] == "1 (0%) [seeds 0-2]" and row["parity gap"] == "0 (0%) [seeds 0-0]"
    assert significance_counts_over_seeds(replicates[:1], "significant_bh").iloc[0]["recall gap"] == "1 (0%)"


def test_performance_table_observed_values_match_scikit_learn():
    from sklearn.metrics import average_precision_score, roc_auc_score

    predictions = _predictions()
    table = task_performance(predictions, ["t1"], 200, seed=0).iloc[0]
    t1 = predictions[predictions["task"] == "t1"]
    assert table["auroc"] == pytest.approx(roc_auc_score(t1["label"], t1["probability"]))
    assert table["auprc"] == pytest.approx(average_precision_score(t1["label"], t1["probability"]))
    assert table["auroc_low"] < table["auroc"] < table["auroc_high"]
