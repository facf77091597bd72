"""Benchmark: the benchmark tests' calibration control at a size that measures an error rate.

    .venv/bin/python tests/performance/bench_benchmark_control.py --world RUN [--copies 100] [--workers 2]
        [--pairs 300] [--out DIR]

Scores ``--copies`` randomly initialised copies of each demo architecture (the tiny BERT's and tiny
GPT-2's configs and tokenizers under ``RUN/results/demo_world/models``, a finished demo run) on the
demo's control items, exactly as ``validation_benchmark_control`` does with
``plm.benchmarks.control_seeds`` set to ``--copies`` (same seeds, pairs, items, rules and permutations;
its first five copies are the demo's rows), in ``--workers`` processes of one thread. Writes
``benchmark_control.csv`` (every decision) and ``error_rates.csv`` (per test, architecture and p kind:
flagged of decisions with a Clopper-Pearson 95% interval) to ``--out`` and prints the rates.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))

import pandas as pd  # noqa: E402

from medbias.metrics.benchmarks.items import read_crows_pairs  # noqa: E402
from medbias.studies.plm.benchmarks import sample_rows  # noqa: E402
from medbias.validation.benchmark_control import random_model_benchmark_rows  # noqa: E402
from medbias.validation.error_rates import error_rates  # noqa: E402

# the demo config's settings of the rule (config/config.yaml and the schema's defaults)
ARCHITECTURES = {"bert": "masked", "gpt2": "causal"}
RULE_SEED = 2094  # seed_for("validation_benchmark_control") under the demo config's seed
SETTINGS = {"pairs": 300, "permutations": 999, "alpha": 0.05, "batch_size": 64, "causal_score": "bias_bench"}
CROWS_RULES = ("nangia", "bias_bench", "lm_eval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=Path, required=True, help="a finished demo run's folder")
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=SETTINGS["pairs"], help="CrowS-Pairs pairs (the demo's 300)")
    parser.add_argument(
        "--crows-pairs", type=Path, default=REPO / "config/resources/crows-pairs/crows_pairs_anonymized.csv"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmark_control"))
    args = parser.parse_args()
    models = args.world / "results/demo_world/models"
    intrasentence_path = args.world / "results/plm/benchmark_items/intrasentence.parquet"
    for path in [*(models / f"tiny-plm-{a}" for a in ARCHITECTURES), intrasentence_path]:
        if not path.exists():
            raise SystemExit(f"medbias: {path} is missing: --world must be a finished demo run's folder")
    pairs = sample_rows(read_crows_pairs(args.crows_pairs), args.pairs, RULE_SEED)
    intrasentence = pd.read_parquet(intrasentence_path)
    frames = []
    for architecture, kind in ARCHITECTURES.items():
        started = time.time()
        frames.append(
            random_model_benchmark_rows(
                str(models / f"tiny-plm-{architecture}"),
                kind,
                architecture,
                [RULE_SEED + k for k in range(args.copies)],
                pairs,
                intrasentence,
                n_permutations=SETTINGS["permutations"],
                seed=RULE_SEED,
                level=SETTINGS["alpha"],
                batch_size=SETTINGS["batch_size"],
                crows_rules=CROWS_RULES,
                causal_score=SETTINGS["causal_score"],
                workers=args.workers,
            )
        )
        seconds = time.time() - started
        print(f"{architecture}: {args.copies} copies in {seconds:.0f} s with {args.workers} workers", flush=True)
    decisions = pd.concat(frames, ignore_index=True)
    args.out.mkdir(parents=True, exist_ok=True)
    decisions.to_csv(args.out / "benchmark_control.csv", index=False)
    rates = error_rates(decisions)
    rates.to_csv(args.out / "error_rates.csv", index=False)
    columns = ["test", "source", "p_kind", "flagged", "decisions", "rate", "ci_low", "ci_high"]
    print(rates[columns].to_string(index=False))


if __name__ == "__main__":
    main()
