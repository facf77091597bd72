"""Sogancioglu et al. 2023's figures: annotated note counts, Direct Bias of the depression synonyms (Figure 2) and LIME weights (Figure 3)."""

from __future__ import annotations

import pandas as pd


from medbias.core.figures import error_bars, pyplot, save


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
           yerr=error_bars(table["signed_mean_cos"], table["signed_low"], table["signed_high"]), capsize=4)
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
