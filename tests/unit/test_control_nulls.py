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
    assert not lines[0].endswith("predict by gender")
    assert lines[1].startswith("leaning: parity p < alpha on 6 of 20") and lines[1].endswith("predict by gender")
