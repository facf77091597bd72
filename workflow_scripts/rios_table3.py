"""Rule script (rios): Table 3, the quality of each decade's chosen embeddings on UMNSRS, with the
setting chosen and how many of the decade's tokens the search trained on."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_table
from medbias.studies.rios.skipgram import chosen_setting

snakemake = globals()["snakemake"]
setup_rule_logging(snakemake.log[0])
rows = []
for path in snakemake.input:
    search = read_json(path)
    if search.get("empty"):
        rows.append({"Year": search["decade"], "Sim": float("nan"), "Pair Cnt": 0, "note": "no articles"})
        continue
    model = search[
        "final"
    ]  # the decade's model: the best candidate, or the chosen setting trained after a sample's search
    sample = search["search_sample"]
    rows.append(
        {
            "Year": search["decade"],
            "Sim": model["rho"],
            "Pair Cnt": model["pairs_used"],
            "multi-word pairs": model["multiword_pairs_used"],
            "vocabulary": model["vocabulary"],
            "candidates tried": len(search["candidates"]),
            "searched on (tokens)": sample["tokens"],
            "decade tokens": sample["total_tokens"],
            **chosen_setting(search),
        }
    )
table = pd.DataFrame(rows)
write_table(
    table,
    snakemake.output.csv,
    snakemake.output.md,
    "Table 3: embedding quality per decade (Spearman rho on UMNSRS similarity)",
    tuple(snakemake.params.settings),
    digits=4,
)
