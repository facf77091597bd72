"""Rule script (mimic): the 57 tasks (cohorts, labels, windows, splits, acuity) and Table A1."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.mimic import read_acuity_export, read_benchmark_split
from medbias.io.tables import write_paper_table
from medbias.io.yamlfile import load_yaml
from medbias.studies.hurtful.cohorts import (
    assign_splits,
    build_task_samples,
    check_test_split,
    cohort_statistics,
    cohort_windows,
    join_acuity,
    mortality_labels,
    phenotype_labels,
    select_stays,
    table_a1,
    task_catalogue,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
hcup = load_yaml(inp.hcup)
patients, admissions = pd.read_parquet(inp.patients), pd.read_parquet(inp.admissions)
icustays, diagnoses = pd.read_parquet(inp.icustays), pd.read_parquet(inp.diagnoses_icd)
demographics = pd.read_parquet(inp.demographics)
notes = pd.read_parquet(inp.notes, columns=["ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "CATEGORY"])
n_windows = pd.read_parquet(inp.note_counts).set_index("ROW_ID")["n_windows"]

selection = select_stays(icustays, admissions, demographics)
exports = {name: read_acuity_export(p.acuity_dir, name) for name in ("oasis", "sapsii", "sofa")}
stays, acuity_counts = join_acuity(selection.stays, exports, p.acuity_missing)
windows = cohort_windows(stays, notes, n_windows, p.first_hours, p.max_windows_per_stay)
testset = read_benchmark_split(inp.testset)
splits = assign_splits(
    stays["SUBJECT_ID"], set(testset.loc[testset["flag"] == 1, "SUBJECT_ID"]), p.validation_fraction, p.seed
)
catalogue = task_catalogue(hcup)
samples = build_task_samples(
    stays,
    windows,
    mortality_labels(stays, patients),
    phenotype_labels(stays["HADM_ID"], diagnoses, hcup),
    splits,
    catalogue,
)
check_test_split(samples, catalogue, inp.testset)
samples.to_parquet(out.samples, index=False)
pd.concat([w.assign(cohort=c) for c, w in windows.items()], ignore_index=True).to_parquet(out.windows, index=False)
catalogue.to_csv(out.catalogue, index=False)
write_paper_table(table_a1(samples, catalogue), out.table_a1_csv, out.table_a1_md)
write_paper_table(cohort_statistics(samples), out.stats_csv, out.stats_md)
no_notes = {c: int(len(stays) - w["ICUSTAY_ID"].nunique()) for c, w in windows.items()}
write_json(
    out.counts,
    {
        "stays_selected": len(stays),
        **selection.excluded,
        **acuity_counts,
        **{f"stays_without_{c}_notes": n for c, n in no_notes.items()},
        "tasks": len(catalogue),
    },
)
log.info("%d tasks, %d samples", len(catalogue), len(samples))
