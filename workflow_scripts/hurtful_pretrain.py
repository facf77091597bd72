"""Rule script (hurtful): continue pretraining the base BERT on the note sequences (MLM + NSP), as
the baseline or with an adversary for one protected attribute (``medbias.studies.hurtful.pretrain_job``).

With ``resources: gpu=N`` (``hurtful.pretrain.gpus``) above 1 it starts one data-parallel process per
reserved GPU, so the GPUs the job holds are the GPUs it trains on.
"""

import torch

from medbias.pipeline.cluster import processes_for_gpus, run_in_processes
from medbias.studies.hurtful.pretrain_job import run_pretraining

snakemake = globals()["snakemake"]
processes = processes_for_gpus(int(snakemake.resources.get("gpu", 0) or 0), torch.cuda.device_count())
run_in_processes(
    run_pretraining,
    (
        dict(snakemake.input.items()),
        dict(snakemake.output.items()),
        dict(snakemake.params.items()),
        snakemake.threads,
        snakemake.log[0],
    ),
    processes,
)
