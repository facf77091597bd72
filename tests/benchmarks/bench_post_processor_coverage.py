"""Benchmark: how often the post-processor's "after" recall-gap interval covers the gap the procedure
achieves, when the interval resamples the test stays only and treats the fitted thresholds as known
(what ``hurtful_mitigation`` reports).

    .venv/bin/python tests/benchmarks/bench_post_processor_coverage.py [--tasks 200] [--replicates 200]
        [--two-stage]

Each simulated task draws validation and test stays of the demo's size (80 women and 93 men, a
quarter positive) from one population: scores Beta(4, 2) for positives and Beta(2, 4) for negatives,
women's positives scored lower (Beta(2.5, 3)), so the classifier's recall gap is planted. fairlearn's
ThresholdOptimizer (equal true-positive rates, balanced accuracy, grid 1,000; the stage's settings) is
fitted on the validation stays and its decision probabilities taken on the test stays; the interval
is the stage's: the 95% percentile bootstrap of the expected recall gap over test resamples within
label. The estimand is the procedure's expected gap: the population recall gap of the fitted rule
(on 40,000 fresh stays), averaged over ``--truth-fits`` validation draws. Coverage is the share of
tasks whose interval holds it, with its Monte Carlo SE; the same intervals' coverage of each task's
own population gap (thresholds as fitted) is printed beside it. ``--two-stage`` measures the interval
that includes the fitting beside it: each replicate refits the post-processor on a resample of the
validation stays (within label) before it is applied to a resample of the test stays.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow_scripts"))

from medbias.metrics.bootstrap import within_label_resamples  # noqa: E402
from medbias.metrics.fairness import bootstrap_gaps, gaps_of, group_counts  # noqa: E402
from medbias.studies.hurtful.mitigation.threshold import fit_threshold_optimizer  # noqa: E402

SETTINGS = {"constraints": "true_positive_rate_parity", "objective": "balanced_accuracy_score", "grid_size": 1000}


def stays(women: int, men: int, rng: np.random.Generator) -> pd.DataFrame:
    gender = np.array(["F"] * women + ["M"] * men)
    label = (rng.random(len(gender)) < 0.25).astype(int)
    positive_score = np.where(gender == "F", rng.beta(2.5, 3, len(gender)), rng.beta(4, 2, len(gender)))
    score = np.where(label == 1, positive_score, rng.beta(2, 4, len(gender)))
    return pd.DataFrame({"probability": score, "label": label, "gender": gender})


def recall_gap_f(decision: np.ndarray, frame: pd.DataFrame, index: np.ndarray | None = None) -> np.ndarray:
    """Women's expected recall minus men's: the observed value, or one per resample of ``index``."""
    group = (frame["gender"].to_numpy() == "M").astype(int)
    label = frame["label"].to_numpy()
    if index is None:
        return gaps_of(group_counts(decision, label, group, 2))["recall"][0]
    return bootstrap_gaps(decision, label, group, 2, index)["recall"][:, 0]


def decisions(optimizer, frame: pd.DataFrame) -> np.ndarray:
    return optimizer._pmf_predict(frame[["probability"]].to_numpy(), sensitive_features=frame["gender"].to_numpy())[
        :, 1
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--truth-fits", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--two-stage", action="store_true", help="also the interval that refits per replicate")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    population = stays(20_000, 20_000, rng)
    truth = np.mean(
        [
            recall_gap_f(
                decisions(fit_threshold_optimizer(stays(80, 93, rng), "gender", SETTINGS), population), population
            )
            for _ in range(args.truth_fits)
        ]
    )
    covered = {"test stays only, the procedure's expected gap": 0, "test stays only, the fitted rule's gap": 0}
    if args.two_stage:
        covered["two-stage (refit per replicate), the procedure's expected gap"] = 0
    widths: dict[str, list[float]] = {name: [] for name in covered}
    for _ in range(args.tasks):
        validation = stays(80, 93, rng)
        optimizer = fit_threshold_optimizer(validation, "gender", SETTINGS)
        test = stays(80, 93, rng)
        index = within_label_resamples(test["label"].to_numpy(), args.replicates, rng)
        intervals = {
            "test stays only": np.nanpercentile(recall_gap_f(decisions(optimizer, test), test, index), [2.5, 97.5])
        }
        if args.two_stage:
            refits = within_label_resamples(validation["label"].to_numpy(), args.replicates, rng)
            gaps = [
                recall_gap_f(
                    decisions(fit_threshold_optimizer(validation.iloc[rows], "gender", SETTINGS), test.iloc[cases]),
                    test.iloc[cases],
                )
                for rows, cases in zip(refits, index)
            ]
            intervals["two-stage (refit per replicate)"] = np.nanpercentile(gaps, [2.5, 97.5])
        targets = {
            "the procedure's expected gap": truth,
            "the fitted rule's gap": recall_gap_f(decisions(optimizer, population), population),
        }
        for name in covered:
            interval, target = name.split(", ")
            low, high = intervals[interval]
            covered[name] += low <= targets[target] <= high
            widths[name].append(high - low)
    for name, count in covered.items():
        share = count / args.tasks
        print(
            f"{name}: coverage {share:.3f} (Monte Carlo SE {np.sqrt(share * (1 - share) / args.tasks):.3f}), "
            f"median width {np.median(widths[name]):.3f}"
        )
    print(f"procedure's expected recall gap of women after the post-processor: {truth:+.4f}")
    print(f"{args.tasks} tasks in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
