"""Xie et al. 2024's Figure 2: every model and debiasing method as a point of two SEAT effect sizes."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from medbias.core.figures import MEASURES, pyplot, save
from medbias.studies.plm.plan import debias_label, method_of


def seat_axis_label(name: str, averages) -> str:
    """An axis label for a SEAT test, or for an average with the tests it averages."""
    return f"{name} (mean of {', '.join(averages[name])})" if name in averages else name


def plot_seat_positions(points: pd.DataFrame, x_label: str, y_label: str, png: str, pdf: str) -> None:
    """Xie et al. Figure 2: one point per model at (race SEAT effect size, LGBTQ+ SEAT effect size)
    before debiasing, with an arrow to each debiased position (one colour and marker per method); the
    origin is no bias. ``points``: label, method ('none' for the plain model), x, y. Model labels sit
    on the side of their point that faces the middle of the plot, so none runs over an axis."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 5.6))
    styles = {
        "dropout": (MEASURES[0], "s"),
        "cda": (MEASURES[2], "D"),
        "sentencedebias": (MEASURES[4], "^"),
        "inlp": (MEASURES[1], "v"),
    }
    plain = points[points["method"] == "none"].set_index("label")
    for debias in dict.fromkeys(points["method"]):
        if debias == "none":
            continue
        color, marker = styles[method_of(debias)]
        moved = points[points["method"] == debias]
        for row in moved.itertuples():
            if row.label in plain.index:
                start = plain.loc[row.label]
                ax.annotate(
                    "",
                    (row.x, row.y),
                    (start["x"], start["y"]),
                    arrowprops={"arrowstyle": "->", "color": color, "linewidth": 1.2, "shrinkA": 4, "shrinkB": 4},
                )
        if len(moved):
            ax.scatter(
                moved["x"],
                moved["y"],
                color=color,
                marker=marker,
                s=28,
                label=f"after {debias_label(debias)}",
                zorder=2,
                edgecolors="white",
                linewidths=0.5,
            )
    ax.scatter(
        plain["x"],
        plain["y"],
        color="black",
        s=36,
        zorder=3,
        edgecolors="white",
        linewidths=0.8,
        label="before debiasing",
    )
    ax.margins(x=0.25, y=0.15)
    middle = (min(points["x"].min(), 0) + max(points["x"].max(), 0)) / 2
    for i, (label, row) in enumerate(plain.sort_values("y").iterrows()):
        right = row["x"] <= middle  # write towards the middle of the plot
        ax.annotate(
            label,
            (row["x"], row["y"]),
            fontsize=8,
            xytext=(14 if right else -14, -16 if i % 2 == 0 else 14),
            textcoords="offset points",
            ha="left" if right else "right",
            va="center",
            arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.6},
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8},
        )
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel(f"{x_label} effect size (> 0: stereotypical association)")
    ax.set_ylabel(f"{y_label} effect size")
    ax.set_title("SEAT effect sizes before and after debiasing")
    ax.legend(loc="best")
    fig.tight_layout()
    save(fig, png, pdf)


def benchmark_legend(rules: Sequence[str], markers: Sequence[str]) -> list:
    """The benchmark figure's key: the colour of a plain and of a debiased model, and (grey) the marker
    of each CrowS-Pairs scoring rule."""
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color=MEASURES[0], marker="o", linestyle="-", markersize=4, label="plain model"),
        Line2D([], [], color=MEASURES[1], marker="o", linestyle="-", markersize=4, label="debiased"),
    ]
    if len(rules) > 1:
        handles += [
            Line2D([], [], color="grey", marker=markers[j % len(markers)], linestyle="", label=f"{rule} rule")
            for j, rule in enumerate(rules)
        ]
    return handles


def plot_benchmark_intervals(long: pd.DataFrame, labels, png: str, pdf: str) -> None:
    """Each evaluation's CrowS-Pairs metric (one marker per scoring rule, side by side) and StereoSet
    intrasentence SS with its 95% interval, one panel each, against the unbiased 50 (dashed);
    evaluations where a benchmark does not apply are left out of its panel."""
    plt = pyplot()
    panels = [
        ("crows_pairs", "all", "metric", "CrowS-Pairs metric"),
        ("intrasentence", "overall", "ss", "StereoSet SS"),
    ]
    markers = ["o", "s", "D", "^"]
    order = list(dict.fromkeys(zip(long["model"], long["debias"])))
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 0.5 * len(order) + 1.8), sharey=True)
    for ax, (benchmark, bias_type, measure, title) in zip(axes, panels):
        chosen = long[
            (long["benchmark"] == benchmark) & (long["bias_type"] == bias_type) & (long["measure"] == measure)
        ]
        rules = list(dict.fromkeys(chosen["rule"])) if "rule" in chosen else [""]
        for j, rule in enumerate(rules):
            rows = chosen[chosen["rule"] == rule].set_index(["model", "debias"]) if "rule" in chosen else chosen
            offset = (j - (len(rules) - 1) / 2) * 0.22
            for y, key in enumerate(order):
                if key not in rows.index:
                    continue
                row = rows.loc[key]
                color = MEASURES[0] if key[1] == "none" else MEASURES[1]
                low, high = row["ci_low"], row["ci_high"]
                ax.errorbar(
                    row["value"],
                    y + offset,
                    xerr=[[row["value"] - low], [high - row["value"]]] if low == low else None,
                    fmt=markers[j % len(markers)],
                    color=color,
                    capsize=2,
                    markersize=4,
                )
        if benchmark == "crows_pairs":
            ax.legend(handles=benchmark_legend(rules, markers), fontsize=7, loc="lower right", title_fontsize=7)
        ax.axvline(50, color="grey", linestyle="--", linewidth=1)
        ax.set_title(title)
        ax.set_xlabel("score (50 = no preference)")
    axes[0].set_yticks(range(len(order)))
    axes[0].set_yticklabels([f"{labels.get(m, m)} / {d}" for m, d in order])
    axes[0].invert_yaxis()
    fig.tight_layout()
    save(fig, png, pdf)
