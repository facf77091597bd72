"""Rule script (mental): for one embedding, every (task, treatment, learner) classifier on the
counterfactual pairs, the gender-permutation null of the mismatch, and Table IV's gender classifiers
(``medbias.studies.mental.classifiers``)."""

import joblib
import numpy as np
import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.studies.mental.classifiers import (
    counterfactual_classifiers,
    gender_from_features,
    gender_permutation_null,
)
from medbias.studies.mental.features import feature_rows

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out = snakemake.params, snakemake.output
features = np.load(snakemake.input.features)
rows = feature_rows(pd.read_parquet(snakemake.input.index))
labels = pd.read_parquet(snakemake.input.labels)
settings = {"svm": p.svm, "rf": p.rf, "mlp": p.mlp}
result = counterfactual_classifiers(
    features,
    rows,
    labels,
    tasks=p.tasks,
    treatments=p.treatments,
    learners=p.learners,
    settings=settings,
    seed=p.seed,
    log=log,
)
predictions = result.predictions
predictions.insert(0, "embedding", p.name)
predictions.to_parquet(out.predictions, index=False)
result.selection.assign(embedding=p.name).to_csv(out.selection, index=False)
joblib.dump(result.fitted, out.models, compress=3)
gender_permutation_null(
    features,
    rows,
    labels,
    tasks=p.null["tasks"] or p.tasks,
    learner=p.null["learner"],
    settings=settings[p.null["learner"]],
    seed=p.seed,
    draws=p.null["draws"],
    log=log,
).assign(embedding=p.name).to_csv(out.null, index=False)
gender_from_features(
    features, rows, labels, task=p.gender_task, embedding=p.name, svm=p.svm, seed=p.seed, log=log
).to_csv(out.gender, index=False)
