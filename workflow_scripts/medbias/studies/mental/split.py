"""Study "mental": each task's train/test split (Table II) and the treated texts of its notes.

- Split: the training set is balanced across label and gender: every (label, gender) cell gives
  ``min(cap, floor(train_fraction * cell size))`` notes to training, where ``cap`` is the task's
  configured per-cell size or, unset, ``floor(train_fraction * size)`` of the second-smallest cell (so
  one scarce cell, like the paper's female alcohol-abuse positives, gives what it has without shrinking
  the others). A task listed in ``equal_cells`` has every cell give the same number: its cap, or
  ``floor(train_fraction * size)`` of the smallest cell where that is fewer, so that a scarce cell
  shrinks the others with it and gender cannot predict the label in training. The rest is the test set.
- Treatments of the notes (section III-C): original, swapped, neutralized; the augmented treatment
  trains on original plus swapped (``features.training_design``), and the test notes are doubled with
  their swapped copies (counterfactual pairs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.note_text import clean_for_embedding, neutralize_gender, swap_gender
from medbias.io.tables import PaperTable
from medbias.studies.mental.labels import TASK_COLUMNS, TASK_TITLES, task_labels


def treated_texts(text: str) -> dict[str, str]:
    """The cleaned original, swapped and neutralized versions of one note (treatments act on the raw
    text, so that the 'Sex:' field is still recognisable; cleaning follows)."""
    return {
        "original": clean_for_embedding(text),
        "swapped": clean_for_embedding(swap_gender(text)),
        "neutralized": clean_for_embedding(neutralize_gender(text)),
    }


def balanced_split(
    frame: pd.DataFrame, train_fraction: float, per_cell: int | None, seed: int, equal_cells: bool = False
) -> pd.Series:
    """Boolean training mask over ``frame`` (columns label, gender; index ROW_ID): each (label,
    gender) cell gives ``min(cap, floor(train_fraction * size))`` randomly chosen notes (see the
    module docstring for ``cap``); with ``equal_cells`` the cap is lowered to what the smallest cell
    gives, so every cell gives as many. The rest is the test set."""
    rng = np.random.default_rng(seed)
    cells = {key: np.sort(index.to_numpy()) for key, index in frame.groupby(["label", "gender"]).groups.items()}
    for label in (0, 1):
        for gender in ("F", "M"):
            cells.setdefault((label, gender), np.array([], dtype=frame.index.dtype))
    sizes = sorted(len(rows) for rows in cells.values())
    if per_cell is None:
        per_cell = math.floor(train_fraction * sizes[1])
    if equal_cells:
        per_cell = min(per_cell, math.floor(train_fraction * sizes[0]))
    train = pd.Series(False, index=frame.index)
    for key in sorted(cells):
        rows = cells[key]
        n = min(per_cell, math.floor(train_fraction * len(rows)))
        train.loc[rng.permutation(rows)[:n]] = True
    return train


def split_table(
    assignments: pd.DataFrame,
    tasks: Sequence[str],
    train_fraction: float,
    per_cell: Mapping[str, int],
    join_note: str | None = None,
    equal_cells: Sequence[str] = (),
) -> PaperTable:
    """Table II: notes per task, split, label and gender (``train_fraction`` and ``per_cell``: the
    split's settings, which the notes state; ``join_note``: how the annotations met the notes,
    ``JoinReport.table_note``)."""
    rows = []
    for task in tasks:
        part = assignments[assignments["task"] == task]
        row: dict[str, Any] = {"task": TASK_TITLES[task]}
        for split in ("train", "test"):
            for label, name in ((1, "positive"), (0, "negative")):
                for gender in ("F", "M"):
                    row[f"{split}_{name}_{gender}"] = int(
                        ((part["split"] == split) & (part["label"] == label) & (part["gender"] == gender)).sum()
                    )
        rows.append(row)
    notes = (
        f"Training cells: at most {train_fraction:.0%} of each (label, gender) cell, capped per task "
        f"(configured caps: {dict(per_cell) or 'none; the second-smallest cell sets the cap'}).",
        *(
            [f"Every cell gives as many training notes as the smallest can in: {', '.join(equal_cells)}."]
            if equal_cells
            else []
        ),
        "Seeded. Negatives are notes annotated None (no phenotype voted positive).",
        *([join_note] if join_note else []),
    )
    return PaperTable(pd.DataFrame(rows), "Table II: training and test notes per phenotype, label and gender", notes)


def task_splits(
    joined: pd.DataFrame,
    tasks: Sequence[str],
    *,
    train_fraction: float,
    per_cell: Mapping[str, int],
    seed: int,
    log,
    equal_cells: Sequence[str] = (),
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Every task's labelled notes with their balanced train/test split (``balanced_split``, task k
    under ``seed + k``; the tasks in ``equal_cells`` with equal cells), long (task, ROW_ID, label,
    gender, split), and Figure 1's counts per task."""
    assignments, counts = [], []
    for number, task in enumerate(tasks):
        labels = task_labels(joined, task)
        frame = pd.DataFrame({"label": labels, "gender": joined.loc[labels.index, "gender"]})
        train = balanced_split(frame, train_fraction, per_cell.get(task), seed + number, task in equal_cells)
        frame["split"] = train.map({True: "train", False: "test"})
        frame.insert(0, "task", task)
        assignments.append(frame.rename_axis("ROW_ID").reset_index())
        log.info(
            "%s: %d notes (%d positive), %d train, %d test",
            task,
            len(frame),
            int(frame["label"].sum()),
            int(train.sum()),
            int((~train).sum()),
        )
        counts.append(
            {
                "task": TASK_TITLES[task],
                "column": TASK_COLUMNS[task],
                "positive": int(joined[TASK_COLUMNS[task]].sum()),
                "none": int(joined["none"].sum()),
                "notes_in_task": len(frame),
            }
        )
    return pd.concat(assignments, ignore_index=True), counts


def treated_text_rows(joined: pd.DataFrame, row_ids: Sequence[int]) -> pd.DataFrame:
    """ROW_ID, version, text: every treated version (``treated_texts``) of the notes ``row_ids``."""
    rows = [
        {"ROW_ID": int(row_id), "version": version, "text": text}
        for row_id in row_ids
        for version, text in treated_texts(joined.at[row_id, "TEXT"]).items()
    ]
    return pd.DataFrame(rows)
