"""Input formats: the column sets of the real inputs, and cheap header checks.

The column lists are MIMIC-III v1.4's (upper-case in the full database, lower-case in the public
demo); the synthetic world writes exactly these, and the ingest checks them.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from medbias.core.errors import MedbiasInputError

MIMIC_TABLES: dict[str, tuple[str, ...]] = {
    "PATIENTS": ("ROW_ID", "SUBJECT_ID", "GENDER", "DOB", "DOD", "DOD_HOSP", "DOD_SSN", "EXPIRE_FLAG"),
    "ADMISSIONS": (
        "ROW_ID",
        "SUBJECT_ID",
        "HADM_ID",
        "ADMITTIME",
        "DISCHTIME",
        "DEATHTIME",
        "ADMISSION_TYPE",
        "ADMISSION_LOCATION",
        "DISCHARGE_LOCATION",
        "INSURANCE",
        "LANGUAGE",
        "RELIGION",
        "MARITAL_STATUS",
        "ETHNICITY",
        "EDREGTIME",
        "EDOUTTIME",
        "DIAGNOSIS",
        "HOSPITAL_EXPIRE_FLAG",
        "HAS_CHARTEVENTS_DATA",
    ),
    "ICUSTAYS": (
        "ROW_ID",
        "SUBJECT_ID",
        "HADM_ID",
        "ICUSTAY_ID",
        "DBSOURCE",
        "FIRST_CAREUNIT",
        "LAST_CAREUNIT",
        "FIRST_WARDID",
        "LAST_WARDID",
        "INTIME",
        "OUTTIME",
        "LOS",
    ),
    "DIAGNOSES_ICD": ("ROW_ID", "SUBJECT_ID", "HADM_ID", "SEQ_NUM", "ICD9_CODE"),
    "NOTEEVENTS": (
        "ROW_ID",
        "SUBJECT_ID",
        "HADM_ID",
        "CHARTDATE",
        "CHARTTIME",
        "STORETIME",
        "CATEGORY",
        "DESCRIPTION",
        "CGID",
        "ISERROR",
        "TEXT",
    ),
}

# mimic-code concept exports (lower-case, one row per ICU stay); file stem -> required columns
ACUITY_EXPORTS: dict[str, tuple[str, ...]] = {
    "oasis": ("subject_id", "hadm_id", "icustay_id", "oasis", "oasis_prob"),
    "sapsii": ("subject_id", "hadm_id", "icustay_id", "sapsii", "sapsii_prob"),
    "sofa": ("subject_id", "hadm_id", "icustay_id", "sofa"),
}

# PhysioNet "Phenotype Annotations for Patient Notes in the MIMIC-III Database"
ANNOTATION_PHENOTYPES: tuple[str, ...] = (
    "ADVANCED.CANCER",
    "ADVANCED.HEART.DISEASE",
    "ADVANCED.LUNG.DISEASE",
    "CHRONIC.NEUROLOGICAL.DYSTROPHIES",
    "CHRONIC.PAIN.FIBROMYALGIA",
    "ALCOHOL.ABUSE",
    "OTHER.SUBSTANCE.ABUSE",
    "OBESITY",
    "SCHIZOPHRENIA.AND.OTHER.PSYCHIATRIC.DISORDERS",
    "DEPRESSION",
    "DEMENTIA",
    "DEVELOPMENTAL.DELAY.RETARDATION",
    "NON.ADHERENCE",
)
ANNOTATION_COLUMNS: tuple[str, ...] = (
    ("ROW_ID", "SUBJECT_ID", "HADM_ID", "OPERATOR") + ANNOTATION_PHENOTYPES + ("NONE", "UNSURE")
)

MIMIC_DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
MIMIC_DATE_FORMAT = "%Y-%m-%d"


def find_table(folder: str | Path, table: str) -> Path | None:
    """The file holding ``table`` in ``folder``: ``TABLE.csv(.gz)`` or ``table.csv(.gz)``; None if absent."""
    folder = Path(folder)
    for stem in (table, table.lower()):
        for suffix in (".csv.gz", ".csv"):
            candidate = folder / f"{stem}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def read_header(path: str | Path) -> list[str]:
    """The header row of a CSV file (plain or gzipped), without reading the rest.

    Only the first line's bytes are decoded, so a bad byte further on is the reader's to report, with
    its row. Raises MedbiasInputError naming the file when it is empty, not gzip although named .gz,
    or its header is not UTF-8.
    """
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as raw:
            first_bytes = raw.readline()
    except (OSError, EOFError) as exc:
        raise MedbiasInputError(f"{path}: cannot read the header row ({exc or 'the file ends early'})") from exc
    try:
        first = first_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MedbiasInputError(f"{path}: the header row is not UTF-8 text (byte offset {exc.start})") from exc
    if not first.strip():
        raise MedbiasInputError(f"{path}: file is empty (expected a CSV header row)")
    return [name.strip().strip('"') for name in first.lstrip("\ufeff").rstrip("\r\n").split(",")]


def check_columns(path: str | Path, required: tuple[str, ...], case_insensitive: bool = True) -> None:
    """Raise MedbiasInputError naming the file and the first missing column of ``required``."""
    header = read_header(path)
    present = {h.upper() for h in header} if case_insensitive else set(header)
    for column in required:
        key = column.upper() if case_insensitive else column
        if key not in present:
            raise MedbiasInputError(f"{path}: missing column '{column}' (found: {', '.join(header)})")
