"""Study "mental" end to end on the demo world: the tables and figures of Sogancioglu et al. with the
paper's rows and columns, and the planted effects found (label bias in one task, the bio vectors'
male-leaning depression synonyms) with the controls where nothing was planted."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import run_config

# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("mental",)
WIRING_TARGETS = ("mental",)


@pytest.fixture(scope="module")
def mental(planted_study):
    return planted_study(*PLANTED_TARGETS) / "results" / "mental"


@pytest.fixture(scope="module")
def wiring_run(wiring_study):
    return wiring_study(*WIRING_TARGETS)


@pytest.fixture(scope="module")
def fairness(mental):
    return pd.read_csv(mental / "table5_fairness_long.csv")


def test_every_output_exists_with_the_papers_layout(wiring_run):
    mental = wiring_run / "results" / "mental"
    config = json.loads(json.dumps(run_config(wiring_run)))["mental"]
    for name in (
        "table1_phenotypes.md",
        "table2_split.md",
        "table3_gender_terms.md",
        "table4_gender_uar.md",
        "table5_fairness.md",
        "table5_fairness_all_learners.md",
        "treatment_leans.csv",
        "fig1_annotated_counts.png",
        "fig1_annotated_counts.pdf",
        "fig2_direct_bias.png",
        "fig2_direct_bias.pdf",
        "fig3_lime.png",
        "fig3_lime.pdf",
        "data.json",
    ):
        assert (mental / name).stat().st_size > 0, name
    table2 = pd.read_csv(mental / "table2_split.csv")
    assert table2["task"].tolist() == ["Depression", "Psychiatric disorders", "Alcohol abuse", "Substance abuse"]
    assert [c for c in table2.columns if c != "task"] == [
        f"{s}_{label}_{g}" for s in ("train", "test") for label in ("positive", "negative") for g in ("F", "M")
    ]
    table5 = pd.read_csv(mental / "table5_fairness.csv")
    assert len(table5) == len(config["embeddings"]) * len(config["treatments"])
    figure2 = pd.read_csv(mental / "fig2_direct_bias.csv")  # Direct Bias with its interval, the paper's quantity
    assert len(figure2) == len(config["embeddings"])
    assert (figure2["direct_bias_low"] <= figure2["direct_bias"]).all() and (
        figure2["direct_bias"] <= figure2["direct_bias_high"]
    ).all()
    assert (figure2["signed_low"] <= figure2["signed_mean_cos"]).all() and (
        figure2["signed_mean_cos"] <= figure2["signed_high"]
    ).all()
    assert table5["treatment"].tolist()[:4] == ["original", "swapped", "neutralized", "augmented"]
    for task in table2["task"]:
        assert {f"{task} TPRR", f"{task} FPRR", f"{task} mismatch", f"{task} F1"} <= set(table5.columns)
    table4 = pd.read_csv(mental / "table4_gender_uar.csv")
    assert table4["method"].iloc[0] == "Baseline" and table4["gender_uar"].iloc[0] == 0.5
    assert len(table4) == 1 + 2 * len(config["embeddings"])
    joined = json.loads((mental / "data.json").read_text())["join"]
    assert joined["joined"] == joined["annotated_notes"] and joined["missing_note"]["count"] == 0


def test_planted_label_bias_shows_as_mismatch_and_augmentation_removes_it(fairness, demo_truth):
    """The criteria the validation table prints: on the original notes the mismatch favours the planted
    gender at McNemar p < 0.05; augmentation removes at least half of it. That the augmented classifier
    leans to neither gender (McNemar p >= 0.05, or a mismatch within its permuted retrainings') would accept
    a null, which the removal does not claim: it is the equivalence test of the paired leans (the next test
    and the verdict's), which a classifier that keeps a tenth of its lean passes, significant or not."""
    planted = demo_truth["mental"]["planted_label_bias"][0]
    svm = fairness[(fairness["learner"] == "svm") & (fairness["task"] == planted["task"])].set_index(
        ["embedding", "treatment"]
    )
    for embedding in svm.index.get_level_values(0).unique():
        original, augmented = svm.loc[(embedding, "original")], svm.loc[(embedding, "augmented")]
        assert original["mismatch_low"] > 0, embedding
        assert original["mismatch_group"] == planted["favoured"] and original["mismatch_p"] < 0.05, embedding
        assert augmented["mismatch"] < original["mismatch"] / 2, embedding


def test_the_paired_leans_are_table_vs_leans_and_augmentation_removes_the_planted_one(fairness, mental, demo_truth):
    leans = pd.read_csv(mental / "treatment_leans.csv")
    long = fairness.set_index(["embedding", "treatment", "task", "learner"])["lean"]
    for r in leans.itertuples(index=False):
        assert r.lean_original == pytest.approx(long[(r.embedding, "original", r.task, r.learner)])
        assert r.lean_treated == pytest.approx(long[(r.embedding, r.treatment, r.task, r.learner)])
        assert r.se_original >= 0 and r.se_treated >= 0
    planted = demo_truth["mental"]["planted_label_bias"][0]
    toward = 1 if planted["favoured"] == "M" else -1
    svm = leans[(leans["learner"] == "svm") & (leans["task"] == planted["task"]) & (leans["treatment"] == "augmented")]
    assert len(svm) == fairness["embedding"].nunique()
    for r in svm.itertuples(index=False):
        # the planted lean, and at most half of it left either way after augmentation (the validation tests it
        # with its SEs); the word vectors' classifiers lean least (about 0.06 to 0.24 over worlds)
        assert toward * r.lean_original > 0.04 and abs(r.lean_treated) < toward * r.lean_original / 2, r.embedding


def test_every_assessed_mismatch_is_ranked_among_its_permuted_retrainings(fairness, mental, demo_truth):
    config = run_config(mental.parent.parent)["mental"]
    draws, tasks = config["gender_null"]["draws"], config["gender_null"].get("tasks") or config["tasks"]
    assert {b["task"] for b in demo_truth["mental"]["planted_label_bias"]} | set(
        demo_truth["mental"]["control_tasks"]
    ) <= set(tasks)
    for embedding in config["embeddings"]:
        null = pd.read_csv(mental / "classify" / embedding / "gender_null.csv")
        assert null.groupby("task")["draw"].count().to_dict() == {task: draws for task in tasks}
        assert null["mismatch"].between(0, 1).all()
    ranked = fairness[fairness["learner"] == config["gender_null"].get("learner", "svm")]  # the schema's default
    ranked = ranked[ranked["task"].isin(tasks)]
    assert (ranked["null_draws"] == draws).all() and ranked["mismatch_null_p"].between(1 / (draws + 1), 1).all()
    others = fairness.drop(index=ranked.index)
    assert (others["null_draws"] == 0).all() and others["mismatch_null_p"].isna().all()


def test_control_task_is_fair_without_training_on_swapped_notes(fairness, demo_truth):
    """The criterion the validation table prints for the control: the mismatch lies within its
    gender-permutation null (p >= 0.05), not a fixed bar on the mismatch itself."""
    for task in demo_truth["mental"]["control_tasks"]:
        original = fairness[
            (fairness["learner"] == "svm") & (fairness["task"] == task) & (fairness["treatment"] == "original")
        ]
        assert len(original) and original["mismatch_null_p"].notna().all()
        assert (original["mismatch_null_p"] >= 0.05).all(), original[["embedding", "mismatch", "mismatch_null_p"]]


def test_gender_is_readable_from_original_notes_and_less_after_neutralizing(mental):
    """Readable: far above the 0.5 of chance (measured 0.88 to 1.00; W-BERT's stand-in reads 0.88 on a
    2-core AMD EPYC and 0.91 on the machine docs/mental.md was measured on, so the bar is not its value)."""
    table4 = pd.read_csv(mental / "table4_gender_uar.csv").iloc[1:]
    uar = table4.pivot(index="method", columns="trained_on", values="gender_uar")
    assert (uar["original"] >= 0.8).all()
    assert (uar["neutralized"] < uar["original"]).all()


def test_direct_bias_finds_the_male_leaning_bio_vectors(mental, demo_truth):
    table = pd.read_csv(mental / "fig2_direct_bias.csv").set_index("embedding")
    assert demo_truth["mental"]["direct_bias"]["bio"]["depression_male_share"] > 0.5
    bio, general = table.loc["biowordvec"], table.loc["googlenews"]  # bio-w2v and general-w2v in the demo config
    assert bio["signed_high"] < 0 and bio["lean"] == "male"
    assert bio["signed_mean_cos"] < general["signed_mean_cos"] - 0.03
    assert bio["direct_bias"] > general["direct_bias"]
    coverage = json.loads((mental / "fig2_direct_bias_coverage.json").read_text())
    assert coverage["biowordvec"]["pairs_used"] == 10
    assert (
        coverage["biowordvec"]["synonyms_used"] + len(coverage["biowordvec"]["synonyms_missing"])
        == coverage["biowordvec"]["synonyms_requested"]
    )


def test_lime_explains_pairs_with_single_words(mental):
    config = run_config(mental.parents[1])["mental"]["lime"]
    table = pd.read_csv(mental / "fig3_lime.csv")
    assert not table["word"].astype(str).str.contains(r"\s").any()
    per_panel = table.groupby(["pair", "treatment", "copy"]).size()
    assert (per_panel == config["top"]).all()
    assert len(per_panel) == config["pairs"] * len(config["treatments"]) * 2
    assert (table["why_chosen"] == "mismatched under original").any()
