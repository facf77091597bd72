"""Rule script (hurtful): Table 3 (log-probability bias scores per category for each model, the
Wilcoxon test between paired target groups, the gender ratio per category in the discharge notes)."""

import pandas as pd

from medbias.studies.hurtful.analyses import discharge_summaries, gender_ratio, logprob_table
from medbias.io.jsonio import read_json
from medbias.core.logs import setup_rule_logging
from medbias.io.resources import read_attributes, read_templates
from medbias.io.tables import write_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params

attributes = read_attributes(snakemake.input.attributes)
templates, fixes = read_templates(snakemake.input.templates, {c for _, c in attributes})
tables, not_applicable = [], {}
for model, path, words in zip(p.models, snakemake.input.scores, snakemake.input.words):
    record = read_json(words)
    if record.get("status", "ok") != "ok":  # no trained language-model head: no score
        not_applicable[model] = record["status"]
        continue
    table = logprob_table(pd.read_parquet(path), p.target_sets, p.control_category)
    table.insert(0, "model", model)
    tables.append(table)
    rejected = record["rejected_words"]
    if rejected:
        log.warning("%s: target words not scored (not one word piece): %s", model, rejected)
long = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
    columns=["model", "target_set", "category", "reference_mean", "group_mean", "wilcoxon_p", "items"])
long.to_csv(snakemake.output.long, index=False)

notes = pd.read_parquet(snakemake.input.notes, columns=["SUBJECT_ID", "CATEGORY", "TEXT"])
genders = pd.read_parquet(snakemake.input.patients, columns=["SUBJECT_ID", "GENDER"]).set_index("SUBJECT_ID")["GENDER"]
ratio = gender_ratio(notes, genders, attributes)
log.info("gender ratio from %d discharge notes", len(discharge_summaries(notes)))

# the paper's layout for the gender set: one row per category, M and F mean scores per model
gender = long[long["target_set"] == p.gender_set]
wide = ratio[["category"]].copy()
for model in p.models:
    if model in not_applicable:
        wide[f"{model} M"] = wide[f"{model} F"] = "not applicable"
        continue
    cell = gender[gender["model"] == model].set_index("category")
    star = cell["wilcoxon_p"].lt(p.alpha).map({True: "*", False: ""})
    wide[f"{model} M"] = (cell["reference_mean"].map("{:.3f}".format) + star).reindex(wide["category"]).to_numpy()
    wide[f"{model} F"] = (cell["group_mean"].map("{:.3f}".format) + star).reindex(wide["category"]).to_numpy()
    if "mannwhitney_vs_control_p" in cell:
        p_values = cell["mannwhitney_vs_control_p"].map(lambda v: "control" if pd.isna(v) else f"{v:.2g}")
        wide[f"{model} M-F vs control p"] = p_values.reindex(wide["category"]).to_numpy()
counts = gender.drop_duplicates("category").set_index("category")
wide["# of templates"] = counts["items"].reindex(wide["category"]).to_numpy() if len(counts) else 0
wide["Gender ratio (M, F)"] = [f"{m:.1%}, {f:.1%}" if n else "no discharge note mentions"
                               for m, f, n in zip(ratio["male_share"], ratio["female_share"], ratio["patients"])]
wide["patients mentioning"] = ratio["patients"].to_numpy()
sample = {}
for template, category in templates:
    sample.setdefault(category, template)
wide["Sample template"] = wide["category"].map(sample)
caption = (f"Log-probability bias scores (mean over templates x attributes x word pairs; {p.gender_set} set, "
           f"M = {', '.join(p.target_sets[p.gender_set][list(p.target_sets[p.gender_set])[0]])}). "
           f"* Wilcoxon signed-rank p < {p.alpha} between paired male and female scores. "
           "# of templates counts template x attribute items. M-F vs control p: two-sided Mann-Whitney U of the "
           "category's attributes against the control category's, each attribute one value (its mean M-F "
           "difference over templates and word pairs; its items share its word pieces, so they are not "
           "independent). Gender ratio: patients whose discharge notes mention any attribute of the category.")
write_table(wide, snakemake.output.csv, snakemake.output.md, title="Table 3: log-probability bias scores",
            notes=(caption, *[f"{model}: {reason}" for model, reason in not_applicable.items()]))
fix_lines = ["# Fixes applied to the template file", "", f"Source: `{snakemake.input.templates}`", ""]
fix_lines += [f"- {f}" for f in fixes] or ["- none"]
with open(snakemake.output.fixes, "w", encoding="utf-8") as handle:
    handle.write("\n".join(fix_lines) + "\n")
