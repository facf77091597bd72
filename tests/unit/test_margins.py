"""Margins in standard errors (medbias.metrics.margins) and the planted-recovery verdict built on them
(medbias.validation.recovery.recovery_verdict): hand-computed cases, and the margin's sign tied to the
decision it stands for (Benjamini-Hochberg's, a majority over seeds)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from medbias.metrics.margins import (
    at_p_floor,
    bh_margin,
    bh_threshold,
    equivalence_margin_se,
    equivalence_power,
    interval_margin,
    interval_se,
    majority_margin,
    p_margin,
    relative_equivalence_margin,
    z_of_p,
)
from medbias.studies.hurtful.gaps import seed_spread
from medbias.validation.recovery import (
    RECOVERY_COLUMNS,
    gap_recovery,
    recovery_page,
    recovery_verdict,
    seat_recovery,
)


def test_z_of_p_and_the_p_margin_by_hand():
    assert z_of_p(0.05, "one") == pytest.approx(1.644854, abs=1e-6)
    assert z_of_p(0.05, "two") == pytest.approx(1.959964, abs=1e-6)
    # two-sided p 0.001 against 0.05: 3.290527 - 1.959964
    assert p_margin(0.001, 0.05, "two") == pytest.approx(1.330563, abs=1e-6)
    assert p_margin(0.001, 0.05, "two", right_direction=False) == pytest.approx(-5.250491, abs=1e-6)
    # a one-sided p carries its direction: p 0.9 lies below the threshold's z
    assert p_margin(0.9, 0.05, "one") == pytest.approx(-1.281552 - 1.644854, abs=1e-6)
    assert p_margin(0.05, 0.05, "one") == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(p_margin(float("nan"), 0.05, "one"))


def test_bh_threshold_is_alpha_k_over_m_at_its_rank():
    """p = 0.001, 0.01, 0.02, 0.5 (m = 4): BH p of the third is 0.02 x 4 / 3, its threshold 3 x 0.05 / 4."""
    p = np.array([0.001, 0.01, 0.02, 0.5])
    _, p_bh, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
    assert bh_threshold(p[2], p_bh[2], 0.05) == pytest.approx(3 * 0.05 / 4)
    assert bh_threshold(p[0], p_bh[0], 0.05) == pytest.approx(1 * 0.05 / 4)
    # the step-up's minimum: p 0.01 ranked first of 3 passes with the threshold the second grants
    p = np.array([0.01, 0.011, 0.5])
    _, p_bh, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
    assert p_bh[0] == pytest.approx(0.0165)
    assert bh_threshold(p[0], p_bh[0], 0.05) == pytest.approx(0.05 * 0.01 / 0.0165) and 0.05 * 0.01 / 0.0165 > 0.05 / 3


def test_bh_margin_is_non_negative_exactly_when_bh_rejects():
    rng = np.random.default_rng(7)
    for _ in range(200):
        m = int(rng.integers(2, 40))
        p = np.where(rng.random(m) < 0.3, rng.random(m) * 1e-3, rng.random(m))
        reject, p_bh, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
        margins = np.array([bh_margin(a, b, 0.05, "two") for a, b in zip(p, p_bh)])
        decided = ~np.isclose(p_bh, 0.05, rtol=1e-9)  # at the boundary either side is rounding
        assert ((margins >= 0) == reject)[decided].all()


def test_interval_margin_is_the_estimates_z_beyond_the_bound_minus_the_intervals_z():
    # [-0.5, -0.1]: SE 0.4 / 3.919928, estimate -0.3 is 2.939946 SE below 0, minus 1.959964
    assert interval_margin(-0.5, -0.1, "below") == pytest.approx(0.979982, abs=1e-6)
    assert interval_margin(-0.5, -0.1, "above") == pytest.approx(-4.899910, abs=1e-6)
    assert interval_margin(-0.1, 0.3, "below") < 0 < interval_margin(0.1, 0.3, "above")
    assert interval_margin(-1.0, -1.0, "below") == np.inf and interval_margin(0.2, 0.2, "below") == -np.inf


def test_p_floor_and_the_majority_margin():
    assert at_p_floor(1 / 100, 99) and not at_p_floor(2 / 100, 99)
    assert at_p_floor(2 / 100, 99, doubled=True) and not at_p_floor(0.01, float("nan"))
    assert majority_margin([1.0, -0.5, 2.0]) == 1.0  # 2 of 3 pass by at least 1.0
    assert majority_margin([3.0, 2.0, 1.0, -1.0]) == 1.0  # more than half of 4 is 3
    assert majority_margin([-0.2, -0.1, 4.0]) == -0.1  # one seed alone: the majority misses
    assert np.isnan(majority_margin([1.0, float("nan"), 2.0]))


def _seed(gap: list[float], p: list[float], p_bh: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": "m",
            "task": ["a", "b"],
            "attribute": "gender",
            "group": "F",
            "metric": "recall",
            "gap": gap,
            "p_value": p,
            "p_bh": p_bh,
            "significant": [q < 0.05 for q in p_bh],
            "significant_bh": [q < 0.05 for q in p_bh],
        }
    )


def test_seed_spread_carries_the_majoritys_bh_margin():
    replicates = [
        _seed([-0.6, 0.3], [1e-4, 0.01], [2e-4, 0.02]),
        _seed([-0.2, 0.3], [0.04, 0.01], [0.08, 0.02]),
        _seed([-0.5, -0.1], [1e-3, 0.3], [2e-3, 0.3]),
    ]
    spread = seed_spread(replicates, 0.05).set_index("task")
    # task a: the three margins below 0, the middle one is seed 2's (p 1e-3 against 0.05 x 1e-3 / 2e-3)
    assert spread.at["a", "bh_margin_below_majority"] == pytest.approx(p_margin(1e-3, 0.025, "two"))
    assert spread.at["a", "bh_margin_below_majority"] >= 0 and spread.at["a", "significant_bh_below_seeds"] == 2
    # task b: significant in 2 of 3 seeds, above 0: the majority's margin for "below 0" is negative
    assert spread.at["b", "bh_margin_majority"] == pytest.approx(p_margin(0.01, 0.025, "two"))
    assert spread.at["b", "bh_margin_below_majority"] < 0
    assert "bh_margin_majority" not in seed_spread(replicates).columns  # no alpha: no margins


SEAT_TRUTH = {"trained_models": ["tb"], "seat_planted": ["race"], "seat_controls": []}


def _seat(**columns) -> pd.DataFrame:
    """One planted SEAT row of a trained model whose calibrated p (1/100) sits at the floor of its 99 draws."""
    row = {
        "model": "tb",
        "test": ["race"],
        "debias": "none",
        "status": "ok",
        "effect_size": [0.8],
        "p_value": [1e-4],
        "p_calibrated": [1 / 100],
        "null_draws": [99],
        "significant": [True],
    }
    return pd.DataFrame({**row, **columns})


def test_gap_and_seat_rows_carry_their_margin():
    truth = {
        "planted_recall_gaps": [{"attribute": "gender", "disadvantaged": "F", "phenotype": "Renal failure"}],
        "phenotypes": {"Renal failure": {"type": "acute"}},
    }
    gaps = pd.DataFrame(
        {
            "model": "m",
            "task": ["pa_renal", "pf_renal"],
            "attribute": "gender",
            "group": "F",
            "compared_with": "M",
            "metric": "recall",
            "gap": [-0.8, 0.07],
            "ci_low": [-0.9, -0.05],
            "ci_high": [-0.7, 0.2],
            "p_value": [1e-6, 0.3],
            "significant": [True, False],
            "p_bh": [1e-5, 0.3],
            "significant_bh": [True, False],
        }
    )
    rows = gap_recovery(gaps, truth, {"pa_renal": "Renal failure", "pf_renal": "Renal failure"})
    # p 1e-6 against 0.05 x 1e-6 / 1e-5 = 0.005, two-sided: 4.891638 - 2.807034; the wrong-signed gap misses
    assert rows["margin_se"].iloc[0] == pytest.approx(2.084604, abs=1e-5)
    assert rows["margin_se"].iloc[1] < 0 and rows["recovered"].tolist() == [True, False]
    assert "its BH threshold 0.005" in rows["margin_basis"].iloc[0]
    (row,) = seat_recovery(_seat(), SEAT_TRUTH).itertuples()
    # one-sided calibrated p at its floor 1/100 against 0.05: 2.326348 - 1.644854, only a lower bound
    assert row.margin_se == pytest.approx(0.681494, abs=1e-6) and row.margin_lower_bound and "floor" in row.margin_basis


def _planted(effects: list[str], recovered: list[bool], margins: list[float], bounds: list[bool], bases: list[str]):
    return pd.DataFrame(
        {
            "study": "s",
            "effect": effects,
            "truth": "planted",
            "where": "t.csv",
            "criterion": "c",
            "observed": "o",
            "recovered": recovered,
            "family": effects,
            "margin_se": margins,
            "margin_lower_bound": bounds,
            "margin_basis": bases,
        },
        columns=RECOVERY_COLUMNS,
    )


def _family(clean: bool = True) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "study": ["s"],
            "controls": [10],
            "flagged": [0 if clean else 3],
            "families": [10],
            "families_flagged": [0 if clean else 3],
            "expected_by_chance": [0.5],
            "binomial_p": [1.0 if clean else 0.01],
            "clean_at_level": [clean],
            "flagged_controls": ["" if clean else "c1; c2; c3"],
        }
    )


def test_the_verdict_names_every_miss_and_sorts_the_found_by_margin():
    planted = _planted(
        ["strong", "weak", "floored", "closed"],
        [True, True, True, True],
        [4.2, 1.1, 0.68, float("nan")],
        [False, False, True, False],
        ["p", "p", "p at its floor", "accepts a null: the interval after includes 0"],
    )
    verdict, margins = recovery_verdict(planted, _family())
    assert verdict.startswith("**Verdict: every planted effect found (4 of 4), every study clean**")
    assert (
        "1 at 3 SE or more" in margins
        and "1 by less, which a run on another CPU or world seed may miss: weak (+1.10)" in margins
    )
    assert "floored (>= +0.68)" in margins and "1 found by accepting a null, which has no margin: closed" in margins
    missed = planted.assign(recovered=[True, False, True, True], margin_se=[4.2, -0.8, 0.68, float("nan")])
    verdict, _ = recovery_verdict(missed, _family(clean=False))
    assert (
        verdict == "**Verdict: 1 of 4 planted effects missed: weak (-0.80); controls not clean at the 5% level in s.**"
    )
    page = recovery_page(missed, _family(clean=False))
    assert page.blocks[0] == verdict and page.title == "Demo world: planted effects and controls"
    # a control that is no null of its test is shown apart, and the verdict does not count it
    no_null = planted.head(1).assign(truth="not a null", recovered=False, effect="cluster control")
    shown = recovery_page(planted, _family(), not_a_null=no_null)
    headed = [b for b in shown.blocks if getattr(b, "heading", None)]
    (section,) = [b for b in headed if b.heading.startswith("Controls that are no null")]
    assert section.frame["effect"].tolist() == ["cluster control"] and "margin_basis" not in section.frame
    assert shown.blocks[0] == recovery_verdict(planted, _family())[0]


def test_a_p_at_its_floor_gives_way_to_the_statistics_z_against_its_null():
    seat, truth = _seat(null_z=[4.0]), SEAT_TRUTH
    (row,) = seat_recovery(seat, truth).itertuples()
    # 4.0 null SDs against one-sided 0.05's 1.644854: a margin, no longer a bound
    assert row.margin_se == pytest.approx(4.0 - 1.644854, abs=1e-6) and not row.margin_lower_bound
    assert "normal approximation" in row.margin_basis
    # a null_z under the floored p's own margin would undercut a lower bound: the bound stays
    (row,) = seat_recovery(_seat(null_z=[2.0]), truth).itertuples()
    assert row.margin_se == pytest.approx(p_margin(0.01, 0.05, "one")) and row.margin_lower_bound
    (row,) = seat_recovery(seat.assign(p_calibrated=0.02), truth).itertuples()  # above the floor: the p's own z
    assert row.margin_se == pytest.approx(p_margin(0.02, 0.05, "one")) and "null" not in row.margin_basis


def test_two_one_sided_tests_and_their_power_by_hand():
    # [-0.02, 0.06] around +0.02: SE 0.08 / 3.919928 = 0.020408; (0.1 - 0.02) / SE - 1.644854
    se = interval_se(-0.02, 0.06)
    assert se == pytest.approx(0.08 / 3.919928)
    assert equivalence_margin_se(0.02, se, 0.1) == pytest.approx(2.275074, abs=1e-5)
    assert equivalence_margin_se(-0.02, interval_se(-0.06, 0.02), 0.1) == equivalence_margin_se(0.02, se, 0.1)
    # the margin is >= 0 exactly when the 90% interval estimate +- 1.644854 SE lies inside +-delta
    rng = np.random.default_rng(5)
    for estimate, se in zip(rng.normal(0, 0.1, 300), rng.uniform(0.005, 0.1, 300)):
        low, high = estimate - 1.959964 * se, estimate + 1.959964 * se
        inside = -0.1 < estimate - 1.644854 * se and estimate + 1.644854 * se < 0.1
        assert (equivalence_margin_se(estimate, interval_se(low, high), 0.1) >= 0) == inside
    # power at a true gap of 0: 2 Phi(0.1 / 0.02 - 1.644854) - 1 = 2 Phi(3.355146) - 1
    assert equivalence_power(0.02, 0.1) == pytest.approx(0.999207, abs=1e-5)
    assert equivalence_power(0.1, 0.1) == 0.0  # a margin no wider than the test's own noise cannot be shown
    assert equivalence_power(0.0, 0.1) == 1.0 and equivalence_margin_se(0.0, interval_se(0.0, 0.0), 0.1) == np.inf


def test_the_ratio_equivalence_margin_by_hand():
    """Lean 0.3 before, 0.02 after, SEs 0.03 and 0.02, covariance 0.0002, share 0.5: SE1^2 = 0.25 x 0.0009
    + 0.0004 - 0.0002 = 0.000425, SE2^2 = 0.000825; z1 = 0.13 / 0.0206155, z2 = 0.17 / 0.0287228; the margin
    is the smaller minus z at 5%."""
    margin = relative_equivalence_margin(0.3, 0.02, 0.03, 0.02, 0.0002, 0.5)
    assert margin == pytest.approx(0.17 / np.sqrt(0.000825) - 1.644854, abs=1e-5)
    # an overshoot past -share x before fails on the lower test; too much left fails on the upper one
    assert relative_equivalence_margin(0.3, -0.2, 0.03, 0.02, 0.0002, 0.5) < 0
    assert relative_equivalence_margin(0.3, 0.2, 0.03, 0.02, 0.0002, 0.5) < 0
    # an effect before that is not positive leaves no room: a miss however small the effect after
    assert relative_equivalence_margin(-0.05, 0.0, 0.02, 0.0, 0.0, 0.5) < 0
    # exact values with no noise: inside is +inf, outside -inf; NaN propagates
    assert relative_equivalence_margin(0.3, 0.0, 0.0, 0.0, 0.0, 0.5) == np.inf
    assert relative_equivalence_margin(0.3, 0.2, 0.0, 0.0, 0.0, 0.5) == -np.inf
    assert np.isnan(relative_equivalence_margin(0.3, np.nan, 0.03, 0.02, 0.0, 0.5))
    # level: with the truth on the margin (after = share x before), the test rejects about 5% of the time
    rng = np.random.default_rng(11)
    before = rng.normal(0.3, 0.03, 20000)
    after = 0.15 + rng.normal(0, 0.02, 20000)
    passed = np.mean([relative_equivalence_margin(b, a, 0.03, 0.02, 0.0, 0.5) >= 0 for b, a in zip(before, after)])
    assert 0.04 < passed < 0.06
