"""Rule script (validation): measured false-positive rates and power of the bias tests on the demo world."""

import pandas as pd
import torch

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import read_json
from medbias.io.resources import read_attributes, read_templates
from medbias.io.tables import write_page
from medbias.metrics.logprob_tests import random_initialised_score_frames
from medbias.studies.hurtful.gaps import read_model_gaps
from medbias.validation.decisions import (
    DECISION_COLUMNS,
    combine,
    counterfactual_decisions,
    gap_decisions,
    intersection_decisions,
    logprob_decisions,
    mitigation_decisions,
    rios_weat_decisions,
    seat_decisions,
    vignette_decisions,
)
from medbias.validation.error_rates import error_rates, error_rates_page, log_rates
from medbias.validation.figures import plot_error_rates
from medbias.validation.null_worlds import (
    intersection_null_world_decisions,
    logprob_null_model_decisions,
    null_world_decisions,
)
from medbias.validation.truth import logprob_model_roles, task_maps
from medbias.validation.vignette_coverage import vignette_simulations

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
out = snakemake.output
truth = read_json(snakemake.input.truth)
vignette_tables = {m: pd.read_csv(f) for m, f in zip(p.vignette_models, snakemake.input.vignettes)}
task_labels, task_cohorts = task_maps(pd.read_csv(snakemake.input.tasks))
gaps = read_model_gaps(p.models, snakemake.input.gaps)
log.info("constructed null worlds: %d per kind, %d null draws each", p.null_worlds, p.null_draws)
torch.set_num_threads(snakemake.threads)
attributes = read_attributes(snakemake.input.attributes)
templates, _ = read_templates(snakemake.input.templates, {c for _, c in attributes})
groups = p.target_sets[p.gender_set]
log.info("Table 3's test on %d random-initialised copies of %s", p.null_models, p.base_model_entry["source"])
null_models = list(
    random_initialised_score_frames(
        p.base_model_entry["source"],
        templates,
        attributes,
        [w for words in groups.values() for w in words],
        p.null_models,
        p.seed,
    )
)
decisions = combine(
    [
        rios_weat_decisions(
            pd.read_csv(snakemake.input.weat_seeds), truth["pubmed"], table=pd.read_csv(snakemake.input.weat)
        ),
        seat_decisions(pd.read_csv(snakemake.input.seat), truth["plm"]),
        gap_decisions(gaps, truth["mimic"], task_labels, p.alpha),
        intersection_decisions(
            pd.read_csv(snakemake.input.worst_cells),
            truth["mimic"],
            task_labels,
            task_cohorts,
            p.alpha,
        )
        if snakemake.input.worst_cells
        else pd.DataFrame(),
        mitigation_decisions(
            pd.read_parquet(snakemake.input.gap_changes),
            truth["mimic"],
            task_labels,
            p.alpha,
        )
        if snakemake.input.gap_changes
        else pd.DataFrame(),
        counterfactual_decisions(pd.read_csv(snakemake.input.fairness), truth["mental"]),
        logprob_decisions(
            pd.read_csv(snakemake.input.logprob),
            truth["logprob"],
            *logprob_model_roles(p.logprob_models, p.variants, p.base_model),
        ),
        null_world_decisions(p.null_worlds, p.seed, draws=p.null_draws),
        intersection_null_world_decisions(p.null_worlds, p.seed),
        logprob_null_model_decisions(null_models, groups, truth["logprob"]["control_category"]),
        pd.read_csv(snakemake.input.benchmark_control)[DECISION_COLUMNS],
        vignette_decisions(vignette_tables, truth["vignettes"]),
    ]
)
table = error_rates(decisions)
decisions.to_csv(out.decisions, index=False)
coverage, level = vignette_simulations(
    p.coverage_sets, p.vignette_bootstrap, p.vignette_min_difference, p.vignette_alpha, p.seed
)
coverage.to_csv(out.coverage, index=False)
level.to_csv(out.level, index=False)
table.to_csv(out.csv, index=False)
write_page(
    error_rates_page(
        table,
        coverage,
        level,
        pd.read_csv(snakemake.input.post_processor) if snakemake.input.post_processor else None,
    ),
    out.md,
)
plot_error_rates(table, out.png, out.pdf)
log_rates(table, log)
