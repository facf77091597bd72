"""What a mitigation changes (``medbias.studies.hurtful.mitigation``): every gap of Table 4 (parity,
recall, specificity; eq. 2) and AUROC, AUPRC and accuracy, before and after, per model, method,
protected attribute and task.

Before and after are measured on the same bootstrap resamples of the test stays (within each label,
``within_label_resamples``), drawn from the generator that ``hurtful_gaps`` uses for the same task and
attribute, so the 'before' intervals are those of gaps.parquet and the change has an interval of its
own. The change of a gap is |gap after| - |gap before| (negative: narrower); its p is the two-sided
normal test of the change against its bootstrap standard error, z = change / SD(replicate changes),
which, unlike a count of replicates beyond 0 (at least 2 / (R + 1)), can pass Benjamini-Hochberg over
the tasks. The same holds for the change in AUROC, AUPRC and accuracy (after - before).

- a gap is *closed* when its 95% interval excludes 0 before and includes 0 after; *opened* the
  other way round;
- ``mitigation_summary``: per model, method, attribute and metric, the gaps closed and opened, those
  narrowed and widened after BH over the tasks, and the median change in AUROC with the tasks whose
  AUROC fell after BH.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from medbias.metrics.bootstrap import percentile_interval, resample_counts, within_label_resamples
from medbias.metrics.fairness import (
    GAP_METRICS,
    benjamini_hochberg_by,
    bootstrap_gaps,
    eligible_rates,
    farthest_groups,
    gaps_of,
    group_counts,
    group_sizes_and_eligibility,
)
from medbias.metrics.performance import ranking_metrics
from medbias.studies.hurtful.demographics import ATTRIBUTE_CLASSES
from medbias.studies.hurtful.gaps import _task_rng

PERFORMANCE_METRICS: tuple[str, ...] = ("auroc", "auprc", "accuracy")


def bootstrap_z_p(observed: float, replicates: np.ndarray) -> float:
    """Two-sided p of 'the change is 0' from its bootstrap standard error: 2 Phi(-|observed| / SD),
    SD over the defined replicates (ddof 1). NaN when the change is undefined or fewer than two
    replicates are defined; 1.0 for a change of 0 that never varies."""
    from scipy.stats import norm

    finite = replicates[np.isfinite(replicates)]
    if not np.isfinite(observed) or len(finite) < 2:
        return float("nan")
    sd = float(np.std(finite, ddof=1))
    if sd == 0:
        return 1.0 if observed == 0 else 0.0
    return float(2 * norm.sf(abs(observed) / sd))


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    return percentile_interval(finite, level) if len(finite) else (float("nan"), float("nan"))


def paired_gap_changes(
    before: np.ndarray,
    after: np.ndarray,
    label: np.ndarray,
    groups: np.ndarray,
    order: Sequence[str],
    index: np.ndarray,
    minimum: Mapping[str, int],
    level: float = 0.95,
) -> list[dict]:
    """Every metric's gap per group (eq. 2) before and after, on the rows of the index matrix
    ``index`` (replicates x rows) for both: observed gaps, their intervals, whether each excludes 0,
    and the change |after| - |before| with its interval and ``bootstrap_z_p``. Groups below
    ``minimum`` (rows, positives, negatives) get no gap, as in ``fairness_gaps``."""
    position = {g: k for k, g in enumerate(order)}
    group_index = np.array([position[g] for g in groups], dtype=int)
    label = np.asarray(label).astype(int)
    counts = group_counts(before, label, group_index, len(order))
    sizes, eligible = group_sizes_and_eligibility(counts, dict(minimum))
    observed = {
        "before": gaps_of(counts, eligible),
        "after": gaps_of(group_counts(after, label, group_index, len(order)), eligible),
    }
    replicates = {
        "before": bootstrap_gaps(before, label, group_index, len(order), index, eligible),
        "after": bootstrap_gaps(after, label, group_index, len(order), index, eligible),
    }
    comparison = {m: farthest_groups(r) for m, r in eligible_rates(counts, eligible).items()}
    rows = []
    for metric in GAP_METRICS:
        for k, group in enumerate(order):
            row = {"group": str(group), "metric": metric}
            for when in ("before", "after"):
                gap = float(observed[when][metric][k])
                low, high = _interval(replicates[when][metric][:, k], level)
                row.update(
                    {
                        f"gap_{when}": gap,
                        f"ci_low_{when}": low,
                        f"ci_high_{when}": high,
                        f"significant_{when}": bool(np.isfinite(gap) and (low > 0 or high < 0)),
                    }
                )
            change = abs(row["gap_after"]) - abs(row["gap_before"])
            change_replicates = np.abs(replicates["after"][metric][:, k]) - np.abs(replicates["before"][metric][:, k])
            low, high = _interval(change_replicates, level)
            row.update(
                {
                    "compared_with_before": str(order[comparison[metric][k]]) if np.isfinite(row["gap_before"]) else "",
                    "change": change,
                    "change_low": low,
                    "change_high": high,
                    "p_change": bootstrap_z_p(change, change_replicates),
                    "closed": row["significant_before"] and not row["significant_after"],
                    "opened": row["significant_after"] and not row["significant_before"],
                    "n": int(sizes["rows"][k]),
                    "positives": int(sizes["positives"][k]),
                }
            )
            rows.append(row)
    return rows


def accuracy_replicates(prediction: np.ndarray, label: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Accuracy in each replicate from its row counts (``resample_counts``: replicates x rows)."""
    correct = (np.asarray(prediction).astype(int) == np.asarray(label).astype(int)).astype(float)
    return weights @ correct / weights.sum(axis=1)


def paired_performance(
    before_score: np.ndarray,
    before_prediction: np.ndarray,
    after_score: np.ndarray,
    after_prediction: np.ndarray,
    label: np.ndarray,
    index: np.ndarray,
    level: float = 0.95,
) -> list[dict]:
    """AUROC and AUPRC of the scores and accuracy of the predictions, before and after, on the same
    resamples, with the change (after - before), its interval and ``bootstrap_z_p``."""
    label = np.asarray(label).astype(int)
    weights = resample_counts(index, len(label)).astype(float)
    values = {}
    for when, score, prediction in (
        ("before", before_score, before_prediction),
        ("after", after_score, after_prediction),
    ):
        ranking = ranking_metrics(np.asarray(score, dtype=float), label)
        ranking_replicates = ranking_metrics(np.asarray(score, dtype=float), label, weights)
        values[when] = {
            "auroc": (float(ranking["auroc"][0]), np.asarray(ranking_replicates["auroc"], dtype=float)),
            "auprc": (float(ranking["auprc"][0]), np.asarray(ranking_replicates["auprc"], dtype=float)),
            "accuracy": (
                float(np.mean(np.asarray(prediction).astype(int) == label)),
                accuracy_replicates(prediction, label, weights),
            ),
        }
    rows = []
    for metric in PERFORMANCE_METRICS:
        row = {"metric": metric}
        for when in ("before", "after"):
            value, replicates = values[when][metric]
            low, high = _interval(replicates, level)
            row.update({when: value, f"{when}_low": low, f"{when}_high": high})
        change_replicates = values["after"][metric][1] - values["before"][metric][1]
        low, high = _interval(change_replicates, level)
        change = row["after"] - row["before"]
        row.update(
            {
                "change": change,
                "change_low": low,
                "change_high": high,
                "p_change": bootstrap_z_p(change, change_replicates),
            }
        )
        rows.append(row)
    return rows


def _aligned(before: pd.DataFrame, after: pd.DataFrame, method: str, task: str, attribute: str) -> pd.DataFrame:
    """One task's test stays with the classifier's prediction and the method's (``score_after``,
    ``prediction_after``); a method that lacks or adds a stay is an error."""
    merged = before.merge(
        after[["ICUSTAY_ID", "score", "prediction"]].rename(
            columns={"score": "score_after", "prediction": "prediction_after"}
        ),
        on="ICUSTAY_ID",
        how="outer",
        validate="one_to_one",
        indicator=True,
    )
    if (merged["_merge"] != "both").any():
        extra, missing = (int((merged["_merge"] == side).sum()) for side in ("right_only", "left_only"))
        raise ValueError(
            f"{method} for {attribute}: the predictions of task {task} cover {extra} stays not in the test set "
            f"and miss {missing} of its stays"
        )
    return merged.drop(columns="_merge")


def mitigation_effects(
    before: pd.DataFrame,
    after: Mapping[str, pd.DataFrame],
    tasks: Sequence[str],
    attributes: Sequence[str],
    excluded: Mapping[str, Sequence[str]],
    minimum: Mapping[str, int],
    n_replicates: int,
    seed: int,
    alpha: float = 0.05,
    log=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every method's (``after``: method -> its predictions, ``PREDICTION_COLUMNS``) changes against
    ``before`` (the classifier's test predictions with the attributes): the gap table
    (``paired_gap_changes`` per method, attribute, task) and the performance table
    (``paired_performance``). ``attributes`` is ``hurtful.downstream.attributes``: an attribute's place in it
    seeds its gap resamples as in ``hurtful_gaps``, and a task's place seeds its performance resamples
    as in ``task_performance``. BH over tasks within (method, attribute, group, metric) for gap
    changes and within (method, attribute, metric) for performance changes."""
    level = 1 - alpha
    gap_rows, performance_rows = [], []
    for method, predictions in after.items():
        for attribute in dict.fromkeys(predictions["attribute"]):
            a = list(attributes).index(attribute)
            mitigated = predictions[predictions["attribute"] == attribute]
            for t, task in enumerate(tasks):
                frame = _aligned(
                    before[before["task"] == task], mitigated[mitigated["task"] == task], method, task, attribute
                )
                keys = {"method": method, "attribute": attribute, "task": task}
                label = frame["label"].to_numpy()
                index = within_label_resamples(label, n_replicates, np.random.default_rng([seed, t]))
                for row in paired_performance(
                    frame["probability"].to_numpy(),
                    frame["prediction"].to_numpy(),
                    frame["score_after"].to_numpy(),
                    frame["prediction_after"].to_numpy(),
                    label,
                    index,
                    level,
                ):
                    performance_rows.append({**keys, **row})
                groups = frame[attribute].astype(str)
                keep = ~groups.isin(excluded.get(attribute, ()))
                order = [g for g in ATTRIBUTE_CLASSES[attribute] if g in set(groups[keep])]
                if len(order) < 2:
                    continue
                rows = frame[keep.to_numpy()]
                gap_index = within_label_resamples(rows["label"].to_numpy(), n_replicates, _task_rng(seed, t, a))
                for row in paired_gap_changes(
                    rows["prediction"].to_numpy(),
                    rows["prediction_after"].to_numpy(),
                    rows["label"].to_numpy(),
                    groups[keep].to_numpy(),
                    order,
                    gap_index,
                    minimum,
                    level,
                ):
                    gap_rows.append({**keys, **row})
            if log:
                log.info("%s for %s: %d tasks compared", method, attribute, len(tasks))
    gaps, performance = pd.DataFrame(gap_rows), pd.DataFrame(performance_rows)
    gaps["p_change_bh"], gaps["significant_change_bh"] = benjamini_hochberg_by(
        gaps, "p_change", ["method", "attribute", "group", "metric"], alpha
    )
    performance["p_change_bh"], performance["significant_change_bh"] = benjamini_hochberg_by(
        performance, "p_change", ["method", "attribute", "metric"], alpha
    )
    return gaps, performance


def mitigation_summary(gaps: pd.DataFrame, performance: pd.DataFrame) -> pd.DataFrame:
    """Per model, method, attribute, group and gap metric (Table 4's rows): defined gaps, gaps
    significant before and after, closed, opened, narrowed and widened after BH over the tasks; and
    per model, method and attribute the median AUROC change over tasks, the tasks whose AUROC fell
    after BH, and the median accuracy change."""
    defined = gaps[np.isfinite(gaps["gap_before"]) & np.isfinite(gaps["gap_after"])]
    keys = ["model", "method", "attribute"]
    counts = (
        defined.assign(
            narrowed=defined["significant_change_bh"] & (defined["change"] < 0),
            widened=defined["significant_change_bh"] & (defined["change"] > 0),
        )
        .groupby([*keys, "group", "metric"], sort=False)
        .agg(
            gaps=("change", "size"),
            significant_before=("significant_before", "sum"),
            significant_after=("significant_after", "sum"),
            closed=("closed", "sum"),
            opened=("opened", "sum"),
            narrowed_bh=("narrowed", "sum"),
            widened_bh=("widened", "sum"),
        )
        .reset_index()
    )
    wide = performance.pivot_table(
        index=[*keys, "task"], columns="metric", values=["change", "significant_change_bh"], aggfunc="first"
    )
    per_task = pd.DataFrame(
        {
            "auroc_change": wide[("change", "auroc")],
            "auroc_fell": wide[("significant_change_bh", "auroc")].astype(bool) & (wide[("change", "auroc")] < 0),
            "accuracy_change": wide[("change", "accuracy")],
        }
    ).reset_index()
    cost = (
        per_task.groupby(keys, sort=False)
        .agg(
            median_auroc_change=("auroc_change", "median"),
            tasks_auroc_fell_bh=("auroc_fell", "sum"),
            median_accuracy_change=("accuracy_change", "median"),
        )
        .reset_index()
    )
    return counts.merge(cost, on=keys, how="left")


# Zhang et al. 2020's task families (the cohorts of tasks.csv)
TASK_FAMILIES = {"mortality": "in-hospital mortality", "pa": "phenotype, all notes", "pf": "phenotype, first note"}


def task_families(tasks: pd.DataFrame) -> dict[str, str]:
    """Task -> its family (``TASK_FAMILIES``; a cohort without a name keeps its own)."""
    return {t.task: TASK_FAMILIES.get(t.cohort, t.cohort) for t in tasks.itertuples(index=False)}


def summary_table(summary: pd.DataFrame, bootstrap: int, alpha: float, encoders: Mapping[str, str]):
    """The summary as a paper table (``medbias.io.tables.PaperTable``) with the notes that say how
    each count is decided."""
    from medbias.io.tables import PaperTable

    notes = [
        "Per model, method, protected attribute, group and gap metric, over the tasks whose gap is defined before "
        "and after (eq. 2: the group against the group farthest from it): significant = its 95% bootstrap "
        "interval excludes 0; closed = significant before, not after; opened = the reverse; narrowed / widened "
        "(BH) = the change |after| - |before| below / above 0 with "
        f"Benjamini-Hochberg over the tasks at {alpha} (normal test on the change's bootstrap SE).",
        f"Before and after are measured on the same {bootstrap:,} resamples of the test stays (within label), "
        "so the 'before' intervals are those of gaps.parquet. AUROC cost: the median over tasks of AUROC after - "
        "before; tasks_auroc_fell_bh counts the tasks whose AUROC fell after BH over the tasks.",
        "Methods: threshold (fairlearn ThresholdOptimizer on the validation scores; needs the attribute at "
        "prediction time), reductions (fairlearn ExponentiatedGradient over a logistic regression on stay-averaged "
        "features: its change includes the change of learner), reweighing (Kamiran-Calders weights in the chosen "
        "network's loss), adversarial (the classifier on the adversarially pretrained encoder"
        + (f": {', '.join(f'{a}: {m}' for a, m in encoders.items())}" if encoders else "")
        + "). Per gap: gap_changes.parquet; per task's AUROC, AUPRC and accuracy: performance_changes.csv.",
    ]
    return PaperTable(
        summary, "Mitigation of the downstream classifiers: gaps closed and opened, and the AUROC cost", tuple(notes)
    )
