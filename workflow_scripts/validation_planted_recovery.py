"""Rule script (validation): does the demo world's run find every planted effect and nothing else?"""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.tables import write_page
from medbias.studies.hurtful.gaps import read_model_gaps
from medbias.validation.control_nulls import classifiers_reading, prediction_rate_dependence
from medbias.validation.decisions import combine
from medbias.validation.recovery import (
    control_family,
    hurtful_recoveries,
    log_recovery,
    mental_recovery,
    recovery_page,
    rios_recovery,
    seat_recovery,
    vignette_recovery,
)
from medbias.validation.truth import BELOW_POWER, NOT_A_NULL, corpus_embeddings, logprob_model_roles

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
c = p.criteria
out = snakemake.output
truth = read_json(snakemake.input.truth)
parts = []
if "rios" in p.studies:
    weat, trend = pd.read_csv(snakemake.input.weat), pd.read_csv(snakemake.input.weat_trend)
    parts.append(rios_recovery(weat, trend, truth["pubmed"], c["rios_alternative"]))
if "plm" in p.studies:
    parts.append(seat_recovery(pd.read_csv(snakemake.input.seat), truth["plm"], c["seat_alternative"], c["seat_alpha"]))
dependence = None
if "hurtful" in p.studies:
    pretrained, untrained = logprob_model_roles(p.logprob_models, p.variants, p.base_model)
    gaps, tasks = read_model_gaps(p.models, snakemake.input.gaps), pd.read_csv(snakemake.input.tasks)
    dependence = prediction_rate_dependence(gaps, tasks, truth["mimic"], alpha=c["downstream_alpha"])
    parts += hurtful_recoveries(
        gaps,
        tasks,
        pd.read_csv(snakemake.input.gap_seeds),
        pd.read_csv(snakemake.input.logprob),
        truth,
        c,
        (pretrained, untrained),
        mitigation=(
            (pd.read_parquet(snakemake.input.gap_changes), pd.read_csv(snakemake.input.performance_changes))
            if snakemake.input.gap_changes
            else None
        ),
        worst_cells=pd.read_csv(snakemake.input.worst_cells) if snakemake.input.worst_cells else None,
        classifiers_reading=classifiers_reading(dependence),
    )
if "mental" in p.studies:
    parts.append(
        mental_recovery(
            pd.read_csv(snakemake.input.fairness),
            pd.read_csv(snakemake.input.direct_bias),
            truth["mental"],
            corpus_embeddings(p.embeddings, list(truth["mental"]["direct_bias"])),
            direct_bias_null_draws=c["direct_bias_null_draws"],
            treatment_leans=pd.read_csv(snakemake.input.treatment_leans),
            removal_share=c["removal_share"],
        )
    )
if "vignettes" in p.studies:
    vignette_tables = {m: pd.read_csv(f) for m, f in zip(p.vignette_models, snakemake.input.vignettes)}
    parts.append(
        vignette_recovery(vignette_tables, truth["vignettes"], c["vignette_alpha"], c["vignette_permutations"])
    )
recovery = combine(parts)
recovery.to_csv(out.csv, index=False)
planted, below_power = recovery[recovery["truth"] == "planted"], recovery[recovery["truth"] == BELOW_POWER]
family = control_family(recovery)
write_page(recovery_page(planted, family, below_power, recovery[recovery["truth"] == NOT_A_NULL], dependence), out.md)
log_recovery(log, planted, family, below_power, dependence)
