"""Rule script (hurtful): one classifier per downstream task on one model's frozen window features
(section 4.1): grid over layers x width ratio x dropout with early stopping, eq. 1 merge of window
probabilities per sample with c tuned on validation, the configuration with the best validation AUPRC
kept with its own parameters, threshold at the best validation F1. Writes the test predictions
(sample id, probability, label, prediction, protected attributes) for the fairness analysis.
Replicate r > 0 repeats all of it under a derived seed (medbias.validation.replication.replicate_seed).
"""

import time

import numpy as np
import pandas as pd
import torch

from medbias.studies.hurtful.classify import (
    design_matrix,
    merge_window_probabilities,
    network_grid,
    predict_probability,
    select_classifier,
    task_windows,
)
from medbias.core.logs import setup_rule_logging
from medbias.validation.replication import replicate_seed

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)

features = np.load(snakemake.input.features)
feature_index = pd.read_parquet(snakemake.input.index)
samples = pd.read_parquet(snakemake.input.samples)
windows = pd.read_parquet(snakemake.input.windows)
tasks = pd.read_csv(snakemake.input.tasks)
grid = network_grid(p.grid["layers"], p.grid["width_ratio"], p.grid["dropout"])
training = {"max_epochs": p.max_epochs, "patience": p.patience, "batch_size": p.batch_size, "learning_rate": p.learning_rate}
seed = replicate_seed(p.seed, p.replicate)  # replicate 0 keeps the configured seed
log.info("%s, classifier seed replicate %d (seed %d): %d tasks, %d windows x %d features, grid of %d", p.model,
         p.replicate, seed, len(tasks), *features.shape, len(grid))

predictions, selections, grids, classifiers = [], [], [], {}
started = time.time()
for k, task in enumerate(tasks.itertuples(index=False)):
    rows = task_windows(samples[samples["task"] == task.task], windows[windows["cohort"] == task.cohort], feature_index)
    split = rows["split"].to_numpy()
    is_train, is_val, is_test = split == "train", split == "val", split == "test"
    x = design_matrix(rows, features, is_train)
    y = rows["label"].to_numpy()
    selected = select_classifier(x[is_train], y[is_train], x[is_val], y[is_val], rows.loc[is_val, "ICUSTAY_ID"].to_numpy(),
                                 grid, p.c_grid, seed=seed + k, **training)
    network = selected.trained.network(x.shape[1])
    probability = merge_window_probabilities(predict_probability(network, x[is_test]), rows.loc[is_test, "ICUSTAY_ID"].to_numpy(),
                                             selected.c)
    test = rows[is_test].drop_duplicates("ICUSTAY_ID").set_index("ICUSTAY_ID").loc[probability.index]
    predictions.append(pd.DataFrame({
        "task": task.task, "ICUSTAY_ID": probability.index, "SUBJECT_ID": test["SUBJECT_ID"].to_numpy(),
        "probability": probability.to_numpy(), "label": test["label"].to_numpy(),
        "prediction": (probability.to_numpy() >= selected.threshold).astype(int),
        **{a: test[a].to_numpy() for a in ("gender", "language", "ethnicity", "insurance")},
    }))
    config = selected.trained.config
    selections.append({"task": task.task, "layers": config.layers, "width_ratio": config.ratio, "dropout": config.dropout,
                       "c": selected.c, "validation_auprc": selected.validation_auprc, "threshold": selected.threshold,
                       "validation_f1": selected.validation_f1, "epochs": selected.trained.epochs,
                       "train_windows": int(is_train.sum()), "validation_windows": int(is_val.sum()),
                       "test_samples": len(probability)})
    grids += [{"task": task.task, **record} for record in selected.grid]
    classifiers[task.task] = {"config": config.__dict__, "in_features": x.shape[1], "c": selected.c,
                              "threshold": selected.threshold, "state": selected.trained.state}
    log.info("[%d/%d] %s: layers %d ratio %d dropout %.1f c %g, validation AUPRC %.3f, %d test samples (%.0f s)",
             k + 1, len(tasks), task.task, config.layers, config.ratio, config.dropout, selected.c,
             selected.validation_auprc, len(probability), time.time() - started)

pd.concat(predictions, ignore_index=True).to_parquet(snakemake.output.predictions, index=False)
pd.DataFrame(selections).to_csv(snakemake.output.selection, index=False)
pd.DataFrame(grids).to_csv(snakemake.output.grid, index=False)
torch.save(classifiers, snakemake.output.classifiers)  # the selected configuration's own parameters per task
