"""Rios et al. 2020's figures: WEAT effect sizes by decade with the seeds' spread (Figure 1) and ECT by
decade (Figure 2)."""

from __future__ import annotations

import pandas as pd

from medbias.core.figures import MEASURES, SERIES, pyplot, save


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
        panels = (
            (0, "mean_difference", "md_ci_low", "md_ci_high", MEASURES[0]),
            (1, "effect_size", "ci_low", "ci_high", MEASURES[1]),
        )
        for row, column, low, high, colour in panels:
            ax = axes[row, j]
            if row == 1 or calibrated:
                ax.fill_between(x, part[low], part[high], alpha=0.25, color=colour)
            ax.plot(x, part[column], color=colour)
            ax.scatter([position[d] for d in others["decade"]], others[column], s=9, color="#888888", zorder=2)
            significant = part["significant"].to_numpy(dtype=bool)
            ax.scatter([i for i, s in zip(x, significant) if s], part[column][significant], color=colour, zorder=3)
            ax.scatter(
                [i for i, s in zip(x, significant) if not s],
                part[column][~significant],
                facecolor="white",
                edgecolor=colour,
                zorder=3,
            )
            ax.axhline(0, color="black", lw=0.8)
        title = part["title"].iloc[0]
        marked = part["control"].iloc[0] and "control" not in title.lower()
        axes[0, j].set_title(f"({'abcdefghij'[j]}) {title}{' (control)' if marked else ''}", fontsize=10)
        axes[1, j].set_xticks(x, [d[:4] + "s" for d in part["decade"]], rotation=45, fontsize=8)
    axes[0, 0].set_ylabel("mean s(male) - mean s(female)\n(+: male closer to A)")
    axes[1, 0].set_ylabel("WEAT effect size d")
    null = "calibrated" if calibrated else "bootstrap"
    fig.suptitle(
        f"WEAT by decade. Top: mean difference, shaded {null} 95% interval; bottom: d, shaded bootstrap 95% CI.\n"
        f"Filled: {null} p < 0.05; grey dots: other training seeds",
        fontsize=10,
    )
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
        ax.fill_between(x, part["ci_low"], part["ci_high"], alpha=0.25, color=SERIES)
        ax.plot(x, part["ect"], marker="o", color=SERIES)
        ax.set_xticks(list(x), [d[:4] + "s" for d in part["decade"]])
        ax.set_ylim(min(0.0, float(part["ci_low"].min()) - 0.05), 1.02)
        ax.set_title(f"({'ab'[j]}) {name.replace('_', ' ')} (n={int(part['n_targets'].max())})")
        ax.set_ylabel("ECT (Spearman rho; 1 = no bias)")
    fig.tight_layout()
    save(fig, png, pdf)
