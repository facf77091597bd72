"""Rule script (vignettes): one causal registry model's option probabilities on every vignette set
(``medbias.studies.vignettes.scoring.score_registry_model``)."""

import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device
from medbias.io.jsonio import write_json
from medbias.io.vignettes import read_vignette_sets
from medbias.studies.vignettes.scoring import score_registry_model

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, out = snakemake.params, snakemake.output
torch.set_num_threads(snakemake.threads)
sets = read_vignette_sets(p.sets)
frame, summary = score_registry_model(
    p.model,
    p.entry,
    sets,
    p.prompts,
    batch_size=p.batch_size,
    generation_tokens=p.generation_tokens,
    device=job_device(),
    log=log,
)
frame.to_parquet(out.scores, index=False)
write_json(out.summary, summary)
log.info(
    "%s: %s; %s prompts, %.1f prompts/s, %.0f tokens/s",
    p.model,
    summary["status"],
    summary.get("prompts", 0),
    summary.get("prompts_per_second", 0.0),
    summary.get("tokens_per_second", 0.0),
)
