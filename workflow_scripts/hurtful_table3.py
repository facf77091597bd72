"""Rule script (hurtful): Table 3 (``medbias.studies.hurtful.table3``): log-probability bias scores
per category for each model, the Wilcoxon test between paired target groups, the gender ratio per
category in the discharge notes, and the record of the template file's fixes."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.resources import read_attributes, read_templates
from medbias.io.tables import write_page, write_paper_table
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.hurtful.gender_ratio import discharge_summaries, gender_ratio
from medbias.studies.hurtful.table3 import logprob_long, table3, template_fixes_page

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
attributes = read_attributes(inp.attributes)
templates, fixes = read_templates(inp.templates, {c for _, c in attributes})
records = [read_json(words) for words in inp.words]
scores = [
    pd.read_parquet(path) if record.get("status", "ok") == "ok" else None for path, record in zip(inp.scores, records)
]
long, not_applicable = logprob_long(p.models, scores, records, p.target_sets, p.control_category, log)
long.to_csv(out.long, index=False)
notes = pd.read_parquet(inp.notes, columns=["SUBJECT_ID", "CATEGORY", "TEXT"])
genders = pd.read_parquet(inp.patients, columns=["SUBJECT_ID", "GENDER"]).set_index("SUBJECT_ID")["GENDER"]
ratio = gender_ratio(notes, genders, attributes)
log.info("gender ratio from %d discharge notes", len(discharge_summaries(notes)))
write_paper_table(
    with_settings(
        table3(
            long,
            ratio,
            templates,
            p.models,
            not_applicable,
            gender_set=p.gender_set,
            target_sets=p.target_sets,
            alpha=p.alpha,
        ),
        p.settings,
    ),
    out.csv,
    out.md,
)
write_page(template_fixes_page(inp.templates, fixes), out.fixes)
