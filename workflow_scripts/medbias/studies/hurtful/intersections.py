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

- The worst cell is the tested cell whose gap is largest in standard errors: the largest |z| of the
  two-proportion score statistic of each cell against the rest. The largest raw |gap| would mostly
  pick the smallest cells, whose rates move in the largest steps, and a test of it has little power
  for a gap in a large cell (a cell of 5 positives misses all of them by chance far more often than
  one of 12 misses 7). Over many cells the largest |z| is itself inflated when nothing differs, so
  its p-value is a permutation test of the maximum (Westfall and Young 1993's max-T): the cell labels
  are permuted among the metric's rows and the largest |z| over the tested cells recomputed,
  p = (1 + #{permuted >= observed}) / (1 + permutations); BH then runs over the tasks. ``naive_p`` is
  the score test of the worst cell against the rest as if it had been chosen in advance (what reading
  the most extreme cell amounts to), kept to show the inflation. The worst cell's gap has a
  percentile interval from resamples of the test stays within label (the cell fixed as chosen on the
  data).
- Differential fairness (Foulds et al. 2020): epsilon = max over tested cells i, j and outcomes y of
  log P(y_hat = y | i) - log P(y_hat = y | j), estimated by their smoothed empirical differential
  fairness (eq. 6): P(y_hat = y | i) = (N_{i,y} + alpha) / (N_i + 2 alpha), a Dirichlet prior of
  concentration 2 alpha over the two outcomes (theirs: concentration 1, alpha = 0.5). 0 when every cell
  is predicted alike, larger the more the prediction depends on the cell (e^epsilon bounds the ratio of
  any two cells' probabilities of either prediction). Its interval comes from the same resamples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from medbias.metrics.bootstrap import percentile_interval, within_label_resamples
from medbias.metrics.fairness import GAP_METRICS, benjamini_hochberg_by, pooled_rate_p

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


def crossing_cells(
    frame: pd.DataFrame, crossing: Sequence[str], excluded: Mapping[str, Sequence[str]], edges: Sequence[int]
) -> pd.Series:
    """Each stay's cell of ``crossing`` ('F & BLACK & Medicaid'; the attribute ``age_band`` from
    ``age`` and ``edges``), None where one of its subgroups is excluded for that attribute."""
    parts, keep = [], np.ones(len(frame), dtype=bool)
    for attribute in crossing:
        values = (
            pd.Series(age_bands(frame["age"].to_numpy(), edges), index=frame.index)
            if attribute == "age_band"
            else frame[attribute].astype(str)
        )
        keep &= ~values.isin(excluded.get(attribute, ())).to_numpy()
        parts.append(values)
    cells = parts[0].str.cat(parts[1:], sep=" & ") if len(parts) > 1 else parts[0]
    return cells.where(keep, None)


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


def score_statistics_against_rest(hits: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each cell's gap against the rest (``gaps_against_rest``) in standard errors: the two-proportion
    score statistic (r_cell - r_rest) / sqrt(r (1 - r) (1/n_cell + 1/n_rest)), r the pooled rate of
    every row, as ``pooled_rate_p`` tests it. 0 where the pooled rate is 0 or 1 (every row alike); NaN
    where the cell or the rest has no rows."""
    total_hits, total_rows = hits.sum(axis=-1, keepdims=True), rows.sum(axis=-1, keepdims=True)
    rest_rows = total_rows - rows
    pooled = total_hits / np.where(total_rows > 0, total_rows, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = pooled * (1 - pooled) * (1 / rows + 1 / rest_rows)
        statistics = gaps_against_rest(hits, rows) / np.sqrt(np.where(variance > 0, variance, 1))
    return np.where(variance > 0, statistics, np.where(np.isnan(statistics), np.nan, 0.0))


def smoothed_epsilon(predicted_positive: np.ndarray, rows: np.ndarray, alpha: float) -> np.ndarray:
    """Differential fairness epsilon (Foulds et al. 2020) over the cells of the last axis:
    max over cells i, j and y in {0, 1} of log P(y | i) - log P(y | j), with P(1 | i) =
    (N_{i,1} + alpha) / (N_i + 2 alpha)."""
    p1 = (predicted_positive + alpha) / (rows + 2 * alpha)
    logs = np.stack([np.log(p1), np.log1p(-p1)])  # (2, ..., cells)
    return np.max(logs.max(axis=-1) - logs.min(axis=-1), axis=0)


def worst_cell_test(
    prediction: np.ndarray,
    label: np.ndarray,
    cells: np.ndarray,
    order: Sequence[str],
    tested: np.ndarray,
    metric: str,
    permutations: int,
    rng: np.random.Generator,
) -> dict:
    """The tested cell (``tested``: bool per cell of ``order``) whose gap against the rest for
    ``metric`` is largest in standard errors (``score_statistics_against_rest``), its gap, the
    permutation p of that maximum (Westfall and Young's max-T), and the naive score-test p."""
    wanted, success_value = METRIC_ROWS[metric]
    rows_of_metric = np.ones(len(label), dtype=bool) if wanted is None else np.asarray(label) == wanted
    success = (np.asarray(prediction)[rows_of_metric] == success_value).astype(float)
    position = {c: k for k, c in enumerate(order)}
    index = np.array([position[c] for c in np.asarray(cells)[rows_of_metric]], dtype=np.int64)
    hits, rows = cell_rates(success, index, len(order))
    gaps = np.where(tested, gaps_against_rest(hits, rows), np.nan)
    if not np.isfinite(gaps).any():
        return {"worst_cell": "", "gap": np.nan, "p_permutation": np.nan, "naive_p": np.nan, "cell_gaps": gaps}
    statistics = np.where(tested, score_statistics_against_rest(hits, rows), np.nan)
    worst = int(np.nanargmax(np.abs(statistics)))
    observed = abs(statistics[worst])
    exceed = 0
    for start in range(0, permutations, 500):
        draws = min(500, permutations - start)
        permuted = rng.permuted(np.broadcast_to(index, (draws, len(index))), axis=1)
        permuted_hits, permuted_rows = cell_rates(success, permuted, len(order))
        permuted_statistics = score_statistics_against_rest(permuted_hits, permuted_rows)
        maxima = np.nanmax(np.abs(np.where(tested, permuted_statistics, np.nan)), axis=1)
        exceed += int(np.sum(maxima >= observed - 1e-12))
    naive = pooled_rate_p(hits[worst], rows[worst], hits.sum() - hits[worst], rows.sum() - rows[worst])
    return {
        "worst_cell": str(order[worst]),
        "gap": float(gaps[worst]),
        "p_permutation": (exceed + 1) / (permutations + 1),
        "naive_p": naive,
        "cell_gaps": gaps,
    }


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
    and differential fairness epsilon with its interval (as a row of metric 'epsilon'), and every
    cell's sizes, whether it was tested and its gap per metric. ``settings``: ``age_bands``,
    ``min_cell`` (rows, positives, negatives), ``permutations``, ``smoothing``."""
    cells = crossing_cells(frame, crossing, excluded, settings["age_bands"])
    frame = frame[cells.notna().to_numpy()]
    cells = cells[cells.notna()].to_numpy()
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
        test = worst_cell_test(prediction, label, cells, order, tested, metric, settings["permutations"], rng)
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
        results.append(
            {
                "metric": metric,
                "cells": len(order),
                "cells_tested": int(tested.sum()),
                "worst_cell": test["worst_cell"],
                "value": test["gap"],
                "ci_low": low,
                "ci_high": high,
                "p_value": test["p_permutation"],
                "naive_p": test["naive_p"],
            }
        )
    tested = sizes["rows"] >= minimum["rows"]
    epsilon = low = high = np.nan
    if tested.sum() >= 2:
        hits, rows = cell_rates(prediction.astype(float), cell_index, len(order))
        epsilon = float(smoothed_epsilon(hits[tested], rows[tested], settings["smoothing"]))
        resampled_hits, resampled_rows = cell_rates(prediction.astype(float)[index], cell_index[index], len(order))
        replicates = smoothed_epsilon(resampled_hits[:, tested], resampled_rows[:, tested], settings["smoothing"])
        low, high = percentile_interval(replicates, level)
    results.append(
        {
            "metric": "epsilon",
            "cells": len(order),
            "cells_tested": int(tested.sum()),
            "worst_cell": "",
            "value": epsilon,
            "ci_low": low,
            "ci_high": high,
            "p_value": np.nan,
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
    tasks whose worst cell is significant after BH (and which), the share of tasks whose naive p and
    whose permutation p are below 0.05 (the first inflated by the choice of the maximum), and for
    epsilon its median and largest value."""
    rows = []
    for (model, crossing, metric), part in table.groupby(["model", "crossing", "metric"], sort=False):
        tested = part[part["cells_tested"] > (0 if metric != "epsilon" else 1)]
        row = {
            "model": model,
            "crossing": crossing,
            "metric": metric,
            "tasks_tested": len(tested),
            "median_cells_tested": float(tested["cells_tested"].median()) if len(tested) else np.nan,
        }
        if metric == "epsilon":
            row.update(
                {"median_epsilon": float(tested["value"].median()), "largest_epsilon": float(tested["value"].max())}
            )
        else:
            significant = tested[tested["significant_bh"].astype(bool)]
            row.update(
                {
                    "significant_bh": len(significant),
                    "share_naive_p_below_0.05": float((tested["naive_p"] < 0.05).mean()) if len(tested) else np.nan,
                    "share_permutation_p_below_0.05": float((tested["p_value"] < 0.05).mean())
                    if len(tested)
                    else np.nan,
                    "significant_cells": "; ".join(
                        f"{r.task}: {r.worst_cell} {r.value:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]"
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
        "Worst cell: the tested cell whose gap is the most standard errors from 0 (the two-proportion score "
        "statistic against the rest; the largest raw gap would mostly pick the smallest cells). "
        f"p: {settings['permutations']:,} permutations of the cell labels among the metric's rows, the largest "
        "|statistic| recomputed each time (Westfall and Young's max-T, so the choice of the maximum is paid for); "
        "BH over the tasks per crossing and metric. naive_p: the score test of the worst cell against "
        "the rest as if it had been chosen in advance (inflated; shown to measure the inflation). Interval: "
        "percentile bootstrap of the worst cell's gap, test stays resampled within label.",
        "epsilon: differential fairness (Foulds et al. 2020), the largest log-ratio of two tested cells' "
        "probabilities of either prediction, smoothed as their eq. 6 (Dirichlet alpha "
        f"{settings['smoothing']} per outcome); its interval from the same resamples.",
        *settings_notes,
    )
    return PaperPage(
        "Intersectional groups: worst cells and differential fairness",
        (
            Section(summary, "Per crossing and metric"),
            Section(table, "Per task"),
            *notes,
        ),
    )
