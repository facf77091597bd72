"""The project's figure style and writer: one pyplot set-up, PNG plus PDF (PDF without a timestamp,
for byte-stable output), and the error-bar helper every study's figures use."""

from __future__ import annotations

# one colour per group that means the same thing in every study; NEUTRAL for bars that stand for no group
FEMALE, MALE, NEUTRAL = "#c44e52", "#4c72b0", "#6a8a82"


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, png: str, pdf: str) -> None:
    fig.savefig(png, dpi=150)
    fig.savefig(pdf, metadata={"CreationDate": None})
    pyplot().close(fig)


def wrapped_title(title: str, figure_width: float, fontsize: float = 10) -> str:
    """``title`` broken into lines that fit a figure ``figure_width`` inches wide (about 0.55 x the
    font size in points per character), so no title runs past the figure's edge."""
    import textwrap

    return "\n".join(textwrap.wrap(title, max(20, int(figure_width * 72 / (0.55 * fontsize)) - 4)))


def error_bars(value, low, high):
    """Error-bar lengths below and above ``value`` (a percentile interval need not contain the
    estimate; a bar never goes negative)."""
    import numpy as np

    return [np.clip(value - low, 0, None), np.clip(high - value, 0, None)]
