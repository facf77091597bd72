"""Rule script (hurtful): one classifier per downstream task on one model's frozen window features
(``medbias.studies.hurtful.classify.train_task_classifiers``, section 4.1), and the test predictions
with the protected attributes for the fairness analysis. Replicate r > 0 repeats it under a derived
seed (``medbias.core.seeds.replicate_seed``): the whole grid, or, given replicate 0's
selection (``input.chosen``; replicates_search: once), each task's chosen network and c only."""

import numpy as np
import pandas as pd
import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device
from medbias.core.seeds import replicate_seed
from medbias.studies.hurtful.classify import chosen_grids, network_grid, train_task_classifiers

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
torch.set_num_threads(snakemake.threads)
device = job_device()
features, tasks = np.load(inp.features, mmap_mode="r"), pd.read_csv(inp.tasks)  # workers open the map themselves
grid = network_grid(p.grid["layers"], p.grid["width_ratio"], p.grid["dropout"])
seed = replicate_seed(p.seed, p.replicate)  # replicate 0 keeps the configured seed
chosen = getattr(inp, "chosen", None)  # a path, or an empty list when every replicate searches
task_grids = chosen_grids(pd.read_csv(chosen)) if chosen else None
log.info(
    "%s, classifier seed replicate %d (seed %d): %d tasks, %d windows x %d features, %s, on %s, %d task(s) at once",
    p.model,
    p.replicate,
    seed,
    len(tasks),
    *features.shape,
    f"grid of {len(grid)}" if task_grids is None else "each task's network and c chosen by replicate 0",
    device,
    p.workers,
)
result = train_task_classifiers(
    features,
    pd.read_parquet(inp.index),
    pd.read_parquet(inp.samples),
    pd.read_parquet(inp.windows),
    tasks,
    grid,
    p.c_grid,
    seed=seed,
    log=log,
    training={
        "max_epochs": p.max_epochs,
        "patience": p.patience,
        "batch_size": p.batch_size,
        "learning_rate": p.learning_rate,
        "device": device,
    },
    workers=p.workers,
    threads=snakemake.threads,
    task_grids=task_grids,
    stack_tasks=device == "cuda",
)
result.predictions.to_parquet(out.predictions, index=False)
result.validation.to_parquet(out.validation, index=False)  # what a post-processor is fitted on
result.selections.to_csv(out.selection, index=False)
result.grids.to_csv(out.grid, index=False)
torch.save(result.classifiers, out.classifiers)  # the selected configuration's own parameters per task
