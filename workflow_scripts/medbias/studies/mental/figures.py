"""Sogancioglu et al. 2023's figures: annotated note counts, Direct Bias of the depression synonyms
(Figure 2) and LIME weights (Figure 3)."""

from __future__ import annotations

import pandas as pd

from medbias.core.figures import (
    AGAINST,
    FEMALE,
    MALE,
    NEUTRAL,
    TOWARDS,
    error_bars,
    pyplot,
    save,
)


def plot_annotated_counts(counts: pd.DataFrame, png: str, pdf: str) -> None:
    """Sogancioglu et al. Figure 1: annotated notes voted positive per phenotype, and the notes
    annotated None (the negatives of every task)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    labels = [*counts["task"], "None"]
    values = [*counts["positive"], int(counts["none"].iloc[0])]
    bars = ax.bar(
        labels, values, color=[NEUTRAL] * len(counts) + ["#999999"]
    )  # not a gender: not FEMALE/MALE's colours
    ax.bar_label(bars)
    ax.margins(y=0.12)  # room for the count above the tallest bar
    ax.set_ylabel("annotated notes (majority vote)")
    ax.set_title("Annotated phenotypes in the labelled set")
    ax.tick_params(axis="x", labelrotation=20)
    fig.tight_layout()
    save(fig, png, pdf)


def plot_direct_bias(table: pd.DataFrame, png: str, pdf: str) -> None:
    """Sogancioglu et al. Figure 2, two panels per embedding: Direct Bias (eq. 1, c = 1: the mean
    |cos| of the depression synonyms with the gender direction; the paper's quantity) with its 95%
    interval, and the signed mean cosine with its interval, which says which side the synonyms lean
    to (> 0: the female words, < 0: the male words). Values are on the axes, not printed on the bars."""
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 4.0), sharey=False)
    x = list(range(len(table)))
    left.bar(
        x,
        table["direct_bias"],
        color=NEUTRAL,
        yerr=error_bars(table["direct_bias"], table["direct_bias_low"], table["direct_bias_high"]),
        capsize=4,
    )
    left.set_ylabel("Direct Bias (mean |cos|)")
    left.set_title("Direct Bias (eq. 1) with 95% interval", fontsize=10)
    left.set_ylim(0, max(float(table["direct_bias_high"].max()), float(table["direct_bias"].max())) * 1.15)
    colors = [FEMALE if v > 0 else MALE for v in table["signed_mean_cos"]]
    right.bar(
        x,
        table["signed_mean_cos"],
        color=colors,
        yerr=error_bars(table["signed_mean_cos"], table["signed_low"], table["signed_high"]),
        capsize=4,
    )
    right.axhline(0, color="black", linewidth=0.8)
    right.set_ylabel("signed mean cos (< 0 male, > 0 female)")
    right.set_title("Which side the synonyms lean to (colour: the side)", fontsize=10)
    for ax in (left, right):
        ax.set_xticks(x, table["label"], rotation=20, ha="right")
    fig.suptitle("Gender bias of depression synonyms (Sogancioglu et al. 2023, Figure 2)")
    fig.tight_layout()
    save(fig, png, pdf)


def plot_lime(table: pd.DataFrame, title: str, png: str, pdf: str) -> None:
    """Sogancioglu et al. Figure 3: for each explained pair (rows: pair x treatment) the top words by
    LIME weight of the F copy and of the M copy (green: towards the positive class, red: against, the
    paper's colours), titled with the note's true label, the copy's probability of the positive class
    and its predicted class (an SVM's Platt-scaled probability can sit on the other side of 0.5 from its
    decision, so both are shown). The two copies of a row share one x scale, so their weights compare."""
    plt = pyplot()
    panels = table[["pair", "treatment"]].drop_duplicates().reset_index(drop=True)
    fig, axes = plt.subplots(len(panels), 2, figsize=(8.0, 1.9 * len(panels) + 0.9), squeeze=False, sharex="row")
    for i, panel in panels.iterrows():
        for j, copy in enumerate(("F", "M")):
            ax = axes[i][j]
            part = table[
                (table["pair"] == panel["pair"]) & (table["treatment"] == panel["treatment"]) & (table["copy"] == copy)
            ].sort_values("rank", ascending=False)
            ax.barh(part["word"], part["weight"], color=[TOWARDS if w > 0 else AGAINST for w in part["weight"]])
            ax.axvline(0, color="black", linewidth=0.6)
            first = part.iloc[0]
            ax.set_title(
                f"pair {panel['pair']} (true label {int(first['label'])}), {panel['treatment']}, {copy} copy:\n"
                f"p(positive) = {first['probability']:.2f}, predicted {first['predicted']}",
                fontsize=8,
            )
    fig.suptitle(title)
    fig.supxlabel(
        "LIME weight (green: towards the positive class; red: against). p: the classifier's probability "
        "(an SVM's is Platt-scaled\nand can disagree with its decision, which gives the prediction)",
        fontsize=9,
    )
    fig.tight_layout()
    save(fig, png, pdf)
