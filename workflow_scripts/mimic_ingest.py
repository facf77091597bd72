"""Rule script (mimic): read the MIMIC-III tables, stream NOTEEVENTS to Parquet, derive demographics."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.mimic import ingest_notes, read_table
from medbias.studies.hurtful.demographics import admission_demographics, ethnicity_mapping

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
folder = p.mimic_dir
categories = pd.read_csv(snakemake.input.categories, sep="\t", dtype=str, keep_default_na=False)["category"]
tables = {name: read_table(folder, name) for name in ("PATIENTS", "ADMISSIONS", "ICUSTAYS", "DIAGNOSES_ICD")}
for name, frame in tables.items():
    frame.to_parquet(getattr(snakemake.output, name.lower()), index=False)
    log.info("%s: %d rows", name, len(frame))
counts = ingest_notes(folder, snakemake.output.notes, categories, chunk_size=p.chunk_size)
log.info("NOTEEVENTS: %s", counts)
demographics = admission_demographics(tables["PATIENTS"], tables["ADMISSIONS"])
demographics.to_parquet(snakemake.output.demographics, index=False)
ethnicity_mapping(tables["ADMISSIONS"]).to_csv(snakemake.output.ethnicity_mapping, index=False)
over_89 = int((demographics["age"] > 89).sum())
write_json(
    snakemake.output.counts,
    {
        **counts,
        "admissions": len(demographics),
        "admissions_age_over_89": over_89,
        **{f"{k.lower()}_rows": len(v) for k, v in tables.items()},
    },
)
