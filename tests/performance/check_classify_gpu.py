"""Check on a GPU machine: the classifier grid of several tasks in spawned worker processes on the GPU
(``train_task_classifiers(workers=2)`` with ``device="cuda"``), against one process on the GPU and one
on the CPU; prints the largest differences. Needs CUDA.

    python tests/performance/check_classify_gpu.py
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "workflow_scripts"), str(REPO / "tests/unit"), str(REPO / "tests")]


def main() -> None:
    import torch
    from test_classify import _task_world

    from medbias.studies.hurtful.classify import NetworkConfig, train_task_classifiers

    torch.set_num_threads(1)
    path, index, samples, windows, tasks = _task_world(Path(tempfile.mkdtemp()))
    grid = [NetworkConfig(1, 2, 0.0), NetworkConfig(2, 2, 0.0), NetworkConfig(3, 4, 0.2)]
    log = logging.getLogger("check")
    runs = {}
    for label, device, workers in (("cpu", "cpu", 1), ("cuda", "cuda", 1), ("cuda, 2 workers", "cuda", 2)):
        training = {"max_epochs": 8, "patience": 2, "batch_size": 32, "learning_rate": 0.05, "device": device}
        runs[label] = train_task_classifiers(
            np.load(path, mmap_mode="r"),
            index,
            samples,
            windows,
            tasks,
            grid,
            [0.5, 2.0],
            seed=3,
            training=training,
            log=log,
            workers=workers,
            threads=2,
        )
        print(label, runs[label].selections[["task", "layers", "c", "validation_auprc"]].to_dict("records"), flush=True)
    one, two = runs["cuda"], runs["cuda, 2 workers"]
    print(
        "cuda, 2 workers == cuda, 1 worker:",
        one.predictions.equals(two.predictions) and one.selections.equals(two.selections),
    )
    gap = (runs["cpu"].predictions["probability"] - one.predictions["probability"]).abs().max()
    print(f"largest |probability difference| cpu vs cuda: {gap:.2e}")


if __name__ == "__main__":
    main()
