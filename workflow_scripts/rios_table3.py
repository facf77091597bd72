"""Rule script (rios): Table 3, the quality of each decade's chosen embeddings on UMNSRS."""

import pandas as pd

from medbias.io.jsonio import read_json
from medbias.core.logs import setup_rule_logging
from medbias.io.tables import write_table

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
rows = []
for path in snakemake.input:
    search = read_json(path)
    if search.get("empty"):
        rows.append({"Year": search["decade"], "Sim": float("nan"), "Pair Cnt": 0, "note": "no articles"})
        continue
    best = search["candidates"][search["best_candidate"]]
    rows.append({"Year": search["decade"], "Sim": best["rho"], "Pair Cnt": best["pairs_used"],
                 "multi-word pairs": best["multiword_pairs_used"], "vocabulary": best["vocabulary"],
                 "candidates tried": len(search["candidates"]),
                 **{k: best[k] for k in ("negative", "sample", "min_count", "alpha", "vector_size", "window")}})
table = pd.DataFrame(rows)
write_table(table, snakemake.output.csv, snakemake.output.md,
            "Table 3: embedding quality per decade (Spearman rho on UMNSRS similarity)",
            tuple(snakemake.params.settings), digits=4)
