"""Rule script (hurtful): every mitigation method's gaps and performance before and after
(``medbias.studies.hurtful.mitigation_effects``), per mitigated model, attribute and task; the
summary table and the trade-off figure."""

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.io.tables import write_paper_table
from medbias.pipeline.hyperparameters import with_settings
from medbias.studies.hurtful.figures import plot_mitigation_tradeoff
from medbias.studies.hurtful.mitigation import MitigationInputs, model_methods, models_first
from medbias.studies.hurtful.mitigation_effects import (
    cost_summary,
    cost_table,
    mitigation_effects,
    mitigation_summary,
    summary_table,
    task_families,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, inp, out = snakemake.params, snakemake.input, snakemake.output
tasks = pd.read_csv(inp.tasks)
encoders = {a: pd.read_parquet(path) for a, path in zip(p.encoders, inp.encoders)}
computed = {
    tuple(job): (pd.read_parquet(predictions), pd.read_csv(fit))  # (model, method), as plan.mitigation_jobs lists them
    for job, predictions, fit in zip(p.jobs, inp.predictions, inp.fits)
}
parts = {"predictions": [], "fits": [], "gaps": [], "performance": []}
for model, test_path in zip(p.models, inp.test):
    before = pd.read_parquet(test_path)
    inputs = MitigationInputs(before, pd.DataFrame(), tasks, p.seed, encoders=encoders if model == "baseline" else {})
    own = {method: result for (m, method), result in computed.items() if m == model}
    predictions, fits, after = model_methods(model, list(p.methods), own, inputs, list(p.attributes), log)
    gaps, performance = mitigation_effects(
        before,
        after,
        tasks["task"].tolist(),
        list(p.downstream_attributes),
        p.excluded,
        p.minimum,
        p.bootstrap,
        p.seed,
        p.alpha,
        log,
        p.equivalence_margin,
    )
    for name, frame in zip(parts, (predictions, fits, gaps.assign(model=model), performance.assign(model=model))):
        parts[name].append(frame)
tables = {name: models_first(pd.concat(frames, ignore_index=True)) for name, frames in parts.items()}
tables["predictions"].to_parquet(out.predictions, index=False)
tables["fits"].to_csv(out.fit, index=False)
tables["gaps"].to_parquet(out.gaps, index=False)
tables["performance"].to_csv(out.performance, index=False)
summary = mitigation_summary(tables["gaps"])
for row in summary.itertuples(index=False):
    log.info(
        "%s %s %s=%s %s: %d gaps on changed tasks (%d unchanged), %d narrowed and %d widened after BH, "
        "%d closed, %d opened",
        row.model,
        row.method,
        row.attribute,
        row.group,
        row.metric,
        row.gaps,
        row.unchanged_tasks,
        row.narrowed_bh,
        row.widened_bh,
        row.closed,
        row.opened,
    )
cost = cost_summary(tables["performance"])
write_paper_table(
    with_settings(summary_table(summary, p.bootstrap, p.alpha, p.equivalence_margin, p.encoders), p.settings),
    *out.summary,
)
write_paper_table(with_settings(cost_table(cost, p.bootstrap, p.alpha, p.encoders), p.settings), *out.cost)
plot_mitigation_tradeoff(tables["gaps"], tables["performance"], task_families(tasks), *out.figure)
