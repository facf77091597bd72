"""An error rate: the share of decisions flagged, with a Clopper-Pearson (exact binomial) 95% interval,
so a rate is reported with the number of decisions that supports it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import beta


@dataclass(frozen=True)
class ErrorRate:
    flagged: int
    decisions: int
    rate: float
    low: float  # Clopper-Pearson 95% interval
    high: float


def error_rate(flags: np.ndarray) -> ErrorRate:
    """Share of ``flags`` that are True, with its exact (Clopper-Pearson) 95% interval."""
    flags = np.asarray(flags, dtype=bool)
    k, n = int(flags.sum()), len(flags)
    if n == 0:
        return ErrorRate(0, 0, float("nan"), float("nan"), float("nan"))
    low = float(beta.ppf(0.025, k, n - k + 1)) if k > 0 else 0.0
    high = float(beta.ppf(0.975, k + 1, n - k)) if k < n else 1.0
    return ErrorRate(k, n, k / n, low, high)
