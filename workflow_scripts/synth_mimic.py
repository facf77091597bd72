"""Rule script: synthetic MIMIC-III tables, acuity exports, annotations and test split (demo world)."""

from pathlib import Path

import yaml

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.synth.annotations import generate_annotations
from medbias.synth.mimic import generate_cohort, phenotype_of_code

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
hcup = yaml.safe_load(Path(snakemake.input.hcup).read_text())
log.info("generating %d patients (seed %d)", p.patients, p.seed)
cohort = generate_cohort(p.patients, hcup, p.seed)
for path in snakemake.output.tables:
    table = Path(path).name.split(".")[0]
    cohort.tables[table].to_csv(path, index=False, compression={"method": "gzip", "mtime": 0})
    log.info("wrote %s: %d rows", path, len(cohort.tables[table]))
for path in snakemake.output.acuity:
    name = Path(path).name.split(".")[0]
    cohort.acuity[name].to_csv(path, index=False)
cohort.testset.to_csv(snakemake.output.testset, index=False, header=False)

code_to_phenotype = phenotype_of_code(hcup)
dx = cohort.tables["DIAGNOSES_ICD"]
diagnoses_by_hadm: dict[int, set[str]] = {}
for hadm, code in zip(dx["HADM_ID"], dx["ICD9_CODE"]):
    if code in code_to_phenotype:
        diagnoses_by_hadm.setdefault(int(hadm), set()).add(code_to_phenotype[code])
annotations, annotation_truth = generate_annotations(
    cohort.tables["NOTEEVENTS"],
    diagnoses_by_hadm,
    cohort.note_mentions,
    p.annotated_notes,
    list(p.annotators_per_note),
    p.seed + 1,
    gender_by_subject=dict(
        zip(cohort.tables["PATIENTS"]["SUBJECT_ID"].astype(int), cohort.tables["PATIENTS"]["GENDER"])
    ),
)
annotations.to_csv(snakemake.output.annotations, index=False)
log.info("wrote %d annotation rows for %d notes", len(annotations), annotation_truth["annotated_notes"])
write_json(snakemake.output.truth, {"mimic": cohort.truth, "phenotype_annotations": annotation_truth})
