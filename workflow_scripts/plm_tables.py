"""Rule script: Tables 2, 4 and 5 and Figure 2 of the plm study from every model's evaluations
(medbias.studies.plm.tables)."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_paper_table
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.plm.figures import plot_seat_positions, seat_axis_label
from medbias.studies.plm.tables import plm_tables, stamp_evaluations

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output

seat = stamp_evaluations([pd.read_csv(path) for path in inp.seat], p.evaluations)
stereo = stamp_evaluations([pd.read_csv(path) for path in inp.stereoset], p.evaluations)
summaries = {(s["model"], s["debias"]): s for s in map(read_json, inp.summary)}
tables = plm_tables(
    seat,
    stereo,
    summaries,
    models=p.models,
    labels=p.labels,
    methods=p.methods,
    families=list(p.families),
    figure=p.figure,
    pooling=p.pooling,
    alpha=p.alpha,
    alternative=p.alternative,
    averages=p.averages,
)

seat.to_csv(out.seat_long, index=False)
stereo.to_csv(out.stereoset_long, index=False)
tables.changes.to_csv(out.table5_long, index=False)
write_paper_table(with_settings(tables.table2, p.settings), out.table2_csv, out.table2_md)
write_paper_table(with_settings(tables.table4, p.settings), out.table4_csv, out.table4_md)
write_paper_table(with_settings(tables.table5, p.settings), out.table5_csv, out.table5_md)
plot_seat_positions(
    tables.figure2,
    seat_axis_label(p.figure["x"], p.averages),
    seat_axis_label(p.figure["y"], p.averages),
    out.fig2_png,
    out.fig2_pdf,
)
log.info("plm tables written for %d models and %d evaluations", len(p.models), len(p.evaluations))
