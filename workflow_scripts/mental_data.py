"""Rule script (mental): majority-vote labels of the phenotype annotations, the annotated notes
joined with their text and the patient's gender, the treated texts (original, swapped, neutralized;
cleaned), and each task's balanced train/test split (Table II, Figure 1)."""

import pandas as pd

from medbias.core.logs import note_for_user, setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.mimic import read_annotations
from medbias.io.tables import write_paper_table
from medbias.studies.mental.figures import plot_annotated_counts
from medbias.studies.mental.labels import join_notes, majority_vote
from medbias.studies.mental.split import split_table, task_splits, treated_text_rows

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
out = snakemake.output

annotations = read_annotations(snakemake.input.annotations)
votes = majority_vote(annotations)
log.info(
    "%d annotation rows, %d annotated notes, %d to %d annotators per note",
    len(annotations),
    len(votes),
    votes["annotators"].min(),
    votes["annotators"].max(),
)
notes = pd.read_parquet(snakemake.input.notes, columns=["ROW_ID", "SUBJECT_ID", "TEXT"])
patients = pd.read_parquet(snakemake.input.patients, columns=["SUBJECT_ID", "GENDER"])
joined, report = join_notes(votes, notes, patients)
log.info(
    "joined %d of %d annotated notes; no note: %d, other SUBJECT_ID: %d, no M/F gender: %d",
    report.joined,
    report.annotated_notes,
    len(report.missing_note),
    len(report.subject_mismatch),
    len(report.missing_gender),
)
if left_out := report.left_out():
    note_for_user(f"mental: {left_out} (Table II's notes and {out.summary} list them)")

assignments, counts = task_splits(
    joined,
    p.tasks,
    train_fraction=p.train_fraction,
    per_cell=p.per_cell,
    seed=p.seed,
    log=log,
    equal_cells=p.equal_cells,
)
used = sorted(assignments["ROW_ID"].unique())
texts = treated_text_rows(joined, used)
texts.to_parquet(out.texts, index=False)
assignments.to_parquet(out.labels, index=False)
log.info("wrote %d treated texts of %d notes (intermediate; never under results/)", len(texts), len(used))

table2 = split_table(assignments, p.tasks, p.train_fraction, p.per_cell, report.table_note(), p.equal_cells)
write_paper_table(table2, out.table2_csv, out.table2_md)
figure = pd.DataFrame(counts)
figure.to_csv(out.fig1_csv, index=False)
plot_annotated_counts(figure, out.fig1_png, out.fig1_pdf)
write_json(
    out.summary,
    {
        "join": report.as_dict(),
        "tasks": counts,
        "vote": "majority of the note's annotators; ties go to the positive class",
    },
)
