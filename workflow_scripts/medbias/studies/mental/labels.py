"""Study "mental" (Sogancioglu et al. 2023): the phenotypes and the labels of the annotated notes.

A note's label per phenotype is the majority vote of its annotators, ties going to the positive class
(section III-A). For a task, the positives are the notes voted positive for its phenotype and the
negatives the notes voted negative for every phenotype (annotated "None"). The votes are joined to the
notes and the patients' gender, with a report of the rows that do not join.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from medbias.io.formats import ANNOTATION_PHENOTYPES

TASK_COLUMNS: dict[str, str] = {
    "depression": "DEPRESSION",
    "psychiatric_disorders": "SCHIZOPHRENIA.AND.OTHER.PSYCHIATRIC.DISORDERS",
    "alcohol_abuse": "ALCOHOL.ABUSE",
    "substance_abuse": "OTHER.SUBSTANCE.ABUSE",
}


TASK_TITLES: dict[str, str] = {
    "depression": "Depression",
    "psychiatric_disorders": "Psychiatric disorders",
    "alcohol_abuse": "Alcohol abuse",
    "substance_abuse": "Substance abuse",
}


def majority_vote(annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per annotated note (index ROW_ID): each phenotype 1 when at least half of the note's
    annotators marked it (a tie goes to the positive class), ``none`` = 1 when no phenotype is voted
    positive, the number of annotators and the note's SUBJECT_ID."""
    grouped = annotations.groupby("ROW_ID")
    labels = (grouped[list(ANNOTATION_PHENOTYPES)].mean() >= 0.5).astype(int)
    labels["none"] = (labels[list(ANNOTATION_PHENOTYPES)].sum(axis=1) == 0).astype(int)
    labels["annotators"] = grouped.size()
    labels["SUBJECT_ID"] = grouped["SUBJECT_ID"].first()
    return labels


def task_labels(votes: pd.DataFrame, task: str) -> pd.Series:
    """The task's notes and labels: positives voted for its phenotype, negatives annotated None;
    notes positive only for other phenotypes are not part of the task (section III-A)."""
    column = TASK_COLUMNS[task]
    chosen = (votes[column] == 1) | (votes["none"] == 1)
    return votes.loc[chosen, column].rename("label")


@dataclass(frozen=True)
class JoinReport:
    """How the annotations met the notes and the patients' genders (nothing is dropped silently)."""

    annotated_notes: int
    joined: int
    missing_note: tuple[int, ...]
    subject_mismatch: tuple[int, ...]
    missing_gender: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "annotated_notes": self.annotated_notes,
            "joined": self.joined,
            "missing_note": {"count": len(self.missing_note), "row_ids": list(self.missing_note[:50])},
            "subject_mismatch": {"count": len(self.subject_mismatch), "row_ids": list(self.subject_mismatch[:50])},
            "missing_gender": {"count": len(self.missing_gender), "row_ids": list(self.missing_gender[:50])},
        }

    def left_out(self) -> str | None:
        """One sentence naming the annotated notes that did not join and why (the first ROW_IDs of
        each reason); None when every annotated note joined."""
        reasons = [
            (self.missing_note, "not in NOTEEVENTS"),
            (self.subject_mismatch, "in NOTEEVENTS under another SUBJECT_ID"),
            (self.missing_gender, "of a patient without an M or F gender"),
        ]
        parts = [
            f"{len(rows)} {why} (ROW_ID {', '.join(map(str, rows[:5]))}{', ...' if len(rows) > 5 else ''})"
            for rows, why in reasons
            if rows
        ]
        if not parts:
            return None
        left = self.annotated_notes - self.joined
        return f"{left} of {self.annotated_notes} annotated notes are left out: {'; '.join(parts)}"

    def table_note(self) -> str:
        """Table II's note on the join: how many annotated notes joined, and which were left out."""
        left_out = self.left_out()
        if left_out is None:
            return f"All {self.annotated_notes} annotated notes joined their note text and patient."
        return f"{left_out}. Every ROW_ID left out is listed in data.json (the first 50 per reason)."


def join_notes(votes: pd.DataFrame, notes: pd.DataFrame, patients: pd.DataFrame) -> tuple[pd.DataFrame, JoinReport]:
    """The annotated notes with their text and the patient's gender (index ROW_ID), and a report of
    the annotations that did not join: no such note, a different SUBJECT_ID, no M/F gender."""
    text = notes.set_index("ROW_ID")[["SUBJECT_ID", "TEXT"]]
    present = votes.index.isin(text.index)
    missing_note = tuple(int(r) for r in votes.index[~present])
    joined = votes.loc[present].join(text.rename(columns={"SUBJECT_ID": "SUBJECT_ID_note"}))
    mismatch = joined["SUBJECT_ID"].astype(int) != joined["SUBJECT_ID_note"].astype(int)
    subject_mismatch = tuple(int(r) for r in joined.index[mismatch])
    joined = joined.loc[~mismatch].drop(columns="SUBJECT_ID_note")
    gender = patients.drop_duplicates("SUBJECT_ID").set_index("SUBJECT_ID")["GENDER"]
    joined["gender"] = joined["SUBJECT_ID"].map(gender)
    no_gender = ~joined["gender"].isin(["F", "M"])
    missing_gender = tuple(int(r) for r in joined.index[no_gender])
    joined = joined.loc[~no_gender]
    report = JoinReport(len(votes), len(joined), missing_note, subject_mismatch, missing_gender)
    return joined, report
