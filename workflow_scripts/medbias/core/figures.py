"""The project's figure style and writer: one pyplot set-up, PNG plus PDF (PDF without a timestamp,
for byte-stable output), and the error-bar helper every study's figures use."""

from __future__ import annotations


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, png: str, pdf: str) -> None:
    fig.savefig(png, dpi=150)
    fig.savefig(pdf, metadata={"CreationDate": None})
    pyplot().close(fig)


def error_bars(value, low, high):
    """Error-bar lengths below and above ``value`` (a percentile interval need not contain the
    estimate; a bar never goes negative)."""
    import numpy as np

    return [np.clip(value - low, 0, None), np.clip(high - value, 0, None)]
