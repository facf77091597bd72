"""The audit card's figure: every test's effect size with its interval, for one model."""

from __future__ import annotations

import pandas as pd

from medbias.core.figures import NEUTRAL, pyplot, save


def plot_audit_effect_sizes(effects: pd.DataFrame, title: str, png: str, pdf: str) -> None:
    """The audit card's summary figure: one horizontal bar per test (SEAT or WEAT effect size d)
    with its 95% interval; 0 is no association. ``effects``: test, effect_size, ci_low, ci_high."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * max(len(effects), 2) + 1.4))
    if len(effects):
        y = range(len(effects))
        low = (effects["effect_size"] - effects["ci_low"]).clip(lower=0).fillna(0)
        high = (effects["ci_high"] - effects["effect_size"]).clip(lower=0).fillna(0)
        ax.barh(list(y), effects["effect_size"], xerr=[low, high], color=NEUTRAL, capsize=3)
        ax.set_yticks(list(y), effects["test"])
        ax.invert_yaxis()
    else:
        ax.text(
            0.5,
            0.5,
            "no effect size: every test was skipped (see the card)",
            ha="center",
            va="center",
            transform=ax.transAxes,
            zorder=3,
            bbox={"facecolor": "white", "edgecolor": "grey"},
        )
        ax.set_yticks([])
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlim(-2, 2)  # Caliskan's d lies in [-2, 2]
    ax.set_xlabel("effect size d (> 0: X closer to A than Y is)")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    save(fig, png, pdf)
