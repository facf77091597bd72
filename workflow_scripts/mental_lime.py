"""Rule script (mental): LIME explanations of counterfactual pairs (Figure 3,
``medbias.studies.mental.explain``): for the configured embedding, learner and task, the chosen test
notes' F and M copies explained for each configured treatment's model; only single words are written."""

import joblib
import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.studies.mental.explain import explain_pairs, pairs_to_explain
from medbias.studies.mental.features import load_featurizer
from medbias.studies.mental.figures import plot_lime

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, lime = snakemake.params, snakemake.params.lime
texts = pd.read_parquet(snakemake.input.texts).set_index(["ROW_ID", "version"])["text"]
featurizer = load_featurizer(p.name, p.entry, p.contextual)
chosen, reason, mismatched = pairs_to_explain(
    pd.read_parquet(snakemake.input.predictions), task=lime["task"], learner=lime["learner"], n_pairs=lime["pairs"]
)
log.info("explaining %d pairs of %s (%d mismatched under the original model)", len(chosen), lime["task"], mismatched)
table = explain_pairs(
    chosen,
    reason,
    texts,
    joblib.load(snakemake.input.models),
    lambda batch: featurizer.features(batch)[0],
    lime=lime,
    seed=p.seed,
    log=log,
)
table.to_csv(snakemake.output.csv, index=False)
plot_lime(
    table,
    f"Figure 3: LIME's top words, {p.label} + {lime['learner'].upper()}, {lime['task'].replace('_', ' ')}",
    snakemake.output.png,
    snakemake.output.pdf,
)
