"""Rule script (demo world): templates and attributes for the log-probability bias score that match
the conditions planted in the synthetic notes, and the truth part that says what to expect."""

import csv

from medbias.io.jsonio import write_json
from medbias.synth.logprob import logprob_resources

snakemake = globals()["snakemake"]
templates, attributes, truth = logprob_resources()
with open(snakemake.output.templates, "w", encoding="utf-8") as handle:
    handle.write("\n".join(templates) + "\n")
with open(snakemake.output.attributes, "w", newline="", encoding="utf-8") as handle:
    writer = csv.writer(handle)
    writer.writerow(["attribute", "category"])
    writer.writerows(attributes)
write_json(snakemake.output.truth, {"logprob": truth})
