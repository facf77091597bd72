"""The inputs of Zhang et al. 2020's frozen window features (section 4.1): every window the
downstream cohorts use, rebuilt from the packed sequences with the extended MIMIC tokenizer at the
offsets the cohorts counted (``medbias.core.batching.note_windows``). One feature file per model is
shared by all 57 tasks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from medbias.core.batching import note_piece_ids, note_windows
from medbias.core.errors import MedbiasInputError


@dataclass
class WindowInputs:
    index: pd.DataFrame  # ROW_ID, window: the rows of the feature matrix, in order
    inputs: list[list[int]]  # [CLS] ... [SEP] token ids per row
    notes: int  # notes the windows come from
    unknown: int  # placeholder pieces outside the model's vocabulary, read as [UNK]


def cohort_window_inputs(
    windows: pd.DataFrame,
    sequences: pd.DataFrame,
    tokenizer,
    vocabulary: int,
    *,
    window: int,
    stride: int,
    max_windows: int,
    where: tuple[str, str],
) -> WindowInputs:
    """Token ids of every distinct (ROW_ID, window) of the cohorts' ``windows``, sorted. A model
    whose vocabulary (``vocabulary`` rows) lacks the placeholder tokens the extended tokenizer added
    (the base model) reads them as [UNK], counted. ``where`` names the sequences and windows files
    for the one-line errors: a cohort note without sequences, or a window the note does not have."""
    index = windows[["ROW_ID", "window"]].drop_duplicates().sort_values(["ROW_ID", "window"]).reset_index(drop=True)
    pieces = note_piece_ids(sequences, tokenizer, index["ROW_ID"].unique())
    missing = sorted(set(index["ROW_ID"]) - set(pieces))
    if missing:
        raise MedbiasInputError(f"{where[0]}: no sequences for {len(missing)} cohort notes (ROW_ID {missing[:5]})")
    by_note = {
        row_id: note_windows(ids, tokenizer.cls_token_id, tokenizer.sep_token_id, window, stride, max_windows)
        for row_id, ids in pieces.items()
    }
    inputs, unknown = [], 0
    for row_id, number in zip(index["ROW_ID"], index["window"]):
        note = by_note[row_id]
        if number >= len(note):
            raise MedbiasInputError(
                f"{where[1]}: note {row_id} has {len(note)} windows, cohort asks for window {number}"
            )
        ids = np.asarray(note[number])
        outside = ids >= vocabulary
        unknown += int(outside.sum())
        inputs.append(np.where(outside, tokenizer.unk_token_id, ids).tolist())
    return WindowInputs(index, inputs, len(by_note), unknown)
