"""Rule script (vignettes): one model's contrasts table and figure (``medbias.studies.vignettes.tables``)."""

import numpy as np
import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_page
from medbias.io.vignettes import read_vignette_sets
from medbias.studies.vignettes.figures import plot_contrasts
from medbias.studies.vignettes.scoring import question_scores
from medbias.studies.vignettes.tables import (
    EMPTY_CONTRASTS,
    contrast_notes,
    generation_agreement,
    group_means,
    model_contrasts,
    model_page,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out, inputs = snakemake.params, snakemake.output, snakemake.input
summary = read_json(inputs.summary)
sets = read_vignette_sets(p.sets)
options = pd.read_parquet(inputs.scores)
if summary["status"] != "ok":
    table, means, agreement = EMPTY_CONTRASTS, pd.DataFrame(), pd.DataFrame()
else:
    questions = question_scores(options)
    table = model_contrasts(questions, sets, rng=np.random.default_rng(p.seed), **p.settings)
    means, agreement = group_means(questions, sets), generation_agreement(questions)
table.to_csv(out.csv, index=False)
style = summary.get("prompt_style", "not scored")
notes = contrast_notes(sets, p.settings, style if summary["status"] == "ok" else summary["status"])
write_page(model_page(p.label, table, means, agreement, notes, "fig_contrasts.png"), out.md)
plot_contrasts(table, f"{p.label}: vignette contrasts (P(compared option), value - reference)", out.png, out.pdf)
log.info("%s: %d contrasts, %d significant", p.label, len(table), int(table["significant"].sum()) if len(table) else 0)
