"""Rule script (rios): the document-level null of one decade's WEAT (``medbias.studies.rios.analyses.document_null_columns``).

Each draw swaps the male and female words (paired by position) in a random half of the decade's
articles, retrains the skip-gram model with replicate 0's selected setting under a seed of its own
(``replication.document_null_seed``) and records every WEAT test's mean difference and d."""

import json

import numpy as np
import pandas as pd

from medbias.core.embeddings import (
    ParquetSentences,
    SwappedDocuments,
    count_documents,
    document_swap_flags,
    train_skipgram,
)
from medbias.core.logs import setup_rule_logging
from medbias.metrics.replication import document_null_seed
from medbias.io.resources import read_wordsets
from medbias.studies.rios.analyses import gender_swap_mapping, weat_statistics

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
wordsets = read_wordsets(snakemake.input.wordsets)
mapping = gender_swap_mapping(wordsets)
with open(snakemake.input.search) as handle:
    search = json.load(handle)
columns = ["decade", "draw", "seed", "swapped_documents", "documents", "test", "mean_difference", "effect_size"]
if search.get("empty"):
    log.warning("decade %s has no articles; no document-level null", p.decade)
    pd.DataFrame(columns=columns).to_csv(snakemake.output.csv, index=False)
    raise SystemExit(0)
best = search["candidates"][search["best_candidate"]]
setting = {key: best[key] for key in p.defaults}
documents = ParquetSentences(snakemake.input.corpus)
n_documents = count_documents(documents)
log.info("decade %s: %d draws of the document-level null over %d articles, setting %s",
         p.decade, p.draws, n_documents, setting)
frames = []
for draw in range(p.draws):
    seed = document_null_seed(p.seed, draw)
    flags = document_swap_flags(n_documents, np.random.default_rng(seed))
    vectors = train_skipgram(SwappedDocuments(documents, mapping, flags), setting, p.epochs, seed, snakemake.threads)
    stats = weat_statistics(vectors, wordsets, p.min_fraction)
    frames.append(stats.assign(decade=p.decade, draw=draw, seed=seed, swapped_documents=int(flags.sum()),
                               documents=n_documents))
    log.info("draw %d/%d: %d articles swapped; mean differences %s", draw + 1, p.draws, int(flags.sum()),
             ", ".join(f"{r.test} {r.mean_difference:+.4f}" for r in stats.itertuples()))
pd.concat(frames, ignore_index=True)[columns].to_csv(snakemake.output.csv, index=False)
