"""Rule script: Tables 2, 4 and 5 and Figure 2 of the plm study from every model's evaluations."""

import pandas as pd

from medbias.jsonio import read_json
from medbias.logs import setup_rule_logging
from medbias.plm import METHOD_LABELS, debias_changes
from medbias.plots import plot_seat_positions
from medbias.tables import write_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
out = snakemake.output


def stamped(paths, reader):
    frames = []
    for (model, debias), path in zip(p.evaluations, paths):
        frames.append(reader(path).assign(model=model, debias=debias))
    return pd.concat(frames, ignore_index=True)


seat = stamped(snakemake.input.seat, pd.read_csv)
stereo = stamped(snakemake.input.stereoset, pd.read_csv)
summaries = {(s["model"], s["debias"]): s for s in map(read_json, snakemake.input.summary)}
label = {m: p.labels.get(m, m) for m in p.models}
notes_unloadable = [f"{label[m]}: {summaries[(m, 'none')]['status']}" for m in p.models
                    if summaries[(m, "none")]["status"] != "ok"]
tests = list(dict.fromkeys(seat["test"]))
families = list(p.families)

# Table 2: SEAT effect sizes (plain models), every test; p-values in the long CSV
plain = seat[seat["debias"] == "none"]
seat.to_csv(out.seat_long, index=False)
rows = []
for model in p.models:
    row = {"model": label[model]}
    cells = plain[plain["model"] == model].set_index("test")
    for test in tests:
        ok = test in cells.index and cells.at[test, "status"] == "ok"
        row[test] = (f"{cells.at[test, 'effect_size']:+.3f}{'*' if cells.at[test, 'significant'] else ''}"
                     if ok else (cells.at[test, "status"].split(":")[0] if test in cells.index else "not run"))
    rows.append(row)
write_table(pd.DataFrame(rows), out.table2_csv, out.table2_md, "Table 2: SEAT effect sizes (Xie et al. 2024)", (
    f"Effect size of eq. 1 on sentence vectors ({p.pooling} pooling of the last hidden states); * calibrated p < {p.alpha} "
    f"({p.alternative}): the same test for random attribute sets, each disease replaced by a phrase of as many random "
    f"single-token words of the model's vocabulary in the disease templates (the targets held fixed), which the classic permutation test over sentences does not do (it treats "
    f"the sentences of one identity as independent and is anti-conservative); classic p (p_value), both intervals and "
    f"the null's size: seat_long.csv. > 0: the minority identities sit closer to their stereotypical diseases.",
    "control_1 and control_2 are the birthday controls (no association expected). p-values, intervals and out-of-vocabulary words: seat_long.csv.",
    *notes_unloadable))

# Table 4: StereoSet-style stereotype scores
stereo.to_csv(out.stereoset_long, index=False)
whole = ((stereo["blank"] == "all") & (stereo["template"] == "all")) | (stereo["status"] != "ok")
overall = stereo[(stereo["debias"] == "none") & whole]
rows = []
for model in p.models:
    row = {"model": label[model]}
    cells = overall[overall["model"] == model].set_index("family")
    for family in families:
        ok = family in cells.index and cells.at[family, "status"] == "ok"
        row[f"{family} ss"] = cells.at[family, "ss"] if ok else float("nan")
        row[f"{family} lms"] = cells.at[family, "lms"] if ok else float("nan")
        row[f"{family} ties"] = int(cells.at[family, "ties"]) if ok else ""
    marked = [cells.at[f, "status"] for f in families if f in cells.index and cells.at[f, "status"] != "ok"]
    row["status"] = marked[0] if marked else ""  # not loadable, or no trained language-model head
    rows.append(row)
write_table(pd.DataFrame(rows), out.table4_csv, out.table4_md, "Table 4: StereoSet-style scores (Xie et al. 2024)", (
    "ss = % of pairs where the stereotypical sentence scores higher (50 = unbiased; ties left out and counted); "
    "lms = % where a meaningful option beats the unrelated one. Per blank position and template: stereoset_long.csv.",
), digits=2)

# Table 5: signed changes after each debiasing method
changes = debias_changes(seat, stereo, p.methods)
changes.to_csv(out.table5_long, index=False)
measures = [("SEAT", p.figure["x"]), ("SEAT", p.figure["y"]), *[("StereoSet", f) for f in families]]
rows = []
for model in p.models:
    row = {"model": label[model]}
    for method in p.methods:
        for benchmark, measure in measures:
            cell = changes[(changes["model"] == model) & (changes["method"] == method)
                           & (changes["benchmark"] == benchmark) & (changes["measure"] == measure)]
            row[f"{METHOD_LABELS[method]} {measure}"] = (f"{cell['change'].iloc[0]:+.3f}{'' if cell['toward_neutral'].iloc[0] else ' (away)'}"
                                                        if len(cell) else "-")
    rows.append(row)
overall = {"model": "Overall (mean)"}
for method in p.methods:
    for benchmark, measure in measures:
        cells = changes[(changes["method"] == method) & (changes["benchmark"] == benchmark) & (changes["measure"] == measure)]
        overall[f"{METHOD_LABELS[method]} {measure}"] = f"{cells['change'].mean():+.3f}" if len(cells) else "-"
rows.append(overall)
write_table(pd.DataFrame(rows), out.table5_csv, out.table5_md, "Table 5: change after debiasing (Xie et al. 2024)", (
    "Signed change after - before: SEAT effect size; StereoSet score as a fraction (ss/100). '(away)' marks a score "
    "that moved away from neutral (0 for SEAT, 0.5 for StereoSet); '-' a method not run for the model.",
    "Every SEAT test and both families, with before and after: table5_debias_long.csv.", *notes_unloadable))

# Figure 2
points = seat[seat["status"] == "ok"].pivot_table(index=["model", "debias"], columns="test", values="effect_size")
points = points.reset_index().rename(columns={p.figure["x"]: "x", p.figure["y"]: "y", "debias": "method"})
points["label"] = points["model"].map(label)
plot_seat_positions(points[["label", "method", "x", "y"]], p.figure["x"], p.figure["y"], out.fig2_png, out.fig2_pdf)
log.info("plm tables written for %d models and %d evaluations", len(p.models), len(p.evaluations))
