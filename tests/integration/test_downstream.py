"""The downstream analysis on the demo world: classifiers on frozen features of every task, the
fairness gaps with bootstrap and BH, and the paper's tables and figures. The demo world plants a
recall gap (women's notes rarely mention one phenotype's evidence); the analysis must find it with
the right sign, and tasks without a planted effect must stay near the nominal rate after BH."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from conftest import run_config


def _parts(run):
    """(downstream folder, downstream config, task catalogue, the baseline's gaps) of a run."""
    downstream = run / "results" / "hurtful" / "downstream"
    return (
        downstream,
        run_config(run)["hurtful"]["downstream"],
        pd.read_csv(run / "results" / "mimic" / "tasks.csv"),
        pd.read_parquet(downstream / "baseline" / "gaps.parquet"),
    )


# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("hurtful",)
WIRING_TARGETS = ("hurtful",)


@pytest.fixture(scope="module")
def planted_parts(planted_study):
    return _parts(planted_study(*PLANTED_TARGETS))


@pytest.fixture(scope="module")
def wiring(wiring_study):
    """The wiring world's (downstream, config, tasks, baseline gaps): the layout tests read these."""
    return _parts(wiring_study(*WIRING_TARGETS))


@pytest.fixture(scope="module")
def downstream(planted_parts):
    return planted_parts[0]


@pytest.fixture(scope="module")
def config(planted_parts):
    return planted_parts[1]


@pytest.fixture(scope="module")
def tasks(planted_parts):
    return planted_parts[2]


@pytest.fixture(scope="module")
def baseline_gaps(planted_parts):
    return planted_parts[3]


def _planted(demo_truth, tasks):
    """(planted tasks, tasks a planted phenotype also feeds: the 'any' aggregates of its type)."""
    planted, touched = set(), set()
    for gap in demo_truth["mimic"]["planted_recall_gaps"]:
        kind = demo_truth["mimic"]["phenotypes"][gap["phenotype"]]["type"]
        planted |= set(tasks.loc[tasks["label"] == gap["phenotype"], "task"])
        touched |= set(tasks.loc[tasks["label"].isin([f"any_{kind}", "any_disease"]), "task"])
    return planted, touched


def test_planted_recall_gap_is_found_with_the_right_sign(downstream, config, baseline_gaps, demo_truth, tasks):
    """The planted phenotype's tasks show the disadvantaged group's recall below the other's.

    All notes (PA), where the plant reaches every note: the one-sided two-proportion score test at 5%
    (half the two-sided ``p_value``; the truth file fixes the direction before the data are seen) under
    a majority of the classifier seeds the workflow trains, and under seed 0 the two-sided test with
    its interval below 0.

    First note (PF): the planted sign under a majority of the seeds. Its significance is not asserted
    at this scale because the test split cannot show it reliably: about 15 positives per gender, a
    classifier that flags about half of the stays, gaps near -0.25 with a standard error near 0.16,
    so a one-sided test at 5% has about 45% power per seed. Measured one-sided p under the three seeds:
    0.067, 0.009, 0.022 (world of 2026-11-24) and 0.035, 0.067, 0.37 (gaps -0.31, -0.23, +0.04; the
    same world on another CPU's floating-point path, 2026-11-25). At the default scale the first-note
    gap is -0.63 to -0.97 and ``results/validation/planted_recovery.md`` judges it by the test."""
    planted, _ = _planted(demo_truth, tasks)
    assert planted
    gap = demo_truth["mimic"]["planted_recall_gaps"][0]
    seeds = [baseline_gaps] + [
        pd.read_parquet(downstream / "baseline" / f"replicate{r}" / "gaps.parquet")
        for r in range(1, config["replicates"])
    ]
    assert len(seeds) >= 3
    planted_rows = [
        gaps[
            (gaps["attribute"] == gap["attribute"])
            & (gaps["group"] == gap["disadvantaged"])
            & (gaps["metric"] == "recall")
            & gaps["task"].isin(planted)
        ]
        for gaps in seeds
    ]
    significant, signed = dict.fromkeys(planted, 0), dict.fromkeys(planted, 0)
    for rows in planted_rows:
        assert len(rows) == len(planted)
        for row in rows.itertuples():
            significant[row.task] += bool(row.gap < 0 and row.p_value / 2 < 0.05)
            signed[row.task] += bool(row.gap < 0)
    majority = len(seeds) / 2
    assert all(count > majority for count in signed.values()), signed
    assert all(count > majority for task, count in significant.items() if task.startswith("pa_")), significant
    # the all-notes task carries the plant at full strength: seed 0 alone, two-sided, interval and all
    all_notes = planted_rows[0][planted_rows[0]["task"].str.startswith("pa_")]
    assert len(all_notes) == 1 and all_notes["significant"].all() and (all_notes["ci_high"] < 0).all()


def test_tasks_without_a_planted_gap_stay_near_the_nominal_rate_after_bh(baseline_gaps, demo_truth, tasks):
    """Two-group attributes (gender; language once Missing is excluded) over the tasks with nothing
    planted: BH at 5% rejects at most two of about 55 (under the null it rejects anything at all with
    probability at most 5%). Language's Other group has enough test positives for a gap only on the
    aggregate tasks and the most prevalent phenotypes (at scale 0.4, two control tasks)."""
    planted, touched = _planted(demo_truth, tasks)
    control = baseline_gaps[~baseline_gaps["task"].isin(planted | touched) & (baseline_gaps["metric"] == "recall")]
    for attribute, group, least in (("gender", "F", 10), ("language", "Other", 2)):
        rows = control[(control["attribute"] == attribute) & (control["group"] == group)]
        assert len(rows) > 40, attribute
        assert rows["gap"].notna().sum() >= least, attribute  # defined gaps: the check cannot pass on none
        assert rows["significant_bh"].sum() <= 2, rows[rows["significant_bh"]][["task", "gap", "p_bh"]]


def test_small_groups_have_no_gap_and_say_why(wiring):
    _, config, _, baseline_gaps = wiring
    missing = baseline_gaps[baseline_gaps["gap"].isna()]
    assert len(missing) and missing["note"].str.len().gt(0).all()
    assert not missing["significant"].any() and missing["p_bh"].isna().all()
    recall = missing[(missing["metric"] == "recall") & missing["note"].str.startswith("fewer")]
    assert (recall["positives"] < config["min_group"]["positives"]).all()


def test_exclusions_apply_to_their_own_attribute(wiring):
    _, config, _, baseline_gaps = wiring
    for attribute, excluded in config["excluded_subgroups"].items():
        part = baseline_gaps[baseline_gaps["attribute"] == attribute]
        assert not set(part["group"]) & set(excluded), attribute
    gender = baseline_gaps[(baseline_gaps["attribute"] == "gender") & (baseline_gaps["metric"] == "recall")]
    assert (gender["excluded_rows"] == 0).all()


def test_classifier_seed_replicates_spread_every_gap(wiring):
    downstream, config, _, baseline_gaps = wiring
    seeds = pd.read_csv(downstream / "gap_seeds.csv")
    assert config["replicates"] > 1 and (seeds["replicates"] == config["replicates"]).all()
    keys = ["task", "attribute", "group", "metric"]
    base = seeds[seeds["model"] == "baseline"].merge(
        baseline_gaps, on=keys, suffixes=("", "_r0"), validate="one_to_one"
    )
    assert len(base) == len(baseline_gaps)
    np.testing.assert_allclose(base["gap"], base["gap_r0"], equal_nan=True)  # replicate 0 is the tables' model
    defined = base["gap"].notna()
    assert (
        (base.loc[defined, "gap_seed_min"] <= base.loc[defined, "gap"] + 1e-12)
        & (base.loc[defined, "gap"] <= base.loc[defined, "gap_seed_max"] + 1e-12)
    ).all()
    assert (seeds["gap_seed_sd"] > 0).any()  # another seed trains another classifier
    first = pd.read_parquet(downstream / "baseline" / "test_predictions.parquet")
    other = pd.read_parquet(downstream / "baseline" / "replicate1" / "test_predictions.parquet")
    assert first[["task", "ICUSTAY_ID", "label"]].equals(other[["task", "ICUSTAY_ID", "label"]])  # same test set
    assert not np.allclose(first["probability"], other["probability"])
    # every count of Table C3 lies within its range over the seeds, replicate 0 being one of them
    for cell in (
        pd.read_csv(downstream / "tableC3_gaps_fdr.csv")[["recall gap", "parity gap", "specificity gap"]]
        .to_numpy()
        .ravel()
    ):
        count, low, high = (int(v) for v in re.fullmatch(r"(\d+) \(\d+%\) \[seeds (\d+)-(\d+)\]", cell).groups())
        assert low <= count <= high, cell


def test_predictions_follow_the_selected_threshold(wiring):
    downstream, config, tasks, _ = wiring
    for model in config["models"]:
        predictions = pd.read_parquet(downstream / model / "test_predictions.parquet")
        selection = pd.read_csv(downstream / model / "selection.csv").set_index("task")
        assert set(predictions["task"]) == set(tasks["task"]) == set(selection.index)
        assert predictions["probability"].between(0, 1).all()
        threshold = predictions["task"].map(selection["threshold"])
        assert ((predictions["probability"] >= threshold).astype(int) == predictions["prediction"]).all()
        grid = pd.read_csv(downstream / model / "grid.csv")
        best = grid.loc[grid.groupby("task")["validation_auprc"].idxmax()].set_index("task")
        np.testing.assert_allclose(best["validation_auprc"], selection.loc[best.index, "validation_auprc"])


def test_tables_and_figures_are_complete(wiring):
    downstream, config, tasks, _ = wiring
    table4 = pd.read_csv(downstream / "table4_gaps.csv")
    assert {"gender", "language", "ethnicity", "insurance"} == set(table4["attribute"])
    assert table4["recall gap"].str.fullmatch(r"\d+ \(\d+%\) \[seeds \d+-\d+\]").all()
    assert len(pd.read_csv(downstream / "tableC3_gaps_fdr.csv")) == len(table4)
    table5 = pd.read_csv(downstream / "table5_debiased_gender.csv")
    assert set(table5["model"]) == {"baseline", "debiased"} and set(table5["fdr"]) == {"no", "yes"}
    performance = pd.read_csv(downstream / "tableA2_performance_long.csv")
    assert len(performance) == len(tasks) * len(config["models"])
    assert (performance["auroc_low"] <= performance["auroc"]).all() and (
        performance["auroc"] <= performance["auroc_high"]
    ).all()
    for name in ("figA1_auprc", "fig4_gaps_gender", "fig5_gaps_language"):
        assert (downstream / f"{name}.png").stat().st_size > 10_000 and (downstream / f"{name}.pdf").is_file()
    skipped = pd.read_csv(downstream / "intersectional_skipped.csv")
    assert (~skipped["kept"]).all() and skipped["reason"].str.startswith("fewer than").all()
    assert "gender x ethnicity" in set(pd.read_parquet(downstream / "baseline" / "gaps.parquet")["attribute"])


def test_mortality_is_predicted_from_the_grave_phrases(downstream):
    """The demo notes carry grave phrases for patients who die: the pretrained model's classifier
    ranks in-hospital deaths above chance (the lower end of its 95% interval above 0.5)."""
    performance = pd.read_csv(downstream / "tableA2_performance_long.csv")
    mortality = performance[(performance["task"] == "mortality") & (performance["model"] == "baseline")].iloc[0]
    assert mortality["auroc_low"] > 0.5
