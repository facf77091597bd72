"""Rule script (validation): CrowS-Pairs and StereoSet tests on randomly initialised models of each
demo architecture, under every scoring rule, the calibration control of the benchmark tests
(``medbias.validation.benchmark_control``), on ``plm.benchmarks.control_pairs`` pairs of the whole
CrowS-Pairs file and the benchmark table's StereoSet items."""

import pandas as pd
import torch

from medbias.core.logs import setup_rule_logging
from medbias.metrics.benchmarks.items import read_crows_pairs
from medbias.studies.plm.benchmarks import sample_rows
from medbias.validation.benchmark_control import random_model_benchmark_rows

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inputs = snakemake.params, snakemake.input
torch.set_num_threads(1)  # the copies are scored in snakemake.threads processes of one thread
pairs = sample_rows(read_crows_pairs(inputs.crows_pairs), p.settings["control_pairs"], p.seed)
intrasentence = pd.read_parquet(inputs.intrasentence)
log.info("control on %d CrowS-Pairs pairs and %d intrasentence examples", len(pairs), len(intrasentence))
frames = [
    random_model_benchmark_rows(
        folder,
        kind,
        architecture,
        [p.seed + k for k in range(p.settings["control_seeds"])],
        pairs,
        intrasentence,
        n_permutations=p.settings["permutations"],
        seed=p.seed,
        level=p.settings["alpha"],
        batch_size=p.batch_size,
        crows_rules=p.settings["crows_rules"],
        causal_score=p.settings["causal_score"],
        workers=snakemake.threads,
        log=log,
    )
    for folder, kind, architecture in zip(inputs.models, p.kinds, p.architectures)
]
pd.concat(frames, ignore_index=True).to_csv(snakemake.output[0], index=False)
