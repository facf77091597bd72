"""Planted recovery (results/validation/planted_recovery): the tables read as a reader sees them, and
for every planted effect of the truth file whether it was found by the table's own criterion, with its
margin (how many standard errors beyond the criterion it lies: ``medbias.metrics.margins``); for the
controls, how many were flagged against what chance allows (``control_family``); and the verdict in
one line (``recovery_verdict``).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.tables import PaperPage, Section
from medbias.metrics.logprob_tests import category_vs_control_p_floor
from medbias.metrics.margins import (
    MARGIN_AT_POWER,
    Sided,
    at_p_floor,
    bh_threshold,
    equivalence_margin_se,
    equivalence_power,
    interval_margin,
    p_floor,
    p_margin,
    relative_equivalence_margin,
    z_of_p,
)
from medbias.studies.hurtful.gaps import GAP_KEYS
from medbias.validation.truth import (
    BELOW_POWER,
    NOT_A_NULL,
    demo_set_contrasts,
    intersection_truth,
    logprob_distances,
    mitigation_recall_truth,
    plant_models,
    planted_strengths,
    recall_gap_truth,
    task_maps,
)

# family: the controls tested together (one BH family of recall gaps; every other test alone);
# margin_se, margin_lower_bound, margin_basis: a planted effect's margin (``Margin``), empty for controls
RECOVERY_COLUMNS = [
    "study",
    "effect",
    "truth",
    "where",
    "criterion",
    "observed",
    "recovered",
    "family",
    "margin_se",
    "margin_lower_bound",
    "margin_basis",
]

ACCEPTS_A_NULL = "accepts a null"


@dataclass(frozen=True)
class Margin:
    """How far a plant's statistic lies beyond its criterion, in standard errors (``value``; >= 0 when
    the criterion's tested parts pass), whether that is only a lower bound (a permutation p at its
    floor), and how it was computed (``basis``). NaN with a basis starting ``ACCEPTS_A_NULL`` for a
    criterion that passes by not rejecting: it has no margin."""

    value: float
    lower_bound: bool
    basis: str


def p_part(
    p: float,
    threshold: float,
    sided: Sided,
    *,
    right_direction: bool = True,
    draws: float = float("nan"),
    doubled: bool = False,
    name: str = "p",
    threshold_name: str = "",
    null_z: float = float("nan"),
) -> Margin:
    """The margin of a p-value criterion, p < ``threshold`` (``p_margin``), with its basis. When p
    is at its permutation floor (``draws``, ``doubled``: ``at_p_floor``) the margin is a lower bound,
    unless the statistic's distance from its null in null standard deviations (``null_z``: a
    calibrated null's ``null_z``) is given and gives a larger margin: then that z stands for the p's
    (a normal approximation of the null's tail, one-sided along the planted direction)."""
    floor = at_p_floor(p, draws, doubled)
    basis = f"{sided}-sided {name} {p:.3g} vs {threshold_name or f'{threshold:.3g}'}" + (
        "" if right_direction else ", wrong sign"
    )
    bound = p_margin(p, threshold, sided, right_direction)
    if floor and np.isfinite(null_z):
        observed = null_z if sided == "one" else (abs(null_z) if right_direction else -abs(null_z))
        approximate = observed - z_of_p(threshold, sided)
        if approximate >= bound:  # the floored p's margin is a lower bound: the approximation may not undercut it
            basis += (
                f" (at its floor {p_floor(draws, doubled):.2g}: the statistic's z against its null "
                f"instead, {null_z:+.2f}, normal approximation)"
            )
            return Margin(approximate, False, basis)
    basis += f" (at its floor {p_floor(draws, doubled):.2g}: a lower bound)" if floor else ""
    return Margin(bound, floor, basis)


def bh_part(
    p: float,
    p_bh: float,
    alpha: float,
    sided: Sided,
    *,
    right_direction: bool = True,
    draws: float = float("nan"),
    doubled: bool = False,
    name: str = "p",
) -> Margin:
    """``p_part`` against the Benjamini-Hochberg threshold the hypothesis had to pass (``bh_threshold``)."""
    threshold = bh_threshold(p, p_bh, alpha)
    return p_part(
        p,
        threshold,
        sided,
        right_direction=right_direction,
        draws=draws,
        doubled=doubled,
        name=name,
        threshold_name=f"its BH threshold {threshold:.3g}",
    )


def interval_part(low: float, high: float, side: str, name: str = "interval") -> Margin:
    """The margin of an interval that must lie ``side`` ("below"/"above") of 0 (``interval_margin``)."""
    return Margin(interval_margin(low, high, side), False, f"{name} [{low:+.3g}, {high:+.3g}] {side} 0")  # type: ignore[arg-type]


def weakest(*parts: Margin) -> Margin:
    """A criterion of several tested parts passes by its weakest part's margin."""
    values = [p.value for p in parts]
    if any(np.isnan(v) for v in values):
        return Margin(float("nan"), False, "; ".join(p.basis for p in parts))
    low = min(parts, key=lambda p: p.value)
    return Margin(low.value, low.lower_bound, "; ".join(p.basis for p in parts))


def _row(
    study: str,
    effect: str,
    truth: str,
    where: str,
    criterion: str,
    observed: str,
    recovered: bool,
    family: str | None = None,
    margin: Margin | None = None,
) -> list:
    m = margin or Margin(float("nan"), False, "")
    return [
        study,
        effect,
        truth,
        where,
        criterion,
        observed,
        bool(recovered),
        family or effect,
        m.value,
        m.lower_bound,
        m.basis,
    ]


def _sided(alternative: str) -> Sided:
    return "one" if alternative == "greater" else "two"


def rios_recovery(
    table: pd.DataFrame,
    trends: pd.DataFrame,
    pubmed_truth: Mapping[str, Any],
    alternative: str = "greater",
    level: float = 0.05,
) -> pd.DataFrame:
    """Figure 1 as a reader sees it (replicate 0, stars = calibrated p < ``level``): every planted pair is
    significant with a positive mean difference in every decade where it is planted, and nothing
    is significant where nothing is planted (control pairs; planted pairs in their null decade);
    the trend over decades falls for every planted pair and is flat (p >= 0.05) for the controls.
    Margins: the star's p (``alternative``-sided; at its floor 1/(null_draws + 1) the projection's
    z against its calibrated null, ``null_z``, stands for it) against ``level``; the trend's two-sided
    p against 0.05, signed by the slope (exact over the n! orderings of the decades: at its floor,
    2 / n!, a lower bound)."""
    strengths = planted_strengths(pubmed_truth)
    rows = []
    for r in table.itertuples(index=False):
        strength = 0.0 if r.control else strengths.get(r.test, {}).get(r.decade, 0.0)
        calibrated = np.isfinite(r.p_calibrated)
        p = r.p_calibrated if calibrated else r.p_value
        observed = f"md {r.mean_difference:+.3f}, d {r.effect_size:+.2f}, p {p:.4g}"
        if strength > 0:
            margin = p_part(
                p,
                level,
                _sided(alternative),
                right_direction=r.mean_difference > 0,
                draws=getattr(r, "null_draws", np.nan) if calibrated else np.nan,
                name="calibrated p" if calibrated else "p",
                null_z=getattr(r, "null_z", np.nan) if calibrated else np.nan,
            )
            rows.append(
                _row(
                    "rios",
                    f"{r.test} x gender, {r.decade} (strength {strength})",
                    "planted",
                    "fig1_weat.csv",
                    "significant and mean difference > 0",
                    observed,
                    bool(r.significant) and r.mean_difference > 0,
                    margin=margin,
                )
            )
        else:
            rows.append(
                _row(
                    "rios",
                    f"{r.test} x gender, {r.decade}",
                    "control",
                    "fig1_weat.csv",
                    "not significant",
                    observed,
                    not bool(r.significant),
                )
            )
    for r in trends.itertuples(index=False):
        observed = f"slope {r.md_slope:+.4f} per decade, p {r.md_trend_p:.3g}"
        if r.test in strengths:
            rows.append(
                _row(
                    "rios",
                    f"{r.test}: association falls by decade",
                    "planted",
                    "fig1_weat_trend.csv",
                    "mean-difference slope < 0, trend p < 0.05",
                    observed,
                    r.md_slope < 0 and r.md_trend_p < 0.05,
                    margin=p_part(
                        r.md_trend_p,
                        0.05,
                        "two",
                        right_direction=r.md_slope < 0,
                        draws=getattr(r, "orderings", np.nan) - 1,
                        doubled=True,
                        name="exact trend p",
                    ),
                )
            )
        elif r.control:
            rows.append(
                _row(
                    "rios",
                    f"{r.test}: no trend",
                    "control",
                    "fig1_weat_trend.csv",
                    "trend p >= 0.05",
                    observed,
                    r.md_trend_p >= 0.05,
                )
            )
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def seat_recovery(
    seat: pd.DataFrame, plm_truth: Mapping[str, Any], alternative: str = "greater", alpha: float = 0.05
) -> pd.DataFrame:
    """Table 2 without debiasing (stars = calibrated p < ``alpha``): every planted test of every trained
    model starred with a positive effect; the birthday controls of the trained models and every test of
    a model that was not trained on the plm corpus unstarred. Margin: the star's p (``alternative``-sided;
    at its floor 1/(null_draws + 1) the projection's z against its calibrated null, ``null_z``, stands
    for it) against ``alpha``."""
    trained = set(plm_truth["trained_models"])
    plain = seat[(seat["debias"] == "none") & (seat["status"] == "ok")]
    rows = []
    for r in plain.itertuples(index=False):
        p = getattr(r, "p_calibrated", np.nan)
        observed = f"d {r.effect_size:+.3f}, p {p if np.isfinite(p) else r.p_value:.4g}"
        if r.model in trained and r.test in plm_truth["seat_planted"]:
            calibrated = np.isfinite(p)
            margin = p_part(
                p if calibrated else r.p_value,
                alpha,
                _sided(alternative),
                right_direction=r.effect_size > 0,
                draws=getattr(r, "null_draws", np.nan) if calibrated else np.nan,
                name="calibrated p" if calibrated else "p",
                null_z=getattr(r, "null_z", np.nan) if calibrated else np.nan,
            )
            rows.append(
                _row(
                    "plm",
                    f"{r.model} {r.test}",
                    "planted",
                    "seat_long.csv",
                    "significant and effect > 0",
                    observed,
                    bool(r.significant) and r.effect_size > 0,
                    margin=margin,
                )
            )
        elif r.model not in trained or r.test in plm_truth["seat_controls"]:
            why = "" if r.model in trained else " (model not trained on the plm corpus)"
            rows.append(
                _row(
                    "plm",
                    f"{r.model} {r.test}{why}",
                    "control",
                    "seat_long.csv",
                    "not significant",
                    observed,
                    not bool(r.significant),
                )
            )
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def gap_recovery(
    gaps: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    seeds: pd.DataFrame | None = None,
    alpha: float = 0.05,
    task_cohorts: Mapping[str, str] | None = None,
    classifiers_reading: Mapping[str, Collection[str]] | None = None,
) -> pd.DataFrame:
    """Table C3's recall gaps (BH within model, attribute and group; ``recall_gap_truth``): each
    planted gap negative and significant after BH for its disadvantaged group on every task of its
    phenotype and every model; every other recall gap not significant after BH.

    With ``seeds`` (``downstream.seed_spread`` over R > 1 classifier seed replicates) a decision is
    the majority's: a planted gap is found when more than half of the replicates find it below 0
    after BH, and a control is flagged when more than half flag it. A single classifier seed can
    miss a planted gap the model's features carry (or flag one they do not), so the model, not one
    seed of its classifier, is what the verdict describes. The seeds share one world and one test set:
    the majority repeats the same sample and is no replication.

    Margin of a planted gap: the two-sided p's z against its BH threshold at ``alpha``, signed by the
    gap (``bh_part``); over seeds the majority's (``gap_seeds.csv``'s ``bh_margin_below_majority``).
    With ``task_cohorts``, a plant's rows outside the cohorts it is asserted on keep the planted
    criterion and margin under the truth ``BELOW_POWER`` (``recall_gap_truth``). With ``classifiers_reading``
    (attribute -> models whose classifiers predict by it), those models' controls on it keep the control's
    criterion under the truth ``NOT_A_NULL``: reported, not counted."""
    recall = recall_gap_truth(gaps, mimic_truth, task_labels, task_cohorts, classifiers_reading)
    replicates = 1
    if seeds is not None and len(seeds):
        keys = list(GAP_KEYS)
        columns = ["replicates", "significant_bh_seeds", "significant_bh_below_seeds", "gap_seed_min", "gap_seed_max"]
        columns += [c for c in ("bh_margin_below_majority",) if c in seeds.columns]
        recall = recall.merge(seeds[keys + columns], on=keys, how="left", validate="one_to_one")
        if recall["replicates"].isna().any():
            raise ValueError("gap_seeds.csv lacks some recall gaps of gaps.parquet")
        replicates = int(recall["replicates"].max())
    where = "<model>/gaps.parquet" + (", gap_seeds.csv" if replicates > 1 else "")
    rows = []
    for _, r in recall.iterrows():
        unit = f"{r['model']} {r['task']} {r['attribute']}={r['group']}"
        observed = f"gap {r['gap']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}], BH p {r['p_bh']:.3g}"
        plant = r["truth"] not in ("control", NOT_A_NULL)  # planted, or below power: read as a plant
        if replicates > 1:
            majority = replicates / 2
            planted_found = r["significant_bh_below_seeds"] > majority
            flagged = r["significant_bh_seeds"] > majority
            count = r["significant_bh_below_seeds"] if plant else r["significant_bh_seeds"]
            observed += (
                f"; BH-significant{' below 0' if plant else ''} in {int(count)} of "
                f"{replicates} seeds (gaps {r['gap_seed_min']:+.3f} to {r['gap_seed_max']:+.3f})"
            )
        else:
            planted_found = bool(r["significant_bh"]) and r["gap"] < 0
            flagged = bool(r["significant_bh"])
        if plant:
            margin = bh_part(r["p_value"], r["p_bh"], alpha, "two", right_direction=r["gap"] < 0)
            if replicates > 1:
                majority = r.get("bh_margin_below_majority", np.nan)
                margin = Margin(
                    majority,
                    False,
                    f"two-sided p vs its BH threshold, signed by the gap: the margin of the majority of {replicates} "
                    f"seeds (seed 0: {margin.basis}, {margin.value:+.2f})",
                )
            criterion = "recall gap < 0, significant after BH" + (
                f", in most of {replicates} classifier seeds" if replicates > 1 else ""
            )
            rows.append(
                _row(
                    "hurtful",
                    f"{unit} ({task_labels.get(r['task'], r['task'])})",
                    r["truth"],
                    where,
                    criterion,
                    observed,
                    bool(planted_found),
                    margin=margin,
                )
            )
        else:
            criterion = "not significant after BH" + (
                f" in most of {replicates} classifier seeds" if replicates > 1 else ""
            )
            if r["truth"] == NOT_A_NULL:
                criterion += f" (not counted: {r['model']}'s classifiers predict by {r['attribute']})"
            rows.append(
                _row(
                    "hurtful",
                    unit,
                    r["truth"],
                    where,
                    criterion,
                    observed,
                    not bool(flagged),
                    f"{r['model']} {r['attribute']}={r['group']} (BH over tasks)",
                )
            )
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def mitigation_recovery(
    changes: pd.DataFrame,
    performance: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    model: str = "baseline",
    method: str = "threshold",
    task_cohorts: Mapping[str, str] | None = None,
    equivalence_margin: float = 0.1,
    equivalence_power_needed: float = 0.8,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """The mitigation stage's gap changes (``gap_changes.parquet``) of ``method`` on ``model``, read
    against the planted recall gaps (``recall_gap_truth`` on the gaps before mitigation): each
    planted gap is closed as the stage defines it (``mitigation_effects.closures``): its 95% interval
    below 0 before, its narrowing significant after BH over the tasks, and the gap after equivalent to
    0 within +-``equivalence_margin`` by two one-sided tests at ``alpha`` on its bootstrap SE (an
    interval that merely includes 0 would accept a null, which a noisier test passes more easily),
    with the AUROC change it cost beside it; every control recall gap is not widened after BH over
    the tasks (the family: one model, attribute and group). A plant's rows outside the cohorts it is
    asserted on (``task_cohorts``) are ``BELOW_POWER``, and so is a row whose equivalence test has
    less than ``equivalence_power_needed`` power at a true gap of 0 given its standard error
    (``equivalence_power``: a property of the test's size, known before its result).
    Margin: the weakest of the interval before, the change's BH test and the equivalence test after."""
    recall = mitigation_recall_truth(changes, mimic_truth, task_labels, model, method, task_cohorts)
    ranking = performance[
        (performance["model"] == model)
        & (performance["method"] == method)
        & performance["metric"].isin(["auroc", "auroc_of_decisions"])
    ].set_index(["attribute", "task"])
    where = "hurtful/downstream/mitigation/gap_changes.parquet, performance_changes.csv"
    rows = []
    for _, r in recall.iterrows():
        unit = f"{model} {method} {r['task']} {r['attribute']}={r['group']}"
        observed = (
            f"recall gap {r['gap']:+.3f} [{r['ci_low_before']:+.3f}, {r['ci_high_before']:+.3f}] before, "
            f"{r['gap_after']:+.3f} [{r['ci_low_after']:+.3f}, {r['ci_high_after']:+.3f}] after"
        )
        if r["truth"] in ("planted", BELOW_POWER):
            se_after = float(r["se_after"])
            power = equivalence_power(se_after, equivalence_margin, alpha)
            equivalent = Margin(
                equivalence_margin_se(r["gap_after"], se_after, equivalence_margin, alpha),
                False,
                f"after: within +-{equivalence_margin:g} by two one-sided tests at {alpha:g} (SE {se_after:.3f}; "
                f"power {power:.2f} at a true gap of 0)",
            )
            narrowed = bh_part(
                r["p_change"],
                r["p_change_bh"],
                alpha,
                "two",
                right_direction=bool(r["change"] < 0),
                name="narrowing p",
            )
            margin = weakest(
                interval_part(r["ci_low_before"], r["ci_high_before"], "below", "before"), narrowed, equivalent
            )
            truth = BELOW_POWER if power < equivalence_power_needed else r["truth"]
            cost = ranking.loc[(r["attribute"], r["task"])]
            observed += (
                f"; change {r['change']:+.3f}, BH p {r['p_change_bh']:.3g}; {cost['metric'].replace('_', ' ')} "
                f"{cost['before']:.3f} -> {cost['after']:.3f} "
                f"(change {cost['change']:+.3f} [{cost['change_low']:+.3f}, {cost['change_high']:+.3f}])"
            )
            rows.append(
                _row(
                    "hurtful",
                    f"{unit} closed by the post-processor ({task_labels.get(r['task'], r['task'])})",
                    truth,
                    where,
                    f"interval below 0 before; narrowing significant (BH over tasks); after, within "
                    f"+-{equivalence_margin:g} (two one-sided tests at {alpha:g})",
                    observed,
                    bool(margin.value >= 0),
                    margin=margin,
                )
            )
        else:
            widened = bool(r["significant_change_bh"] and r["change"] > 0)
            rows.append(
                _row(
                    "hurtful",
                    f"{unit} (mitigation)",
                    "control",
                    where,
                    "|gap| not wider after than before (BH over tasks)",
                    observed + f"; change {r['change']:+.3f}, BH p {r['p_change_bh']:.3g}",
                    not widened,
                    f"{model} {method} {r['attribute']}={r['group']} (BH over tasks)",
                )
            )
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def _intersection_plants_without_rows(
    truth: pd.DataFrame,
    analysed: Sequence[str],
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    where: str,
) -> list[list]:
    """A missed row for each planted intersectional gap and model it names (every ``analysed`` model
    when it names none) that has no planted worst cell in ``truth`` (``intersection_truth``), saying why."""
    rows = []
    for plant in mimic_truth.get("planted_intersectional_gaps", []):
        crossing = " x ".join(plant["crossing"])
        planted = truth[(truth["truth"] == "planted") & (truth["crossing"] == crossing)]
        planted = planted[planted["task"].map(task_labels) == plant["phenotype"]]
        for model in plant_models(plant, analysed):
            if model not in set(planted["model"]):
                rows.append(
                    _row(
                        "hurtful",
                        f"{model} {plant['phenotype']} {crossing} recall: cell {plant['cell']}",
                        "planted",
                        where,
                        "the planted cell is the worst, below 0, significant after BH",
                        f"no tested worst recall cell of {model} on the {'/'.join(plant['cohorts'])} task of this "
                        f"phenotype (is {model} in hurtful.intersections.models?)",
                        False,
                        margin=Margin(float("nan"), False, "no row to measure"),
                    )
                )
    return rows


def intersection_recovery(
    worst: pd.DataFrame,
    gaps: pd.DataFrame,
    mimic_truth: Mapping[str, Any],
    task_labels: Mapping[str, str],
    task_cohorts: Mapping[str, str],
    alpha: float = 0.05,
    null_draws: float = float("nan"),
) -> pd.DataFrame:
    """The intersectional table (``worst_cells.csv``) read against the truth (``intersection_truth``):
    on each task of a planted intersectional gap, its cell is the worst recall cell, below 0 and
    significant after BH, while no per-attribute recall gap of that model and task (``gaps``: every
    model's gaps.parquet) is significant after BH; on every task no intersectional plant reaches
    (those with a planted per-attribute gap among them: the test looks beyond the main effects), the
    worst recall cell is not significant after BH (the family: one model, crossing and metric, BH over
    the tasks), though the worst cell is read as if chosen in advance in ``naive_p``. Margin of a
    plant: the worst cell's max-T p (floor 1/(``null_draws`` + 1)) against its BH threshold at
    ``alpha``; that no per-attribute gap is significant accepts a null and has none. A plant with no
    tested worst cell for a model it names (the model not among ``hurtful.intersections.models``, or
    its cohorts' tasks absent) is a miss, with the reason."""
    rows = []
    cells = {" x ".join(p["crossing"]): p["cell"] for p in mimic_truth.get("planted_intersectional_gaps", [])}
    where = "hurtful/downstream/intersections/worst_cells.csv, <model>/gaps.parquet"
    truth = intersection_truth(worst, mimic_truth, task_labels, task_cohorts)
    rows += _intersection_plants_without_rows(truth, sorted(set(worst["model"])), mimic_truth, task_labels, where)
    for _, r in truth.iterrows():
        unit = f"{r['model']} {r['task']} {r['crossing']} {r['metric']}"
        observed = (
            f"worst cell {r['worst_cell']} {r['value']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}], "
            f"interaction z {r['interaction_z']:+.2f}, max-T p {r['p_value']:.3g}, BH p {r['p_bh']:.3g} "
            f"(naive p {r['naive_p']:.3g})"
        )
        if r["truth"] == "planted":
            per_attribute = gaps[
                (gaps["model"] == r["model"]) & (gaps["task"] == r["task"]) & (gaps["metric"] == "recall")
            ]
            per_attribute = per_attribute[~per_attribute["attribute"].str.contains(" x ")]
            flagged = per_attribute[per_attribute["significant_bh"].astype(bool)]
            smallest = (
                per_attribute.loc[per_attribute["p_bh"].idxmin()] if per_attribute["p_bh"].notna().any() else None
            )
            observed += "; per-attribute recall gaps: " + (
                f"{len(flagged)} significant after BH"
                + (
                    f" (smallest BH p {smallest['p_bh']:.3g}: {smallest['attribute']}={smallest['group']} "
                    f"{smallest['gap']:+.3f})"
                    if smallest is not None
                    else ""
                )
            )
            found = r["worst_cell"] == cells.get(r["crossing"]) and r["value"] < 0 and bool(r["significant_bh"])
            cell = bh_part(r["p_value"], r["p_bh"], alpha, "one", draws=null_draws, name="max-T p")
            margin = Margin(
                cell.value if r["worst_cell"] == cells.get(r["crossing"]) and r["value"] < 0 else -abs(cell.value),
                cell.lower_bound,
                cell.basis + "; the per-attribute gaps' part accepts a null (no margin)",
            )
            rows.append(
                _row(
                    "hurtful",
                    f"{unit}: cell {cells.get(r['crossing'])} ({task_labels.get(r['task'], r['task'])})",
                    "planted",
                    where,
                    "the planted cell is the worst, below 0, significant after BH; no per-attribute recall gap "
                    "of the task significant after BH",
                    observed,
                    bool(found and flagged.empty),
                    margin=margin,
                )
            )
        else:
            rows.append(
                _row(
                    "hurtful",
                    f"{unit} (intersections" + ("; a planted per-attribute gap)" if r["per_attribute_plant"] else ")"),
                    "control",
                    where,
                    "worst cell not significant after BH",
                    observed,
                    not bool(r["significant_bh"]),
                    f"{r['model']} {r['crossing']} {r['metric']} (BH over tasks)",
                )
            )
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def logprob_recovery(
    table: pd.DataFrame,
    logprob_truth: Mapping[str, Any],
    pretrained: Sequence[str],
    untrained: Sequence[str],
    level: float = 0.01,
    at_power: float = MARGIN_AT_POWER,
) -> pd.DataFrame:
    """Table 3 (gender): on every model pretrained on the demo notes, each leaning category's mean
    difference lies on its lean's side of the control category's, Mann-Whitney p < ``level`` (the
    truth file's expectation); on an untrained model, no category is further from the control than
    1% of the pretrained models' largest such distance (Mann-Whitney ranks even the tiny,
    systematic differences of random weights, so size is the claim there). Margin: the two-sided
    Mann-Whitney p against ``level``, signed by the lean.

    A leaning category is ``BELOW_POWER`` when even its test's smallest p (``category_vs_control_p_floor``:
    complete separation of its attributes from the control's) lies under ``at_power`` standard errors
    beyond ``level``: a bound fixed by the attribute counts before any model is scored, which no
    stronger lean can pass (5 against 9 attributes: 0.001, 0.71 SE beyond 0.01)."""
    control = logprob_truth["control_category"]
    distances = logprob_distances(table, logprob_truth)
    trained = distances[distances["model"].isin(list(pretrained))]
    reach = float(trained["distance"].abs().max()) if len(trained) else 0.0
    rows = []
    for r in trained.itertuples(index=False):
        floor = category_vs_control_p_floor(r.attributes, r.control_attributes)
        reachable = p_margin(floor, level, "two")
        margin = p_part(r.p, level, "two", right_direction=bool(r.on_lean_side), name="Mann-Whitney p")
        below_power = bool(np.isnan(reachable) or reachable < at_power)
        if below_power:
            margin = replace(
                margin,
                basis=f"{margin.basis}; its smallest p, {r.attributes:g} against {r.control_attributes:g} "
                f"attributes completely separated, is {floor:.2g}: {reachable:+.2f} SE, under {at_power:g}",
            )
        rows.append(
            _row(
                "hurtful",
                f"{r.model}: {r.category} leans {r.lean} vs {control}",
                BELOW_POWER if below_power else "planted",
                "table3_logprob_long.csv",
                f"on the {r.lean} side, Mann-Whitney p < {level} over attributes",
                f"distance {r.distance:+.4f}, p {r.p:.3g}",
                r.on_lean_side and r.p < level,
                margin=margin,
            )
        )
    for r in distances[distances["model"].isin(list(untrained))].itertuples(index=False):
        rows.append(
            _row(
                "hurtful",
                f"{r.model} (untrained): {r.category} vs {control}",
                "control",
                "table3_logprob_long.csv",
                "|distance| < 1% of the pretrained models' largest",
                f"distance {r.distance:+.6f}",
                abs(r.distance) < 0.01 * reach,
            )
        )
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def hurtful_recoveries(
    gaps: pd.DataFrame,
    tasks: pd.DataFrame,
    gap_seeds: pd.DataFrame,
    logprob: pd.DataFrame,
    truth: Mapping[str, Any],
    criteria: Mapping[str, Any],
    logprob_roles: tuple[Sequence[str], Sequence[str]],
    mitigation: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    worst_cells: pd.DataFrame | None = None,
    classifiers_reading: Mapping[str, Collection[str]] | None = None,
) -> list[pd.DataFrame]:
    """Every recovery table of the hurtful study: the recall gaps (``gap_recovery``), the post-processor's
    closures when the baseline was mitigated (``mitigation``: its gap changes and performance changes),
    the intersectional cells when they were assessed, and Table 3 (``logprob_recovery``; ``logprob_roles``:
    the pretrained and the untrained models). ``criteria``: the planted recovery rule's levels and margins.
    ``classifiers_reading``: the recall-gap controls not counted (``gap_recovery``)."""
    labels, cohorts = task_maps(tasks)
    alpha = criteria["downstream_alpha"]
    parts = [gap_recovery(gaps, truth["mimic"], labels, gap_seeds, alpha, cohorts, classifiers_reading)]
    if mitigation is not None:
        parts.append(
            mitigation_recovery(
                *mitigation,
                truth["mimic"],
                labels,
                task_cohorts=cohorts,
                equivalence_margin=criteria["equivalence_margin"],
                equivalence_power_needed=criteria["equivalence_power"],
            )
        )
    if worst_cells is not None:
        draws = criteria["intersection_null_draws"]
        parts.append(intersection_recovery(worst_cells, gaps, truth["mimic"], labels, cohorts, alpha, draws))
    pretrained, untrained = logprob_roles
    parts.append(logprob_recovery(logprob, truth["logprob"], pretrained, untrained, criteria["logprob_alpha"]))
    return parts


def _null_text(row) -> str:
    """The gender-permutation null of one Table V row, as the recovery tables print it."""
    if not row["null_draws"]:
        return "no gender-permutation null drawn"
    median, draws, p = row["mismatch_null_median"], int(row["null_draws"]), row["mismatch_null_p"]
    return f"null median {median:.3f} over {draws} draws, p {p:.3g}"


def _removal_row(
    embedding: str,
    bias: Mapping[str, Any],
    augmented: pd.Series,
    leans: pd.DataFrame,
    share: float,
    level: float,
) -> dict:
    """The recovery row of "augmentation removes the planted label bias" (``mental_recovery``)."""
    effect = f"{embedding} {bias['task']}: augmentation removes at least {1 - share:.0%} of its lean"
    criterion = (
        f"augmented lean toward {bias['favoured']} within +-{share:g} x the original's, two one-sided "
        f"paired tests at {level}"
    )
    if (embedding, bias["task"]) not in leans.index:
        observed, margin = "no paired leans of the original and augmented classifiers", float("nan")
    else:
        r = leans.loc[(embedding, bias["task"])]
        toward = 1.0 if bias["favoured"] == "M" else -1.0
        before, after = toward * r["lean_original"], toward * r["lean_treated"]
        margin = relative_equivalence_margin(
            before, after, r["se_original"], r["se_treated"], r["covariance"], share, level
        )
        observed = (
            f"lean toward {bias['favoured']} {after:+.3f} (SE {r['se_treated']:.3f}) vs {before:+.3f} "
            f"(SE {r['se_original']:.3f}) before; mismatch {augmented['mismatch']:.3f}; {_null_text(augmented)}"
        )
    return _row(
        "mental",
        effect,
        "planted",
        "treatment_leans.csv",
        criterion,
        observed,
        bool(margin >= 0),
        margin=Margin(
            margin,
            False,
            f"the smaller of the two one-sided z's - z at {level} (paired bootstrap over the test pairs; "
            f"margin +-{share:g} x the original lean, fixed before the data)",
        ),
    )


# long: one row per planted mental effect and control, each read against its own table
def mental_recovery(
    fairness: pd.DataFrame,
    direct_bias: pd.DataFrame,
    mental_truth: Mapping[str, Any],
    corpus_embeddings: Mapping[str, str],
    learner: str = "svm",
    level: float = 0.05,
    direct_bias_null_draws: float = float("nan"),
    treatment_leans: pd.DataFrame | None = None,
    removal_share: float = 0.5,
) -> pd.DataFrame:
    """Table V and Figure 2: the planted label bias shows as a mismatch that favours its gender
    (McNemar p < ``level``) on the original notes of every embedding, and augmentation removes at least
    ``1 - removal_share`` of it: the augmented classifier's lean toward the favoured gender lies within
    +-``removal_share`` of the original classifier's, by two one-sided paired tests at ``level``
    (``treatment_leans``; a ratio margin fixed before the data: "within the permuted retrainings' null"
    would accept a null, which a noisier test passes more easily, and an absolute margin on the mismatch
    sits at the floor that gender-blind classifiers of contextual features reach); the control
    tasks' original mismatch is no larger than the permuted retrainings' (``mismatch_null_p`` >=
    ``level``: McNemar's test would ask only whether
    the one trained classifier favours a gender, which a classifier of contextual features may do
    whatever its labels say); the corpus with male-leaning depression synonyms leans male (interval
    of the signed lean below 0, and below random words' lean: calibrated p < ``level``) with a Direct
    Bias above the other corpus's; in a corpus with no planted lean (a control) the synonyms lean no
    more than random words do (calibrated p >= ``level``). ``corpus_embeddings``: truth corpus ->
    embedding name.

    The no-lean corpus's row is ``NOT_A_NULL``: its synonyms occur only in the depression sentences, so
    they move together (a cluster), and how that cluster sits against the gender direction depends on the
    rest of the corpus (the gender words' frequencies in the notes); random word sets of the same size
    spread far less, so the calibrated p can flag the cluster's chance offset with nothing planted
    (docs/demo-world.md, what each control's truth is).

    Margins: McNemar's two-sided p against ``level``, signed by the favoured gender; the lean's, the
    weaker of its interval below 0 and its calibrated two-sided p (floor 2/(``direct_bias_null_draws``
    + 1)) against ``level`` (that its Direct Bias is the largest has no standard error); the augmentation
    plant's, ``relative_equivalence_margin``."""
    part = fairness[fairness["learner"] == learner].set_index(["embedding", "treatment", "task"])
    leans = (
        treatment_leans[(treatment_leans["learner"] == learner) & (treatment_leans["treatment"] == "augmented")]
        if treatment_leans is not None
        else pd.DataFrame(columns=["embedding", "task"])
    ).set_index(["embedding", "task"])
    rows = []
    for bias in mental_truth["planted_label_bias"]:
        for embedding in part.index.get_level_values(0).unique():
            original, augmented = (
                part.loc[(embedding, "original", bias["task"])],
                part.loc[(embedding, "augmented", bias["task"])],
            )
            rows.append(
                _row(
                    "mental",
                    f"{embedding} {bias['task']}: label bias favours {bias['favoured']}",
                    "planted",
                    "table5_fairness_long.csv",
                    f"original: mismatch favours {bias['favoured']}, McNemar p < {level}",
                    f"mismatch {original['mismatch']:.3f} ({original['mismatch_group'] or '-'}), p "
                    f"{original['mismatch_p']:.3g}; {_null_text(original)}",
                    original["mismatch_group"] == bias["favoured"] and original["mismatch_p"] < level,
                    margin=p_part(
                        original["mismatch_p"],
                        level,
                        "two",
                        right_direction=original["mismatch_group"] == bias["favoured"],
                        name="McNemar p",
                    ),
                )
            )
            rows.append(_removal_row(embedding, bias, augmented, leans, removal_share, level))
    for task in mental_truth["control_tasks"]:
        for embedding in part.index.get_level_values(0).unique():
            original = part.loc[(embedding, "original", task)]
            rows.append(
                _row(
                    "mental",
                    f"{embedding} {task}: no label bias",
                    "control",
                    "table5_fairness_long.csv",
                    f"original: mismatch within the gender-permutation null (p >= {level})",
                    f"mismatch {original['mismatch']:.3f} ({original['mismatch_group'] or '-'}), McNemar p "
                    f"{original['mismatch_p']:.3g}; {_null_text(original)}",
                    original["mismatch_null_p"] >= level,
                )
            )
    table = direct_bias.set_index("embedding")
    leaning = [c for c, plant in mental_truth["direct_bias"].items() if plant["depression_male_share"] > 0.5]
    for corpus in leaning:
        embedding = corpus_embeddings[corpus]
        others = [corpus_embeddings[c] for c in mental_truth["direct_bias"] if c != corpus]
        r = table.loc[embedding]
        rows.append(
            _row(
                "mental",
                f"{embedding}: depression synonyms lean male",
                "planted",
                "fig2_direct_bias.csv",
                f"signed lean interval below 0 and below random words' (calibrated p < {level}), Direct Bias "
                "above the other vectors'",
                f"lean [{r['signed_low']:+.3f}, {r['signed_high']:+.3f}], random words "
                f"{r['random_words_signed_mean']:+.3f}, "
                f"p {r['signed_p_calibrated']:.3g}; DB {r['direct_bias']:.3f} vs "
                + ", ".join(f"{table.at[o, 'direct_bias']:.3f}" for o in others),
                r["signed_high"] < 0
                and r["signed_mean_cos"] < r["random_words_signed_mean"]
                and r["signed_p_calibrated"] < level
                and all(r["direct_bias"] > table.at[o, "direct_bias"] for o in others),
                margin=weakest(
                    interval_part(r["signed_low"], r["signed_high"], "below", "signed lean interval"),
                    p_part(
                        r["signed_p_calibrated"],
                        level,
                        "two",
                        right_direction=bool(r["signed_mean_cos"] < r["random_words_signed_mean"]),
                        draws=direct_bias_null_draws,
                        doubled=True,
                        name="calibrated p",
                    ),
                ),
            )
        )
    for corpus in (c for c, plant in mental_truth["direct_bias"].items() if plant["depression_male_share"] == 0.5):
        embedding = corpus_embeddings[corpus]
        r = table.loc[embedding]
        rows.append(
            _row(
                "mental",
                f"{embedding}: depression synonyms lean no more than random words",
                NOT_A_NULL,
                "fig2_direct_bias.csv",
                f"calibrated p of the signed lean against random words >= {level}",
                f"lean {r['signed_mean_cos']:+.3f} [{r['signed_low']:+.3f}, {r['signed_high']:+.3f}], random words "
                f"{r['random_words_signed_mean']:+.3f}, p {r['signed_p_calibrated']:.3g}",
                r["signed_p_calibrated"] >= level,
            )
        )
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)


def control_family(recovery: pd.DataFrame, level: float = 0.05) -> pd.DataFrame:
    """Per study, the control families with a flag against what chance allows at ``level``. A
    family is one test, or the controls one correction is applied over (a BH family of recall
    gaps): under no effect, each family has at most a ``level`` chance of any flag, so with n
    families the number flagged is at most Binomial(n, level); ``binomial_p`` is the one-sided p of
    seeing at least the observed number, and ``clean_at_level`` that p >= 0.05."""
    from scipy.stats import binom

    rows = []
    for study, part in recovery[recovery["truth"] == "control"].groupby("study", sort=False):
        by_family = (~part["recovered"]).groupby(part["family"], sort=False).any()
        flagged, n = int(by_family.sum()), len(by_family)
        p = float(binom.sf(flagged - 1, n, level)) if flagged else 1.0
        rows.append(
            {
                "study": study,
                "controls": len(part),
                "flagged": int((~part["recovered"]).sum()),
                "families": n,
                "families_flagged": flagged,
                "expected_by_chance": n * level,
                "binomial_p": p,
                "clean_at_level": p >= 0.05,
                "flagged_controls": "; ".join(part.loc[~part["recovered"], "effect"]),
            }
        )
    return pd.DataFrame(rows)


def margin_text(margin: float, lower_bound: bool, basis: str) -> str:
    """A plant's margin as the table prints it: '+2.31', '>= +0.68' (a lower bound) or 'none (accepts a null)'."""
    if np.isnan(margin):
        return "none (accepts a null)" if str(basis).startswith(ACCEPTS_A_NULL) else "n/a"
    return f"{'>= ' if lower_bound else ''}{margin:+.2f}"


def _named(rows: pd.DataFrame) -> str:
    return "; ".join(
        f"{r.effect} ({margin_text(r.margin_se, r.margin_lower_bound, r.margin_basis)})" for r in rows.itertuples()
    )


def recovery_verdict(
    planted: pd.DataFrame,
    family: pd.DataFrame,
    below_power: pd.DataFrame | None = None,
    at_power: float = MARGIN_AT_POWER,
) -> tuple[str, str]:
    """The verdict in one line, and the margins behind it in a second.

    The verdict is "every planted effect found, every study clean" only when every planted row is
    recovered and every study's control families are clean at the 5% level (``control_family``);
    otherwise it names every miss with its margin and every study that is not clean. The second line
    sorts the found plants by their margin (``margin_se``): at least ``at_power`` standard errors (a
    single-run stand-in for power of about 0.999), fewer (a run on another CPU or world seed may miss
    them), a lower bound under ``at_power`` (a permutation p at its floor: more draws would measure
    it), or none (a criterion that accepts a null), and names the rows known before the data to lack
    power (``below_power``), which the verdict does not count."""
    found = planted[planted["recovered"].astype(bool)]
    missed = planted[~planted["recovered"].astype(bool)]
    unclean = list(family.loc[~family["clean_at_level"].astype(bool), "study"]) if len(family) else []
    if missed.empty and not unclean:
        verdict = (
            f"**Verdict: every planted effect found ({len(planted)} of {len(planted)}), every study clean** "
            f"(controls flagged: {int(family['flagged'].sum()) if len(family) else 0} of "
            f"{int(family['controls'].sum()) if len(family) else 0}, within what chance allows at the 5% level)."
        )
    else:
        parts = []
        if len(missed):
            parts.append(f"{len(missed)} of {len(planted)} planted effects missed: {_named(missed)}")
        if unclean:
            parts.append(f"controls not clean at the 5% level in {', '.join(unclean)}")
        verdict = "**Verdict: " + "; ".join(parts) + ".**"
    finite = ~np.isnan(found["margin_se"].to_numpy(dtype=float))  # a margin, possibly infinite
    bound = found["margin_lower_bound"].astype(bool).to_numpy()
    strong = found[finite & (found["margin_se"].to_numpy(dtype=float) >= at_power)]
    weak = found[finite & (found["margin_se"].to_numpy(dtype=float) < at_power) & ~bound]
    floored = found[finite & (found["margin_se"].to_numpy(dtype=float) < at_power) & bound]
    null = found[~finite]
    margins = [
        f"Margins of the {len(found)} found, in standard errors beyond their criterion ({at_power:g} SE stands in "
        f"for power of about 0.999): {len(strong)} at {at_power:g} SE or more"
    ]
    if len(weak):
        margins.append(f"{len(weak)} by less, which a run on another CPU or world seed may miss: {_named(weak)}")
    if len(floored):
        margins.append(
            f"{len(floored)} with a p-value at its permutation floor, so the margin is only a lower bound under "
            f"{at_power:g} SE (more null draws would measure it): {_named(floored)}"
        )
    if len(null):
        margins.append(f"{len(null)} found by accepting a null, which has no margin: {', '.join(null['effect'])}")
    if below_power is not None and len(below_power):
        margins.append(
            f"not counted, being known to lack power at this world's size: {len(below_power)} "
            + ", ".join(
                f"{r.effect} ({'found' if r.recovered else 'missed'}, "
                f"{margin_text(r.margin_se, r.margin_lower_bound, r.margin_basis)})"
                for r in below_power.itertuples()
            )
        )
    return verdict, "; ".join(margins) + "."


def log_recovery(
    log: logging.Logger,
    planted: pd.DataFrame,
    family: pd.DataFrame,
    below_power: pd.DataFrame | None = None,
    prediction_rates: pd.DataFrame | None = None,
) -> None:
    """Write the verdict and its margins (``recovery_verdict``), every missed plant, each study's flagged
    controls and each model's ``prediction_rates`` row (``control_nulls.prediction_rate_dependence``) to the
    rule's ``log``, one line each."""
    for line in recovery_verdict(planted, family, below_power):
        log.info("%s", line.replace("**", ""))
    for row in planted[~planted["recovered"]].itertuples(index=False):
        log.info("MISSED planted effect: %s (%s; %s)", row.effect, row.criterion, row.observed)
    for row in family.itertuples(index=False):
        log.info(
            "%s controls flagged: %d of %d; families flagged %d of %d (binomial p %.3g)%s",
            row.study,
            row.flagged,
            row.controls,
            row.families_flagged,
            row.families,
            row.binomial_p,
            f": {row.flagged_controls}" if row.flagged else "",
        )
    if prediction_rates is None:
        return
    for row in prediction_rates.itertuples(index=False):
        log.info(
            "%s: parity p < alpha on %d of %d recall-gap control tasks (%.2f if blind to %s; binomial p %.3g)%s",
            row.model,
            row.parity_p_below_alpha,
            row.control_tasks,
            row.expected_if_blind,
            row.attribute,
            row.binomial_p,
            (
                f": its classifiers predict by {row.attribute}; its recall-gap controls on {row.attribute} and "
                "its crossings are reported apart, not counted"
            )
            if row.predicts_by_attribute
            else "",
        )


# what the page's section on the classifiers' prediction rates means, and the rule it feeds
PREDICTION_RATE_TEXT = (
    "The control tasks' labels are balanced by gender, so a classifier blind to gender has a parity gap "
    "(predicted-positive rate, women against men) with p below alpha on an alpha share of them "
    "(expected_if_blind). A model far above that (one-sided binomial p below alpha) predicts by gender where "
    "the labels do not: its recall-gap controls can flag real gaps of its classifiers, which the world did "
    "not plant. Such a control is a null of the labels, not of the classifier its test reads, so that "
    "model's recall-gap controls on gender and its crossings (gender x ethnicity) are reported apart as no null "
    "of their test and not counted; every other model's are counted (a rule fixed before the fresh worlds that "
    "measure the verdict's power)."
)


def recovery_page(
    planted: pd.DataFrame,
    family: pd.DataFrame,
    below_power: pd.DataFrame | None = None,
    not_a_null: pd.DataFrame | None = None,
    prediction_rates: pd.DataFrame | None = None,
) -> PaperPage:
    """planted_recovery.md: the verdict and the margins behind it (``recovery_verdict``), the count
    of planted effects found and controls flagged, every planted effect with its criterion, observed
    value and margin (``planted``: the recovery rows whose truth is "planted"), and the control
    families per study (``family``: ``control_family`` of the recovery), and the rows known to lack
    power (``below_power``: truth ``BELOW_POWER``) and the controls that are no null of their test
    (``not_a_null``: truth ``NOT_A_NULL``), each reported apart, and, per model, whether its classifiers
    predict by gender on the recall-gap controls' tasks (``prediction_rates``:
    ``control_nulls.prediction_rate_dependence``), which makes those controls no null of their classifiers."""
    verdict, margins = recovery_verdict(planted, family, below_power)
    summary = (
        f"**Planted effects found: {int(planted['recovered'].sum())} of {len(planted)}.** "
        f"**Controls flagged: {int(family['flagged'].sum())} of {int(family['controls'].sum())}** "
        f"(families with a flag: {int(family['families_flagged'].sum())} of {int(family['families'].sum())}; "
        f"studies not clean at the 5% level: "
        f"{', '.join(family.loc[~family['clean_at_level'], 'study']) or 'none'}). "
        f"Studies assessed: {', '.join(dict.fromkeys([*planted['study'], *family['study']]))} "
        "(`demo.validation.studies`)."
    )

    def shown(rows: pd.DataFrame) -> pd.DataFrame:
        return rows.assign(
            margin=[
                margin_text(m, b, basis)
                for m, b, basis in zip(rows["margin_se"], rows["margin_lower_bound"], rows["margin_basis"])
            ]
        ).drop(columns=["truth", "family", "margin_se", "margin_lower_bound"])

    below = (
        (Section(shown(below_power), "Known to lack power at this size: reported, not counted"),)
        if below_power is not None and len(below_power)
        else ()
    )
    no_null = (
        (
            Section(
                not_a_null.drop(columns=["truth", "family", "margin_se", "margin_lower_bound", "margin_basis"]),
                "Controls that are no null of their test: reported, not counted (docs/demo-world.md says why)",
            ),
        )
        if not_a_null is not None and len(not_a_null)
        else ()
    )
    by_gender = (
        (
            Section(
                prediction_rates.assign(binomial_p=[f"{v:.3g}" for v in prediction_rates["binomial_p"]]),
                "Do the recall-gap controls' classifiers predict by gender?",
            ),
            PREDICTION_RATE_TEXT,
        )
        if prediction_rates is not None and len(prediction_rates)
        else ()
    )
    explanation = (
        "A family is one test, or the controls one correction covers (hurtful: the recall gaps of one model, "
        "attribute and group over the tasks, BH). Under no effect each family has at most a 5% chance of any "
        "flag; clean_at_level: the number of families flagged is within that (one-sided binomial p >= 0.05). "
        "Every control with its observed value: planted_recovery.csv. Criteria are the truth file's "
        "expectations; the stars (significant) are those of the tables the rows come from. margin: how many "
        "standard errors the plant lies beyond its criterion (margin_basis says how it was computed): for a "
        "p-value criterion the normal quantile of the observed p minus that of the threshold it must pass, on "
        "the p-value's sidedness and signed by the planted direction, under BH the threshold at its rank given "
        "its family (alpha x p / p_BH); for an interval, its near end's distance beyond 0 in the standard errors "
        "its width implies; for several parts the weakest; for a majority over classifier seeds the majority's "
        "margin (the seeds share one test set: that is no replication); '>=' a lower bound (a permutation p at "
        "its floor). A closure is an equivalence test (two one-sided tests at 5% that the gap after lies within "
        "the margin fixed before the data); its margin is (margin - |gap|) / SE - 1.645. A criterion that passes "
        "by not rejecting (a mismatch within its null) has no margin. Rows known before their result to lack "
        "power (a task outside the cohorts a plant is asserted on; an equivalence test under the power it "
        "needs at a true gap of 0; a test whose smallest possible p lies under 3 SE beyond its threshold, as "
        "Table 3's Mann-Whitney over few attributes) are reported apart and not counted."
    )
    return PaperPage(
        "Demo world: planted effects and controls",
        (
            verdict,
            margins,
            summary,
            Section(shown(planted), "Planted effects"),
            *below,
            Section(family, "Controls, per study"),
            *by_gender,
            *no_null,
            explanation,
        ),
    )


def vignette_recovery(
    tables: Mapping[str, pd.DataFrame],
    vignette_truth: Mapping[str, Any],
    alpha: float = 0.05,
    permutations: float = float("nan"),
) -> pd.DataFrame:
    """The demo models' vignette tables as a reader sees them: the planted contrast (race on the
    opioid decision) is found when it is significant after BH with the planted sign; each demographic
    control is clean when it is not significant, and each control swap (same-group names, home town)
    when its p beyond the margin is at least 0.05. Margin of a plant: its two-sided sign-flip p beyond
    the minimum effect against its BH threshold at ``alpha``, signed (floor 1/(``permutations`` + 1))."""
    planted = {(p["decision"], p["contrast"]): p for p in vignette_truth["planted"]}
    controls = {(c["decision"], c["contrast"]) for c in vignette_truth["controls"]}
    rows = []
    for model, r in demo_set_contrasts(tables, vignette_truth):
        key = (r.decision, r.contrast)
        observed = (
            f"d {r.d_probability:+.3f} [{r.d_probability_low:+.3f}, {r.d_probability_high:+.3f}], "
            f"p beyond margin {r.d_probability_p_min:.3g}" + ("" if pd.isna(r.q) else f", q {r.q:.3g}")
        )
        where = f"results/vignettes/{model}/contrasts.md ({r.set}, {r.decision})"
        if key in planted:
            sign = np.sign(planted[key]["corpus_difference"])
            rows.append(
                _row(
                    "vignettes",
                    f"{model}: {r.decision} {r.contrast}",
                    "planted",
                    where,
                    f"significant after BH with sign {'+' if sign > 0 else '-'} "
                    f"(corpus difference {planted[key]['corpus_difference']:+.2f})",
                    observed,
                    bool(r.significant) and np.sign(r.d_probability) == sign,
                    margin=bh_part(
                        r.d_probability_p_min,
                        r.q,
                        alpha,
                        "two",
                        right_direction=bool(np.sign(r.d_probability) == sign),
                        draws=permutations,
                        name="sign-flip p",
                    ),
                )
            )
        elif key in controls:
            rows.append(
                _row("vignettes", f"{model}: {r.decision} {r.contrast}", "control", where,
                     "not significant after BH", observed, not bool(r.significant))
            )  # fmt: skip
        elif r.kind != "demographic":
            rows.append(
                _row("vignettes", f"{model}: {r.decision} {r.contrast}", "control", where,
                     "p beyond margin >= 0.05", observed, r.d_probability_p_min >= 0.05)
            )  # fmt: skip
    return pd.DataFrame(rows, columns=RECOVERY_COLUMNS)
