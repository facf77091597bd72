"""The hurtful study on the demo world: after pretraining on the demo notes the clinical BERT orders
the planted conditions by their gender lean (against the neutral controls) while the untrained base
model does not; the discharge-note gender ratios match the planted shares; the adversary's held-out
accuracy falls during adversarial pretraining; Table D4 and Figure 1 are complete and consistent."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_config

# what this module's tests read from each test world (built in one background run per world: conftest)
PLANTED_TARGETS = ("hurtful",)
WIRING_TARGETS = ("hurtful",)


@pytest.fixture(scope="module")
def hurtful(planted_study):
    return planted_study(*PLANTED_TARGETS) / "results" / "hurtful"


@pytest.fixture(scope="module")
def wiring_run(wiring_study):
    return wiring_study(*WIRING_TARGETS)


@pytest.fixture(scope="module")
def truth(demo_truth):
    return demo_truth


def _gender_rows(hurtful, model):
    long = pd.read_csv(hurtful / "table3_logprob_long.csv")
    return long[(long["model"] == model) & (long["target_set"] == "gender")].set_index("category")


def test_pretrained_model_orders_planted_conditions_against_the_controls(hurtful, truth):
    """Each leaning category's mean paired difference lies on its lean's side of the control's. Its
    Mann-Whitney p is not asserted: over 5 against 9 attributes the test's smallest p lies 0.71 SE
    beyond its 0.01, so the planted recovery reports it apart as known to lack power."""
    planted = truth["logprob"]
    control = planted["control_category"]
    rows = _gender_rows(hurtful, "baseline")
    for category, info in planted["categories"].items():
        if category == control:
            continue
        row = rows.loc[category]
        sign = 1 if info["lean"] == "male" else -1
        assert sign * (row["mean_difference"] - rows.loc[control, "mean_difference"]) > 0, (category, row.to_dict())


def test_untrained_base_model_shows_no_planted_ordering(hurtful, truth):
    """The untrained base model's scores are a thousand times smaller than the pretrained model's
    (Mann-Whitney can still rank such tiny differences, so the magnitude is the claim) and do not
    reproduce the planted ordering in both directions."""
    planted = truth["logprob"]
    control = planted["control_category"]
    untrained, trained = (
        _gender_rows(hurtful, "scibert"),
        _gender_rows(hurtful, "baseline"),
    )  # demo scibert = untrained tiny BERT
    leaning = [c for c in planted["categories"] if c != control]

    def gap(rows, category):
        return rows.loc[category, "mean_difference"] - rows.loc[control, "mean_difference"]

    for category in leaning:
        assert abs(gap(untrained, category)) < 0.01 * abs(gap(trained, category)), category
    in_planted_direction = {
        c: bool(
            untrained.loc[c, "mannwhitney_vs_control_p"] < 0.05
            and gap(untrained, c) * (1 if planted["categories"][c]["lean"] == "male" else -1) > 0
        )
        for c in leaning
    }
    assert len(in_planted_direction) >= 2 and not any(in_planted_direction.values()), in_planted_direction
    assert untrained["mean_difference"].abs().max() < 0.05


def test_the_control_category_has_no_lean_within_it(hurtful, truth):
    """CONTROL's conditions are mentioned for both genders alike, so the pretrained model gives its
    attributes no lean of their own beyond the offset every category shares: split in two halves (by
    name), their mean paired differences (male word - female word, per attribute: Table 3's unit) are
    not separated (two-sided Mann-Whitney p above 2 / C(9, 4) = 0.0159, the smallest p of a 4-5 split,
    which exchangeable halves reach 1.6% of the time: a check that false-alarms at 5% fails one world
    in twenty, as it did at p 0.032 on one pretraining path of the balanced world). The differences
    are computed here from the scores."""
    from math import comb

    from scipy.stats import mannwhitneyu

    control = truth["logprob"]["control_category"]
    groups = run_config(hurtful.parents[1])["hurtful"]["logprob"]["target_sets"]["gender"]
    male, female = list(groups.values())[:2]
    scores = pd.read_parquet(hurtful / "logprob" / "baseline.parquet")
    scores = scores[scores["category"] == control].pivot_table(
        index=["item", "attribute"], columns="word", values="score"
    )
    differences = pd.concat([scores[m] - scores[f] for m, f in zip(male, female)])
    per_attribute = differences.groupby(level="attribute").mean().sort_index()
    assert len(per_attribute) >= 6
    half = len(per_attribute) // 2
    p = mannwhitneyu(per_attribute.iloc[:half], per_attribute.iloc[half:], alternative="two-sided").pvalue
    assert p > 2 / comb(len(per_attribute), half) + 1e-9, (p, per_attribute.to_dict())


def test_discharge_note_gender_ratio_matches_the_planted_shares(hurtful, truth):
    table = pd.read_csv(hurtful / "table3_logprob.csv").set_index("category")
    for category, info in truth["logprob"]["categories"].items():
        male_share = float(table.loc[category, "Gender ratio (M, F)"].split("%")[0]) / 100
        assert abs(male_share - info["male_share"]) < 0.08, (category, male_share)
        assert table.loc[category, "patients mentioning"] > 30


def test_adversary_learns_gender_in_the_warmup_and_loses_it_under_reversal(hurtful):
    """On held-out pairs of test subjects: in the second half of the warm-up (discriminators train,
    no reversed gradient reaches the encoder) each discriminator predicts gender better than the
    majority-class rate by more than three binomial standard errors; after the reversal is switched
    on its accuracy falls, and at the end of the phase it is at the majority rate (within two)."""
    warmup = run_config(hurtful.parents[1])["hurtful"]["pretrain"]["adversary_warmup_steps"]
    summary = json.loads((hurtful / "pretrain" / "adv_gender.json").read_text())
    assert summary["adversary_attribute"] == "gender" and summary["excluded_subjects"] > 0
    n = summary["heldout_pairs"]
    assert n >= 500 and warmup > 0
    curve = pd.read_csv(hurtful / "pretrain" / "adv_gender_curve.csv")
    first_phase = curve[curve["phase"] == 1]
    learning = first_phase[(first_phase["step"] > warmup / 2) & (first_phase["step"] <= warmup)]
    reversed_ = first_phase[first_phase["step"] > warmup]
    assert len(learning) >= 2 and len(reversed_) >= 2
    for k in (0, 1):
        majority = first_phase[f"heldout_majority_{k}"].iloc[0]
        se = np.sqrt(majority * (1 - majority) / n)
        learnt = learning[f"heldout_accuracy_{k}"].mean()
        assert learnt > majority + 3 * se, (k, learnt, majority)
        assert reversed_[f"heldout_accuracy_{k}"].mean() < learnt, k
        final = reversed_[f"heldout_accuracy_{k}"].iloc[-1]
        assert final <= majority + 2 * se, (k, final, majority)


def test_table_d4_compares_baseline_and_debiased_per_attribute(wiring_run):
    hurtful = wiring_run / "results" / "hurtful"
    long = pd.read_csv(hurtful / "tableD4_probe_long.csv")
    assert set(long["model"]) == {"baseline", "debiased"} and "gender" in set(long["attribute"])
    for column in ("auroc", "precision", "recall", "auprc"):
        assert long[column].between(0, 1).all()
    assert (long["log_loss"] > 0).all() and (long["test_rows"] > 100).all()
    wide = pd.read_csv(hurtful / "tableD4_probe.csv")
    assert set(wide["metric"]) == {"auroc", "precision", "recall", "auprc", "log_loss"}


def test_fill_in_the_blank_table_is_complete_and_greedy_starts_from_the_top_token(wiring_run):

    hurtful = wiring_run / "results" / "hurtful"
    config = run_config(wiring_run)["hurtful"]["fill_blank"]
    table = pd.read_csv(hurtful / "fig1_fill_in_the_blank.csv")
    assert set(table["fill"]) == set(config["race_words"]) and set(table["model"]) == set(config["models"])
    first = table[table["mask"] == 1]
    assert (first["greedy"] == first["top_k"].str.split(" ").str[0]).all()
    for template in config["templates"]:
        per_fill = table[(table["template"] == template)].groupby(["model", "fill"])["mask"].max()
        assert (per_fill == template.count("[MASK]")).all()
    assert (hurtful / "fig1_fill_in_the_blank.png").stat().st_size > 10_000
