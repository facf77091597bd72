"""The plm study on the demo world: the planted identity-disease associations are found by SEAT and
the StereoSet-style test in the trained tiny models, the birthday controls are not, SentenceDebias
moves the planted effects towards 0, and an unloadable model keeps its rows, marked."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_config
from scipy import stats

# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("results/plm/seat_long.csv", "results/plm/table5_debias_long.csv")
WIRING_TARGETS = ("plm",)


@pytest.fixture(scope="module")
def plm(planted_study):
    """The planted world's plm scores and tables. Only the tables these checks read are built (their
    scores, stereoset results and projections come with them): Table 6's fine-tuning (9 jobs, about 5
    job-minutes at the planted steps) carries no planted effect, and the wiring tier builds it."""
    run = planted_study(*PLANTED_TARGETS)
    return run / "results" / "plm"


@pytest.fixture(scope="module")
def plm_wiring(wiring_study):
    return wiring_study(*WIRING_TARGETS) / "results" / "plm"


def seat_of(plm, model, debias="none"):
    return pd.read_csv(plm / "scores" / model / debias / "seat.csv").set_index("test")


def test_seat_finds_the_planted_associations_and_not_the_controls(plm, demo_truth):
    """Planted tests: effect > 0 and the calibrated p (random attribute phrases; the classic permutation
    p is anti-conservative, results/validation/error_rates.md) below 0.05. Controls: calibrated p at or
    above the truth file's family-wise level."""
    truth = demo_truth["plm"]
    assert truth["trained_models"]
    for model in truth["trained_models"]:
        seat = seat_of(plm, model)
        for test in truth["seat_planted"]:
            row = seat.loc[test]
            assert row["effect_size"] > 0 and row["p_calibrated"] < 0.05, (model, test, row.to_dict())
        for test in truth["seat_controls"]:  # family-wise 5% over the control checks (truth file)
            assert seat.at[test, "p_calibrated"] >= truth["control_alpha"], (model, test, seat.loc[test].to_dict())


def template_scores(plm, model) -> pd.Series:
    """A model's stereotype score per family and template (Table 4's long form)."""
    table = pd.read_csv(plm / "scores" / model / "none" / "stereoset.csv")
    assert (table["status"] == "ok").all(), (model, table["status"].unique())
    return table[(table["blank"] == "all") & (table["template"] != "all")].set_index(["family", "template"])["ss"]


def test_stereoset_scores_prefer_the_planted_stereotypes(plm, demo_truth):
    """Each trained model against the registry's untrained model of the study (it learned nothing, so
    what it prefers comes from the sentences' form alone): over the 8 family x template scores, the
    trained model's stereotype score is the higher one in at least 7 (one-sided sign test p <= 9/256
    = 0.035), and above 50 overall in both families. The untrained model is the control: its 8 scores
    sit on both sides of 50 (two-sided sign test p >= 0.05)."""
    from scipy.stats import binomtest

    truth = demo_truth["plm"]
    untrained = [m for m in run_config(plm.parents[1])["plm"]["models"] if m not in truth["trained_models"]]
    untrained = [
        m
        for m in untrained
        if (plm / "scores" / m / "none" / "stereoset.csv").exists()
        and (pd.read_csv(plm / "scores" / m / "none" / "stereoset.csv")["status"] == "ok").all()
    ]
    assert untrained, "no untrained model with StereoSet scores: the control would be missing"
    control = template_scores(plm, untrained[0])
    assert len(control) == 8
    above = int((control > 50).sum())
    assert binomtest(above, len(control), 0.5).pvalue >= 0.05, control.to_dict()
    for model in truth["trained_models"]:
        trained = template_scores(plm, model).loc[control.index]
        higher = int((trained > control).sum())
        assert binomtest(higher, len(control), 0.5, alternative="greater").pvalue < 0.05, (model, trained.to_dict())
        table = pd.read_csv(plm / "scores" / model / "none" / "stereoset.csv")
        overall = table[(table["blank"] == "all") & (table["template"] == "all")].set_index("family")
        for family in ("race", "lgbtq"):
            assert overall.at[family, "ss"] > 50, (model, family, overall.loc[family].to_dict())
            assert 0 <= overall.at[family, "ties"] < overall.at[family, "pairs"]


def test_sentencedebias_moves_planted_effects_towards_zero(plm, demo_truth):
    """SentenceDebias shrinks every planted SEAT association that the model learned (significant by
    the calibrated test before debiasing), and the average absolute effect size over them (Meade et
    al. 2022's summary) falls. Per test the effect size is not the measure: a learned planted effect
    sits near d's ceiling of 2, where d is flat, and the tiny GPT-2's anisotropic embeddings lose only
    a few percent of their association to one removed direction (race_seat_2 in one CI run: mean
    difference 0.00847 -> 0.00787 while d went 1.7304 -> 1.7317). A planted test the model did not
    learn has an effect size that is noise; each model must have learned at least one."""
    truth = demo_truth["plm"]
    seat = pd.read_csv(plm / "seat_long.csv")
    for model in truth["trained_models"]:
        scored = seat[(seat["model"] == model) & seat["test"].isin(truth["seat_planted"])]
        before = scored[scored["debias"] == "none"].set_index("test")
        after = scored[scored["debias"] == "sentencedebias"].set_index("test")
        assert len(before) == len(after) == len(truth["seat_planted"])
        learned = before.index[before["significant"].astype(bool)]
        assert len(learned) >= 1, model
        association_before = before.loc[learned, "mean_difference"].abs()
        association_after = after.loc[learned, "mean_difference"].abs()
        assert (association_after < association_before).all(), (model, association_before, association_after)
        mean_abs_before = before.loc[learned, "effect_size"].abs().mean()
        mean_abs_after = after.loc[learned, "effect_size"].abs().mean()
        assert mean_abs_after < mean_abs_before, (model, mean_abs_before, mean_abs_after)


def test_projections_are_checked_projections(plm, demo_truth):
    for model in demo_truth["plm"]["trained_models"]:
        inlp = json.loads((plm / "projections" / model / "inlp.json").read_text())
        assert inlp["idempotence_error"] < 1e-4 and inlp["symmetry_error"] < 1e-4
        assert inlp["accuracy_after"] < inlp["accuracy_before"]
        sdb = json.loads((plm / "projections" / model / "sentencedebias.json").read_text())
        assert sdb["removed_direction_max_abs"] < 1e-3 * sdb["removed_direction_before_max_abs"]


def test_example_counts_follow_the_templates(plm_wiring, repo):
    import yaml

    plm = plm_wiring
    counts = json.loads((plm / "stereoset" / "counts.json").read_text())
    sets = yaml.safe_load((repo / "config/resources/wordsets/xie2024.yaml").read_text())["tests"]
    templates = len(counts["templates"])
    by = {(r["test"], r["blank"]): r["pairs"] for r in counts["pairs_by"]}
    for test in ("race_seat_1", "race_seat_2", "lgbtq_seat"):
        t = sets[test]
        assert by[(test, "bias")] == templates * len(t["Y"]) * len(t["B"]) * len(t["A"])
        assert by[(test, "identity")] == templates * len(t["B"]) * len(t["Y"]) * len(t["X"])


def test_tables_keep_the_unloadable_model_marked(plm_wiring):
    plm = plm_wiring
    for name in ("table2_seat.md", "table4_stereoset.md", "table5_debias.md"):
        text = (plm / name).read_text()
        assert "BiomedGPT" in text and "not loadable" in text, name
    assert (plm / "fig2_seat.png").stat().st_size > 10_000
    summary = json.loads((plm / "scores" / "biomedgpt" / "none" / "summary.json").read_text())
    assert summary["status"].startswith("not loadable") and "OFA" in summary["status"]


def test_seat_significance_follows_the_configured_alpha(plm_wiring):
    """The wiring profile sets plm.seat.alpha to 0.1 (the default is 0.05): the significant column and
    Table 2's note use it (the level was once hard-coded in the rule and the library)."""
    seat = pd.read_csv(plm_wiring / "seat_long.csv")
    scored = seat[seat["p_calibrated"].notna()]
    assert len(scored) and (scored["significant"] == (scored["p_calibrated"] < 0.1)).all()
    assert "calibrated p < 0.1 " in (plm_wiring / "table2_seat.md").read_text()


def _cell_numbers(cell: str) -> tuple[float, float, float]:
    """'57.33 [51.67, 62.33]' -> (57.33, 51.67, 62.33)."""
    value, interval = cell.split(" [")
    low, high = interval.rstrip("]").split(", ")
    return float(value), float(low), float(high)


def test_benchmark_table_scores_every_evaluation_and_marks_what_does_not_apply(plm_wiring):
    """The benchmark table has one row per evaluation: masked and causal models scored with intervals
    that hold their value, the seq2seq and unloadable models marked n/a with the reason in the long
    form; the paired table compares each debiased row with its plain row and each plain model with
    its untrained copies; the items scored are the configured samples."""
    config = run_config(plm_wiring.parents[1])
    evaluations = {
        (r["model"], r["debias"]) for r in pd.read_csv(plm_wiring / "benchmarks_long.csv").to_dict("records")
    }
    wide = pd.read_csv(plm_wiring / "benchmarks.csv", keep_default_na=False)  # keep "n/a" as written
    assert len(wide) == len(evaluations)
    rules_of = {"tiny BERT": ("nangia", "bias_bench"), "tiny GPT-2": ("bias_bench", "lm_eval")}
    for row in wide.to_dict("records"):
        kind = next((k for k in rules_of if row["model"].startswith(k)), None)
        if kind is None:
            assert all(row[f"CrowS-Pairs {r}"] == "n/a" for r in ("nangia", "bias_bench", "lm_eval")), row["model"]
            continue
        for column in [f"CrowS-Pairs {r}" for r in rules_of[kind]] + ["StereoSet SS", "StereoSet LMS"]:
            value, low, high = _cell_numbers(row[column])
            assert 0 <= low <= value <= high <= 100, (row["model"], column)
        (missing,) = {"nangia", "bias_bench", "lm_eval"} - set(rules_of[kind])
        assert row[f"CrowS-Pairs {missing}"] == "n/a", (row["model"], missing)  # the rule does not score the kind
        assert row["StereoSet rule"] == ("nadeem" if kind == "tiny BERT" else "bias_bench"), row["model"]
    long = pd.read_csv(plm_wiring / "benchmarks_long.csv")
    status = long[long["measure"] == "status"].set_index(["model", "debias", "benchmark"])["status"]
    assert status[("bart_base", "none", "crows_pairs")].startswith("not applicable: a seq2seq model")
    assert status[("biomedgpt", "none", "crows_pairs")].startswith("not loadable")
    # the demo's BERT was saved with its masked-LM head only: no next-sentence head to score intersentence with
    assert status[("plm_bert", "none", "intersentence")].startswith(
        "not applicable: the checkpoint has no trained next"
    )
    # every pair is scored by every rule but bias_bench's masked one, which skips pairs without a modified token
    sample = config["plm"]["benchmarks"]["sample"]["crows_pairs"]
    crows = long[(long["benchmark"] == "crows_pairs") & (long["bias_type"] == "all")]
    counts = crows[crows["measure"].isin(["metric", "skipped"])].pivot_table(
        index=["model", "debias", "rule"], columns="measure", values="items"
    )
    assert ((counts["metric"] + counts["skipped"]) == sample).all()
    # the row of GPT-2 against its untrained copies, recomputed from the per-pair files: each copy's metric
    # (pairs preferred, a tie counted against), and the prediction t test over the copies
    copies = config["plm"]["benchmarks"]["untrained_copies"]
    folder = plm_wiring / "benchmarks" / "plm_gpt2" / "none"
    trained = pd.read_parquet(folder / "crows_pairs.parquet").query("rule == 'lm_eval'")
    fresh = pd.read_parquet(folder / "untrained_crows_pairs.parquet").query("rule == 'lm_eval'")
    assert sorted(fresh["copy"].unique()) == list(range(copies))
    assert (fresh.groupby("copy")["pair_id"].apply(sorted) == [sorted(trained["pair_id"])] * copies).all()
    metric = 100 * float((trained["score_more"] > trained["score_less"]).mean())
    scores = fresh.groupby("copy").apply(lambda c: 100 * float((c["score_more"] > c["score_less"]).mean()))
    spread = scores.std(ddof=1) * np.sqrt(1 + 1 / copies)
    paired = pd.read_csv(plm_wiring / "benchmarks_paired.csv")
    row = paired[
        (paired["first"] == "plm_gpt2 / none")
        & (paired["second"] == f"plm_gpt2 / untrained copies ({copies})")
        & (paired["rule"] == "lm_eval")
    ].iloc[0]
    assert row["difference"] == pytest.approx(metric - scores.mean())
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(metric - scores.mean()) / spread, copies - 1))
    assert row["p_bh"] >= row["p_value"]
    assert (
        "Published values, each comparable only with the medbias score of the same rule"
        in (plm_wiring / "benchmarks.md").read_text()
    )
    assert (plm_wiring / "fig_benchmarks.png").stat().st_size > 10_000
