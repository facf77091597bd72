"""The gender ratio per Table 3 category among patients whose discharge notes mention the category's
words (Zhang et al. 2020, section 4.3, last paragraph)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd


def _category_patterns(attributes: Sequence[tuple[str, str]]) -> dict[str, re.Pattern]:
    by_category: dict[str, list[str]] = {}
    for attribute, category in attributes:
        by_category.setdefault(category, []).append(re.escape(attribute.lower()))
    return {
        c: re.compile(r"\b(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")\b")
        for c, words in by_category.items()
    }


def discharge_summaries(notes: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``notes`` whose CATEGORY is a discharge summary (case and spaces ignored)."""
    return notes[notes["CATEGORY"].str.strip().str.lower() == "discharge summary"]


def gender_ratio(notes: pd.DataFrame, genders: pd.Series, attributes: Sequence[tuple[str, str]]) -> pd.DataFrame:
    """Per category: patients with a discharge note that mentions any of the category's attribute
    strings (case-insensitive, whole words), and the share of them that are male and female.

    ``notes``: SUBJECT_ID, CATEGORY, TEXT; ``genders``: M/F indexed by SUBJECT_ID. Patients without a
    recorded gender are counted in ``unknown_gender``.
    """
    discharge = discharge_summaries(notes)
    text = discharge["TEXT"].str.lower()
    rows = []
    for category, pattern in _category_patterns(attributes).items():
        subjects = pd.Index(discharge.loc[text.str.contains(pattern), "SUBJECT_ID"].unique())
        g = genders.reindex(subjects)
        known = g.isin(["M", "F"])
        n = int(known.sum())
        rows.append(
            {
                "category": category,
                "patients": len(subjects),
                "male": int((g == "M").sum()),
                "female": int((g == "F").sum()),
                "unknown_gender": int((~known).sum()),
                "male_share": (g == "M").sum() / n if n else np.nan,
                "female_share": (g == "F").sum() / n if n else np.nan,
            }
        )
    return pd.DataFrame(rows)
