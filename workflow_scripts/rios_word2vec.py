"""Rule script (rios): skip-gram model search for one decade and training replicate (its seed from
``replication.replicate_seed``), scored on UMNSRS; keeps the best."""

from medbias.core.embeddings import ParquetSentences, search_skipgram
from medbias.io.jsonio import write_json
from medbias.core.logs import setup_rule_logging
from medbias.io.pubmed import tokenize
from medbias.metrics.replication import replicate_seed
from medbias.io.resources import read_umnsrs

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
sentences = ParquetSentences(snakemake.input.corpus)
if next(iter(sentences), None) is None:
    # an empty decade is reported downstream (tables note it), not a crash: write an empty model
    log.warning("decade %s has no articles; writing an empty model", p.decade)
    with open(snakemake.output.vectors, "wb") as handle:
        handle.write(f"0 {p.defaults['vector_size']}\n".encode())
    write_json(snakemake.output.search, {"decade": p.decade, "strategy": p.strategy, "best_candidate": None,
                                         "candidates": [], "empty": True})
    raise SystemExit(0)
pairs = read_umnsrs(snakemake.input.umnsrs)
vectors, scores, best = search_skipgram(
    sentences, p.defaults, p.grid, p.strategy, p.epochs, replicate_seed(p.seed, p.replicate), snakemake.threads, pairs,
    tokenize,
)
vectors.save_word2vec_format(snakemake.output.vectors, binary=True)
write_json(snakemake.output.search, {"decade": p.decade, "replicate": p.replicate,
                                     "seed": replicate_seed(p.seed, p.replicate), "strategy": p.strategy,
                                     "best_candidate": best, "candidates": scores})
log.info("decade %s, replicate %d: best candidate %d, rho %.4f", p.decade, best, p.replicate, scores[best]["rho"])
