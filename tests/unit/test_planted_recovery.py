"""The planted-recovery table (medbias.validation.error_rates *_recovery): constructed result tables with known
answers, each criterion made to pass and to fail."""

from __future__ import annotations

import pandas as pd
import pytest

from medbias.validation.decisions import counterfactual_decisions, logprob_decisions
from medbias.validation.recovery import (
    control_family,
    gap_recovery,
    logprob_recovery,
    mental_recovery,
    rios_recovery,
    seat_recovery,
)
from medbias.validation.truth import BELOW_POWER, corpus_embeddings, logprob_model_roles


def test_rios_rows_follow_the_truth_and_the_tables_stars():
    truth = {
        "decades": [{"decade": "1960-1969"}, {"decade": "2010-2019"}],
        "planted_pairs": [{"name": "career", "strengths": [0.5, 0.0]}],
    }
    table = pd.DataFrame(
        {
            "decade": ["1960-1969", "1960-1969", "2010-2019", "2010-2019"],
            "test": ["career", "weapons"] * 2,
            "control": [False, True, False, True],
            "mean_difference": [0.2, 0.01, 0.0, -0.3],
            "effect_size": [1.9, 0.1, 0, -1.5],
            "p_value": [1e-4, 0.4, 0.5, 0.001],
            "p_calibrated": [1e-3, 0.5, 0.6, 0.01],
            "significant": [True, False, False, True],
        }
    )
    trends = pd.DataFrame(
        {"test": ["career", "weapons"], "control": [False, True], "md_slope": [-0.1, 0.02], "md_trend_p": [0.01, 0.6]}
    )
    rows = rios_recovery(table, trends, truth)
    assert rows["truth"].tolist() == ["planted", "control", "control", "control", "planted", "control"]
    assert rows["recovered"].tolist() == [True, True, True, False, True, True]  # 2010s weapons starred: flagged
    assert "p 0.01" in rows.iloc[3]["observed"]


def test_seat_rows_count_untrained_models_as_controls():
    truth = {"trained_models": ["tb"], "seat_planted": ["race"], "seat_controls": ["birthday"]}
    seat = pd.DataFrame(
        {
            "model": ["tb", "tb", "bart", "tb"],
            "test": ["race", "birthday", "race", "race"],
            "debias": ["none", "none", "none", "inlp"],
            "status": "ok",
            "effect_size": [0.8, 0.3, -0.2, 0.1],
            "p_value": [1e-4, 0.2, 0.01, 0.5],
            "p_calibrated": [1e-3, 0.3, 0.02, 0.6],
            "significant": [True, False, True, False],
        }
    )
    rows = seat_recovery(seat, truth)
    assert rows["effect"].tolist() == ["tb race", "tb birthday", "bart race (model not trained on the plm corpus)"]
    assert rows["truth"].tolist() == ["planted", "control", "control"]
    assert rows["recovered"].tolist() == [True, True, False]


def test_gap_rows_need_a_negative_bh_significant_gap():
    truth = {
        "planted_recall_gaps": [{"attribute": "gender", "disadvantaged": "F", "phenotype": "Renal failure"}],
        "phenotypes": {"Renal failure": {"type": "acute"}},
    }
    labels = {"pa_renal": "Renal failure", "pf_renal": "Renal failure", "pa_htn": "Hypertension"}
    gaps = pd.DataFrame(
        {
            "model": "m",
            "task": ["pa_renal", "pf_renal", "pa_htn", "pa_renal"],
            "attribute": "gender",
            "group": ["F", "F", "M", "M"],
            "compared_with": ["M", "M", "F", "F"],
            "metric": "recall",
            "gap": [-0.8, -0.07, 0.7, 0.8],
            "ci_low": [-0.9, -0.2, 0.5, 0.7],
            "ci_high": [-0.7, 0.05, 0.9, 0.9],
            "p_value": [1e-6, 0.3, 1e-4, 1e-6],
            "p_bootstrap": [0.002, 0.3, 0.002, 0.002],
            "significant": [True, False, True, True],
            "p_bh": [1e-5, 0.3, 1e-3, 1e-5],
            "significant_bh": [True, False, True, True],
        }
    )
    rows = gap_recovery(gaps, truth, labels)
    assert rows["truth"].tolist() == ["planted", "planted", "control"]  # the mirrored M gap is left out
    assert rows["recovered"].tolist() == [True, False, False]
    family = control_family(rows)
    assert family.iloc[0][["controls", "flagged"]].tolist() == [1, 1]
    assert family.iloc[0]["binomial_p"] == pytest.approx(0.05) and family.iloc[0]["clean_at_level"]


def test_gap_rows_over_classifier_seeds_take_the_majority():
    """With three seed replicates, a planted gap found below 0 in 2 of 3 is found even where
    replicate 0 missed it; a control flagged in replicate 0 alone is not flagged."""
    truth = {
        "planted_recall_gaps": [{"attribute": "gender", "disadvantaged": "F", "phenotype": "Renal failure"}],
        "phenotypes": {"Renal failure": {"type": "acute"}},
    }
    labels = {"pf_renal": "Renal failure", "pa_htn": "Hypertension", "pa_lipid": "Lipids"}
    gaps = pd.DataFrame(
        {
            "model": "m",
            "task": ["pf_renal", "pa_htn", "pa_lipid"],
            "attribute": "gender",
            "group": "F",
            "compared_with": "M",
            "metric": "recall",
            "gap": [-0.05, 0.5, 0.4],
            "ci_low": [-0.2, 0.3, 0.2],
            "ci_high": [0.1, 0.7, 0.6],
            "p_value": [0.6, 1e-4, 1e-3],
            "p_bootstrap": [0.6, 0.002, 0.002],
            "significant": [False, True, True],
            "p_bh": [0.6, 1e-3, 0.01],
            "significant_bh": [False, True, True],
        }
    )
    seeds = gaps[["model", "task", "attribute", "group", "metric"]].assign(
        replicates=3,
        significant_bh_seeds=[2, 1, 3],
        significant_bh_below_seeds=[2, 0, 0],
        gap_seed_min=[-0.4, 0.0, 0.3],
        gap_seed_max=[-0.05, 0.5, 0.5],
    )
    rows = gap_recovery(gaps, truth, labels, seeds)
    assert rows["truth"].tolist() == ["planted", "control", "control"]
    assert rows["recovered"].tolist() == [True, True, False]
    assert "in 2 of 3 seeds" in rows.iloc[0]["observed"] and "most of 3 classifier seeds" in rows.iloc[1]["criterion"]
    one_seed = gap_recovery(gaps, truth, labels)  # replicate 0 alone decides
    assert one_seed["recovered"].tolist() == [False, False, False]
    with pytest.raises(ValueError, match="lacks some recall gaps"):
        gap_recovery(gaps, truth, labels, seeds.iloc[:2])


def test_control_family_is_the_binomial_tail_over_families():
    """20 single tests, 3 flagged: P(X >= 3), X ~ Binomial(20, 0.05). Then a BH family of 10 gaps
    with two flags counts once: 21 families, 4 flagged."""
    rows = pd.DataFrame(
        {
            "study": "s",
            "effect": [f"c{i}" for i in range(20)],
            "truth": "control",
            "recovered": [False, False, False] + [True] * 17,
        }
    )
    rows["family"] = rows["effect"]
    family = control_family(rows).iloc[0]
    # P(X >= 3) for X ~ Binomial(20, 0.05) = 1 - (0.95^20 + 20 0.05 0.95^19 + 190 0.05^2 0.95^18)
    tail = 1 - (0.95**20 + 20 * 0.05 * 0.95**19 + 190 * 0.05**2 * 0.95**18)
    assert family["binomial_p"] == pytest.approx(tail) and family["flagged_controls"] == "c0; c1; c2"
    assert family["clean_at_level"] == (tail >= 0.05)
    bh = pd.DataFrame(
        {
            "study": "s",
            "effect": [f"g{i}" for i in range(10)],
            "truth": "control",
            "recovered": [False, False] + [True] * 8,
            "family": "m gender=F",
        }
    )
    both = control_family(pd.concat([rows, bh])).iloc[0]
    assert (both["controls"], both["flagged"], both["families"], both["families_flagged"]) == (30, 5, 21, 4)
    assert both["binomial_p"] == pytest.approx(
        1 - sum(__import__("math").comb(21, k) * 0.05**k * 0.95 ** (21 - k) for k in range(4))
    )


def test_logprob_rows_order_against_the_control_and_bound_the_untrained_model():
    truth = {
        "control_category": "CONTROL",
        "categories": {"MALELEAN": {"lean": "male"}, "FEMALELEAN": {"lean": "female"}, "CONTROL": {"lean": "none"}},
    }
    table = pd.DataFrame(
        {
            "model": ["pre"] * 3 + ["raw"] * 3,
            "target_set": "gender",
            "category": ["MALELEAN", "FEMALELEAN", "CONTROL"] * 2,
            "mean_difference": [0.5, -0.2, 0.1, 0.0001, -0.01, 0.0],
            "mannwhitney_vs_control_p": [0.001, 0.02, None, 0.5, 0.5, None],
            "attributes": [30, 30, 30] * 2,
        }
    )
    rows = logprob_recovery(table, truth, ["pre"], ["raw"])
    assert rows["truth"].tolist() == ["planted", "planted", "control", "control"]
    # FEMALELEAN is on the right side but p 0.02 >= 0.01; the untrained FEMALELEAN distance 0.01 >= 1% of 0.4
    assert rows["recovered"].tolist() == [True, False, True, False]
    decisions = logprob_decisions(table, truth, *logprob_model_roles(["raw", "pre"], ["pre", "adv"], "raw"))
    assert decisions["unit"].tolist() == ["pre MALELEAN", "pre FEMALELEAN", "raw MALELEAN", "raw FEMALELEAN"]
    assert decisions["truth"].tolist() == ["planted", "planted", "control", "control"]
    assert decisions["flagged"].tolist() == [True, True, False, False]  # at 0.05: 0.001, 0.02, 0.5, 0.5
    reversed_lean = table.assign(mean_difference=[-0.5, -0.2, 0.1, 0.0001, -0.01, 0.0])  # MALELEAN below CONTROL
    flags = logprob_decisions(reversed_lean, truth, ["pre"], ["raw"])["flagged"].tolist()
    assert flags == [False, True, False, False]  # p 0.001 on the wrong side is not a detection


def test_a_table3_lean_whose_test_cannot_reach_power_is_reported_below_power():
    """With 5 leaning against 9 control attributes the Mann-Whitney p cannot go below 2 / C(14, 5) =
    0.000999, 0.71 SE beyond 0.01 (z 3.291 against 2.576): however strong the lean, the row is known
    before the data to lack power, so it is reported apart (and still says whether it was found); with
    30 against 30 the floor lies far enough, and the row counts."""
    from scipy.stats import norm

    truth = {
        "control_category": "CONTROL",
        "categories": {"MALELEAN": {"lean": "male"}, "CONTROL": {"lean": "none"}},
    }

    def table(attributes: int, control_attributes: int) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "model": "pre",
                "target_set": "gender",
                "category": ["MALELEAN", "CONTROL"],
                "mean_difference": [0.5, 0.1],
                "mannwhitney_vs_control_p": [0.000999, None],
                "attributes": [attributes, control_attributes],
            }
        )

    (few,) = logprob_recovery(table(5, 9), truth, ["pre"], []).itertuples()
    reachable = norm.isf(0.000999 / 2) - norm.isf(0.005)
    assert (few.truth, bool(few.recovered)) == (BELOW_POWER, True)
    assert f"5 against 9 attributes completely separated, is 0.001: {reachable:+.2f} SE, under 3" in few.margin_basis
    assert few.margin_se == pytest.approx(reachable, abs=1e-3)
    (many,) = logprob_recovery(table(30, 30), truth, ["pre"], []).itertuples()
    assert many.truth == "planted" and "completely separated" not in many.margin_basis


def _fairness(
    mismatch_original, p_original, group, mismatch_augmented, control_p, augmented_null_p=0.8, control_null_p=None
):
    """Table V rows of two embeddings; each mismatch ranked among 39 permuted retrainings (median 0.03)
    at p 0.025 (original), ``augmented_null_p`` and ``control_null_p`` (default: McNemar's ``control_p``)."""
    null = {"null_draws": 39, "mismatch_null_median": 0.03}
    control_null_p = control_p if control_null_p is None else control_null_p
    rows = []
    for embedding in ("bio", "general"):
        rows += [
            {
                "embedding": embedding,
                "treatment": "original",
                "task": "depression",
                "learner": "svm",
                "mismatch": mismatch_original,
                "mismatch_group": group,
                "mismatch_p": p_original,
                "mismatch_null_p": 0.025,
                **null,
            },
            {
                "embedding": embedding,
                "treatment": "augmented",
                "task": "depression",
                "learner": "svm",
                "mismatch": mismatch_augmented,
                # a 95% interval of SE 0.02 (1.96 x 0.02 = 0.0392 either side)
                "mismatch_low": mismatch_augmented - 0.0392,
                "mismatch_high": mismatch_augmented + 0.0392,
                "mismatch_group": "",
                "mismatch_p": 1.0,
                "mismatch_null_p": augmented_null_p,
                **null,
            },
            {
                "embedding": embedding,
                "treatment": "original",
                "task": "psychiatric",
                "learner": "svm",
                "mismatch": 0.04,
                "mismatch_group": "M",
                "mismatch_p": control_p,
                "mismatch_null_p": control_null_p,
                **null,
            },
        ]
    return pd.DataFrame(rows)


def _leans(after_toward_f, before_toward_f=0.3, se_before=0.03, se_after=0.02, covariance=0.0002):
    """treatment_leans.csv rows of the two embeddings' SVMs on the planted task: leans are signed toward
    M in the file, so a lean toward F of 0.3 is -0.3."""
    return pd.DataFrame(
        [
            {
                "embedding": embedding,
                "task": "depression",
                "learner": "svm",
                "treatment": "augmented",
                "lean_original": -before_toward_f,
                "lean_treated": -after_toward_f,
                "se_original": se_before,
                "se_treated": se_after,
                "covariance": covariance,
                "pairs": 100,
            }
            for embedding in ("bio", "general")
        ]
    )


def test_mental_rows_use_mcnemar_and_the_direct_bias_lean():
    truth = {
        "planted_label_bias": [{"task": "depression", "favoured": "F"}],
        "control_tasks": ["psychiatric"],
        "direct_bias": {"bio": {"depression_male_share": 0.8}, "general": {"depression_male_share": 0.5}},
    }
    direct = pd.DataFrame(
        {
            "embedding": ["bio", "general"],
            "signed_mean_cos": [-0.2, -0.03],
            "signed_low": [-0.3, -0.05],
            "signed_high": [-0.1, -0.01],
            "random_words_signed_mean": [-0.02, -0.03],
            "signed_p_calibrated": [0.001, 0.6],
            "direct_bias": [0.2, 0.1],
        }
    )
    names = {"bio": "bio", "general": "general"}
    good = mental_recovery(_fairness(0.3, 1e-6, "F", 0.02, 0.4), direct, truth, names, treatment_leans=_leans(0.02))
    assert good.groupby("truth")["recovered"].all().to_dict() == {"control": True, "not a null": True, "planted": True}
    assert (
        len(good) == 2 * 2 + 2 + 1 + 1
    )  # label bias and its removal per embedding, controls, the lean, the no-lean control
    # the general vectors' interval excludes 0, but they lean as random words do; the row is reported as
    # no null of its test (the synonyms are a cluster, random word sets are not), not counted as a control
    general = good.set_index("effect").loc["general: depression synonyms lean no more than random words"]
    assert general["recovered"] and general["truth"] == "not a null"
    leaning_control = direct.assign(direct_bias=[0.05, 0.1], signed_p_calibrated=[0.001, 0.01])
    bad = mental_recovery(
        _fairness(0.3, 1e-6, "M", 0.2, 0.01), leaning_control, truth, names, treatment_leans=_leans(0.2)
    )
    assert not bad[
        "recovered"
    ].any()  # wrong group, augmentation left 0.2, controls directed, DB below general's, control leans
    # augmentation removes at least half of the lean: two one-sided paired tests, by hand. Toward F the lean
    # is 0.3 before and 0.02 after; SE1^2 = 0.25 x 0.03^2 + 0.02^2 - 2 x 0.5 x 0.0002 = 0.000425 and
    # SE2^2 = 0.000825: z1 = (0.15 - 0.02) / 0.0206155 = 6.30594, z2 = (0.02 + 0.15) / 0.0287228 = 5.91864
    removal = good.set_index("effect").loc["bio depression: augmentation removes at least 50% of its lean"]
    assert removal["recovered"] and removal["margin_se"] == pytest.approx(5.91864 - 1.644854, abs=1e-4)
    assert "lean toward F +0.020 (SE 0.020) vs +0.300 (SE 0.030) before" in removal["observed"]
    effect = "bio depression: augmentation removes at least 50% of its lean"
    for after in (0.12, -0.14):  # too much left (z1 1.46), or overshot toward M (z2 0.35)
        kept = mental_recovery(_fairness(0.3, 1e-6, "F", 0.1, 0.4), direct, truth, names, treatment_leans=_leans(after))
        assert not kept.set_index("effect").at[effect, "recovered"], after
    # without the paired leans there is nothing to test: a miss, not a pass
    assert (
        not mental_recovery(_fairness(0.3, 1e-6, "F", 0.02, 0.4), direct, truth, names)
        .set_index("effect")
        .at[effect, "recovered"]
    )
    like_random = direct.assign(signed_p_calibrated=[0.3, 0.6])  # the bio lean no further than random words'
    assert (
        not mental_recovery(
            _fairness(0.3, 1e-6, "F", 0.02, 0.4), like_random, truth, names, treatment_leans=_leans(0.02)
        )
        .set_index("effect")
        .at["bio: depression synonyms lean male", "recovered"]
    )
    decisions = counterfactual_decisions(_fairness(0.3, 1e-6, "F", 0.02, 0.01), truth)
    assert decisions["truth"].tolist() == ["planted", "planted", "control", "control"] * 2
    assert decisions["p_kind"].tolist() == ["McNemar exact", "gender-permutation null, calibrated"] * 4
    assert decisions["flagged"].all()


def test_the_mental_control_and_the_augmentation_are_judged_against_the_permuted_retrainings():
    truth = {
        "planted_label_bias": [{"task": "depression", "favoured": "F"}],
        "control_tasks": ["psychiatric"],
        "direct_bias": {},
    }
    direct = pd.DataFrame(columns=["embedding", "signed_p_calibrated", "direct_bias"])
    found = mental_recovery(_fairness(0.3, 1e-6, "F", 0.02, 1e-5, control_null_p=0.4), direct, truth, {})
    found = found.set_index("effect")["recovered"]
    # the classifier favours one gender (McNemar p 1e-5), but no more than those retrained with the genders
    # permuted do (p 0.4): a clean control
    assert found["bio psychiatric: no label bias"] and found["general psychiatric: no label bias"]
    beyond = mental_recovery(_fairness(0.3, 1e-6, "F", 0.02, 0.5, control_null_p=0.01), direct, truth, {})
    assert not beyond.set_index("effect").at["bio psychiatric: no label bias", "recovered"]
    # the removal is judged on the lean alone: an augmented mismatch above the permuted retrainings' (p 0.025)
    # is shown beside it, and does not decide it
    kept = mental_recovery(
        _fairness(0.3, 1e-6, "F", 0.1, 0.5, augmented_null_p=0.025), direct, truth, {}, treatment_leans=_leans(0.02)
    ).set_index("effect")
    effect = "bio depression: augmentation removes at least 50% of its lean"
    assert kept.at[effect, "recovered"] and "null median 0.030 over 39 draws, p 0.025" in kept.at[effect, "observed"]


def test_corpus_embeddings_match_the_demo_file_names_and_say_which_is_missing():
    embeddings = {"googlenews": {"source": "w/word-vectors/general-w2v.bin"}, "bw": {"source": "w/bio-w2v.bin"}}
    assert corpus_embeddings(embeddings, ["bio", "general"]) == {"bio": "bw", "general": "googlenews"}
    with pytest.raises(ValueError, match="clinical-w2v.bin"):
        corpus_embeddings(embeddings, ["clinical"])


def test_a_plant_outside_its_asserted_cohorts_is_reported_below_power_and_not_counted():
    """The plant names the all-notes cohort: its first-note row keeps the planted criterion and margin
    under the truth 'below power', is no control, and the verdict names it apart from the counted plants."""
    from medbias.validation.recovery import recovery_verdict

    truth = {
        "planted_recall_gaps": [
            {"attribute": "gender", "disadvantaged": "F", "phenotype": "Renal failure", "cohorts": ["pa"]}
        ],
        "phenotypes": {"Renal failure": {"type": "acute"}},
    }
    labels = {"pa_renal": "Renal failure", "pf_renal": "Renal failure", "pa_htn": "Hypertension"}
    cohorts = {"pa_renal": "pa", "pf_renal": "pf", "pa_htn": "pa"}
    gaps = pd.DataFrame(
        {
            "model": "m",
            "task": ["pa_renal", "pf_renal", "pa_htn"],
            "attribute": "gender",
            "group": "F",
            "compared_with": "M",
            "metric": "recall",
            "gap": [-0.9, -0.38, 0.02],
            "ci_low": [-1.0, -0.69, -0.2],
            "ci_high": [-0.8, -0.05, 0.2],
            "p_value": [1e-8, 0.029, 0.8],
            "significant": [True, True, False],
            "p_bh": [1e-6, 0.31, 0.8],
            "significant_bh": [True, False, False],
        }
    )
    rows = gap_recovery(gaps, truth, labels, task_cohorts=cohorts)
    assert rows["truth"].tolist() == ["planted", "below power", "control"]
    assert rows["recovered"].tolist() == [True, False, True] and rows["margin_se"].iloc[1] < 0
    assert gap_recovery(gaps, truth, labels)["truth"].tolist() == ["planted", "planted", "control"]  # no cohorts given
    family = control_family(rows)
    assert family.iloc[0]["controls"] == 1  # the below-power row is no control
    verdict, margins = recovery_verdict(rows[rows["truth"] == "planted"], family, rows[rows["truth"] == "below power"])
    assert verdict.startswith("**Verdict: every planted effect found (1 of 1), every study clean**")
    assert "not counted, being known to lack power at this world's size: 1 m pf_renal gender=F" in margins
    assert "(missed, " in margins
