"""The vignette figure of one model: every contrast's difference in P(compared) with its interval,
the controls in grey, and each row's flip rate at the right."""

from __future__ import annotations

import numpy as np
import pandas as pd

from medbias.core.figures import NEUTRAL, SERIES, error_bars, pyplot, save, wrapped_title
from medbias.metrics.vignette_contrasts import DEMOGRAPHIC

TICK_FONTSIZE = 9


def plot_contrasts(table: pd.DataFrame, title: str, png: str, pdf: str) -> None:
    """Horizontal points with 95% case-bootstrap intervals: d P(compared) = value - reference (0: the
    same answer); a star marks a demographic contrast significant after BH; grey rows are control
    swaps; the right margin gives the share of matched pairs whose decision flips."""
    plt = pyplot()
    rows = table.reset_index(drop=True)
    labels = [
        f"{r.set}/{r.decision} ({r.compared}): {r.contrast}" + (" *" if r.significant else "")
        for r in rows.itertuples(index=False)
    ]
    # the tick labels take their own width (about 0.55 x the font size a character), the plot 4.5 inches
    width = max(7.4, 5.0 + 0.55 * TICK_FONTSIZE / 72 * max((len(label) for label in labels), default=0))
    height = 0.32 * max(len(rows), 3) + 1.4
    fig, ax = plt.subplots(figsize=(width, height))
    if len(rows):
        y = np.arange(len(rows))
        colours = [SERIES if kind == DEMOGRAPHIC else NEUTRAL for kind in rows["kind"]]
        bars = error_bars(rows["d_probability"], rows["d_probability_low"], rows["d_probability_high"])
        for i in y:
            ax.errorbar(
                rows["d_probability"][i],
                i,
                xerr=[[bars[0][i]], [bars[1][i]]],
                fmt="o",
                color=colours[i],
                capsize=2,
                markersize=4,
            )
        ax.set_yticks(y, labels, fontsize=TICK_FONTSIZE)
        ax.invert_yaxis()
        for i, rate in enumerate(rows["flip_rate"]):
            ax.annotate(f"{rate:.2f}", (1.01, i), xycoords=("axes fraction", "data"), va="center", fontsize=7)
        ax.annotate("flips", (1.01, -0.9), xycoords=("axes fraction", "data"), va="center", fontsize=7)
        reach = float(np.nanmax(np.abs(rows[["d_probability_low", "d_probability_high", "d_probability"]].to_numpy())))
        ax.set_xlim(-max(reach * 1.15, 0.05), max(reach * 1.15, 0.05))
    else:
        ax.text(0.5, 0.5, "no contrast: nothing was scored", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("difference in P(compared option), value - reference\n(95% CI over cases)")
    fig.suptitle(wrapped_title(title, width))
    fig.tight_layout()
    save(fig, png, pdf)
