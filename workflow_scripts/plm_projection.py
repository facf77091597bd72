"""Rule script (plm): fit a SentenceDebias or INLP projection on one model's sentence vectors
(``medbias.studies.plm.projection``)."""

import numpy as np
import pandas as pd
import torch

from medbias.core.encoders import sentence_encoder
from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device, load_model_and_tokenizer, resolve_model_source
from medbias.io.jsonio import write_json
from medbias.studies.plm.projection import fit_projection, stereoset_vectors

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)
device = job_device()
source = resolve_model_source(p.model, p.entry)
model, tokenizer = load_model_and_tokenizer(source, device)
encoder = sentence_encoder(model, source.kind)
sentences = pd.read_parquet(snakemake.input.sentences).sort_values("sentence_id")
vectors, meaningful = stereoset_vectors(
    encoder,
    tokenizer,
    sentences,
    pooling=p.pooling,
    batch_size=p.batch_size,
    max_length=p.max_length,
    prepend_bos=(source.kind == "causal"),
)
projection, fit_report = fit_projection(
    p.method,
    vectors,
    meaningful,
    sentences,
    pd.read_parquet(snakemake.input.pairs),
    families=p.families,
    settings=p.settings,
    seed=p.seed,
    log=log,
)
report = {"model": p.model, "method": p.method, "dimension": vectors.shape[1], **fit_report}
log.info("projection checks: %s", {k: v for k, v in report.items() if k.endswith("_error")})
np.savez(snakemake.output.projection, projection=projection.astype(np.float32))
write_json(snakemake.output.report, report)
