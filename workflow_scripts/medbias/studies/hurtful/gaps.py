"""The fairness gaps of the hurtful study's downstream classifiers (Zhang et al. 2020, sections 4.2,
5.2, 5.3, appendices A, C, D), from the test predictions of every task and model, and their performance.

- ``gap_table``: parity, recall and specificity gaps per task, attribute and subgroup with bootstrap
  intervals, two-sided p-values and Benjamini-Hochberg across tasks (``medbias.metrics.fairness``).
  Excluded subgroups are dropped for their own attribute only (the reference code's exclusions
  accumulated across attributes); how many rows each exclusion removed is recorded.
- Intersectional groups (gender x ethnicity, say) as one more attribute, keeping the cells with
  enough rows and positives and listing the cells skipped.
- ``significance_counts``: Table 4 / C3 / 5 / D5-D7 cells, the number of tasks with a significant
  gap and the share of them favouring the subgroup (positive gap); ``significance_counts_over_seeds``
  adds each count's range over the classifier seed replicates.
- ``seed_spread``: each gap's mean, SD and range over classifier seed replicates and in how many of
  them it is significant (what a different training seed alone changes).
- ``task_performance``: AUROC and AUPRC per task with bootstrap intervals (Table A2's values).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from medbias.metrics.bootstrap import percentile_interval, resample_counts, within_label_resamples
from medbias.metrics.fairness import benjamini_hochberg_by, fairness_gaps
from medbias.metrics.margins import bh_margin, majority_margin
from medbias.metrics.performance import ranking_metrics
from medbias.studies.hurtful.demographics import ATTRIBUTE_CLASSES


def _task_rng(seed: int, task_number: int, attribute_number: int) -> np.random.Generator:
    return np.random.default_rng([seed, task_number, attribute_number])


def intersection_column(frame: pd.DataFrame, attributes: Sequence[str]) -> pd.Series:
    """The combined subgroup of each row, e.g. 'F & BLACK' for gender x ethnicity."""
    return frame[list(attributes)].astype(str).agg(" & ".join, axis=1)


def intersectional_cells(
    frame: pd.DataFrame,
    attributes: Sequence[str],
    excluded: Mapping[str, Sequence[str]],
    min_rows: int,
    min_positives: int,
) -> tuple[list[str], pd.DataFrame]:
    """Cells of the attributes' product (in the attributes' class order) with at least ``min_rows``
    test rows and ``min_positives`` positives in this table; returns (kept cells, table of every cell
    with its counts and whether and why it was skipped). Subgroups excluded for either attribute are
    not cells."""
    first, second = attributes
    cells = [
        f"{a} & {b}"
        for a in ATTRIBUTE_CLASSES[first]
        if a not in excluded.get(first, ())
        for b in ATTRIBUTE_CLASSES[second]
        if b not in excluded.get(second, ())
    ]
    combined = intersection_column(frame, attributes)
    rows = []
    for cell in cells:
        member = combined == cell
        n, positives = int(member.sum()), int(frame.loc[member, "label"].sum())
        reason = (
            ""
            if n >= min_rows and positives >= min_positives
            else (f"fewer than {min_rows} rows" if n < min_rows else f"fewer than {min_positives} positives")
        )
        rows.append({"cell": cell, "rows": n, "positives": positives, "kept": not reason, "reason": reason})
    table = pd.DataFrame(rows)
    return table.loc[table["kept"], "cell"].tolist(), table


def gap_table(
    predictions: pd.DataFrame,
    tasks: Sequence[str],
    attributes: Sequence[str],
    excluded: Mapping[str, Sequence[str]],
    n_replicates: int,
    seed: int,
    alpha: float = 0.05,
    intersectional: Mapping | None = None,
    minimum: Mapping[str, int] | None = None,
    log=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Long table of gaps (task, attribute, group, metric, gap, CI, p, significant, p_bh,
    significant_bh, undefined replicates, n, positives, excluded rows) for one model's predictions,
    plus the table of intersectional cells (kept or skipped, per task).

    Each (task, attribute) draws its replicates from its own seeded generator, so adding a task or an
    attribute leaves the others' numbers unchanged. BH runs across tasks for each attribute, group and
    metric; a group absent from a task's test set has no row for that task. ``minimum`` (rows,
    positives, negatives) leaves small groups without a gap (``fairness_gaps``); they keep their row,
    with a note, and take no part in BH.
    """
    level = 1 - alpha
    columns = list(attributes)
    if intersectional:
        columns.append(" x ".join(intersectional["attributes"]))
    results, cells = [], []
    for t, task in enumerate(tasks):
        frame = predictions[predictions["task"] == task]
        for a, attribute in enumerate(columns):
            if " x " in attribute:
                kept, table = intersectional_cells(
                    frame,
                    intersectional["attributes"],
                    excluded,
                    intersectional["min_rows"],
                    intersectional["min_positives"],
                )
                cells.append(table.assign(task=task))
                groups = intersection_column(frame, intersectional["attributes"])
                keep = groups.isin(kept)
                order = kept
            else:
                groups = frame[attribute].astype(str)
                keep = ~groups.isin(excluded.get(attribute, ()))
                order = [g for g in ATTRIBUTE_CLASSES[attribute] if g in set(groups[keep])]
            if len(order) < 2:
                continue
            rows = frame[keep]
            for r in fairness_gaps(
                rows["prediction"].to_numpy(),
                rows["label"].to_numpy(),
                groups[keep].to_numpy(),
                order,
                n_replicates,
                _task_rng(seed, t, a),
                level,
                dict(minimum or {}),
            ):
                results.append(
                    {"task": task, "attribute": attribute, **r.__dict__, "excluded_rows": int((~keep).sum())}
                )
        if log:
            log.info("gaps: task %d/%d %s", t + 1, len(tasks), task)
    table = pd.DataFrame(results)
    # a group without a gap has no p-value, so no rejection
    table["p_bh"], table["significant_bh"] = benjamini_hochberg_by(
        table, "p_value", ["attribute", "group", "metric"], alpha
    )
    cell_table = pd.concat(cells, ignore_index=True) if cells else pd.DataFrame()
    return table, cell_table


def read_model_gaps(models: Sequence[str], paths: Sequence[str]) -> pd.DataFrame:
    """Every model's gaps.parquet (``gap_table``'s output) in one frame with a ``model`` column."""
    return pd.concat(
        [pd.read_parquet(path).assign(model=model) for model, path in zip(models, paths)], ignore_index=True
    )


def significance_counts(gaps: pd.DataFrame, significant: str = "significant") -> pd.DataFrame:
    """Per attribute and group, for each metric: the number of tasks with a significant gap and the
    percentage of those favouring the group (gap > 0), as 'N (P%)' (Table 4's cells)."""
    rows = []
    for (attribute, group), frame in gaps.groupby(["attribute", "group"], sort=False):
        row = {"attribute": attribute, "group": group}
        for metric in ("recall", "parity", "specificity"):
            hits = frame[(frame["metric"] == metric) & frame[significant]]
            favouring = int((hits["gap"] > 0).sum())
            row[f"{metric}_significant"] = len(hits)
            row[f"{metric}_favouring"] = favouring
            row[f"{metric} gap"] = f"{len(hits)} ({round(100 * favouring / len(hits)) if len(hits) else 0}%)"
        rows.append(row)
    return pd.DataFrame(rows)


GAP_KEYS: tuple[str, ...] = ("model", "task", "attribute", "group", "metric")


def seed_spread(replicates: Sequence[pd.DataFrame], alpha: float | None = None) -> pd.DataFrame:
    """One row per gap (``GAP_KEYS``) over classifier seed replicates (``replicates[r]``: every
    model's gaps of replicate r; replicate 0 is the tables' model): replicate 0's gap and BH
    decision, the replicates' mean, sample SD (ddof 1; NaN for one replicate), min and max, and in
    how many replicates the gap is significant (95% interval), significant after BH, and
    significant after BH below 0 or above 0. The test set is the same for every replicate, so the spread is what a
    different classifier seed alone changes; the interval is what a different test set would.

    With ``alpha`` (and ``p_value``, ``p_bh`` in the replicates), the margin in standard errors by which a
    majority of the replicates is significant after BH (``medbias.metrics.margins``: the two-sided p's z
    against its BH threshold, the (R//2 + 1)-th largest over replicates): ``bh_margin_majority`` for
    either sign, ``bh_margin_below_majority`` for a gap below 0. "Significant after BH in more than
    half of the replicates" holds exactly when the margin is >= 0."""
    keys = list(GAP_KEYS)
    stacked = pd.concat(
        [
            frame[keys + ["gap", "significant", "significant_bh"]].assign(replicate=r)
            for r, frame in enumerate(replicates)
        ],
        ignore_index=True,
    )
    with_margins = alpha is not None and all({"p_value", "p_bh"} <= set(frame.columns) for frame in replicates)
    if with_margins:
        margins = pd.concat([frame[["p_value", "p_bh"]] for frame in replicates], ignore_index=True).to_numpy(
            dtype=float
        )
        stacked["bh_margin"] = [bh_margin(p, q, alpha, "two") for p, q in margins]
        stacked["bh_margin_below"] = [
            bh_margin(p, q, alpha, "two", right_direction=bool(g < 0)) for (p, q), g in zip(margins, stacked["gap"])
        ]
    stacked["bh_below"] = stacked["significant_bh"] & (stacked["gap"] < 0)
    stacked["bh_above"] = stacked["significant_bh"] & (stacked["gap"] > 0)
    counts = stacked.groupby(keys, sort=False)
    table = counts.agg(
        replicates=("replicate", "nunique"),
        gap_seed_mean=("gap", "mean"),
        gap_seed_sd=("gap", "std"),
        gap_seed_min=("gap", "min"),
        gap_seed_max=("gap", "max"),
        significant_seeds=("significant", "sum"),
        significant_bh_seeds=("significant_bh", "sum"),
        significant_bh_below_seeds=("bh_below", "sum"),
        significant_bh_above_seeds=("bh_above", "sum"),
    )
    if with_margins:
        table["bh_margin_majority"] = counts["bh_margin"].agg(majority_margin)
        table["bh_margin_below_majority"] = counts["bh_margin_below"].agg(majority_margin)
    if (table["replicates"] != len(replicates)).any():
        missing = table[table["replicates"] != len(replicates)].index[0]
        raise ValueError(f"gap {dict(zip(keys, missing))} is missing from some seed replicates")
    first = replicates[0].set_index(keys)[["gap", "significant_bh"]]
    return table.join(first).reset_index()[keys + ["gap", "significant_bh", *table.columns]]


def significance_counts_over_seeds(
    replicates: Sequence[pd.DataFrame], significant: str = "significant"
) -> pd.DataFrame:
    """``significance_counts`` of replicate 0, each cell followed by the range of its count over
    the classifier seed replicates ('N (P%) [seeds a-b]'); with one replicate, the plain counts."""
    table = significance_counts(replicates[0], significant)
    if len(replicates) == 1:
        return table
    per_seed = [significance_counts(frame, significant).set_index(["attribute", "group"]) for frame in replicates]
    index = pd.MultiIndex.from_frame(table[["attribute", "group"]])
    for metric in ("recall", "parity", "specificity"):
        counts = pd.concat([frame[f"{metric}_significant"] for frame in per_seed], axis=1)
        low, high = counts.min(axis=1), counts.max(axis=1)
        table[f"{metric}_seed_low"] = low.reindex(index).fillna(0).astype(int).to_numpy()
        table[f"{metric}_seed_high"] = high.reindex(index).fillna(0).astype(int).to_numpy()
        table[f"{metric} gap"] = [
            f"{cell} [seeds {lo}-{hi}]"
            for cell, lo, hi in zip(table[f"{metric} gap"], table[f"{metric}_seed_low"], table[f"{metric}_seed_high"])
        ]
    return table


def task_performance(
    predictions: pd.DataFrame, tasks: Sequence[str], n_replicates: int, seed: int, alpha: float = 0.05
) -> pd.DataFrame:
    """AUROC and AUPRC per task with percentile bootstrap intervals (resampled within each label)."""
    rows = []
    for t, task in enumerate(tasks):
        frame = predictions[predictions["task"] == task]
        score, label = frame["probability"].to_numpy(), frame["label"].to_numpy()
        observed = ranking_metrics(score, label)
        index = within_label_resamples(label, n_replicates, np.random.default_rng([seed, t]))
        replicates = ranking_metrics(score, label, resample_counts(index, len(label)))
        row = {"task": task, "test_samples": len(frame), "positives": int(label.sum())}
        for metric in ("auroc", "auprc"):
            low, high = percentile_interval(replicates[metric], 1 - alpha)
            row.update({metric: float(observed[metric][0]), f"{metric}_low": low, f"{metric}_high": high})
        rows.append(row)
    return pd.DataFrame(rows)
