"""The project's figure style and writer: one pyplot set-up, PNG plus PDF (PDF without a timestamp,
for byte-stable output), and the error-bar helper every study's figures use."""

from __future__ import annotations

# one colour per group that means the same thing in every study; NEUTRAL for bars that stand for no group
FEMALE, MALE, NEUTRAL = "#c44e52", "#4c72b0", "#6a8a82"
# one series that stands for no group (points and lines of a single measure)
SERIES = "#4d4d4d"
# several measures or methods in one figure, in order; none is a group colour, so no bar or line of a
# measure reads as female or male
MEASURES = ("#228833", "#aa3377", "#ccbb44", "#66ccee", "#ee7733")
# Sogancioglu et al.'s Figure 3 convention for word contributions: green towards the positive class,
# red against (a darker red than FEMALE)
TOWARDS, AGAINST = "#4a9a5b", "#a1282b"

# one type scale for every figure: titles 10 pt, axis labels 9, ticks and legends 8; PNGs at 150 dpi
STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "figure.titlesize": 11,
}
PNG_DPI = 150


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend, with the project's STYLE."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(STYLE)
    return plt


def save(fig, png: str, pdf: str) -> None:
    fig.savefig(png, dpi=PNG_DPI)
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
