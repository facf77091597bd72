"""Rule script (mental): LIME explanations of counterfactual pairs (Figure 3). For the configured
embedding, learner and task, the first test notes (by ROW_ID) whose two copies the original-data
model predicts differently (then, if too few, other positive notes) are explained for each
configured treatment's model: the top words by LIME weight for the F and the M copy, with the
model's probability. Only single words are written."""

import joblib
import pandas as pd

from medbias.studies.mental.explain import lime_weights
from medbias.core.logs import setup_rule_logging
from medbias.studies.mental.phenotyping import load_featurizer
from medbias.studies.mental.figures import plot_lime

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
lime = p.lime
entry = p.entry
models = joblib.load(snakemake.input.models)
predictions = pd.read_parquet(snakemake.input.predictions)
texts = pd.read_parquet(snakemake.input.texts).set_index(["ROW_ID", "version"])["text"]

featurizer = load_featurizer(p.name, entry, p.contextual)


def featurize(batch):
    return featurizer.features(batch)[0]


original = predictions[(predictions["task"] == lime["task"]) & (predictions["treatment"] == "original")
                       & (predictions["learner"] == lime["learner"])].sort_values("ROW_ID")
mismatched = original[original["pred_female"] != original["pred_male"]]
chosen = mismatched.head(lime["pairs"])
reason = {int(r): "mismatched under original" for r in chosen["ROW_ID"]}
if len(chosen) < lime["pairs"]:
    extra = original[(original["label"] == 1) & ~original["ROW_ID"].isin(chosen["ROW_ID"])].head(lime["pairs"] - len(chosen))
    reason.update({int(r): "positive note (too few mismatched pairs)" for r in extra["ROW_ID"]})
    chosen = pd.concat([chosen, extra])
log.info("explaining %d pairs of %s (%d mismatched under the original model)", len(chosen), lime["task"], len(mismatched))

rows = []
for number, pair in enumerate(chosen.itertuples()):
    female_version = "original" if pair.gender == "F" else "swapped"
    male_version = "swapped" if pair.gender == "F" else "original"
    for treatment in lime["treatments"]:
        classifier = models[(lime["task"], treatment, lime["learner"])]
        for copy, version in (("F", female_version), ("M", male_version)):
            words = texts[(pair.ROW_ID, version)].split()
            ranked, probability = lime_weights(
                words, lambda batch: classifier.predict_proba(featurize(batch))[:, 1], lime["samples"],
                p.seed + number)
            predicted = int(classifier.predict(featurize([" ".join(words)]))[0])
            for rank, (word, weight) in enumerate(ranked[: lime["top"]], start=1):
                rows.append({"pair": number + 1, "ROW_ID": int(pair.ROW_ID), "why_chosen": reason[int(pair.ROW_ID)],
                             "label": int(pair.label), "treatment": treatment, "copy": copy,
                             "probability": probability, "predicted": predicted, "rank": rank, "word": word,
                             "weight": weight})
            log.info("pair %d %s %s copy: p = %.3f", number + 1, treatment, copy, probability)
table = pd.DataFrame(rows)
table.to_csv(snakemake.output.csv, index=False)
plot_lime(table, f"{p.label} + {lime['learner'].upper()}, {lime['task'].replace('_', ' ')}", snakemake.output.png,
          snakemake.output.pdf)
