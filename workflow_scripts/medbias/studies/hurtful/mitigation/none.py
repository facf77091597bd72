"""``none``: the classifier's own test predictions (its score and its best-F1 threshold), the
comparison every other method's change is measured against."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from medbias.studies.hurtful.mitigation.base import Mitigation, MitigationInputs, predictions_frame, whole_task_fits


def unmitigated(
    inputs: MitigationInputs, attribute: str, settings: Mapping[str, Any], log
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The test predictions as they are, labelled with ``attribute``."""
    test = inputs.test
    frame = predictions_frame(attribute, test["task"], test["ICUSTAY_ID"], test["probability"], test["prediction"])
    return frame, whole_task_fits(attribute, inputs.tasks["task"], lambda _: "the classifier's own predictions")


METHOD = Mitigation(
    name="none",
    changes="nothing: the classifier's score and its threshold at the best validation F1",
    assumes="nothing",
    runs_as_job=False,
    retrains=False,
    mitigate=unmitigated,
)
