"""Rule script (hurtful): intersectional groups of each analysed model's test stays
(``medbias.studies.hurtful.intersections``): per task and crossing the worst cell per metric with its
permutation p and BH, differential fairness epsilon, every cell's sizes and gaps, and one task x cell
figure per crossing."""

from pathlib import Path

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.tables import write_page
from medbias.studies.hurtful.figures import plot_intersection_cells
from medbias.studies.hurtful.intersections import (
    crossing_name,
    crossing_slug,
    intersectional_table,
    intersections_page,
    intersections_summary,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
tasks = pd.read_csv(inp.tasks)
tables, cells = [], []
for model, path in zip(p.models, inp.predictions):
    log.info("%s: crossings %s", model, "; ".join(crossing_name(c) for c in p.crossings))
    table, cell_table = intersectional_table(
        pd.read_parquet(path),
        tasks["task"].tolist(),
        p.crossings,
        p.settings,
        p.excluded,
        p.bootstrap,
        p.seed,
        p.alpha,
        log,
    )
    tables.append(table.assign(model=model))
    cells.append(cell_table.assign(model=model))
table, cell_table = pd.concat(tables, ignore_index=True), pd.concat(cells, ignore_index=True)
table = table[["model", *[c for c in table.columns if c != "model"]]]
summary = intersections_summary(table)
for row in summary[summary["metric"] != "epsilon"].itertuples(index=False):
    log.info(
        "%s %s %s: %d tasks tested, %d significant after BH",
        row.model,
        row.crossing,
        row.metric,
        row.tasks_tested,
        row.significant_bh,
    )
table.to_csv(out.table, index=False)
cell_table[["model", *[c for c in cell_table.columns if c != "model"]]].to_csv(out.cells, index=False)
write_page(intersections_page(summary, table, p.settings, tuple(p.settings_notes)), out.md)
figures = {Path(f).name: f for f in out.figures}
shorthand = dict(zip(tasks["task"], tasks["shorthand"]))
for crossing in p.crossings:
    png, pdf = (figures[f"cells_{crossing_slug(crossing)}.{ext}"] for ext in ("png", "pdf"))
    plot_intersection_cells(cell_table, table, crossing_name(crossing), shorthand, png, pdf)
