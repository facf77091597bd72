"""Figures: readable, labelled, written as PNG and PDF (PDF without a timestamp, for byte-stable output)."""

from __future__ import annotations

import pandas as pd


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, png: str, pdf: str) -> None:
    fig.savefig(png, dpi=150)
    fig.savefig(pdf, metadata={"CreationDate": None})
    pyplot().close(fig)


def plot_weat_by_decade(table: pd.DataFrame, seeds: pd.DataFrame, png: str, pdf: str) -> None:
    """Rios et al. Figure 1, one column per stereotype. Top row: the unnormalised difference of mean
    associations, which carries the trend (d saturates), with the calibrated 95% interval shaded
    (random attribute sets; the bootstrap CI when no calibrated null ran); filled markers: significant
    (the table's ``significant`` column); grey dots: the other training seed replicates. Bottom row:
    Caliskan's effect size d with its bootstrap 95% CI shaded, seeds as grey dots."""
    plt = pyplot()
    tests = list(dict.fromkeys(table["test"]))
    fig, axes = plt.subplots(2, len(tests), figsize=(3.4 * len(tests), 6.4), sharex=True, sharey="row", squeeze=False)
    calibrated = table["md_ci_low"].notna().any()
    for j, test in enumerate(tests):
        part = table[table["test"] == test]
        others = seeds[(seeds["test"] == test) & (seeds["replicate"] > 0)]
        position = {d: i for i, d in enumerate(part["decade"])}
        x = list(range(len(part)))
        panels = ((0, "mean_difference", "md_ci_low", "md_ci_high", "#228833"), (1, "effect_size", "ci_low", "ci_high", "#4477aa"))
        for row, column, low, high, colour in panels:
            ax = axes[row, j]
            if row == 1 or calibrated:
                ax.fill_between(x, part[low], part[high], alpha=0.25, color=colour)
            ax.plot(x, part[column], color=colour)
            ax.scatter([position[d] for d in others["decade"]], others[column], s=9, color="#888888", zorder=2)
            significant = part["significant"].to_numpy(dtype=bool)
            ax.scatter([i for i, s in zip(x, significant) if s], part[column][significant], color=colour, zorder=3)
            ax.scatter([i for i, s in zip(x, significant) if not s], part[column][~significant],
                       facecolor="white", edgecolor=colour, zorder=3)
            ax.axhline(0, color="black", lw=0.8)
        title = part["title"].iloc[0]
        marked = part["control"].iloc[0] and "control" not in title.lower()
        axes[0, j].set_title(f"({'abcdefghij'[j]}) {title}{' (control)' if marked else ''}", fontsize=10)
        axes[1, j].set_xticks(x, [d[:4] + "s" for d in part["decade"]], rotation=45, fontsize=8)
    axes[0, 0].set_ylabel("mean s(male) - mean s(female)\n(+: male closer to A)")
    axes[1, 0].set_ylabel("WEAT effect size d")
    null = "calibrated" if calibrated else "bootstrap"
    fig.suptitle(f"WEAT by decade. Top: mean difference, shaded {null} 95% interval; bottom: d, shaded bootstrap 95% CI.\n"
                 f"Filled: {null} p < 0.05; grey dots: other training seeds", fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_ect_by_decade(table: pd.DataFrame, png: str, pdf: str) -> None:
    """Rios et al. Figure 2: ECT per decade for each word set, bootstrap 95% CI shaded (1 = no bias)."""
    plt = pyplot()
    sets = list(dict.fromkeys(table["word_set"]))
    fig, axes = plt.subplots(1, len(sets), figsize=(5 * len(sets), 3.8), squeeze=False)
    for j, name in enumerate(sets):
        part = table[table["word_set"] == name]
        x = range(len(part))
        ax = axes[0, j]
        ax.fill_between(x, part["ci_low"], part["ci_high"], alpha=0.25, color="#aa3377")
        ax.plot(x, part["ect"], marker="o", color="#aa3377")
        ax.set_xticks(list(x), [d[:4] + "s" for d in part["decade"]])
        ax.set_ylim(min(0.0, float(part["ci_low"].min()) - 0.05), 1.02)
        ax.set_title(f"({'ab'[j]}) {name.replace('_', ' ')} (n={int(part['n_targets'].max())})")
        ax.set_ylabel("ECT (Spearman rho; 1 = no bias)")
    fig.tight_layout()
    save(fig, png, pdf)


def plot_fill_in_the_blanks(table: pd.DataFrame, png: str, pdf: str) -> None:
    """Zhang et al. Figure 1: for each model and template (rows) and race word (columns), the greedy
    completion of the template's masks, as a grid of text."""
    plt = pyplot()
    greedy = table.groupby(["model", "template", "fill"], sort=False)["greedy"].apply(" / ".join).reset_index()
    fills = list(dict.fromkeys(greedy["fill"]))
    rows = list(dict.fromkeys(zip(greedy["model"], greedy["template"])))
    cells = [[greedy[(greedy["model"] == m) & (greedy["template"] == t) & (greedy["fill"] == f)]["greedy"].iloc[0]
              for f in fills] for m, t in rows]
    labels = [f"{m}:\n{t if len(t) <= 48 else t[:45] + '...'}" for m, t in rows]
    fig, ax = plt.subplots(figsize=(2.0 + 1.9 * len(fills), 0.9 + 0.62 * len(rows)))
    ax.axis("off")
    grid = ax.table(cellText=cells, rowLabels=labels, colLabels=fills, loc="center", cellLoc="center")
    grid.auto_set_font_size(False)
    grid.set_fontsize(8)
    grid.scale(1, 2.4)
    ax.set_title("Fill-in-the-blank: greedy completions of [MASK] by race word", fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)


def _error_bars(value, low, high):
    """Error-bar lengths below and above ``value`` (a percentile interval need not contain the
    estimate; a bar never goes negative)."""
    import numpy as np

    return [np.clip(value - low, 0, None), np.clip(high - value, 0, None)]


def plot_gaps_with_significant_recall(gaps: pd.DataFrame, shorthand: dict[str, str], attribute: str, group: str,
                                      title: str, png: str, pdf: str) -> None:
    """Zhang et al. Figures 4 and 5: for the tasks with a significant recall gap for ``group``, the
    recall, parity and specificity gaps with their bootstrap 95% intervals (positive: better for
    ``group``). Without such tasks the figure says so."""
    plt = pyplot()
    part = gaps[(gaps["attribute"] == attribute) & (gaps["group"] == group)]
    tasks = part.loc[(part["metric"] == "recall") & part["significant"], "task"].tolist()
    metrics = [("recall", "#cc3311"), ("parity", "#4477aa"), ("specificity", "#228833")]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(tasks) + 2.5), 4.6))
    width = 0.26
    for k, (metric, colour) in enumerate(metrics):
        rows = part[part["metric"] == metric].set_index("task").reindex(tasks)
        x = [i + (k - 1) * width for i in range(len(tasks))]
        err = _error_bars(rows["gap"], rows["ci_low"], rows["ci_high"])
        ax.bar(x, rows["gap"], width, yerr=err, color=colour, label=f"{metric} gap", capsize=2)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(tasks)), [shorthand.get(t, t) for t in tasks], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(f"gap (+: better for {group})")
    if not tasks:
        ax.text(0.5, 0.5, f"no task with a significant recall gap for {group}", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_auprc_debiased_vs_baseline(table: pd.DataFrame, debiased: str, png: str, pdf: str) -> None:
    """Zhang et al. Figure A1: AUPRC of the debiased model against the baseline per task, 95%
    bootstrap error bars both ways, the diagonal, and Pearson's r in the title."""
    plt = pyplot()
    base = table[table["model"] == "baseline"].set_index("task")
    other = table[table["model"] == debiased].set_index("task").reindex(base.index)
    fig, ax = plt.subplots(figsize=(5.2, 5.2))
    ax.errorbar(base["auprc"], other["auprc"],
                xerr=_error_bars(base["auprc"], base["auprc_low"], base["auprc_high"]),
                yerr=_error_bars(other["auprc"], other["auprc_low"], other["auprc_high"]),
                fmt="o", ms=3, alpha=0.7, elinewidth=0.6, color="#4477aa")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    r = float(base["auprc"].corr(other["auprc"]))
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("AUPRC, baseline clinical BERT")
    ax.set_ylabel(f"AUPRC, {debiased}")
    ax.set_title(f"AUPRC per task ({len(base)} tasks), Pearson r = {r:.3f}", fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_annotated_counts(counts: pd.DataFrame, png: str, pdf: str) -> None:
    """Sogancioglu et al. Figure 1: annotated notes voted positive per phenotype, and the notes
    annotated None (the negatives of every task)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    labels = [*counts["task"], "None"]
    values = [*counts["positive"], int(counts["none"].iloc[0])]
    bars = ax.bar(labels, values, color=["#4c72b0"] * len(counts) + ["#999999"])
    ax.bar_label(bars)
    ax.set_ylabel("annotated notes (majority vote)")
    ax.set_title("Annotated phenotypes in the labelled set")
    ax.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_direct_bias(table: pd.DataFrame, png: str, pdf: str) -> None:
    """Sogancioglu et al. Figure 2: per embedding, the mean cosine of the depression synonyms with
    the gender direction (positive: closer to the female words, negative: male) with its 95%
    interval; the Direct Bias (mean |cos|, eq. 1) is printed on each bar."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    x = range(len(table))
    colors = ["#c44e52" if v > 0 else "#4c72b0" for v in table["signed_mean_cos"]]
    ax.bar(x, table["signed_mean_cos"], color=colors,
           yerr=_error_bars(table["signed_mean_cos"], table["signed_low"], table["signed_high"]), capsize=4)
    for i, row in enumerate(table.itertuples()):
        ax.annotate(f"DB {row.direct_bias:.3f}", (i, row.signed_mean_cos), ha="center",
                    va="bottom" if row.signed_mean_cos >= 0 else "top", fontsize=8,
                    xytext=(0, 4 if row.signed_mean_cos >= 0 else -4), textcoords="offset points")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(list(x), table["label"])
    ax.set_ylabel("mean cos(synonym, gender direction)\n< 0 male    > 0 female")
    ax.set_title("Direct Bias of depression synonyms")
    fig.tight_layout()
    save(fig, png, pdf)


def plot_lime(table: pd.DataFrame, title: str, png: str, pdf: str) -> None:
    """Sogancioglu et al. Figure 3: for each explained pair (rows: pair x treatment) the top words by
    LIME weight of the F copy and of the M copy (green: towards the positive class, red: against),
    titled with the probability p and the predicted class y of that copy."""
    plt = pyplot()
    panels = table[["pair", "treatment"]].drop_duplicates().reset_index(drop=True)
    fig, axes = plt.subplots(len(panels), 2, figsize=(8.0, 1.9 * len(panels) + 0.6), squeeze=False)
    for i, panel in panels.iterrows():
        for j, copy in enumerate(("F", "M")):
            ax = axes[i][j]
            part = table[(table["pair"] == panel["pair"]) & (table["treatment"] == panel["treatment"])
                         & (table["copy"] == copy)].sort_values("rank", ascending=False)
            ax.barh(part["word"], part["weight"], color=["#55a868" if w > 0 else "#c44e52" for w in part["weight"]])
            ax.axvline(0, color="black", linewidth=0.6)
            first = part.iloc[0]
            ax.set_title(f"pair {panel['pair']} ({'label 1' if first['label'] else 'label 0'}), {panel['treatment']}, "
                         f"{copy} copy: p={first['probability']:.2f}, y={first['predicted']}", fontsize=8)
            ax.tick_params(labelsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_seat_positions(points: pd.DataFrame, x_label: str, y_label: str, png: str, pdf: str) -> None:
    """Xie et al. Figure 2: one point per model at (race SEAT effect size, LGBTQ+ SEAT effect size)
    before debiasing, with an arrow to each debiased position (one colour per method); the origin
    is no bias. ``points``: label, method ('none' for the plain model), x, y."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    colors = {"dropout": "#55a868", "sentencedebias": "#c44e52", "inlp": "#8172b2"}
    plain = points[points["method"] == "none"].set_index("label")
    ax.scatter(plain["x"], plain["y"], color="black", zorder=3)
    for i, (label, row) in enumerate(plain.sort_values("y").iterrows()):
        # alternate below/above so that models at nearly the same position stay readable
        ax.annotate(label, (row["x"], row["y"]), fontsize=8, xytext=(-30, -22 if i % 2 == 0 else 14),
                    textcoords="offset points", ha="right", va="center",
                    arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.6})
    for method, color in colors.items():
        moved = points[points["method"] == method]
        for row in moved.itertuples():
            if row.label in plain.index:
                start = plain.loc[row.label]
                ax.annotate("", (row.x, row.y), (start["x"], start["y"]),
                            arrowprops={"arrowstyle": "->", "color": color, "linewidth": 1.2})
        if len(moved):
            ax.scatter(moved["x"], moved["y"], color=color, s=14, label=method, zorder=2)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel(f"{x_label} effect size (> 0: stereotypical association)")
    ax.set_ylabel(f"{y_label} effect size")
    ax.set_title("SEAT effect sizes before and after debiasing")
    if len(points[points["method"] != "none"]):
        ax.legend(title="debiased by", fontsize=8)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_audit_effect_sizes(effects: pd.DataFrame, title: str, png: str, pdf: str) -> None:
    """The audit card's summary figure: one horizontal bar per test (SEAT or WEAT effect size d)
    with its 95% interval; 0 is no association. ``effects``: test, effect_size, ci_low, ci_high."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(effects), 2) + 1.4))
    if len(effects):
        y = range(len(effects))
        low = (effects["effect_size"] - effects["ci_low"]).clip(lower=0).fillna(0)
        high = (effects["ci_high"] - effects["effect_size"]).clip(lower=0).fillna(0)
        ax.barh(list(y), effects["effect_size"], xerr=[low, high], color="#4c72b0", capsize=3)
        ax.set_yticks(list(y), effects["test"])
        ax.invert_yaxis()
    else:
        ax.text(0.5, 0.5, "no effect size: every test was skipped (see the card)", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_yticks([])
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlim(-2, 2)  # Caliskan's d lies in [-2, 2]
    ax.set_xlabel("effect size d (> 0: X closer to A than Y is)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_error_rates(table: pd.DataFrame, png: str, pdf: str) -> None:
    """The error-rate table as two panels of rates with Clopper-Pearson 95% intervals: false-positive
    rates of controls (the nominal level as a dashed line) and power on planted effects."""
    plt = pyplot()
    panels = [("false-positive rate", "controls: share flagged (nothing planted)"), ("power", "planted: share found")]
    heights = [max(1, int((table["measures"] == m).sum())) for m, _ in panels]
    fig, axes = plt.subplots(2, 1, figsize=(9, 1.2 + 0.42 * sum(heights)), gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (measure, title) in zip(axes[:, 0], panels):
        part = table[table["measures"] == measure].reset_index(drop=True)
        y = list(range(len(part)))[::-1]
        ax.errorbar(part["rate"], y, xerr=[part["rate"] - part["ci_low"], part["ci_high"] - part["rate"]], fmt="o",
                    color="#4477aa", ecolor="#99aacc", capsize=3)
        labels = [f"{r.test} ({r.source if r.source.startswith('constructed') else r.source.split(' (')[0]}), "
                  f"{r.p_kind}: {r.flagged}/{r.decisions}" for r in part.itertuples()]
        ax.set_yticks(y, labels, fontsize=7)
        if measure == "false-positive rate" and len(part):
            ax.axvline(float(part["level"].iloc[0]), color="#cc3311", ls="--", lw=1, label="nominal level")
            ax.legend(fontsize=7, loc="lower right")
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(title, fontsize=9)
    axes[-1, 0].set_xlabel("rate (Clopper-Pearson 95% interval)")
    fig.tight_layout()
    save(fig, png, pdf)
