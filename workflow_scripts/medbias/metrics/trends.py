"""Trends of a measure over ordered conditions (the rios study's decades).

``decade_trend``: the trend by an exact permutation test of the condition labels on the seed-averaged
values. Under "no trend" the decades are exchangeable units; seeds are replicates within a decade (seed
r of one decade has nothing in common with seed r of another, so a seed random effect would model
nothing), and averaging them shrinks the within-decade noise that the permutation test otherwise
counts as signal or noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import permutations

import numpy as np


def ols_slope(values: np.ndarray) -> np.ndarray:
    """Least-squares slope of ``values`` (last axis) on 0, 1, 2, ... (change per condition step)."""
    x = np.arange(values.shape[-1], dtype=float)
    x -= x.mean()
    return (values - values.mean(axis=-1, keepdims=True)) @ x / (x @ x)


@dataclass(frozen=True)
class Trend:
    slope: float  # OLS slope of the seed-averaged values per condition step
    slope_seed_sd: float  # between-seed SD of the per-seed slopes (NaN with one seed)
    p_value: float  # exact two-sided permutation p over all orderings of the conditions
    orderings: int
    seeds: int


def decade_trend(values: np.ndarray) -> Trend:
    """Trend of ``values`` (seeds x conditions, conditions in order) as in the module docstring:
    p = share of the n! orderings whose |slope| is at least the observed one (exact; n <= 8)."""
    values = np.atleast_2d(np.asarray(values, dtype=float))
    n = values.shape[1]
    if n > 8:
        raise ValueError(f"decade_trend enumerates all orderings; {n} conditions is too many (at most 8)")
    means = values.mean(axis=0)
    observed = float(ols_slope(means))
    orders = np.array(list(permutations(range(n))))
    slopes = ols_slope(means[orders])
    p = float(np.mean(np.abs(slopes) >= abs(observed) - 1e-12 * max(1.0, abs(observed))))
    per_seed = ols_slope(values)
    spread = float(per_seed.std(ddof=1)) if len(per_seed) > 1 else float("nan")
    return Trend(observed, spread, p, math.factorial(n), values.shape[0])
