"""Rule script (hurtful): the paper's downstream tables and figures from every model's gaps and
performance (medbias.studies.hurtful.gap_tables): Tables 4, C3, 5 and D5-D7, A2, the
intersectional counts, Figures 4 and 5 (gaps of the tasks with a significant recall gap) and A1."""

from pathlib import Path

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.tables import write_paper_table
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.hurtful.figures import plot_auprc_debiased_vs_baseline, plot_gaps_with_significant_recall
from medbias.studies.hurtful.gap_tables import (
    cells_note,
    count_tables,
    intersectional_table,
    replicate_paths,
    table_a2,
)
from medbias.studies.hurtful.gaps import seed_spread

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
declared = {Path(path).name: path for path in out}  # a table the rule does not declare is a KeyError

gaps = pd.concat([pd.read_parquet(f) for f in inp.gaps], ignore_index=True)
replicates = [
    gaps,
    *[
        pd.concat([pd.read_parquet(f) for f in paths], ignore_index=True)
        for paths in replicate_paths(inp.replicate_gaps, p.replicates)
    ],
]
spread = seed_spread(replicates, p.alpha)
spread.to_csv(out.gap_seeds, index=False)
unstable = spread["significant_bh"] & (spread["significant_bh_seeds"] <= p.replicates / 2)
log.info(
    "%d classifier seed replicates per model; of the %d gaps significant after BH in replicate 0, %d are so in "
    "at most half of the replicates",
    p.replicates,
    int(spread["significant_bh"].sum()),
    int(unstable.sum()),
)
performance = pd.concat([pd.read_csv(f) for f in inp.performance], ignore_index=True)
tasks = pd.read_csv(inp.tasks)
shorthand = dict(zip(tasks["task"], tasks["shorthand"]))
note = cells_note(p.excluded, p.minimum, p.replicates)

tables = count_tables(
    replicates, attributes=list(p.attributes), debiased=p.debiased_tables, n_tasks=len(tasks), alpha=p.alpha, note=note
)
tables["tableA2_performance"] = table_a2(performance, shorthand, p.bootstrap)
cells = pd.read_csv(inp.cells[p.models.index("baseline")])
tables["intersectional_gaps"], skipped = intersectional_table(
    replicates, list(gaps["model"].unique()), p.intersectional, cells, note
)
for stem, table in tables.items():
    write_paper_table(with_settings(table, p.settings), declared[f"{stem}.csv"], declared[f"{stem}.md"])
performance.to_csv(out.tableA2_long, index=False)
skipped.to_csv(out.intersectional_skipped, index=False)

if p.figure_a1_model:
    plot_auprc_debiased_vs_baseline(performance, p.figure_a1_model, *out.figA1)
for name, figure in p.figures.items():
    png, pdf = (declared[f"{name}_gaps_{figure['attribute']}.{ext}"] for ext in ("png", "pdf"))
    plot_gaps_with_significant_recall(
        gaps[gaps["model"] == "baseline"],
        shorthand,
        figure["attribute"],
        figure["group"],
        f"Figure {name[3:]}: {figure['attribute']} gaps of the baseline's classifiers, "
        f"tasks with a significant recall gap",
        png,
        pdf,
    )
log.info("tables written to %s", Path(out.table4[0]).parent)
