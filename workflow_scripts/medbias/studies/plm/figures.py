"""Xie et al. 2024's Figure 2: every model and debiasing method as a point of two SEAT effect sizes."""

from __future__ import annotations

import pandas as pd


from medbias.core.figures import pyplot, save


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
