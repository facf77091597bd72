"""What a mitigation changes (``medbias.studies.hurtful.mitigation``): every gap of Table 4 (parity,
recall, specificity; eq. 2) and the cost at the decision and in ranking, before and after, per model,
method, protected attribute and task.

Before and after are measured on the same bootstrap resamples of the test stays (within each label,
``within_label_resamples``), drawn from the generator that ``hurtful_gaps`` uses for the same task and
attribute, so the 'before' intervals are those of gaps.parquet and the change has an interval of its
own. Gaps and the costs at the decision are computed on each method's decision (its probability of
predicting positive): for a randomised rule (fairlearn's post-processor and reductions) they are the
expected values over the rule's draws, not one draw. The change of a gap is |gap after| - |gap
before| (negative: narrower); its p is the two-sided normal test of the change against its bootstrap
standard error, z = change / SD(replicate changes), which, unlike a count of replicates beyond 0 (at
least 2 / (R + 1)), can pass Benjamini-Hochberg over the tasks. The same holds for every cost (after -
before).

A method that refits on resamples of the validation stays (``threshold`` with ``refits`` R > 0: its
predictions carry ``REFIT_COLUMN``) gets the two-stage bootstrap: the 'after' side of replicate b is the
test resample b scored by refit b mod R (``replicates_over_refits``), so the intervals and SEs of the
gaps and costs after, and of their changes, include the variance of the fitted thresholds; the observed
values stay those of the rule fitted on all validation stays. ``after_refits`` in both tables says how
many refits each row's intervals include (0: the fit treated as known).

- a gap is *equivalent to 0* when two one-sided tests at alpha (its bootstrap SE, normal) put it
  within +-``equivalence_margin`` (``hurtful.mitigation.equivalence_margin``, fixed before the data);
- a gap is *closed* when its change is a narrowing significant after BH over the tasks and the gap
  after is equivalent to 0; *opened* when its change is a widening significant after BH and the gap
  before was equivalent to 0. An interval that includes 0 after is not a closure: a method that
  predicted by coin flip would give every gap such an interval;
- the costs (``DECISION_METRICS``): accuracy, balanced accuracy, true- and false-positive rate and PPV
  of the decisions (PPV as expected true positives over expected positive decisions); the ranking
  (``ranking_metrics``) of the score for a method that changes it (AUROC, AUPRC), and for a
  post-processor, which keeps the score, of the decisions against the classifier's own 0/1 decisions
  (``auroc_of_decisions``, ``auprc_of_decisions``);
- a task is *unchanged* by a method when its scores and decisions equal the classifier's on every test
  stay (the post-processor leaves a task whose groups lack validation positives as it is); the
  summaries count those tasks apart and take medians over the changed ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

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
from medbias.metrics.margins import equivalence_margin_se
from medbias.metrics.performance import ranking_metrics
from medbias.studies.hurtful.demographics import ATTRIBUTE_CLASSES
from medbias.studies.hurtful.gaps import _task_rng
from medbias.studies.hurtful.mitigation import REFIT_COLUMN, mitigation

DECISION_METRICS: tuple[str, ...] = ("accuracy", "balanced_accuracy", "tpr", "fpr", "ppv")
RANKING_METRICS: tuple[str, ...] = ("auroc", "auprc")
# what a post-processor's ranking is measured on: its decisions against the classifier's own
OF_DECISIONS = "_of_decisions"


def _sd(values: np.ndarray) -> float:
    """The SD (ddof 1) of the defined replicates; NaN with fewer than two."""
    finite = values[np.isfinite(values)]
    return float(np.std(finite, ddof=1)) if len(finite) >= 2 else float("nan")


def bootstrap_z_p(observed: float, replicates: np.ndarray) -> float:
    """Two-sided p of 'the change is 0' from its bootstrap standard error: 2 Phi(-|observed| / SD),
    SD over the defined replicates (ddof 1). NaN when the change is undefined or fewer than two
    replicates are defined; 1.0 for a change of 0 that never varies."""
    from scipy.stats import norm

    sd = _sd(replicates)
    if not (np.isfinite(observed) and np.isfinite(sd)):
        return float("nan")
    if sd == 0:
        return 1.0 if observed == 0 else 0.0
    return float(2 * norm.sf(abs(observed) / sd))


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    return percentile_interval(finite, level) if len(finite) else (float("nan"), float("nan"))


def replicates_over_refits(
    compute: Callable[[np.ndarray, np.ndarray], Mapping[str, np.ndarray]], refits: np.ndarray, n_replicates: int
) -> dict[str, np.ndarray]:
    """The second stage of the two-stage bootstrap: replicate b (of ``n_replicates``) computed on the
    decisions of refit b mod R, where ``refits`` is (rows, R) and ``compute(decisions, replicates)``
    returns name -> (len(replicates), ...) values for those replicate numbers. Returns name ->
    (n_replicates, ...) in replicate order."""
    assignment = np.arange(n_replicates) % refits.shape[1]
    values: dict[str, np.ndarray] = {}
    for r in range(min(refits.shape[1], n_replicates)):
        chosen = np.flatnonzero(assignment == r)
        for name, value in compute(refits[:, r], chosen).items():
            value = np.asarray(value, dtype=float)
            values.setdefault(name, np.full((n_replicates, *value.shape[1:]), np.nan))[chosen] = value
    return values


def paired_gap_changes(
    before: np.ndarray,
    after: np.ndarray,
    label: np.ndarray,
    groups: np.ndarray,
    order: Sequence[str],
    index: np.ndarray,
    minimum: Mapping[str, int],
    level: float = 0.95,
    equivalence_margin: float = 0.1,
    after_refits: np.ndarray | None = None,
) -> list[dict]:
    """Every metric's gap per group (eq. 2) before and after, from the decisions ``before`` and
    ``after`` (0/1, or a randomised rule's probability of predicting positive: expected gaps), on the
    rows of the index matrix ``index`` (replicates x rows) for both: observed gaps, their intervals and
    bootstrap SEs, whether each interval excludes 0, whether each gap is equivalent to 0 within
    +-``equivalence_margin`` (two one-sided tests at 1 - ``level``: ``equivalence_margin_se`` >= 0), and
    the change |after| - |before| with its interval and ``bootstrap_z_p``; ``after_refits`` (rows, R): the
    'after' replicates of the two-stage bootstrap (``replicates_over_refits``). Groups below ``minimum``
    (rows, positives, negatives) get no gap, as in ``fairness_gaps``. Whether a gap closed or opened
    needs BH over the tasks: ``closures``."""
    position = {g: k for k, g in enumerate(order)}
    group_index = np.array([position[g] for g in groups], dtype=int)
    label = np.asarray(label).astype(int)
    alpha = 1 - level
    counts = group_counts(before, label, group_index, len(order))
    sizes, eligible = group_sizes_and_eligibility(counts, dict(minimum))
    observed = {
        "before": gaps_of(counts, eligible),
        "after": gaps_of(group_counts(after, label, group_index, len(order)), eligible),
    }
    replicates = {
        "before": bootstrap_gaps(before, label, group_index, len(order), index, eligible),
        "after": bootstrap_gaps(after, label, group_index, len(order), index, eligible)
        if after_refits is None
        else replicates_over_refits(
            lambda refit, chosen: bootstrap_gaps(refit, label, group_index, len(order), index[chosen], eligible),
            after_refits,
            len(index),
        ),
    }
    comparison = {m: farthest_groups(r) for m, r in eligible_rates(counts, eligible).items()}
    rows = []
    for metric in GAP_METRICS:
        for k, group in enumerate(order):
            row = {"group": str(group), "metric": metric}
            for when in ("before", "after"):
                gap = float(observed[when][metric][k])
                low, high = _interval(replicates[when][metric][:, k], level)
                se = _sd(replicates[when][metric][:, k])
                row.update(
                    {
                        f"gap_{when}": gap,
                        f"ci_low_{when}": low,
                        f"ci_high_{when}": high,
                        f"se_{when}": se,
                        f"significant_{when}": bool(np.isfinite(gap) and (low > 0 or high < 0)),
                        f"equivalent_{when}": bool(equivalence_margin_se(gap, se, equivalence_margin, alpha) >= 0),
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
                    "n": int(sizes["rows"][k]),
                    "positives": int(sizes["positives"][k]),
                }
            )
            rows.append(row)
    return rows


def closures(gaps: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Per gap row (with ``significant_change_bh``): closed (a narrowing significant after BH and
    the gap after equivalent to 0) and opened (a widening significant after BH from a gap equivalent
    to 0 before)."""
    significant = gaps["significant_change_bh"].astype(bool)
    closed = significant & (gaps["change"] < 0) & gaps["equivalent_after"].astype(bool)
    opened = significant & (gaps["change"] > 0) & gaps["equivalent_before"].astype(bool)
    return closed, opened


def decision_replicates(decision: np.ndarray, label: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """``DECISION_METRICS`` of the decisions (0/1, or probabilities of a positive decision: expected
    counts) over the rows weighted by ``weights`` (replicates x rows; a row of ones for the data):
    accuracy, balanced accuracy (mean of TPR and 1 - FPR), TPR, FPR and PPV = E[TP] / E[TP + FP]."""
    decision = np.asarray(decision, dtype=float)
    positive = np.asarray(label).astype(bool).astype(float)
    tp, fp = weights @ (decision * positive), weights @ (decision * (1 - positive))
    positives, negatives = weights @ positive, weights @ (1 - positive)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.where(positives > 0, tp / positives, np.nan)
        fpr = np.where(negatives > 0, fp / negatives, np.nan)
        ppv = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
        accuracy = (tp + negatives - fp) / (positives + negatives)
    return {"accuracy": accuracy, "balanced_accuracy": (tpr + 1 - fpr) / 2, "tpr": tpr, "fpr": fpr, "ppv": ppv}


def paired_performance(
    before_score: np.ndarray,
    before_decision: np.ndarray,
    after_score: np.ndarray,
    after_decision: np.ndarray,
    label: np.ndarray,
    index: np.ndarray,
    level: float = 0.95,
    changes_score: bool = True,
    after_refits: np.ndarray | None = None,
) -> list[dict]:
    """The costs before and after on the same resamples, with the change (after - before), its
    interval and ``bootstrap_z_p``: ``DECISION_METRICS`` of the decisions, and AUROC and AUPRC of the
    scores when the method changes the score, else of the decisions (``auroc_of_decisions``: the
    classifier's 0/1 decisions before, the method's decision probabilities after). Each row says what
    it was measured on (``measured_on``). ``after_refits`` (rows, R): the 'after' replicates of the
    two-stage bootstrap (``replicates_over_refits``), for a method that keeps the score."""
    if after_refits is not None and changes_score:
        raise ValueError("refitted decisions are for a method that keeps the classifier's score")
    label = np.asarray(label).astype(int)
    weights = resample_counts(index, len(label)).astype(float)
    ones = np.ones((1, len(label)))
    ranked = {"before": before_score, "after": after_score} if changes_score else None

    def costs(decision: np.ndarray, score: np.ndarray, rows_weights: np.ndarray) -> dict[str, np.ndarray]:
        values = decision_replicates(decision, label, rows_weights)
        ranking = ranking_metrics(np.asarray(score, dtype=float), label, rows_weights)
        return {**values, **{m if changes_score else m + OF_DECISIONS: ranking[m] for m in RANKING_METRICS}}

    values: dict[str, dict[str, tuple[float, np.ndarray]]] = {}
    for when, decision in (("before", before_decision), ("after", after_decision)):
        score = ranked[when] if ranked else decision
        observed = costs(decision, score, ones)
        if when == "after" and after_refits is not None:
            replicated = replicates_over_refits(
                lambda refit, chosen: costs(refit, refit, weights[chosen]), after_refits, len(index)
            )
        else:
            replicated = costs(decision, score, weights)
        values[when] = {m: (float(observed[m][0]), np.asarray(replicated[m], dtype=float)) for m in observed}
    rows = []
    for metric in values["before"]:
        measured_on = (
            "decisions"
            if metric in DECISION_METRICS
            else "decisions (before: the classifier's 0/1)"
            if metric.endswith(OF_DECISIONS)
            else "scores"
        )
        row = {"metric": metric, "measured_on": measured_on}
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
    ``prediction_after``, ``decision_after``, and ``REFIT_COLUMN`` when the method refitted); a method
    that lacks or adds a stay is an error."""
    kept = ["ICUSTAY_ID", "score", "prediction", "decision", *([REFIT_COLUMN] if REFIT_COLUMN in after else [])]
    merged = before.merge(
        after[kept].rename(
            columns={"score": "score_after", "prediction": "prediction_after", "decision": "decision_after"}
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


def refit_matrix(frame: pd.DataFrame) -> np.ndarray | None:
    """(rows, R) decisions of ``_aligned``'s frame under the method's refits; None when it has none."""
    if REFIT_COLUMN not in frame or not len(frame) or not len(frame[REFIT_COLUMN].iloc[0]):
        return None
    return np.vstack(frame[REFIT_COLUMN].to_numpy()).astype(float)


def changes_the_task(frame: pd.DataFrame) -> bool:
    """Whether the method's scores or decisions differ from the classifier's on any test stay
    (``_aligned``'s frame)."""
    same_score = np.array_equal(frame["score_after"].to_numpy(float), frame["probability"].to_numpy(float))
    same_decision = np.array_equal(frame["decision_after"].to_numpy(float), frame["prediction"].to_numpy(float))
    return not (same_score and same_decision)


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
    equivalence_margin: float = 0.1,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every method's (``after``: method -> its predictions, ``PREDICTION_COLUMNS``) changes against
    ``before`` (the classifier's test predictions with the attributes): the gap table
    (``paired_gap_changes`` per method, attribute, task, with ``closures``) and the cost table
    (``paired_performance``), both with ``changed`` (``changes_the_task``). ``attributes`` is
    ``hurtful.downstream.attributes``: an attribute's place in it seeds its gap resamples as in
    ``hurtful_gaps``, and a task's place seeds its cost resamples as in ``task_performance``. BH over
    tasks within (method, attribute, group, metric) for gap changes and within (method, attribute,
    metric) for cost changes."""
    level = 1 - alpha
    gap_rows, performance_rows = [], []
    for method, predictions in after.items():
        changes_score = mitigation(method).changes_score
        for attribute in dict.fromkeys(predictions["attribute"]):
            a = list(attributes).index(attribute)
            mitigated = predictions[predictions["attribute"] == attribute]
            changed_tasks = 0
            for t, task in enumerate(tasks):
                frame = _aligned(
                    before[before["task"] == task], mitigated[mitigated["task"] == task], method, task, attribute
                )
                changed = changes_the_task(frame)
                changed_tasks += changed
                refits = refit_matrix(frame)
                keys = {
                    "method": method,
                    "attribute": attribute,
                    "task": task,
                    "changed": changed,
                    "after_refits": 0 if refits is None else refits.shape[1],
                }
                label = frame["label"].to_numpy()
                index = within_label_resamples(label, n_replicates, np.random.default_rng([seed, t]))
                for row in paired_performance(
                    frame["probability"].to_numpy(),
                    frame["prediction"].to_numpy(),
                    frame["score_after"].to_numpy(),
                    frame["decision_after"].to_numpy(),
                    label,
                    index,
                    level,
                    changes_score,
                    refits,
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
                    rows["decision_after"].to_numpy(),
                    rows["label"].to_numpy(),
                    groups[keep].to_numpy(),
                    order,
                    gap_index,
                    minimum,
                    level,
                    equivalence_margin,
                    None if refits is None else refits[keep.to_numpy()],
                ):
                    gap_rows.append({**keys, **row})
            if log:
                log.info("%s for %s: %d tasks compared, %d changed", method, attribute, len(tasks), changed_tasks)
    gaps, performance = pd.DataFrame(gap_rows), pd.DataFrame(performance_rows)
    gaps["p_change_bh"], gaps["significant_change_bh"] = benjamini_hochberg_by(
        gaps, "p_change", ["method", "attribute", "group", "metric"], alpha
    )
    gaps["closed"], gaps["opened"] = closures(gaps)
    performance["p_change_bh"], performance["significant_change_bh"] = benjamini_hochberg_by(
        performance, "p_change", ["method", "attribute", "metric"], alpha
    )
    return gaps, performance


def unchanged_tasks(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per ``keys``, how many tasks the method left unchanged (``changed`` False), each task counted
    once however many rows it has: ``unchanged_tasks``."""
    return (
        frame.drop_duplicates([*keys, "task"])
        .assign(unchanged=lambda f: ~f["changed"].astype(bool))
        .groupby(list(keys), sort=False)["unchanged"]
        .sum()
        .rename("unchanged_tasks")
        .reset_index()
    )


def mitigation_summary(gaps: pd.DataFrame) -> pd.DataFrame:
    """Per model, method, attribute, group and gap metric (Table 4's rows), over the tasks the method
    changed whose gap is defined before and after: gaps, gaps significant before and after, closed,
    opened, narrowed and widened after BH over the tasks; and the tasks the method left unchanged,
    counted apart."""
    keys = ["model", "method", "attribute"]
    unchanged = unchanged_tasks(gaps, keys)
    defined = gaps[gaps["changed"].astype(bool) & np.isfinite(gaps["gap_before"]) & np.isfinite(gaps["gap_after"])]
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
            narrowed_bh=("narrowed", "sum"),
            widened_bh=("widened", "sum"),
            closed=("closed", "sum"),
            opened=("opened", "sum"),
            after_refits=("after_refits", "max"),
        )
        .reset_index()
    )
    return without_mirrors(counts).merge(unchanged, on=keys, how="right" if counts.empty else "left")


SUMMARY_COUNTS = ("gaps", "significant_before", "significant_after", "narrowed_bh", "widened_bh", "closed", "opened")


def without_mirrors(counts: pd.DataFrame) -> pd.DataFrame:
    """The summary without mirror rows: where an attribute's metric has exactly two groups, each group's
    gap is the other's with the sign flipped and every count is the same, so the row of the attribute's
    first class (``ATTRIBUTE_CLASSES``: M of gender) is left out and the other (F) kept."""
    drop = []
    for _, part in counts.groupby(["model", "method", "attribute", "metric"], sort=False):
        if len(part) != 2 or not (part[list(SUMMARY_COUNTS)].nunique() == 1).all():
            continue
        order = ATTRIBUTE_CLASSES.get(str(part["attribute"].iloc[0]), ())
        ranks = {i: order.index(g) if g in order else len(order) for i, g in part["group"].items()}
        drop.append(min(ranks, key=ranks.get))
    return counts.drop(index=drop).reset_index(drop=True)


def cost_summary(performance: pd.DataFrame) -> pd.DataFrame:
    """Per model, method, attribute and cost metric, over the tasks the method changed: the median
    before, after and change, and the tasks whose value fell and rose after BH over the tasks; the
    tasks it left unchanged counted apart; what the metric was measured on."""
    keys = ["model", "method", "attribute", "metric"]
    performance = performance.assign(
        changed=performance["changed"].astype(bool),
        fell=performance["significant_change_bh"].astype(bool) & (performance["change"] < 0),
        rose=performance["significant_change_bh"].astype(bool) & (performance["change"] > 0),
    )
    changed = performance[performance["changed"]]
    medians = (
        changed.groupby(keys, sort=False)
        .agg(
            measured_on=("measured_on", "first"),
            tasks=("task", "size"),
            median_before=("before", "median"),
            median_after=("after", "median"),
            median_change=("change", "median"),
            fell_bh=("fell", "sum"),
            rose_bh=("rose", "sum"),
            after_refits=("after_refits", "max"),
        )
        .reset_index()
    )
    return unchanged_tasks(performance, keys).merge(medians, on=keys, how="left")[
        [
            *keys,
            "measured_on",
            "tasks",
            "unchanged_tasks",
            "median_before",
            "median_after",
            "median_change",
            "fell_bh",
            "rose_bh",
            "after_refits",
        ]
    ]


# Zhang et al. 2020's task families (the cohorts of tasks.csv)
TASK_FAMILIES = {"mortality": "in-hospital mortality", "pa": "phenotype, all notes", "pf": "phenotype, first note"}


def task_families(tasks: pd.DataFrame) -> dict[str, str]:
    """Task -> its family (``TASK_FAMILIES``; a cohort without a name keeps its own)."""
    return {t.task: TASK_FAMILIES.get(t.cohort, t.cohort) for t in tasks.itertuples(index=False)}


METHOD_NOTE = (
    "Methods: threshold (fairlearn ThresholdOptimizer on the validation scores; needs the attribute at prediction "
    "time; a randomised rule, so gaps and costs are its expected values over its draws), reductions (fairlearn "
    "ExponentiatedGradient over a logistic regression on stay-averaged features: its change includes the change of "
    "learner; randomised too), reweighing (Kamiran-Calders weights in the chosen network's loss), adversarial (the "
    "classifier on the adversarially pretrained encoder"
)

REFIT_NOTE = (
    "after_refits: how many refits of the method on resamples of the validation stays (within group and label) the "
    "intervals, SEs and tests after include (the two-stage bootstrap: test resample b scored by refit b mod R); 0: "
    "the method's fit treated as known (hurtful.mitigation.threshold.refits)."
)


def _method_note(encoders: Mapping[str, str]) -> str:
    return METHOD_NOTE + (f": {', '.join(f'{a}: {m}' for a, m in encoders.items())}" if encoders else "") + ")."


def summary_table(
    summary: pd.DataFrame, bootstrap: int, alpha: float, equivalence_margin: float, encoders: Mapping[str, str]
):
    """The gap summary as a paper table (``medbias.io.tables.PaperTable``) with the notes that say how
    each count is decided."""
    from medbias.io.tables import PaperTable

    notes = [
        "Per model, method, protected attribute, group and gap metric, over the tasks the method changed whose gap "
        "is defined before and after (eq. 2: the group against the group farthest from it); unchanged_tasks: the "
        "tasks whose scores and decisions the method left as the classifier's (not counted in the other columns).",
        f"significant = the 95% bootstrap interval excludes 0. narrowed / widened (BH) = the change |after| - "
        f"|before| below / above 0 with Benjamini-Hochberg over the tasks at {alpha} (normal test on the change's "
        f"bootstrap SE). closed = narrowed (BH) and the gap after within +-{equivalence_margin:g} by two one-sided "
        f"tests at {alpha} (hurtful.mitigation.equivalence_margin, fixed before the data); opened = widened (BH) "
        "from a gap within that margin before. A gap whose interval merely includes 0 after is not closed.",
        "Read: narrowed and closed are what a method is for; widened and opened are harm it did, and "
        "significant_after above significant_before means more significant gaps than the classifier had. With two "
        "groups (gender), each group's gap is the other's with the sign flipped and the counts are the same, so "
        "one row is shown (F, against M).",
        f"Before and after are measured on the same {bootstrap:,} resamples of the test stays (within label), so "
        "the 'before' intervals are those of gaps.parquet. Costs: cost.md; per gap: gap_changes.parquet; per task "
        "and cost: performance_changes.csv.",
        REFIT_NOTE,
        _method_note(encoders),
    ]
    return PaperTable(
        summary, "Mitigation of the downstream classifiers: gaps narrowed, widened, closed and opened", tuple(notes)
    )


def cost_table(cost: pd.DataFrame, bootstrap: int, alpha: float, encoders: Mapping[str, str]):
    """The cost summary (``cost_summary``) as a paper table with the notes that say what each cost
    is measured on."""
    from medbias.io.tables import PaperTable

    notes = [
        "Per model, method, protected attribute and cost, over the tasks the method changed (unchanged_tasks: "
        "left as the classifier's, not in the medians): the median before, after and of the change (after - "
        f"before); fell_bh / rose_bh: tasks whose change is below / above 0 after Benjamini-Hochberg over the tasks "
        f"at {alpha} (normal test on the change's bootstrap SE over {bootstrap:,} resamples within label).",
        "At the decision: accuracy, balanced accuracy, true-positive rate (tpr), false-positive rate (fpr) and "
        "PPV (expected true positives over expected positive decisions); before is the classifier's threshold at "
        "its best validation F1, so a method's change includes the change of objective (the post-processor "
        "maximises balanced accuracy). Ranking: AUROC and AUPRC of the scores for a method that changes them; a "
        "post-processor keeps the classifier's score, so auroc_of_decisions and auprc_of_decisions compare its "
        "decision probabilities with the classifier's own 0/1 decisions (for 0/1 decisions AUROC equals balanced "
        "accuracy).",
        REFIT_NOTE,
        _method_note(encoders),
    ]
    return PaperTable(
        cost, "Mitigation of the downstream classifiers: what it costs at the decision and in ranking", tuple(notes)
    )
