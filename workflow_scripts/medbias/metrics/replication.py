"""Replication: training seeds, trends across ordered conditions, and measured error rates.

The papers train each model once; here a study may train several seed replicates of the same recipe,
so a table can say how much of a difference between decades or models a different seed produces.

- ``replicate_seed``: replicate 0 keeps the configured seed (its outputs equal a run without
  replicates); replicate r > 0 takes a seed derived from (seed, r) by NumPy's SeedSequence, so seeds
  are never hand-picked offsets that can collide.
- ``document_null_seed``: the seed of one draw of the rios study's document-level null (its coin
  flips and its training run).
- ``decade_trend``: the trend of a measure over ordered conditions (decades) by an exact
  permutation test of the condition labels on the seed-averaged values. Under "no trend" the decades
  are exchangeable units; seeds are replicates within a decade (seed r of one decade has nothing in
  common with seed r of another, so a seed random effect would model nothing), and averaging them
  shrinks the within-decade noise that the permutation test otherwise counts as signal or noise.
- ``error_rate``: the share of decisions flagged, with a Clopper-Pearson 95% interval, so an error
  rate is reported with the number of decisions that supports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import permutations

import numpy as np
from scipy.stats import beta


def replicate_seed(seed: int, replicate: int) -> int:
    """The seed of training replicate ``replicate`` (module docstring)."""
    if replicate == 0:
        return seed
    return int(np.random.SeedSequence([seed, replicate]).generate_state(1)[0] % (2**31 - 1))


def document_null_seed(seed: int, draw: int) -> int:
    """The seed of document-null draw ``draw`` (its swap coins and its training run): derived from
    (seed, draw) by SeedSequence in a stream of its own, so it never equals a replicate's seed."""
    return int(np.random.SeedSequence([seed, draw, 0xD0C]).generate_state(1)[0] % (2**31 - 1))


def ols_slope(values: np.ndarray) -> np.ndarray:
    """Least-squares slope of ``values`` (last axis) on 0, 1, 2, ... (change per condition step)."""
    x = np.arange(values.shape[-1], dtype=float)
    x -= x.mean()
    return (values - values.mean(axis=-1, keepdims=True)) @ x / (x @ x)


@dataclass(frozen=True)
class Trend:
    slope: float            # OLS slope of the seed-averaged values per condition step
    slope_seed_sd: float    # between-seed SD of the per-seed slopes (NaN with one seed)
    p_value: float          # exact two-sided permutation p over all orderings of the conditions
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


@dataclass(frozen=True)
class ErrorRate:
    flagged: int
    decisions: int
    rate: float
    low: float   # Clopper-Pearson 95% interval
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
