"""Whether a model's classifiers predict by gender on the recall-gap controls' tasks
(medbias.validation.control_nulls): constructed gap tables with known binomial answers."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import binom

from medbias.validation.control_nulls import prediction_rate_dependence

TRUTH = {
    "planted_recall_gaps": [{"attribute": "gender", "disadvantaged": "F", "phenotype": "Renal failure"}],
    "phenotypes": {"Renal failure": {"type": "acute"}},
}


def _gaps(model: str, parity_p: list[float]) -> pd.DataFrame:
    """Recall and parity rows of ``model`` on the planted task (renal, parity p 1e-9) and on one control task per
    entry of ``parity_p``, each gap with its mirror (M against F, the same p)."""
    tasks = ["pa_renal", *(f"pa_control{i}" for i in range(len(parity_p)))]
    p_values = [1e-9, *parity_p]
    rows = []
    for metric in ("recall", "parity"):
        for task, p in zip(tasks, p_values):
            for group, other, sign in (("F", "M", -1), ("M", "F", 1)):
                rows.append(
                    {
                        "model": model,
                        "task": task,
                        "attribute": "gender",
                        "group": group,
                        "compared_with": other,
                        "metric": metric,
                        "gap": sign * 0.1,
                        "p_value": p if metric == "parity" else 0.5,
                    }
                )
    return pd.DataFrame(rows)


def _tasks(controls: int) -> pd.DataFrame:
    names = ["pa_renal", *(f"pa_control{i}" for i in range(controls))]
    labels = ["Renal failure", *(f"Control {i}" for i in range(controls))]
    return pd.DataFrame({"task": names, "label": labels, "cohort": "pa"})


def test_a_model_whose_parity_gaps_exceed_alpha_predicts_by_gender_and_a_blind_one_does_not():
    blind = [0.5] * 19 + [0.01]  # 1 of 20 below 0.05: what a classifier blind to gender gives
    leaning = [0.001] * 6 + [0.5] * 14  # 6 of 20
    gaps = pd.concat([_gaps("blind", blind), _gaps("leaning", leaning)], ignore_index=True)
    table = prediction_rate_dependence(gaps, _tasks(20), TRUTH).set_index("model")
    # the planted task (parity p 1e-9) is no control and is not counted; each mirror pair counts once
    assert table.loc["blind", ["control_tasks", "parity_p_below_alpha"]].tolist() == [20, 1]
    assert table.loc["leaning", ["control_tasks", "parity_p_below_alpha"]].tolist() == [20, 6]
    assert table.loc["blind", "expected_if_blind"] == pytest.approx(1.0)
    # one-sided exact binomial tails: P(X >= 1) and P(X >= 6) for X ~ Binomial(20, 0.05)
    assert table.loc["blind", "binomial_p"] == pytest.approx(1 - binom.cdf(0, 20, 0.05))
    assert table.loc["leaning", "binomial_p"] == pytest.approx(1 - binom.cdf(5, 20, 0.05))
    assert table.loc["leaning", "binomial_p"] < 0.001 < 0.05 < table.loc["blind", "binomial_p"]
    assert table["predicts_by_attribute"].to_dict() == {"blind": False, "leaning": True}


def test_an_attribute_of_more_than_two_groups_is_refused():
    gaps = _gaps("m", [0.5, 0.5])
    third = gaps[gaps["group"] == "F"].assign(group="X", compared_with="F")
    with pytest.raises(ValueError, match="more than two groups"):
        prediction_rate_dependence(pd.concat([gaps, third], ignore_index=True), _tasks(2), TRUTH)


def test_the_rule_log_names_each_model_and_whether_it_predicts_by_gender(caplog):
    import logging

    from medbias.validation.recovery import control_family, gap_recovery, log_recovery

    gaps = pd.concat([_gaps("blind", [0.5] * 19 + [0.01]), _gaps("leaning", [0.001] * 6 + [0.5] * 14)])
    labels = dict(zip(_tasks(20)["task"], _tasks(20)["label"]))
    recovery = gap_recovery(gaps.assign(ci_low=-0.2, ci_high=0.2, p_bh=0.5, significant_bh=False), TRUTH, labels)
    planted = recovery[recovery["truth"] == "planted"]
    table = prediction_rate_dependence(gaps, _tasks(20), TRUTH)
    with caplog.at_level(logging.INFO, logger="medbias-test"):
        log_recovery(logging.getLogger("medbias-test"), planted, control_family(recovery), None, table)
    lines = [r.getMessage() for r in caplog.records if "recall-gap control tasks" in r.getMessage()]
    assert lines[0].startswith("blind: parity p < alpha on 1 of 20 recall-gap control tasks (1.00 if blind to gender")
    assert "predict by" not in lines[0]
    assert lines[1].startswith("leaning: parity p < alpha on 6 of 20")
    assert lines[1].endswith(
        "predict by gender; its recall-gap controls on gender and its crossings are reported apart, not counted"
    )


def _flagged_recall(gaps: pd.DataFrame, model: str, task: str) -> pd.DataFrame:
    """``gaps`` with gap_recovery's columns, every recall gap unflagged but ``model``'s on ``task``."""
    flagged = (gaps["model"] == model) & (gaps["task"] == task) & (gaps["metric"] == "recall")
    return gaps.assign(ci_low=-0.2, ci_high=0.2, p_bh=0.5 - 0.499 * flagged, significant_bh=flagged)


def test_the_gender_controls_of_a_model_whose_classifiers_predict_by_gender_are_reported_apart_not_counted():
    from medbias.validation.control_nulls import classifiers_reading
    from medbias.validation.recovery import control_family, gap_recovery
    from medbias.validation.truth import NOT_A_NULL

    gaps = pd.concat([_gaps("blind", [0.5] * 19 + [0.01]), _gaps("leaning", [0.001] * 6 + [0.5] * 14)])
    gaps = gaps.reset_index(drop=True)
    reading = classifiers_reading(prediction_rate_dependence(gaps, _tasks(20), TRUTH))
    assert reading == {"gender": ["leaning"]}
    labels = dict(zip(_tasks(20)["task"], _tasks(20)["label"]))

    # a flag on the leaning model's control: reported with its truth, its family not counted
    recovery = gap_recovery(_flagged_recall(gaps, "leaning", "pa_control3"), TRUTH, labels, classifiers_reading=reading)
    by_truth = recovery.groupby(["truth", recovery["effect"].str.split().str[0]]).size().to_dict()
    assert by_truth == {
        ("control", "blind"): 20,
        (NOT_A_NULL, "leaning"): 20,
        ("planted", "blind"): 1,
        ("planted", "leaning"): 1,
    }
    apart = recovery[recovery["truth"] == NOT_A_NULL].set_index("effect")
    assert not apart.loc["leaning pa_control3 gender=F", "recovered"]
    assert apart["criterion"].str.endswith("(not counted: leaning's classifiers predict by gender)").all()
    family = control_family(recovery).iloc[0]
    assert (family["controls"], family["families"], family["families_flagged"]) == (20, 1, 0)

    # the same flag on the blind model's control is counted
    recovery = gap_recovery(_flagged_recall(gaps, "blind", "pa_control3"), TRUTH, labels, classifiers_reading=reading)
    family = control_family(recovery).iloc[0]
    assert (family["controls"], family["families"], family["families_flagged"]) == (20, 1, 1)
    assert family["flagged_controls"] == "blind pa_control3 gender=F"

    # without the rule every model's controls count, as they did
    recovery = gap_recovery(_flagged_recall(gaps, "leaning", "pa_control3"), TRUTH, labels)
    family = control_family(recovery).iloc[0]
    assert (family["controls"], family["families"], family["families_flagged"]) == (40, 2, 1)


def test_the_page_prints_each_models_binomial_p_to_three_significant_digits(tmp_path):
    from medbias.io.tables import write_page
    from medbias.validation.recovery import control_family, gap_recovery, recovery_page

    gaps = pd.concat([_gaps("blind", [0.5] * 19 + [0.01]), _gaps("leaning", [0.001] * 6 + [0.5] * 14)])
    table = prediction_rate_dependence(gaps.reset_index(drop=True), _tasks(20), TRUTH)
    labels = dict(zip(_tasks(20)["task"], _tasks(20)["label"]))
    recovery = gap_recovery(gaps.assign(ci_low=-0.2, ci_high=0.2, p_bh=0.5, significant_bh=False), TRUTH, labels)
    write_page(
        recovery_page(recovery[recovery["truth"] == "planted"], control_family(recovery), None, None, table),
        tmp_path / "page.md",
    )
    page = (tmp_path / "page.md").read_text()
    tail = f"{1 - binom.cdf(5, 20, 0.05):.3g}"  # 0.000261: P(X >= 6), X ~ Binomial(20, 0.05)
    assert f"| leaning | gender | 20 | 6 | 1.000 | {tail} | True |" in page
    assert "| blind | gender | 20 | 1 | 1.000 | 0.642 | False |" in page


def test_a_crossing_of_the_attribute_a_classifier_reads_is_reported_apart_too():
    from medbias.validation.truth import NOT_A_NULL, recall_gap_truth

    gaps = _gaps("leaning", [0.5, 0.5]).assign(ci_low=-0.2, ci_high=0.2)
    crossed = gaps[gaps["group"] == "F"].assign(attribute="gender x ethnicity", group="F & WHITE", compared_with="")
    ethnicity = gaps[gaps["group"] == "F"].assign(attribute="ethnicity", group="WHITE", compared_with="")
    frame = pd.concat([gaps, crossed, ethnicity], ignore_index=True)
    labels = dict(zip(_tasks(2)["task"], _tasks(2)["label"]))
    recall = recall_gap_truth(frame, TRUTH, labels, classifiers_reading={"gender": ["leaning"]})
    controls = recall[recall["task"] != "pa_renal"].groupby("attribute")["truth"].agg(set).to_dict()
    assert controls == {"gender": {NOT_A_NULL}, "gender x ethnicity": {NOT_A_NULL}, "ethnicity": {"control"}}
