"""Rule script (plm): CrowS-Pairs, StereoSet, May et al.'s SEAT and the held-out perplexity of one model,
plain or debiased (``medbias.studies.plm.benchmarks.benchmark_plm_model``)."""

import numpy as np
import pandas as pd
import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device
from medbias.io.benchmarks import read_may_seat_tests, read_wikitext_paragraphs
from medbias.io.gzipped import read_corpus_split
from medbias.io.jsonio import read_json, write_json
from medbias.studies.plm.benchmarks import EMPTY_CROWS, EMPTY_STEREOSET, benchmark_plm_model

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out, inputs = snakemake.params, snakemake.output, snakemake.input
settings = p.settings
torch.set_num_threads(snakemake.threads)
data = {
    "crows_pairs": pd.read_parquet(inputs.crows_pairs),
    "intrasentence": pd.read_parquet(inputs.intrasentence),
    "intersentence": pd.read_parquet(inputs.intersentence),
    "seat": read_may_seat_tests(inputs.seat_folder, settings["seat_tests"]),
    "perplexity_texts": read_corpus_split(inputs.corpus, p.held_out_texts, max_texts=0)[1],
    "wikitext_texts": read_wikitext_paragraphs(inputs.wikitext, settings["wikitext_paragraphs"]),
}
projection = np.load(inputs.projection)["projection"] if p.debias in ("sentencedebias", "inlp") else None
result = benchmark_plm_model(
    p.model,
    p.entry,
    p.debias,
    projection,
    data,
    {
        "batch_size": p.batch_size,
        "max_length": p.max_length,
        "perplexity_length": p.perplexity_length,
        "causal_score": settings["causal_score"],
        "crows_rules": settings["crows_rules"],
        "seed": p.seed,
        "null_draws": settings["seat_null_draws"],
        "null_pool_words": settings["seat_null_words"],
        "null_templates": settings["seat_null_templates"],
        "permutation_budget": p.seat["permutation_budget"],
        "alternative": p.seat["alternative"],
        "bootstrap": settings["bootstrap"],
        "untrained_reference": settings["untrained_reference"],
        "self_debias": settings["self_debias"],
    },
    job_device(),
    log,
)
result.summary["excluded"] = read_json(inputs.excluded)
result.summary["sampled"] = {k: len(data[k]) for k in ("crows_pairs", "intrasentence", "intersentence")}
result.crows_pairs.to_parquet(out.crows_pairs, index=False)
result.stereoset.to_parquet(out.stereoset, index=False)
result.seat.to_csv(out.seat, index=False)
result.perplexity.to_parquet(out.perplexity, index=False)
(result.untrained_crows_pairs if result.untrained_crows_pairs is not None else EMPTY_CROWS).to_parquet(
    out.untrained_crows_pairs, index=False
)
(result.untrained_stereoset if result.untrained_stereoset is not None else EMPTY_STEREOSET).to_parquet(
    out.untrained_stereoset, index=False
)
write_json(out.summary, result.summary)
