"""Rule script (audit): fill-in-the-blank completions by race (Zhang et al. 2020, Figure 1) of one
masked registry model for its audit card; a model without a trained LM head gets a row saying why."""

import pandas as pd
import torch

from medbias.core.fill_blank import fill_in_the_blanks
from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device, lm_head_problem, load_model_and_tokenizer, resolve_model_source

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)
source = resolve_model_source(p.model, p.entry)
model, tokenizer = load_model_and_tokenizer(source, job_device())
no_head = lm_head_problem(model, source.kind)
if no_head:
    log.warning("%s: fill-in-the-blank %s", p.model, no_head)
    pd.DataFrame({"status": [no_head]}).to_csv(snakemake.output[0], index=False)
else:
    frame = fill_in_the_blanks(model, tokenizer, p.templates, p.fills, top_k=p.top_k)
    frame.insert(0, "status", "ok")
    frame.to_csv(snakemake.output[0], index=False)
    log.info("%s: %d completions", p.model, len(frame))
