"""Zhang et al. 2020's figures: fill-in-the-blanks (Figure 1, and its completions as a table), the
fairness gaps with significant recall gaps (Figures 4 and 5) and AUPRC after debiasing against the
baseline."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from medbias.core.figures import MEASURES, SERIES, error_bars, pyplot, save, wrapped_title
from medbias.io.tables import PaperTable


def fill_in_the_blank_lines(table: pd.DataFrame, width: int = 110) -> list[tuple[str, str]]:
    """Figure 1's text, as the paper lays it out: for each model and template a header, then one line
    per race word, the template with the race word in its slot and each [MASK] replaced by the
    model's greedy completion in brackets (wrapped at ``width`` characters). (text, kind) pairs, kind
    'header', 'line' or 'gap'."""
    import textwrap

    greedy = table.sort_values("mask", kind="stable").groupby(["model", "template", "fill"], sort=False)["greedy"]
    greedy = greedy.apply(list).reset_index()
    lines: list[tuple[str, str]] = []
    for model, template in dict.fromkeys(zip(greedy["model"], greedy["template"])):
        lines += [(part, "header") for part in textwrap.wrap(f"{model}: {template}", width)]
        block = greedy[(greedy["model"] == model) & (greedy["template"] == template)]
        for row in block.itertuples():
            sentence = template.replace("[RACE]", row.fill)
            for token in row.greedy:
                sentence = sentence.replace("[MASK]", f"[{token}]", 1)
            lines += [
                (part, "line")
                for part in textwrap.wrap(sentence, width, initial_indent="  ", subsequent_indent="      ")
            ]
        lines.append(("", "gap"))
    return lines[:-1]


def plot_fill_in_the_blanks(table: pd.DataFrame, png: str, pdf: str) -> None:
    """Zhang et al. Figure 1: for each model and template, the template completed for every race word
    (``fill_in_the_blank_lines``), in a fixed-width font so the completions line up."""
    plt = pyplot()
    lines = fill_in_the_blank_lines(table)
    line_height, top = 0.19, 0.55
    height = top + line_height * len(lines) + 0.2
    fig = plt.figure(figsize=(10.5, height))
    fig.text(
        0.02,
        1 - 0.3 / height,
        "Fill-in-the-blank: greedy completions of [MASK] by race word (Zhang et al. 2020, Figure 1)",
        fontsize=10,
        va="center",
    )
    for k, (text, kind) in enumerate(lines):
        fig.text(
            0.02,
            1 - (top + line_height * (k + 0.5)) / height,
            text,
            family="monospace",
            fontsize=8,
            va="center",
            weight="bold" if kind == "header" else "normal",
        )
    save(fig, png, pdf)


def plot_gaps_with_significant_recall(
    gaps: pd.DataFrame, shorthand: dict[str, str], attribute: str, group: str, title: str, png: str, pdf: str
) -> None:
    """Zhang et al. Figures 4 and 5: for the tasks with a significant recall gap for ``group``, the
    recall, parity and specificity gaps with their bootstrap 95% intervals (positive: better for
    ``group``). Without such tasks the figure says so."""
    plt = pyplot()
    part = gaps[(gaps["attribute"] == attribute) & (gaps["group"] == group)]
    tasks = part.loc[(part["metric"] == "recall") & part["significant"], "task"].tolist()
    # measure colours, not group colours: a red or blue bar here would read as female or male
    metrics = list(zip(("recall", "parity", "specificity"), MEASURES))
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
    if tasks:
        ax.legend(fontsize=8)
    else:
        ax.set_yticks([])
        ax.text(
            0.5,
            0.7,
            f"no task with a significant recall gap for {group}",
            ha="center",
            va="center",
            transform=ax.transAxes,
            bbox={"facecolor": "white", "edgecolor": "grey"},
        )
    ax.set_title(wrapped_title(title, fig.get_figwidth()), fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_auprc_debiased_vs_baseline(table: pd.DataFrame, debiased: str, png: str, pdf: str) -> None:
    """Zhang et al. Figure A1: AUPRC of the debiased model against the baseline per task, 95%
    bootstrap error bars both ways, the diagonal, and Pearson's r in the title."""
    plt = pyplot()
    base = table[table["model"] == "baseline"].set_index("task")
    other = table[table["model"] == debiased].set_index("task").reindex(base.index)
    fig, ax = plt.subplots(figsize=(5.2, 5.2))
    ax.errorbar(
        base["auprc"],
        other["auprc"],
        xerr=error_bars(base["auprc"], base["auprc_low"], base["auprc_high"]),
        yerr=error_bars(other["auprc"], other["auprc_low"], other["auprc_high"]),
        fmt="o",
        ms=3,
        alpha=0.7,
        elinewidth=0.6,
        color=SERIES,
    )
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    r = float(base["auprc"].corr(other["auprc"]))
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("AUPRC, baseline clinical BERT")
    ax.set_ylabel(f"AUPRC, {debiased}")
    ax.set_title(f"AUPRC per task ({len(base)} tasks), Pearson r = {r:.3f}", fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)


def figure1_table(
    completions: pd.DataFrame, not_applicable: Sequence[str] = (), settings: Sequence[str] = ()
) -> PaperTable:
    """Figure 1's completions as a table: per template, race word and mask, the greedy completion and
    the top-k tokens; the notes say which models could not fill blanks and why."""
    notes = (
        "greedy: masks filled left to right, each completion fed back; top_k: all masks open at once, "
        "with probabilities.",
        *not_applicable,
        *settings,
    )
    return PaperTable(completions, "Figure 1: fill-in-the-blank completions by race", notes)


def worst_recall_gap_changes(gaps: pd.DataFrame) -> pd.DataFrame:
    """Per model, method, attribute and task, the recall gap of the group whose gap was widest before
    mitigation, and its change (|after| - |before|): the point the trade-off figure plots."""
    recall = gaps[(gaps["metric"] == "recall") & gaps["gap_before"].notna() & gaps["gap_after"].notna()]
    widest = recall.assign(width=recall["gap_before"].abs()).sort_values("width", ascending=False, kind="stable")
    return widest.drop_duplicates(["model", "method", "attribute", "task"]).drop(columns="width")


def plot_mitigation_tradeoff(
    gaps: pd.DataFrame, performance: pd.DataFrame, families: dict[str, str], png: str, pdf: str
) -> None:
    """One panel per method and protected attribute: each changed task's change in balanced
    accuracy at the decision (x; expected over a randomised rule, comparable across methods) against
    the change in its widest recall gap (y, |after| - |before|; below 0: narrower), coloured by task
    family (``families``: task -> family); a filled marker where the change in the gap is significant
    after BH, an open one where it is not."""
    plt = pyplot()
    cost = performance[(performance["metric"] == "balanced_accuracy") & performance["changed"].astype(bool)]
    points = worst_recall_gap_changes(gaps).merge(
        cost[["model", "method", "attribute", "task", "change"]].rename(columns={"change": "cost_change"}),
        on=["model", "method", "attribute", "task"],
    )
    panels = list(dict.fromkeys(zip(points["model"], points["attribute"], points["method"])))
    columns = len(dict.fromkeys(points["method"])) or 1
    rows = max(1, -(-len(panels) // columns))
    fig, axes = plt.subplots(rows, columns, figsize=(3.1 * columns, 2.9 * rows + 0.6), squeeze=False)
    family_names = list(dict.fromkeys(families.values()))
    colours = {family: MEASURES[k % len(MEASURES)] for k, family in enumerate(family_names)}
    for ax in axes.ravel()[len(panels) :]:
        ax.set_visible(False)
    for ax, (model, attribute, method) in zip(axes.ravel(), panels):
        panel = points[(points["model"] == model) & (points["attribute"] == attribute) & (points["method"] == method)]
        for family in family_names:
            part = panel[panel["task"].map(families) == family]
            for significant, face in ((True, None), (False, "none")):
                chosen = part[part["significant_change_bh"] == significant]
                ax.scatter(
                    chosen["cost_change"],
                    chosen["change"],
                    s=14,
                    color=colours[family],
                    facecolors=face,
                    label=family if significant or not part["significant_change_bh"].any() else None,
                )
        ax.axhline(0, color="grey", lw=0.7, ls="--")
        ax.axvline(0, color="grey", lw=0.7, ls="--")
        ax.set_title(f"{model}, {method}, {attribute}", fontsize=9)
        ax.set_xlabel("balanced accuracy change (after - before)")
        ax.set_ylabel("widest recall gap, |after| - |before|")
    handles = [
        plt.Line2D([], [], marker="o", ls="", color=colours[family], label=family) for family in family_names
    ] + [
        plt.Line2D([], [], marker="o", ls="", color=SERIES, markerfacecolor="none", label="change not significant (BH)")
    ]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False)
    fig.suptitle(
        wrapped_title(
            "Mitigation: the widest recall gap's change against the change in balanced accuracy, per changed task",
            3.1 * columns,
        )
    )
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    save(fig, png, pdf)


def plot_intersection_cells(
    cells: pd.DataFrame, table: pd.DataFrame, crossing: str, shorthand: dict[str, str], png: str, pdf: str
) -> None:
    """One panel per model: a task x cell grid of the recall gap of each tested cell against the rest
    (red: lower recall than the rest, blue: higher; grey: not tested, too small), a box around each
    task's worst cell that is significant after BH."""
    import numpy as np

    plt = pyplot()
    part = cells[cells["crossing"] == crossing]
    models = list(dict.fromkeys(part["model"]))
    columns = sorted(set(part.loc[part["recall_tested"], "cell"]))
    tasks = list(dict.fromkeys(part["task"]))
    width = max(4.0, 0.45 * max(len(columns), 1) + 2.2)
    fig, axes = plt.subplots(1, len(models), figsize=(width * len(models), 0.16 * len(tasks) + 2.2), squeeze=False)
    for ax, model in zip(axes[0], models):
        grid = part[(part["model"] == model) & part["recall_tested"]].pivot_table(
            index="task", columns="cell", values="recall_gap", aggfunc="first"
        )
        grid = grid.reindex(index=tasks, columns=columns)
        ax.set_facecolor("#d9d9d9")  # a cell too small to test shows as grey, not as a gap of 0
        image = ax.imshow(np.ma.masked_invalid(grid.to_numpy(dtype=float)), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
        ax.set_xticks(range(len(columns)), columns, rotation=60, ha="right", fontsize=6)
        ax.set_yticks(range(len(tasks)), [shorthand.get(t, t) for t in tasks], fontsize=6)
        worst = table[
            (table["model"] == model)
            & (table["crossing"] == crossing)
            & (table["metric"] == "recall")
            & table["significant_bh"].astype(bool)
        ]
        for row in worst.itertuples(index=False):
            if row.worst_cell in columns:
                ax.add_patch(
                    plt.Rectangle(
                        (columns.index(row.worst_cell) - 0.5, tasks.index(row.task) - 0.5),
                        1,
                        1,
                        fill=False,
                        lw=1.5,
                        edgecolor="black",
                    )
                )
        ax.set_title(f"{model}", fontsize=9)
        fig.colorbar(image, ax=ax, shrink=0.5, label="recall gap, cell - rest")
    fig.suptitle(
        wrapped_title(
            f"Recall gap of each tested cell of {crossing} against the rest, per task (boxed: worst cell, "
            "significant after BH; grey: too small to test)",
            width * len(models),
        )
    )
    fig.tight_layout()
    save(fig, png, pdf)
