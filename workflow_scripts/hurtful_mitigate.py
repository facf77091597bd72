"""Rule script (hurtful): one mitigation method's test predictions for one model's classifiers, for
every configured protected attribute (``medbias.studies.hurtful.mitigation``), and its fit report."""

import numpy as np
import pandas as pd
import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device
from medbias.studies.hurtful.mitigation import MitigationInputs, RetrainingInputs, mitigation, run_mitigation

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
torch.set_num_threads(snakemake.threads)
method = mitigation(p.method)
retrain = None
if method.retrains:
    retrain = RetrainingInputs(
        features=np.load(inp.features, mmap_mode="r"),
        feature_index=pd.read_parquet(inp.index),
        samples=pd.read_parquet(inp.samples),
        windows=pd.read_parquet(inp.windows),
        selection=pd.read_csv(inp.selection),
        training={
            "max_epochs": p.max_epochs,
            "patience": p.patience,
            "batch_size": p.batch_size,
            "learning_rate": p.learning_rate,
            "device": job_device(),
        },
        workers=p.workers,
        threads=snakemake.threads,
    )
inputs = MitigationInputs(
    test=pd.read_parquet(inp.test),
    validation=pd.read_parquet(inp.validation),
    tasks=pd.read_csv(inp.tasks),
    seed=p.seed,
    retrain=retrain,
)
log.info(
    "%s, %s (%s): %d tasks, %d test and %d validation stays, attributes %s",
    p.model,
    p.method,
    method.changes,
    len(inputs.tasks),
    inputs.test["ICUSTAY_ID"].nunique(),
    inputs.validation["ICUSTAY_ID"].nunique(),
    ", ".join(p.attributes),
)
predictions, fit = run_mitigation(p.method, inputs, list(p.attributes), dict(p.settings), log)
predictions.to_parquet(out.predictions, index=False)
fit.to_csv(out.fit, index=False)
log.info(
    "%d predictions written; %d test rows kept the classifier's own prediction",
    len(predictions),
    int(fit["unfitted_test_rows"].sum()),
)
