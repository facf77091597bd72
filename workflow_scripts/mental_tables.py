"""Rule script (mental): Table V (fairness and macro-F1 of every classifier on the counterfactual
pairs, with bootstrap intervals) and Table IV (gender classifiers on original vs neutralized notes)."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.tables import markdown_table, write_table
from medbias.studies.mental.tables import fairness_table, paper_layout

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
out = snakemake.output

predictions = pd.concat([pd.read_parquet(path) for path in snakemake.input.predictions], ignore_index=True)
log.info(
    "%d test pairs over %d classifiers; %d bootstrap replicates each",
    len(predictions),
    predictions.groupby(["embedding", "treatment", "task", "learner"]).ngroups,
    p.bootstrap,
)
long = fairness_table(predictions, p.bootstrap, p.seed)
long.insert(1, "label", long["embedding"].map(lambda e: p.labels.get(e, e)))
long.to_csv(out.table5_long, index=False)
explanation = (
    "TPRR, FPRR: the smaller group's true/false positive rate over the larger one's (eq. 4; 1 = equal), with the group "
    "that has the higher rate (F or M). Mismatch: share of counterfactual pairs (each test note and its gender-swapped "
    "copy) with different predictions, with the group whose copy was predicted positive in more of them. F1: "
    "macro-F1 on "
    "all copies. Intervals (95%, pairs resampled within label) are in table5_fairness_long.csv, with "
    "mismatch_p: McNemar's "
    "exact test that the mismatched pairs favour one group (discordant pairs split 50/50 under no gender effect)."
)
sections = []
for learner in p.learners:
    wide = paper_layout(long, learner, p.embeddings, p.treatments, p.tasks, p.labels)
    if learner == "svm":
        write_table(
            wide,
            out.table5_csv,
            out.table5_md,
            "Table V: fairness and performance of the SVM classifiers",
            notes=(explanation, *p.settings),
        )
    sections.append(f"## {learner.upper()}\n\n{markdown_table(wide)}")
with open(out.table5_learners_md, "w", encoding="utf-8") as handle:
    handle.write(
        "# Table V for every learner (the paper's robustness check with RF and MLP)\n\n"
        + "\n".join(sections)
        + "\n"
        + explanation
        + "\n"
    )

gender = pd.concat([pd.read_csv(path) for path in snakemake.input.gender], ignore_index=True)
baseline = (
    gender[gender["trained_on"].str.startswith("constant")].iloc[[0]].assign(embedding="Baseline", trained_on="-")
)
table4 = pd.concat(
    [
        baseline,
        gender[~gender["trained_on"].str.startswith("constant")].assign(
            embedding=lambda f: f["embedding"].map(lambda e: p.labels.get(e, e))
        ),
    ],
    ignore_index=True,
)
table4 = table4.rename(columns={"embedding": "method", "uar": "gender_uar"})[
    ["method", "trained_on", "gender_uar", "task", "train_notes", "test_notes"]
]
write_table(
    table4,
    out.table4_csv,
    out.table4_md,
    "Table IV: unweighted average recall of gender classifiers (SVM) trained on original vs neutralized notes",
    notes=(
        "Tested on the original test notes of the task; the baseline predicts the training set's majority "
        "gender for every note (UAR 0.5 by construction, computed).",
        *p.settings,
    ),
)
