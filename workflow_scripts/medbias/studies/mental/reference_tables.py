"""Sogancioglu et al. 2023's Tables I and III: the phenotype definitions the annotators used, and the
gendered terms with their swaps and neutral forms. Table III is built from the maps the treatments
themselves apply (``medbias.core.note_text``), so the table shows what the workflow does."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from medbias.core.note_text import TABLE_III_NEUTRAL, TABLE_III_SWAP
from medbias.io.tables import PaperTable
from medbias.studies.mental.labels import TASK_TITLES

# Table I as the paper prints it (the annotation guidelines of Gehrmann et al. 2018, its reference [39])
PHENOTYPE_DEFINITIONS: dict[str, str] = {
    "depression": "Diagnosis of depression; prescription of anti-depressant medication; or any description of "
    "intentional drug overdose, suicide, or self-harm attempts",
    "alcohol_abuse": "Current/recent alcohol abuse history; still an active problem at the time of admission (may or "
    "may not be the cause of it).",
    "substance_abuse": "Include any intravenous drug abuse (IVDU), accidental overdose of psychoactive or narcotic "
    "medications (prescribed or not). Admitting to marijuana use in history is not sufficient.",
    "psychiatric_disorders": "All psychiatric disorders in DSM-5 classification, including schizophrenia, bipolar, and "
    "anxiety disorders, other than depression.",
}
MALE_TERMS = ("he", "man", "his", "him", "male")


def table1_phenotypes(tasks: Sequence[str]) -> PaperTable:
    """Table I: the definition of each configured phenotype task."""
    frame = pd.DataFrame(
        {"Phenotype": [TASK_TITLES[t] for t in tasks], "Definition": [PHENOTYPE_DEFINITIONS[t] for t in tasks]}
    )
    return PaperTable(
        frame,
        "Table I: phenotype definitions used for annotation (Sogancioglu et al. 2023)",
        ("As the paper prints them, from the annotation guidelines of Gehrmann et al. (2018).",),
    )


def _shown(term: str) -> str:
    return term if term else "(removed)"


def table3_gender_terms() -> PaperTable:
    """Table III: each male term, the female term it swaps with, and the neutral form both become;
    then the 'Sex:' field. Built from ``TABLE_III_SWAP`` and ``TABLE_III_NEUTRAL``."""
    rows = []
    for male in MALE_TERMS:
        female = TABLE_III_SWAP[male]
        if TABLE_III_NEUTRAL[male] != TABLE_III_NEUTRAL[female]:
            raise ValueError(f"Table III: {male!r} and {female!r} neutralize differently")
        rows.append({"Male terms": male, "Female terms": female, "Neutralized terms": _shown(TABLE_III_NEUTRAL[male])})
    rows.append({"Male terms": "Sex: M", "Female terms": "Sex: F", "Neutralized terms": "Sex: (removed)"})
    notes = (
        "Swapping: male terms <-> female terms; neutralization: either -> the neutral form. Whole words only, "
        "case kept. 'her' swaps to 'him' when it is an object (before punctuation, the end of the note or a "
        "word such as 'that' or 'to') and to 'his' when possessive ('her mother'): the paper's table lists "
        "'her' against both.",
    )
    return PaperTable(
        pd.DataFrame(rows), "Table III: gender terms swapped and neutralized (Sogancioglu et al. 2023)", notes
    )
