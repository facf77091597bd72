"""Rule script (plm): every benchmark plug-in of the suite (CrowS-Pairs, StereoSet, May et al.'s SEAT,
perplexity) on one model, plain or debiased (``medbias.studies.plm.benchmarks.benchmark_plm_model``)."""

import numpy as np
import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device
from medbias.io.jsonio import read_json, write_json
from medbias.metrics.benchmarks import settings_of, suite
from medbias.metrics.benchmarks.base import write_frame
from medbias.studies.plm.benchmarks import benchmark_plm_model

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out, inputs = snakemake.params, snakemake.output, snakemake.input
settings = p.settings
torch.set_num_threads(snakemake.threads)
scoring = {
    **settings,
    "batch_size": p.batch_size,
    "max_length": p.max_length,
    "perplexity_length": p.perplexity_length,
    "held_out_texts": p.held_out_texts,
    "seed": p.seed,
    "permutation_budget": p.seat["permutation_budget"],
    "alternative": p.seat["alternative"],
}
paths = {key: inputs[key] for key in inputs.keys()}
data = {
    key: value
    for benchmark in suite(settings["suite"])
    for key, value in benchmark.read_items(paths, settings_of(benchmark, scoring)).items()
}
projection = np.load(inputs.projection)["projection"] if p.debias in ("sentencedebias", "inlp") else None
result = benchmark_plm_model(p.model, p.entry, p.debias, projection, data, scoring, job_device(), log)
result.summary["excluded"] = read_json(inputs.excluded)
result.summary["sampled"] = {k: len(data[k]) for k in ("crows_pairs", "intrasentence", "intersentence") if k in data}
for key, frame in result.frames.items():
    write_frame(frame, out[key])
write_json(out.summary, result.summary)
