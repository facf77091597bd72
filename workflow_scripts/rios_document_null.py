"""Rule script (rios): the document-level null of one decade's WEAT, retraining replicate 0's chosen
setting on the decade (or a sample of it) with the gender words swapped in random halves of the
articles (``medbias.studies.rios.skipgram.document_null_draws``; the p-value:
``medbias.studies.rios.analyses.document_null_columns``)."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.core.skipgram import ParquetSentences
from medbias.io.jsonio import read_json
from medbias.io.resources import read_wordsets
from medbias.studies.rios.skipgram import DOCUMENT_NULL_COLUMNS, chosen_setting, document_null_draws

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
search = read_json(snakemake.input.search)
if search.get("empty"):
    log.warning("decade %s has no articles; no document-level null", p.decade)
    pd.DataFrame(columns=DOCUMENT_NULL_COLUMNS).to_csv(snakemake.output.csv, index=False)
    raise SystemExit(0)
null = document_null_draws(
    ParquetSentences(snakemake.input.corpus),
    read_wordsets(snakemake.input.wordsets),
    chosen_setting(search),
    decade=p.decade,
    draws=p.draws,
    sample_tokens=p.sample_tokens,
    epochs=p.epochs,
    seed=p.seed,
    workers=snakemake.threads,
    min_fraction=p.min_fraction,
    log=log,
)
null.to_csv(snakemake.output.csv, index=False)
