"""Benchmark: a cohort's phenotype tasks trained together (one stacked network per grid point) against
one task at a time, at the real input width (four [CLS] layers of 768 and the acuity scores: 3,076).

    .venv/bin/python tests/performance/bench_classify_stacked.py [--tasks 28] [--rows 4000] [--device cuda]

Both ways train the same networks (``medbias.studies.hurtful.classify.train_networks``) for one epoch
with its validation pass: ``--tasks`` tasks sharing one design matrix of ``--rows`` training rows, every
network of the default grid (19), batch 256. Prints seconds per 1,000 task-row-epochs of the whole grid
each way and the speed-up; the scale plan reads the stacked figure (``stacked_grid_cost``) from
``plan_scale.py --measure-gpu``'s output.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))

from medbias.pipeline.cost_probes import grid_seconds, stacked_grid_cost  # noqa: E402, F401


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tasks", type=int, default=28, help="tasks sharing the design matrix (a cohort's phenotypes: 28)"
    )
    parser.add_argument("--rows", type=int, default=4000, help="training rows (windows) of the measurement")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own)")
    args = parser.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    units = args.tasks * args.rows / 1000
    alone = grid_seconds(args.tasks, args.rows, args.device, stacked=False) / units
    together = grid_seconds(args.tasks, args.rows, args.device, stacked=True) / units
    name = torch.cuda.get_device_name(0) if args.device == "cuda" else f"CPU, {torch.get_num_threads()} torch threads"
    print(f"{args.tasks} tasks x {args.rows:,} training rows, the 19-network grid, one epoch, on {name}")
    print(f"one task at a time: {alone:.3f} s per 1,000 task-row-epochs of the grid")
    print(f"stacked:            {together:.3f} s per 1,000 task-row-epochs of the grid ({alone / together:.2f}x)")


if __name__ == "__main__":
    main()
