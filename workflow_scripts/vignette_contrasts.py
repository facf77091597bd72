"""Rule script (vignettes): one model's contrasts table and figure, and how much probability it puts on
the offered options (``medbias.studies.vignettes.tables``)."""

import numpy as np
import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json, write_json
from medbias.io.tables import write_page
from medbias.io.vignettes import read_vignette_sets
from medbias.studies.vignettes.figures import plot_contrasts
from medbias.studies.vignettes.scoring import question_scores
from medbias.studies.vignettes.tables import (
    EMPTY_CONTRASTS,
    contrast_notes,
    generation_agreement,
    group_means,
    kept_questions,
    model_contrasts,
    model_page,
    option_mass_summary,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out, inputs = snakemake.params, snakemake.output, snakemake.input
summary = read_json(inputs.summary)
sets = read_vignette_sets(p.sets)
options = pd.read_parquet(inputs.scores)
threshold = p.settings["min_option_mass"]
if summary["status"] != "ok":
    table, means, agreement = EMPTY_CONTRASTS, pd.DataFrame(), pd.DataFrame()
    mass = ({}, pd.DataFrame())
else:
    questions = question_scores(options)
    mass = option_mass_summary(questions, threshold)
    if mass[0]["prompts_below"]:
        log.info(
            "%s: %d of %d prompts put less than %s of the probability on the options (mean option mass %.3g, "
            "minimum %.3g); they are left out of the contrasts",
            p.label,
            mass[0]["prompts_below"],
            mass[0]["prompts"],
            threshold,
            mass[0]["mean"],
            mass[0]["min"],
        )
    table = model_contrasts(questions, sets, rng=np.random.default_rng(p.seed), **p.settings)
    kept = kept_questions(questions, threshold)
    means, agreement = group_means(kept, sets), generation_agreement(kept)
table.to_csv(out.csv, index=False)
write_json(out.option_mass, {**mass[0], "by_decision": mass[1].to_dict("records")})
style = summary.get("prompt_style", "not scored")
notes = contrast_notes(sets, p.settings, style if summary["status"] == "ok" else summary["status"])
write_page(model_page(p.label, table, means, agreement, notes, "fig_contrasts.png", mass), out.md)
plot_contrasts(table, f"{p.label}: vignette contrasts (P(compared option), value - reference)", out.png, out.pdf)
log.info("%s: %d contrasts, %d significant", p.label, len(table), int(table["significant"].sum()) if len(table) else 0)
