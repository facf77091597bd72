"""``adversarial``: the classifier trained on the features of the encoder pretrained with an
adversary that predicts the attribute (Zhang et al. 2020 section 3.2; ``hurtful.pretrain.variants``
``adv_<attribute>``). The mitigation happens in pretraining; this method reads that classifier's test
predictions so that its change is measured like every other method's. An attribute without such an
encoder gets no predictions and a fit row saying so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from medbias.studies.hurtful.mitigation.base import (
    PREDICTION_COLUMNS,
    Mitigation,
    MitigationInputs,
    predictions_frame,
    whole_task_fits,
)
from medbias.studies.hurtful.variants import adversarial_variant


def adversarial_predictions(
    inputs: MitigationInputs, attribute: str, settings: Mapping[str, Any], log
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The adversarial encoder's classifier's test predictions for ``attribute``'s encoder."""
    tasks = inputs.tasks["task"]
    encoder = inputs.encoders.get(attribute)
    if encoder is None:
        note = f"no downstream classifier on {adversarial_variant(attribute)} (hurtful.downstream.models)"
        return pd.DataFrame(columns=list(PREDICTION_COLUMNS)), whole_task_fits(attribute, tasks, lambda _: note)
    frame = predictions_frame(
        attribute, encoder["task"], encoder["ICUSTAY_ID"], encoder["probability"], encoder["prediction"]
    )
    note = f"the classifier on {adversarial_variant(attribute)}'s features"
    return frame, whole_task_fits(attribute, tasks, lambda _: note)


METHOD = Mitigation(
    name="adversarial",
    changes="the encoder: pretrained with an adversary that predicts the attribute from its [CLS] (Zhang et al. 2020)",
    assumes="the attribute at pretraining time for every note; a pretraining run per attribute",
    runs_as_job=False,
    retrains=False,
    mitigate=adversarial_predictions,
)
