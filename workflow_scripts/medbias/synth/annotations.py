"""Synthetic phenotype annotations in the layout of PhysioNet's "Phenotype Annotations for Patient
Notes in the MIMIC-III Database": one row per note and annotator, a 0/1 column per phenotype.

A note's true label for a phenotype is 1 when the note mentions a planted condition that feeds that
column (or, for the heart and lung columns, the matching benchmark phenotype). Annotators disagree
by flipping labels at fixed rates, so majority votes include disagreements and ties.

Planted label bias (the "mental" study's demo effect, ``PLANTED_LABEL_BIAS``): for one phenotype,
a share of one gender's annotated notes that do NOT mention it are labelled positive by every
annotator of the note (a biased labelling habit, not noise). Gender words then predict that label
beyond the note's content, so a classifier trained on the original notes uses them, and one trained
with gender-swapped copies (augmented) cannot. Every other phenotype is labelled from the content
alone (the controls).

The annotated notes never mention a condition planted for one gender only (Table 3's leans in the
hurtful study, ``PlantedCondition.single_gender``): such a mention tells the gender outright, so the
mental study's Table IV, which asks how much gender its classifiers read from the notes before and
after the gender words are neutralized, would find it perfectly readable after neutralizing whatever
the classifier. Its gender cues are the gender words and the 90/10 conditions the annotation reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from medbias.io.formats import ANNOTATION_COLUMNS, ANNOTATION_PHENOTYPES
from medbias.synth.conditions import CONDITIONS

OPERATORS = ("AnnA", "AnnB", "AnnC", "AnnD", "AnnE")
FLIP_POSITIVE = 0.12  # an annotator misses a true phenotype
FLIP_NEGATIVE = 0.02  # an annotator marks an absent phenotype
UNSURE_RATE = 0.02
# the rate at which men's notes without alcohol abuse are labelled with it: high enough that every
# embedding's label-bias test passes with a margin (docs/demo-world.md has what a rate of 0.2 gave)
PLANTED_LABEL_BIAS: dict[str, dict[str, object]] = {
    "ALCOHOL.ABUSE": {"gender": "M", "rate": 0.5},
}
COLUMN_FROM_BENCHMARK = {
    "ADVANCED.HEART.DISEASE": "Congestive heart failure; nonhypertensive",
    "ADVANCED.LUNG.DISEASE": "Chronic obstructive pulmonary disease and bronchiectasis",
}


def generate_annotations(
    notes: pd.DataFrame,
    diagnoses_by_hadm: dict[int, set[str]],
    note_mentions: dict[int, set[str]],
    n_notes: int,
    annotators_per_note: list[int],
    seed: int,
    gender_by_subject: dict[int, str] | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Annotate ``n_notes`` discharge summaries that mention no single-gender condition (half of them
    chosen among notes that mention a planted condition feeding a phenotype column, as the real set
    over-samples such patients) by 2-3 annotators each. ``gender_by_subject`` (SUBJECT_ID -> M/F)
    enables the planted label bias."""
    rng = np.random.default_rng(seed)
    candidates = notes[(notes["CATEGORY"] == "Discharge summary") & notes["HADM_ID"].notna()]
    single_gender = {c.name for c in CONDITIONS if c.single_gender}
    rows = np.array(
        [r for r in candidates["ROW_ID"].to_numpy() if not note_mentions.get(r, set()) & single_gender],
        dtype=candidates["ROW_ID"].dtype,
    )
    annotated_conditions = {c.name for c in CONDITIONS if c.annotation}
    mentioning = np.array([r for r in rows if note_mentions.get(r, set()) & annotated_conditions])
    others = np.setdiff1d(rows, mentioning)
    n_mentioning = min(len(mentioning), n_notes // 2)
    chosen = np.concatenate(
        [
            rng.choice(mentioning, n_mentioning, replace=False),
            rng.choice(others, min(len(others), n_notes - n_mentioning), replace=False),
        ]
    )
    chosen.sort()
    by_row = candidates.set_index("ROW_ID")
    column_of = {c.name: c.annotation for c in CONDITIONS if c.annotation}
    records, true_counts = [], dict.fromkeys(ANNOTATION_PHENOTYPES, 0)
    biased = (
        {
            column: {"gender": bias["gender"], "rate": bias["rate"], "notes": 0, "eligible": 0}
            for column, bias in PLANTED_LABEL_BIAS.items()
        }
        if gender_by_subject is not None
        else {}
    )
    for row_id in chosen:
        note = by_row.loc[row_id]
        truth = dict.fromkeys(ANNOTATION_PHENOTYPES, 0)
        for name in note_mentions.get(int(row_id), ()):
            if name in column_of:
                truth[column_of[name]] = 1
        for column, phenotype in COLUMN_FROM_BENCHMARK.items():
            truth[column] = int(phenotype in diagnoses_by_hadm.get(int(note["HADM_ID"]), set()))
        for column, value in truth.items():
            true_counts[column] += value
        labelled = dict(truth)
        for column, bias in biased.items():
            if truth[column] == 0 and gender_by_subject.get(int(note["SUBJECT_ID"])) == bias["gender"]:
                bias["eligible"] += 1
                if rng.random() < bias["rate"]:
                    labelled[column] = 1
                    bias["notes"] += 1
        n_annotators = int(rng.choice(annotators_per_note))
        for operator in rng.choice(OPERATORS, n_annotators, replace=False):
            labels = {}
            for column, value in labelled.items():
                flip = rng.random() < (FLIP_POSITIVE if value else FLIP_NEGATIVE)
                labels[column] = int(value ^ flip)
            records.append(
                {
                    "ROW_ID": int(row_id),
                    "SUBJECT_ID": int(note["SUBJECT_ID"]),
                    "HADM_ID": int(note["HADM_ID"]),
                    "OPERATOR": str(operator),
                    **labels,
                    "NONE": int(not any(labels.values())),
                    "UNSURE": int(rng.random() < UNSURE_RATE),
                }
            )
    frame = pd.DataFrame(records)[list(ANNOTATION_COLUMNS)]
    truth_summary = {
        "annotated_notes": int(len(chosen)),
        "notes_left_out_for_a_single_gender_condition": int(len(candidates) - len(rows)),
        "annotation_rows": int(len(frame)),
        "true_positive_notes": true_counts,
        "flip_rates": {"positive": FLIP_POSITIVE, "negative": FLIP_NEGATIVE},
        "planted_label_bias": biased,
    }
    return frame, truth_summary
