"""Protected attributes per admission (Zhang et al. 2020, sections 3.2 and 4.2).

- gender: PATIENTS.GENDER (M/F);
- language: English when LANGUAGE is 'ENGL', Missing when empty, Other otherwise;
- ethnicity: the raw ETHNICITY strings collapsed to WHITE, BLACK, HISPANIC/LATINO, ASIAN, OTHER and
  UNKNOWN by ``ethnicity_group`` (the mapping of every raw value is written out with the results);
- insurance: Medicare, Medicaid, Private, Government, Self Pay, as recorded;
- age at admission in years; MIMIC-III shifts the dates of birth of patients older than 89 so that
  they appear about 300 years old: their age is set to ``AGE_OVER_89`` = 91.4, the median age of
  that group reported in the MIMIC-III documentation.
"""

from __future__ import annotations

import pandas as pd

AGE_OVER_89 = 91.4
ETHNICITY_GROUPS = ("WHITE", "BLACK", "HISPANIC/LATINO", "ASIAN", "OTHER", "UNKNOWN")
# every protected attribute's subgroups, in the order of the tables (the last one takes values
# outside the list: Missing, UNKNOWN, Self Pay)
ATTRIBUTE_CLASSES: dict[str, tuple[str, ...]] = {
    "gender": ("M", "F"),
    "language": ("English", "Other", "Missing"),
    "ethnicity": ETHNICITY_GROUPS,
    "insurance": ("Medicare", "Medicaid", "Private", "Government", "Self Pay"),
}
UNKNOWN_ETHNICITY = frozenset({"UNKNOWN/NOT SPECIFIED", "PATIENT DECLINED TO ANSWER", "UNABLE TO OBTAIN", ""})


def ethnicity_group(raw: str | float | None) -> str:
    """Collapse one raw MIMIC-III ETHNICITY string (by its leading category word)."""
    value = "" if raw is None or (isinstance(raw, float) and pd.isna(raw)) else str(raw).strip().upper()
    if value in UNKNOWN_ETHNICITY:
        return "UNKNOWN"
    if value.startswith("WHITE"):
        return "WHITE"
    if value.startswith("BLACK"):
        return "BLACK"
    if value.startswith("HISPANIC") or value == "SOUTH AMERICAN":
        return "HISPANIC/LATINO"
    if value.startswith("ASIAN"):
        return "ASIAN"
    return "OTHER"


def language_group(raw: str | float | None) -> str:
    if raw is None or (isinstance(raw, float) and pd.isna(raw)) or str(raw).strip() == "":
        return "Missing"
    return "English" if str(raw).strip().upper() == "ENGL" else "Other"


def age_at(admit: pd.Series, dob: pd.Series) -> pd.Series:
    """Age in years at admission (365.25-day years), over-89 patients set to ``AGE_OVER_89``."""
    years = (admit.dt.year - dob.dt.year) - (
        (admit.dt.month < dob.dt.month) | ((admit.dt.month == dob.dt.month) & (admit.dt.day < dob.dt.day))
    ).astype(int)
    return years.astype(float).where(years <= 89, AGE_OVER_89)


def admission_demographics(patients: pd.DataFrame, admissions: pd.DataFrame) -> pd.DataFrame:
    """One row per admission with the four protected attributes and age."""
    frame = admissions.merge(
        patients[["SUBJECT_ID", "GENDER", "DOB"]], on="SUBJECT_ID", how="left", validate="many_to_one"
    )
    return pd.DataFrame(
        {
            "SUBJECT_ID": frame["SUBJECT_ID"],
            "HADM_ID": frame["HADM_ID"],
            "gender": frame["GENDER"],
            "language": frame["LANGUAGE"].map(language_group),
            "ethnicity": frame["ETHNICITY"].map(ethnicity_group),
            "insurance": frame["INSURANCE"],
            "age": age_at(frame["ADMITTIME"], frame["DOB"]),
        }
    )


def ethnicity_mapping(admissions: pd.DataFrame) -> pd.DataFrame:
    """Every raw ETHNICITY value with its group and admission count (an output, so it can be checked)."""
    counts = admissions["ETHNICITY"].fillna("").value_counts().rename_axis("raw").reset_index(name="admissions")
    counts["group"] = counts["raw"].map(ethnicity_group)
    return counts[["raw", "group", "admissions"]].sort_values(["group", "raw"]).reset_index(drop=True)
