"""The demo world's measured error rates as a figure: how often each test flags a null world, and how
often it finds a planted effect."""

from __future__ import annotations

import pandas as pd

from medbias.core.figures import SERIES, pyplot, save


def plot_error_rates(table: pd.DataFrame, png: str, pdf: str) -> None:
    """The error-rate table as two panels of rates with Clopper-Pearson 95% intervals: false-positive
    rates of controls (the nominal level as a dashed line) and power on planted effects."""
    import textwrap

    plt = pyplot()
    panels = [("false-positive rate", "controls: share flagged (nothing planted)"), ("power", "planted: share found")]
    heights = [max(1, int((table["measures"] == m).sum())) for m, _ in panels]
    fig, axes = plt.subplots(
        2, 1, figsize=(9, 1.2 + 0.5 * sum(heights)), gridspec_kw={"height_ratios": heights}, squeeze=False
    )
    for ax, (measure, title) in zip(axes[:, 0], panels):
        part = table[table["measures"] == measure].reset_index(drop=True)
        y = list(range(len(part)))[::-1]
        ax.errorbar(
            part["rate"],
            y,
            xerr=[part["rate"] - part["ci_low"], part["ci_high"] - part["rate"]],
            fmt="o",
            color=SERIES,
            ecolor="#aaaaaa",
            capsize=3,
        )
        labels = [
            "\n".join(
                textwrap.wrap(
                    f"{r.test} ({r.source if r.source.startswith('constructed') else r.source.split(' (')[0]}), "
                    f"{r.p_kind}: {r.flagged}/{r.decisions}",
                    60,
                )
            )
            for r in part.itertuples()
        ]
        ax.set_yticks(y, labels, fontsize=7)  # wrapped, so tight_layout keeps every label inside the figure
        if measure == "false-positive rate" and len(part):
            ax.axvline(float(part["level"].iloc[0]), color="#cc3311", ls="--", lw=1, label="nominal level")
            ax.legend(fontsize=7, loc="lower right")
        ax.set_xlim(-0.02, 1.02)
        ax.set_title(title, fontsize=9)
    axes[-1, 0].set_xlabel("rate (Clopper-Pearson 95% interval)")
    fig.tight_layout()
    save(fig, png, pdf)
