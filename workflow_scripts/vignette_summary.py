"""Rule script (vignettes): the summary over the registry, every contrast in one long table, and the
figure of every scored model's contrasts (``medbias.studies.vignettes.tables``)."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_page
from medbias.studies.vignettes.figures import plot_contrasts
from medbias.studies.vignettes.plan import NOT_CHOSEN, vignette_skip_reason
from medbias.studies.vignettes.tables import summary_page, summary_rows

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out, inputs = snakemake.params, snakemake.output, snakemake.input
tables = {m: pd.read_csv(f, keep_default_na=False, na_values=[""]) for m, f in zip(p.scored, inputs.contrasts)}
status = {m: read_json(f)["status"] for m, f in zip(p.scored, inputs.scores)}
masses = {m: read_json(f) for m, f in zip(p.scored, inputs.option_mass)}
status.update({m: vignette_skip_reason(e) or NOT_CHOSEN for m, e in p.models.items() if m not in status})
frame = summary_rows(p.models, tables, status, masses)
frame.to_csv(out.csv, index=False)
write_page(summary_page(frame, p.settings), out.md)
long = pd.concat([t.assign(model=m) for m, t in tables.items()], ignore_index=True) if tables else pd.DataFrame()
long.to_csv(out.long, index=False)
shown = long[long["kind"] == "demographic"] if len(long) else long
if len(shown):
    shown = shown.assign(set=[f"{p.labels[m]}: {s}" for m, s in zip(shown["model"], shown["set"])])
plot_contrasts(
    shown, "Demographic contrasts of every scored model (P(compared option), value - reference)", out.png, out.pdf
)
log.info("vignettes: %d models, %d scored", len(frame), len(tables))
