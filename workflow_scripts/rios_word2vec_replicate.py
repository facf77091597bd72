"""Rule script (rios): seed replicate r > 0 of one decade's model, the setting replicate 0's search
chose trained again under the replicate's seed (``medbias.studies.rios.skipgram.retrain_chosen``)."""

from medbias.core.logs import setup_rule_logging
from medbias.core.seeds import replicate_seed
from medbias.core.skipgram import ParquetSentences
from medbias.io.jsonio import read_json, write_json
from medbias.io.pubmed import tokenize
from medbias.io.resources import read_umnsrs
from medbias.studies.rios.skipgram import retrain_chosen, write_empty_model

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
seed = replicate_seed(p.seed, p.replicate)
search = read_json(snakemake.input.search)
if search.get("empty"):
    log.warning("decade %s has no articles; writing an empty model", p.decade)
    write_empty_model(snakemake.output.vectors, p.defaults["vector_size"])
    write_json(snakemake.output.search, {"decade": p.decade, "replicate": p.replicate, "empty": True})
    raise SystemExit(0)
vectors, record = retrain_chosen(
    ParquetSentences(snakemake.input.corpus),
    search,
    read_umnsrs(snakemake.input.umnsrs),
    tokenize,
    epochs=p.epochs,
    seed=seed,
    workers=snakemake.threads,
)
vectors.save_word2vec_format(snakemake.output.vectors, binary=True)
write_json(snakemake.output.search, {"decade": p.decade, "replicate": p.replicate, "seed": seed, **record})
log.info(
    "decade %s, replicate %d (seed %d): replicate 0's setting %s; rho %.4f",
    p.decade,
    p.replicate,
    seed,
    record["setting"],
    record["final"]["rho"],
)
