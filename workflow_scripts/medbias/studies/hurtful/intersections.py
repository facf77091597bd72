"""Intersectional groups of the downstream classifiers' test stays (``hurtful.intersections``): the
cells of a crossing of protected attributes (gender x ethnicity x insurance, gender x age band, ...),
per task the worst cell's gap with a test that holds its level, and differential fairness.

For a crossing, each test stay falls in one cell ('F & BLACK & Medicaid'); subgroups excluded for an
attribute (``hurtful.downstream.excluded_subgroups``) take their rows out of the crossing. For a metric,
the rows it is computed over (parity: every stay; recall: the positives; specificity: the negatives)
give each cell a rate (the share predicted positive; for specificity, predicted negative), and the
cell's gap is its rate minus the rate of every other stay of the crossing (the cell against the rest).
A cell with fewer than ``min_cell`` rows of that kind is reported and not tested: its rate moves in
steps too coarse to mean anything.

- The worst cell is the tested cell with the largest interaction beyond the crossed attributes' own
  gaps: for the metric's rows, a logistic regression of the success on the main effects of the
  crossed attributes (``fit_main_effects``; each attribute's own gap, as Table 4 measures it) is the
  null, and each cell's score statistic for adding its indicator to that model
  (``interaction_statistics``) measures how far the cell departs from what its attributes' gaps
  predict. A per-attribute gap (women's recall lower on every cell of women) moves no cell beyond the
  main effects, so it is not reported as intersectional; a cell's own gap does. Over many cells the
  largest |z| is itself inflated when nothing departs, so its p-value is a parametric bootstrap of
  the maximum under the null model (Westfall and Young 1993's max-T): outcomes drawn from the fitted
  main-effects probabilities, each cell's statistic recomputed to first order (the residuals projected
  off the main effects, as a refit would), p = (1 + #{null max >= observed}) / (1 + draws); BH then
  runs over the tasks. ``naive_p`` is the worst cell's score test as if it had been chosen in advance
  (what reading the most extreme cell amounts to), kept to show the inflation. ``value`` is the
  worst cell's gap against every other stay of the crossing, with a percentile interval from
  resamples of the test stays within label (the cell fixed as chosen on the data).
- Differential fairness (Foulds et al. 2020): epsilon = max over cells i, j and outcomes y of
  log P(y_hat = y | i) - log P(y_hat = y | j), estimated by their smoothed empirical differential
  fairness (eq. 6) over every cell with a stay: P(y_hat = y | i) = (N_{i,y} + alpha) / (N_i + 2 alpha),
  a Dirichlet prior of concentration 2 alpha over the two outcomes (theirs: concentration 1, alpha =
  0.5), which is how they keep small cells in. 0 when every cell is predicted alike, larger the more
  the prediction depends on the cell (e^epsilon bounds the ratio of any two cells' probabilities of
  either prediction). Small cells make it large even when nothing depends on the cell, so it comes
  with its null: the cell labels permuted over the stays (the prediction independent of the cell, each
  cell's size kept), the median null epsilon and p = (1 + #{null >= observed}) / (1 + draws), with
  BH over the tasks; and an interval from the same resamples as the gaps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from medbias.metrics.bootstrap import percentile_interval, within_label_resamples
from medbias.metrics.fairness import GAP_METRICS, benjamini_hochberg_by

# the rows each metric's rate is computed over, and which prediction counts as the success
METRIC_ROWS = {"parity": (None, 1), "recall": (1, 1), "specificity": (0, 0)}
# the size each metric's cell floor applies to (``min_cell`` keys)
CELL_SIZE = {"parity": "rows", "recall": "positives", "specificity": "negatives"}


def age_bands(age: np.ndarray, edges: Sequence[int]) -> np.ndarray:
    """Each age's band of ``edges`` (ascending lower bounds): [18, 45, 65, 80] gives '18-44', '45-64',
    '65-79', '80+'; an age below the first edge is '<18'; a missing age is 'unknown age'."""
    age = np.asarray(age, dtype=float)
    labels = [f"{low}-{high - 1}" for low, high in zip(edges[:-1], edges[1:])] + [f"{edges[-1]}+"]
    position = np.searchsorted(np.asarray(edges, dtype=float), age, side="right") - 1
    out = np.where(position < 0, f"<{edges[0]}", np.array(labels, dtype=object)[np.clip(position, 0, None)])
    return np.where(np.isnan(age), "unknown age", out).astype(object)


def crossing_name(crossing: Sequence[str]) -> str:
    """'gender x ethnicity x insurance'."""
    return " x ".join(crossing)


def crossing_parts(
    frame: pd.DataFrame, crossing: Sequence[str], excluded: Mapping[str, Sequence[str]], edges: Sequence[int]
) -> tuple[list[pd.Series], np.ndarray]:
    """Each stay's value of each attribute of ``crossing`` (the attribute ``age_band`` from ``age`` and
    ``edges``), and whether the stay is in the crossing (none of its subgroups excluded)."""
    parts, keep = [], np.ones(len(frame), dtype=bool)
    for attribute in crossing:
        values = (
            pd.Series(age_bands(frame["age"].to_numpy(), edges), index=frame.index)
            if attribute == "age_band"
            else frame[attribute].astype(str)
        )
        keep &= ~values.isin(excluded.get(attribute, ())).to_numpy()
        parts.append(values)
    return parts, keep


def crossing_cells(
    frame: pd.DataFrame, crossing: Sequence[str], excluded: Mapping[str, Sequence[str]], edges: Sequence[int]
) -> pd.Series:
    """Each stay's cell of ``crossing`` ('F & BLACK & Medicaid'; ``crossing_parts``), None where one of
    its subgroups is excluded for that attribute."""
    parts, keep = crossing_parts(frame, crossing, excluded, edges)
    return joined_cells(parts).where(keep, None)


def joined_cells(parts: Sequence[pd.Series]) -> pd.Series:
    """Each row's cell from its values of the crossed attributes: 'F & BLACK & Medicaid'."""
    return parts[0].str.cat(list(parts[1:]), sep=" & ") if len(parts) > 1 else parts[0]


def cell_sizes(cells: np.ndarray, label: np.ndarray, order: Sequence[str]) -> dict[str, np.ndarray]:
    """Rows, positives and negatives of each cell in ``order``."""
    position = {c: k for k, c in enumerate(order)}
    index = np.array([position[c] for c in cells])
    positives = np.bincount(index, weights=np.asarray(label, dtype=float), minlength=len(order))
    rows = np.bincount(index, minlength=len(order)).astype(float)
    return {"rows": rows, "positives": positives, "negatives": rows - positives}


def cell_rates(success: np.ndarray, cell_index: np.ndarray, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """(successes, rows) per cell, over the last axis of ``cell_index`` (rows, or draws x rows with the
    same ``success`` per row position): shape (n_cells,) or (draws, n_cells)."""
    success = np.asarray(success, dtype=float)
    if cell_index.ndim == 1:
        return np.bincount(cell_index, weights=success, minlength=n_cells), np.bincount(cell_index, minlength=n_cells)
    draws = cell_index.shape[0]
    code = (np.arange(draws)[:, None] * n_cells + cell_index).ravel()
    hits = np.bincount(code, weights=np.broadcast_to(success, cell_index.shape).ravel(), minlength=draws * n_cells)
    rows = np.bincount(code, minlength=draws * n_cells)
    return hits.reshape(draws, n_cells), rows.reshape(draws, n_cells).astype(float)


def gaps_against_rest(hits: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each cell's rate minus the rate of every other row (the last axis holds the cells); NaN where
    the cell or the rest has no rows."""
    total_hits, total_rows = hits.sum(axis=-1, keepdims=True), rows.sum(axis=-1, keepdims=True)
    rest_rows = total_rows - rows
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            (rows > 0) & (rest_rows > 0),
            hits / np.where(rows > 0, rows, 1) - (total_hits - hits) / np.where(rest_rows > 0, rest_rows, 1),
            np.nan,
        )


def smoothed_epsilon(predicted_positive: np.ndarray, rows: np.ndarray, alpha: float) -> np.ndarray:
    """Differential fairness epsilon (Foulds et al. 2020) over the cells of the last axis:
    max over cells i, j and y in {0, 1} of log P(y | i) - log P(y | j), with P(1 | i) =
    (N_{i,1} + alpha) / (N_i + 2 alpha)."""
    p1 = (predicted_positive + alpha) / (rows + 2 * alpha)
    logs = np.stack([np.log(p1), np.log1p(-p1)])  # (2, ..., cells)
    return np.max(logs.max(axis=-1) - logs.min(axis=-1), axis=0)


# the ridge on the main-effects model's coefficients: keeps a separating attribute (a group whose
# rate is 0 or 1) at fitted probabilities near 0 or 1 instead of diverging
MAIN_EFFECTS_RIDGE = 1e-3


def main_effects_design(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The main-effects model's design: an intercept and, per crossed attribute (``parts``: each row's
    value), one indicator per value but its first in sorted order."""
    columns = [np.ones(len(parts[0]))]
    for values in parts:
        values = np.asarray(values, dtype=object)
        columns += [(values == level).astype(float) for level in sorted(set(values))[1:]]
    return np.column_stack(columns)


def _information(design: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """X' W X plus the ridge of ``MAIN_EFFECTS_RIDGE`` on every coefficient."""
    return (design * weight[:, None]).T @ design + MAIN_EFFECTS_RIDGE * np.eye(design.shape[1])


def fit_main_effects(design: np.ndarray, success: np.ndarray, iterations: int = 100) -> np.ndarray:
    """Fitted probabilities of the logistic regression of ``success`` on ``design`` (Newton-Raphson),
    every coefficient under a ridge of ``MAIN_EFFECTS_RIDGE``."""
    from scipy.special import expit

    success = np.asarray(success, dtype=float)
    beta = np.zeros(design.shape[1])
    for _ in range(iterations):
        fitted = expit(design @ beta)
        step = np.linalg.solve(
            _information(design, fitted * (1 - fitted)), design.T @ (success - fitted) - MAIN_EFFECTS_RIDGE * beta
        )
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return expit(design @ beta)


def interaction_projection(
    design: np.ndarray, fitted: np.ndarray, cell_index: np.ndarray, n_cells: int
) -> tuple[np.ndarray, np.ndarray]:
    """(M, SD) of each cell's score statistic for adding its indicator to the main-effects model with
    fitted probabilities ``fitted``: M the cell indicators with the main effects projected off
    (M = X_c - X (X'WX + ridge)^-1 X'W X_c, W = diag(p (1 - p))) and SD = sqrt(diag(M' W M)); the SD is
    NaN where the cell's indicator lies in the main effects' span (its variance about 0)."""
    weight = fitted * (1 - fitted)
    indicators = np.zeros((len(fitted), n_cells))
    indicators[np.arange(len(fitted)), cell_index] = 1.0
    projected = indicators - design @ np.linalg.solve(
        _information(design, weight), (design * weight[:, None]).T @ indicators
    )
    variance = (projected**2 * weight[:, None]).sum(axis=0)
    scale = (indicators * weight[:, None]).sum(axis=0)
    estimable = variance > 1e-8 * np.maximum(scale, 1e-300)
    return projected, np.where(estimable, np.sqrt(np.where(estimable, variance, 1.0)), np.nan)


def interaction_statistics(
    design: np.ndarray, fitted: np.ndarray, cell_index: np.ndarray, n_cells: int, residuals: np.ndarray
) -> np.ndarray:
    """Each cell's score statistic U / sqrt(V), U = r' M (``interaction_projection``), for residuals
    (rows, or draws x rows) y - p: the observed ones give the score test, draws of y from p give its
    null to first order. 0 where the cell's indicator lies in the main effects' span."""
    return _statistics(interaction_projection(design, fitted, cell_index, n_cells), residuals)


def _statistics(projection: tuple[np.ndarray, np.ndarray], residuals: np.ndarray) -> np.ndarray:
    projected, sd = projection
    score = np.asarray(residuals, dtype=float) @ projected
    return np.where(np.isfinite(sd), score / np.where(np.isfinite(sd), sd, 1.0), 0.0)


def worst_cell_test(
    prediction: np.ndarray,
    label: np.ndarray,
    cells: np.ndarray,
    parts: Sequence[np.ndarray],
    order: Sequence[str],
    tested: np.ndarray,
    metric: str,
    draws: int,
    rng: np.random.Generator,
) -> dict:
    """The tested cell (``tested``: bool per cell of ``order``) whose interaction beyond the crossed
    attributes' main effects (``parts``: each row's value of each crossed attribute) is largest in
    |z| (``interaction_statistics``), its gap against the rest, the parametric-bootstrap p of that
    maximum under the main-effects model (max-T, ``draws`` draws), the naive p of its z, and every
    cell's gap against the rest and interaction z."""
    from scipy.stats import norm

    wanted, success_value = METRIC_ROWS[metric]
    rows_of_metric = np.ones(len(label), dtype=bool) if wanted is None else np.asarray(label) == wanted
    success = (np.asarray(prediction)[rows_of_metric] == success_value).astype(float)
    position = {c: k for k, c in enumerate(order)}
    index = np.array([position[c] for c in np.asarray(cells)[rows_of_metric]], dtype=np.int64)
    hits, rows = cell_rates(success, index, len(order))
    gaps = np.where(tested, gaps_against_rest(hits, rows), np.nan)
    empty = {"worst_cell": "", "gap": np.nan, "interaction_z": np.nan, "p_permutation": np.nan, "naive_p": np.nan}
    if not np.isfinite(gaps).any():
        return {**empty, "cell_gaps": gaps, "cell_z": np.full(len(order), np.nan)}
    design = main_effects_design([np.asarray(part)[rows_of_metric] for part in parts])
    fitted = fit_main_effects(design, success)
    projection = interaction_projection(design, fitted, index, len(order))
    statistics = np.where(tested, _statistics(projection, success - fitted), np.nan)
    worst = int(np.nanargmax(np.abs(statistics)))
    observed = abs(statistics[worst])
    exceed = 0
    for start in range(0, draws, 500):
        chunk = min(500, draws - start)
        simulated = (rng.random((chunk, len(success))) < fitted).astype(float)
        null = _statistics(projection, simulated - fitted)
        maxima = np.nanmax(np.abs(np.where(tested, null, np.nan)), axis=1)
        exceed += int(np.sum(maxima >= observed - 1e-12))
    return {
        "worst_cell": str(order[worst]),
        "gap": float(gaps[worst]),
        "interaction_z": float(statistics[worst]),
        "p_permutation": (exceed + 1) / (draws + 1),
        "naive_p": float(2 * norm.sf(observed)),
        "cell_gaps": gaps,
        "cell_z": statistics,
    }


def epsilon_null(
    prediction: np.ndarray, cell_index: np.ndarray, n_cells: int, smoothing: float, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """Smoothed epsilon (``smoothed_epsilon`` over every cell with a stay) with the cell labels
    permuted over the stays, ``draws`` times: its null when the prediction does not depend on the cell."""
    present = np.bincount(cell_index, minlength=n_cells) > 0
    out = np.empty(draws)
    for start in range(0, draws, 500):
        chunk = min(500, draws - start)
        permuted = rng.permuted(np.broadcast_to(cell_index, (chunk, len(cell_index))), axis=1)
        hits, rows = cell_rates(prediction.astype(float), permuted, n_cells)
        out[start : start + chunk] = smoothed_epsilon(hits[:, present], rows[:, present], smoothing)
    return out


def intersectional_task(
    frame: pd.DataFrame,
    crossing: Sequence[str],
    settings: Mapping,
    excluded: Mapping[str, Sequence[str]],
    n_replicates: int,
    rng: np.random.Generator,
    level: float = 0.95,
) -> tuple[list[dict], list[dict]]:
    """One task's worst cell per metric (``worst_cell_test`` with the worst cell's bootstrap interval)
    and differential fairness epsilon over every cell with its interval, permutation null median and p
    (as a row of metric 'epsilon'), and every cell's sizes, whether it was tested, its gap and its
    interaction z per metric. ``settings``: ``age_bands``, ``min_cell`` (rows, positives, negatives),
    ``null_draws``, ``smoothing``."""
    parts, keep = crossing_parts(frame, crossing, excluded, settings["age_bands"])
    cells = joined_cells(parts)[keep].to_numpy()
    parts = [part[keep].to_numpy() for part in parts]
    frame = frame[keep]
    order = sorted(set(cells))
    label, prediction = frame["label"].to_numpy().astype(int), frame["prediction"].to_numpy().astype(int)
    sizes = cell_sizes(cells, label, order)
    minimum = settings["min_cell"]
    index = within_label_resamples(label, n_replicates, rng)
    position = {c: k for k, c in enumerate(order)}
    cell_index = np.array([position[c] for c in cells], dtype=np.int64)
    results, cell_rows = [], {c: {"cell": c, **{k: int(v[i]) for k, v in sizes.items()}} for i, c in enumerate(order)}
    for metric in GAP_METRICS:
        tested = sizes[CELL_SIZE[metric]] >= minimum[CELL_SIZE[metric]]
        test = worst_cell_test(prediction, label, cells, parts, order, tested, metric, settings["null_draws"], rng)
        low = high = np.nan
        if test["worst_cell"]:
            wanted, success_value = METRIC_ROWS[metric]
            worst = position[test["worst_cell"]]
            resampled_cells, resampled_label = cell_index[index], label[index]
            success = (prediction[index] == success_value).astype(float)
            use = np.ones_like(resampled_label, dtype=bool) if wanted is None else resampled_label == wanted
            in_cell = resampled_cells == worst
            with np.errstate(invalid="ignore", divide="ignore"):
                cell_rate = (success * (use & in_cell)).sum(axis=1) / (use & in_cell).sum(axis=1)
                rest_rate = (success * (use & ~in_cell)).sum(axis=1) / (use & ~in_cell).sum(axis=1)
            low, high = percentile_interval((cell_rate - rest_rate)[np.isfinite(cell_rate - rest_rate)], level)
        for k, c in enumerate(order):
            cell_rows[c][f"{metric}_tested"] = bool(tested[k])
            cell_rows[c][f"{metric}_gap"] = float(test["cell_gaps"][k])
            cell_rows[c][f"{metric}_interaction_z"] = float(test["cell_z"][k])
        results.append(
            {
                "metric": metric,
                "cells": len(order),
                "cells_tested": int(tested.sum()),
                "worst_cell": test["worst_cell"],
                "value": test["gap"],
                "ci_low": low,
                "ci_high": high,
                "interaction_z": test["interaction_z"],
                "null_median": np.nan,
                "p_value": test["p_permutation"],
                "naive_p": test["naive_p"],
            }
        )
    epsilon = low = high = null_median = p_value = np.nan
    if len(order) >= 2:
        smoothing = settings["smoothing"]
        hits, rows = cell_rates(prediction.astype(float), cell_index, len(order))
        epsilon = float(smoothed_epsilon(hits, rows, smoothing))
        resampled_hits, resampled_rows = cell_rates(prediction.astype(float)[index], cell_index[index], len(order))
        present = resampled_rows > 0
        replicates = np.array(
            [smoothed_epsilon(h[k], r[k], smoothing) for h, r, k in zip(resampled_hits, resampled_rows, present)]
        )
        low, high = percentile_interval(replicates, level)
        null = epsilon_null(prediction, cell_index, len(order), smoothing, settings["null_draws"], rng)
        null_median = float(np.median(null))
        p_value = (int(np.sum(null >= epsilon - 1e-12)) + 1) / (len(null) + 1)
    results.append(
        {
            "metric": "epsilon",
            "cells": len(order),
            "cells_tested": len(order),
            "worst_cell": "",
            "value": epsilon,
            "ci_low": low,
            "ci_high": high,
            "interaction_z": np.nan,
            "null_median": null_median,
            "p_value": p_value,
            "naive_p": np.nan,
        }
    )
    return results, list(cell_rows.values())


def intersectional_table(
    predictions: pd.DataFrame,
    tasks: Sequence[str],
    crossings: Sequence[Sequence[str]],
    settings: Mapping,
    excluded: Mapping[str, Sequence[str]],
    n_replicates: int,
    seed: int,
    alpha: float = 0.05,
    log=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every task's and crossing's worst cells and epsilon (``intersectional_task``), with BH over the
    tasks per crossing and metric on the permutation p, and the long table of every cell. Each (task,
    crossing) draws from its own generator."""
    results, cells = [], []
    for t, task in enumerate(tasks):
        frame = predictions[predictions["task"] == task]
        for k, crossing in enumerate(crossings):
            rng = np.random.default_rng([seed, t, k])
            rows, cell_rows = intersectional_task(frame, crossing, settings, excluded, n_replicates, rng, 1 - alpha)
            keys = {"task": task, "crossing": crossing_name(crossing)}
            results += [{**keys, **row} for row in rows]
            cells += [{**keys, **row} for row in cell_rows]
        if log:
            log.info("intersections: task %d/%d %s", t + 1, len(tasks), task)
    table = pd.DataFrame(results)
    table["p_bh"], table["significant_bh"] = benjamini_hochberg_by(table, "p_value", ["crossing", "metric"], alpha)
    return table, pd.DataFrame(cells)


def crossing_slug(crossing: Sequence[str]) -> str:
    """The file-name form of a crossing: 'gender_x_ethnicity_x_insurance'."""
    return "_x_".join(crossing)


def intersections_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per model, crossing and metric: tasks with a tested cell, the median number of cells tested,
    tasks whose worst cell (or epsilon) is significant after BH (and which), the share of tasks whose
    naive p and whose null-model p are below 0.05 (the first inflated by the choice of the maximum),
    and for epsilon its median, its null's median and its largest value."""
    rows = []
    for (model, crossing, metric), part in table.groupby(["model", "crossing", "metric"], sort=False):
        tested = part[part["cells_tested"] > (0 if metric != "epsilon" else 1)]
        significant = tested[tested["significant_bh"].astype(bool)]
        row = {
            "model": model,
            "crossing": crossing,
            "metric": metric,
            "tasks_tested": len(tested),
            # a count: printed as one (a median of two middle counts ends in .5 at most)
            "median_cells_tested": f"{tested['cells_tested'].median():g}" if len(tested) else "",
            "significant_bh": len(significant),
        }
        if metric == "epsilon":
            row.update(
                {
                    "median_epsilon": float(tested["value"].median()),
                    "median_null_epsilon": float(tested["null_median"].median()),
                    "largest_epsilon": float(tested["value"].max()),
                    "share_p_below_0.05": float((tested["p_value"] < 0.05).mean()) if len(tested) else np.nan,
                    "significant_cells": "; ".join(
                        f"{r.task}: {r.value:.3f} (null median {r.null_median:.3f})"
                        for r in significant.itertuples(index=False)
                    ),
                }
            )
        else:
            row.update(
                {
                    "share_naive_p_below_0.05": float((tested["naive_p"] < 0.05).mean()) if len(tested) else np.nan,
                    "share_p_below_0.05": float((tested["p_value"] < 0.05).mean()) if len(tested) else np.nan,
                    "significant_cells": "; ".join(
                        f"{r.task}: {r.worst_cell} {r.value:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}], "
                        f"interaction z {r.interaction_z:+.2f}"
                        for r in significant.itertuples(index=False)
                    ),
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def intersections_page(summary: pd.DataFrame, table: pd.DataFrame, settings: Mapping, settings_notes=()):
    """worst_cells.md: the summary per crossing and metric, then every task's worst cell per metric
    and epsilon, with how each is decided."""
    from medbias.io.tables import PaperPage, Section

    minimum = settings["min_cell"]
    notes = (
        "A cell is one combination of the crossed attributes; its gap is its rate minus that of every other stay "
        "of the crossing (parity: share predicted positive; recall: among positives; specificity: share predicted "
        f"negative among negatives). Cells with fewer than {minimum['rows']} rows, {minimum['positives']} positives "
        f"or {minimum['negatives']} negatives (for the metric) are listed in cells.csv and not tested.",
        "Worst cell: the tested cell that departs most from what the crossed attributes' own gaps predict: the "
        "largest |z| of the score test for adding the cell's indicator to a logistic regression of the metric's "
        "success on the attributes' main effects (interaction_z). A per-attribute gap (every cell of one gender "
        "lower) is in the main effects, so it makes no cell the worst. "
        f"p: {settings['null_draws']:,} outcome sets drawn from the fitted main-effects model, the largest |z| "
        "recomputed each time (Westfall and Young's max-T, so the choice of the maximum is paid for); BH over the "
        "tasks per crossing and metric. naive_p: the worst cell's score test as if it had been chosen in advance "
        "(inflated; shown to measure the inflation). value: the worst cell's gap against every other stay of the "
        "crossing; interval: percentile bootstrap of that gap, test stays resampled within label.",
        "epsilon: differential fairness (Foulds et al. 2020), the largest log-ratio of two cells' probabilities of "
        "either prediction over every cell with a stay, smoothed as their eq. 6 (Dirichlet alpha "
        f"{settings['smoothing']} per outcome, which keeps small cells in); its interval from the same resamples. "
        "Small cells make epsilon large even when nothing depends on the cell: null_median is its median with "
        f"the cell labels permuted over the stays ({settings['null_draws']:,} permutations), and p the share of "
        "those at least as large, BH over the tasks.",
    )
    # the reading notes right under the summary, before the long per-task table; the settings at the end
    return PaperPage(
        "Intersectional groups: worst cells and differential fairness",
        (
            Section(summary, "Per crossing and metric"),
            *notes,
            Section(table, "Per task"),
            *settings_notes,
        ),
    )
