"""Fairness mitigation of the hurtful study's downstream classifiers: one module per method, one
registry (``MITIGATIONS``). Adding a method is one module that defines a ``Mitigation`` and one entry
here: the config's ``hurtful.mitigation.methods`` takes its names from the registry, its section
``hurtful.mitigation.<name>`` from the settings the method declares, and the job's GPU request from its
declaration.

What a method reads and returns, and the helpers that build its predictions, are in ``base``.

- ``none``: the classifier's own predictions (the comparison every other method is measured against).
- ``adversarial``: the classifier of the encoder pretrained with an adversary for the attribute
  (``adv_<attribute>``, Zhang et al. 2020 section 3.2); no job of its own.
- ``threshold``: fairlearn's ``ThresholdOptimizer`` on the saved validation scores.
- ``reductions``: fairlearn's ``ExponentiatedGradient`` over a logistic regression on the same
  features, averaged per stay.
- ``reweighing``: the chosen classifier retrained with Kamiran and Calders's weights in its loss.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from medbias.studies.hurtful.mitigation import adversarial, none, reductions, reweighing, threshold
from medbias.studies.hurtful.mitigation.base import (
    FIT_COLUMNS,
    PREDICTION_COLUMNS,
    REFIT_COLUMN,
    Mitigation,
    MitigationInputs,
    RetrainingInputs,
    task_random_state,
)

__all__ = [
    "FIT_COLUMNS",
    "MITIGATIONS",
    "PREDICTION_COLUMNS",
    "REFIT_COLUMN",
    "Mitigation",
    "MitigationInputs",
    "RetrainingInputs",
    "mitigation",
    "model_methods",
    "models_first",
    "run_mitigation",
    "task_random_state",
]

MITIGATIONS: dict[str, Mitigation] = {
    m.METHOD.name: m.METHOD for m in (none, adversarial, threshold, reductions, reweighing)
}


def mitigation(name: str) -> Mitigation:
    """The registered method ``name``; an unknown name is a ValueError that lists the known ones."""
    if name not in MITIGATIONS:
        raise ValueError(f"unknown mitigation method {name!r}; known: {', '.join(MITIGATIONS)}")
    return MITIGATIONS[name]


def run_mitigation(
    name: str, inputs: MitigationInputs, attributes: list[str], settings: Mapping[str, Any], log
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Method ``name``'s predictions and fit report for every attribute, in ``attributes``' order; the
    predictions keep ``REFIT_COLUMN`` when the method wrote it."""
    method = mitigation(name)
    predictions, fits = [], []
    for attribute in attributes:
        log.info("%s for %s", name, attribute)
        frame, fit = method.mitigate(inputs, attribute, settings, log)
        predictions.append(frame)
        fits.append(fit)
    frame = pd.concat(predictions, ignore_index=True)
    return (
        frame[[*PREDICTION_COLUMNS, *([REFIT_COLUMN] if REFIT_COLUMN in frame else [])]],
        pd.concat(fits, ignore_index=True)[list(FIT_COLUMNS)],
    )


def model_methods(
    model: str,
    methods: list[str],
    computed: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]],
    inputs: MitigationInputs,
    attributes: list[str],
    log,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    """Every configured method's predictions and fit report for one model: ``none`` first, then each
    method in ``methods`` (``computed``: method -> the (predictions, fit) its job wrote; a method
    without a job runs here). ``adversarial`` applies to the baseline only (the encoder its variants
    were pretrained from). Returns the predictions and fit reports with ``model`` and ``method``
    columns first, and method -> predictions for every method other than ``none`` that has any."""
    predictions, fits, after = [], [], {}
    for method in ["none", *[m for m in methods if m != "none"]]:
        if method in computed:
            frame, fit = computed[method]
        elif method == "adversarial" and model != "baseline":
            log.info("%s: adversarial applies to the baseline's encoder only; skipped", model)
            continue
        else:
            frame, fit = run_mitigation(method, inputs, attributes, {}, log)
        predictions.append(frame.assign(model=model, method=method))
        fits.append(fit.assign(model=model, method=method))
        if method != "none" and len(frame):
            after[method] = frame
    return (
        models_first(pd.concat(predictions, ignore_index=True)),
        models_first(pd.concat(fits, ignore_index=True)),
        after,
    )


def models_first(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``model`` and ``method`` columns first."""
    first = [c for c in ("model", "method") if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]]
