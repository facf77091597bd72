"""Rule script (plm): SEAT and StereoSet-style scores of one model, plain or debiased
(``medbias.studies.plm.evaluation.evaluate_plm_model``)."""

import numpy as np
import pandas as pd
import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device
from medbias.io.jsonio import write_json
from medbias.io.resources import read_seat_tests
from medbias.studies.plm.evaluation import evaluate_plm_model

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out = snakemake.params, snakemake.output
torch.set_num_threads(snakemake.threads)
projection = np.load(snakemake.input.projection)["projection"] if p.debias in ("sentencedebias", "inlp") else None
result = evaluate_plm_model(
    p.model,
    p.entry,
    p.debias,
    read_seat_tests(snakemake.input.wordsets),
    pd.read_parquet(snakemake.input.sentences),
    pd.read_parquet(snakemake.input.pairs),
    projection,
    log=log,
    settings={key: getattr(p, key) for key in ("seat", "families", "ties_as_half", "batch_size", "max_length", "seed")},
    device=job_device(),
)
result.seat.to_csv(out.seat, index=False)
result.stereoset.to_csv(out.stereoset, index=False)
result.sentence_scores.to_parquet(out.sentence_scores, index=False)
write_json(out.summary, result.summary)
