"""Benchmark: how often the post-processor's "after" recall-gap interval covers the gap the procedure
achieves, when the interval resamples the test stays only (the fitted thresholds treated as known) and
when it is the two-stage interval of ``hurtful.mitigation.threshold.refits``.

    .venv/bin/python tests/performance/bench_post_processor_coverage.py [--tasks 200] [--replicates 200]
        [--two-stage] [--refits 200]

The simulated tasks, the intervals and the estimand are those of
``medbias.validation.post_processor_coverage`` (the table the demo's error_rates.md shows, at the sizes
given here). ``--two-stage`` adds the interval that refits the post-processor on ``--refits`` resamples
of the validation stays.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow_scripts"))

from medbias.validation.post_processor_coverage import post_processor_coverage  # noqa: E402

SETTINGS = {"constraints": "true_positive_rate_parity", "objective": "balanced_accuracy_score", "grid_size": 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--truth-fits", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--two-stage", action="store_true", help="also the interval that includes the refits")
    parser.add_argument("--refits", type=int, default=200, help="refits of the two-stage interval")
    args = parser.parse_args()
    started = time.perf_counter()
    refits = args.refits if args.two_stage else 0
    table = post_processor_coverage(args.tasks, args.replicates, refits, args.truth_fits, SETTINGS, args.seed)
    for row in table.itertuples(index=False):
        print(
            f"{row.interval}, {row.target}: coverage {row.coverage:.3f} (Monte Carlo SE {row.mc_se:.3f}), "
            f"median width {row.median_width:.3f}"
        )
    print(f"procedure's expected recall gap of women after the post-processor: {table.attrs['expected_gap']:+.4f}")
    print(f"{args.tasks} tasks in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
