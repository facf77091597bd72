"""Zhang et al. 2020's figures: fill-in-the-blanks (Figure 1), the fairness gaps with significant recall gaps (Figures 4 and 5) and AUPRC after debiasing against the baseline."""

from __future__ import annotations

import pandas as pd


from medbias.core.figures import error_bars, pyplot, save


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
        err = error_bars(rows["gap"], rows["ci_low"], rows["ci_high"])
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
                xerr=error_bars(base["auprc"], base["auprc_low"], base["auprc_high"]),
                yerr=error_bars(other["auprc"], other["auprc_low"], other["auprc_high"]),
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
