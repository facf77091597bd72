"""Rule script (rios): one decade's skip-gram model search scored on UMNSRS, on the whole decade or
a sample of it (``medbias.studies.rios.skipgram.search_decade``), for replicate 0, or for every
replicate under its own seed (``replication.replicate_seed``) when each replicate searches."""

from medbias.core.logs import setup_rule_logging
from medbias.core.seeds import replicate_seed
from medbias.core.skipgram import ParquetSentences
from medbias.io.jsonio import write_json
from medbias.io.pubmed import tokenize
from medbias.io.resources import read_umnsrs
from medbias.studies.rios.skipgram import search_decade, write_empty_model

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
seed = replicate_seed(p.seed, p.replicate)
sentences = ParquetSentences(snakemake.input.corpus)
if next(iter(sentences), None) is None:
    # an empty decade is reported downstream (tables note it), not a crash: write an empty model
    log.warning("decade %s has no articles; writing an empty model", p.decade)
    write_empty_model(snakemake.output.vectors, p.defaults["vector_size"])
    write_json(
        snakemake.output.search,
        {"decade": p.decade, "strategy": p.strategy, "best_candidate": None, "candidates": [], "empty": True},
    )
    raise SystemExit(0)
vectors, record = search_decade(
    sentences,
    read_umnsrs(snakemake.input.umnsrs),
    tokenize,
    defaults=p.defaults,
    grid=p.grid,
    strategy=p.strategy,
    epochs=p.epochs,
    seed=seed,
    workers=snakemake.threads,
    search_tokens=p.search_tokens,
)
vectors.save_word2vec_format(snakemake.output.vectors, binary=True)
write_json(snakemake.output.search, {"decade": p.decade, "replicate": p.replicate, "seed": seed, **record})
sample = record["search_sample"]
log.info(
    "decade %s, replicate %d: searched on %d of %d articles (%d of %d tokens); best candidate %d; "
    "the decade's model: rho %.4f",
    p.decade,
    p.replicate,
    sample["documents"],
    sample["total_documents"],
    sample["tokens"],
    sample["total_tokens"],
    record["best_candidate"],
    record["final"]["rho"],
)
