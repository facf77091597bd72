"""Rule script (hurtful): the paper's downstream tables and figures from every model's gaps and
performance: Table 4 (baseline, significant gaps per subgroup with % favouring it), Table C3 (after
Benjamini-Hochberg), Table 5 and D5-D7 (baseline vs the model debiased for each attribute, with and
without FDR), Table A2 (AUROC and AUPRC per task with 95% intervals), Figures 4 and 5 (gaps of the
tasks with a significant recall gap), Figure A1 (debiased vs baseline AUPRC), and the
intersectional counts with the cells skipped for size."""

from pathlib import Path

import pandas as pd

from medbias.downstream import seed_spread, significance_counts_over_seeds
from medbias.logs import setup_rule_logging
from medbias.plots import plot_auprc_debiased_vs_baseline, plot_gaps_with_significant_recall
from medbias.tables import write_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
out = Path(snakemake.output[0]).parent  # every output lies in the downstream folder

gaps = pd.concat([pd.read_parquet(f) for f in snakemake.input.gaps], ignore_index=True)
# replicate_gaps is model-major (replicates 1 .. R-1 of each model), so replicate r is every (R-1)-th path
later = [pd.concat([pd.read_parquet(path) for path in snakemake.input.replicate_gaps[r - 1::p.replicates - 1]],
                   ignore_index=True) for r in range(1, p.replicates)]
replicates = [gaps, *later]
spread = seed_spread(replicates)
spread.to_csv(out / "gap_seeds.csv", index=False)
unstable = spread["significant_bh"] & (spread["significant_bh_seeds"] <= p.replicates / 2)
log.info("%d classifier seed replicates per model; of the %d gaps significant after BH in replicate 0, %d are so in "
         "at most half of the replicates", p.replicates, int(spread["significant_bh"].sum()), int(unstable.sum()))
performance = pd.concat([pd.read_csv(f) for f in snakemake.input.performance], ignore_index=True)
tasks = pd.read_csv(snakemake.input.tasks)
shorthand = dict(zip(tasks["task"], tasks["shorthand"]))
n_tasks = len(tasks)
plain = list(p.attributes)
cells_note = ("A cell is 'N (P%)': N of the tasks have a gap whose 95% bootstrap interval excludes 0; P% of "
              "those favour the group (positive gap: higher rate for the group than for the group farthest "
              "from it, eq. 2). Excluded subgroups (for their own attribute only): "
              + "; ".join(f"{a}: {', '.join(v)}" for a, v in p.excluded.items()) + ". A group with fewer than "
              f"{p.minimum['rows']} test rows (parity), {p.minimum['positives']} positives (recall) or "
              f"{p.minimum['negatives']} negatives (specificity) in a task has no gap there and is never the comparison "
              "group (the rows say why in gaps.parquet).")
if p.replicates > 1:
    cells_note += (f" [seeds a-b]: the lowest and highest count over {p.replicates} classifier seed replicates "
                   "(same features, data and test set; replicate 0 gives N and P). Per gap: gap_seeds.csv.")


def counts(model, significant, attributes):
    frames = [frame[(frame["model"] == model) & frame["attribute"].isin(attributes)] for frame in replicates]
    table = significance_counts_over_seeds(frames, significant)
    return table[["attribute", "group", "recall gap", "parity gap", "specificity gap"]]


write_table(counts("baseline", "significant", plain), str(out / "table4_gaps.csv"), str(out / "table4_gaps.md"),
            title=f"Table 4: significant fairness gaps of the baseline clinical BERT's classifiers ({n_tasks} tasks)",
            notes=(cells_note,))
write_table(counts("baseline", "significant_bh", plain), str(out / "tableC3_gaps_fdr.csv"), str(out / "tableC3_gaps_fdr.md"),
            title=f"Table C3: Table 4 after Benjamini-Hochberg across the {n_tasks} tasks (FDR {p.alpha})",
            notes=(cells_note.replace("95% bootstrap interval excludes 0", f"BH-adjusted two-sided p is below {p.alpha}"),
                   "p: two-sided two-proportion score test of the group's rate against its comparison group's "
                   "(pooled-rate variance), which neither the replicate count floors nor a rate of 0 or 1 fools; the count of replicates beyond 0 (p_bootstrap in "
                   "gaps.parquet, at least 2/(R+1)) could not let a lone gap pass BH across the tasks "
                   "(medbias.metrics.fairness)."))

for name, attribute in p.debiased_tables.items():
    rows = []
    for model, label in (("baseline", "baseline"), (f"adv_{attribute}", "debiased")):
        for significant, fdr in (("significant", "no"), ("significant_bh", "yes")):
            table = counts(model, significant, [attribute]).assign(model=label, fdr=fdr)
            rows.append(table)
    table = pd.concat(rows, ignore_index=True)[["model", "fdr", "attribute", "group", "parity gap", "recall gap", "specificity gap"]]
    write_table(table, str(out / f"{name}.csv"), str(out / f"{name}.md"),
                title=f"{name.split('_')[0].replace('table', 'Table ')}: baseline vs {attribute}-debiased clinical BERT, "
                      f"significant {attribute} gaps over {n_tasks} tasks",
                notes=(cells_note,))

wide = performance.copy()
for metric in ("auroc", "auprc"):
    wide[metric.upper()] = [f"{v:.3f} [{lo:.3f}, {hi:.3f}]" for v, lo, hi in
                            zip(wide[metric], wide[f"{metric}_low"], wide[f"{metric}_high"])]
wide["task"] = wide["task"].map(shorthand)
table = wide.pivot_table(index="task", columns="model", values=["AUROC", "AUPRC"], aggfunc="first", sort=False)
table.columns = [f"{metric} {model}" for metric, model in table.columns]
write_table(table.reset_index(), str(out / "tableA2_performance.csv"), str(out / "tableA2_performance.md"),
            title="Table A2: AUROC and AUPRC per task and model (95% bootstrap intervals)",
            notes=(f"Bootstrap: {p.bootstrap:,} replicates resampled within each label. Long form with sizes: "
                   "tableA2_performance_long.csv.",))
performance.to_csv(out / "tableA2_performance_long.csv", index=False)
if p.figure_a1_model:
    plot_auprc_debiased_vs_baseline(performance, p.figure_a1_model, str(out / "figA1_auprc.png"), str(out / "figA1_auprc.pdf"))

for name, figure in p.figures.items():
    base = gaps[gaps["model"] == "baseline"]
    plot_gaps_with_significant_recall(base, shorthand, figure["attribute"], figure["group"],
                                      f"Figure {name[3:]}: {figure['attribute']} gaps of the baseline's classifiers, "
                                      f"tasks with a significant recall gap", str(out / f"{name}_gaps_{figure['attribute']}.png"),
                                      str(out / f"{name}_gaps_{figure['attribute']}.pdf"))

if p.intersectional:
    column = " x ".join(p.intersectional["attributes"])
    rows = []
    for model in gaps["model"].unique():
        rows.append(counts(model, "significant", [column]).assign(model=model))
    table = pd.concat(rows, ignore_index=True)[["model", "group", "recall gap", "parity gap", "specificity gap"]]
    cells = pd.read_csv(snakemake.input.cells[p.models.index("baseline")])  # cells depend on the test set only
    skipped = cells[~cells["kept"]] if len(cells) else cells
    write_table(table, str(out / "intersectional_gaps.csv"), str(out / "intersectional_gaps.md"),
                title=f"Intersectional fairness gaps ({column}), significant tasks per cell",
                notes=(cells_note, f"Cells need at least {p.intersectional['min_rows']} test rows and "
                       f"{p.intersectional['min_positives']} positives in a task; {len(skipped)} (task, cell) "
                       "combinations were skipped, listed in intersectional_skipped.csv."))
    skipped.to_csv(out / "intersectional_skipped.csv", index=False)
log.info("tables written to %s", out)
