"""MIMIC ingest on small hand-made files: cases, chunking, counts and bad input."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest

from medbias.core.errors import MedbiasInputError
from medbias.io.formats import MIMIC_TABLES
from medbias.io.mimic import ingest_notes, read_table
from medbias.studies.hurtful.demographics import AGE_OVER_89, admission_demographics, ethnicity_group, language_group

CATEGORIES = ["Nursing", "Nursing/other", "Physician ", "Discharge summary", "Radiology"]


def _notes_csv(rows, lower=False):
    header = ",".join(c.lower() if lower else c for c in MIMIC_TABLES["NOTEEVENTS"])
    return header + "\n" + "\n".join(rows) + "\n"


ROWS = [
    '1,10,100,2150-01-01,2150-01-01 10:00:00,2150-01-01 10:30:00,Nursing,Report,5,,"T 98.6 F, ok"',
    '2,10,100,2150-01-02,,,Discharge summary,Report,,,"Sex: F"',
    '3,10,,2150-01-03,2150-01-03 10:00:00,,Radiology,CXR,5,,"outpatient"',
    '4,10,100,2150-01-01,2150-01-01 11:00:00,,Physician ,Note,5,1,"error row"',
    '5,11,101,2150-01-01,2150-01-01 12:00:00,,Nursing/other,Report,5,,"multi\nline"',
]


def test_notes_chunked_with_counts(tmp_path):
    folder = tmp_path / "mimic"
    folder.mkdir()
    with gzip.open(folder / "noteevents.csv.gz", "wt") as handle:
        handle.write(_notes_csv(ROWS, lower=True))
    out = tmp_path / "notes.parquet"
    counts = ingest_notes(folder, out, CATEGORIES, chunk_size=2)
    assert counts == {"notes_read": 5, "iserror_dropped": 1, "outpatient_dropped": 1, "notes_kept": 3}
    frame = pd.read_parquet(out)
    assert frame["ROW_ID"].tolist() == [1, 2, 5]
    assert frame.loc[frame["ROW_ID"] == 2, "CHARTTIME"].isna().all()  # discharge summary kept, no CHARTTIME
    assert frame.loc[frame["ROW_ID"] == 1, "TEXT"].item() == "T 98.6 F, ok"
    assert frame.loc[frame["ROW_ID"] == 5, "TEXT"].item() == "multi\nline"


@pytest.mark.parametrize(
    ("bad_row", "message"),
    [
        (
            '6,11,101,2150-01-01,2150-13-01 12:00:00,,Nursing,Report,5,,"x"',
            r"row 6, column CHARTTIME: malformed timestamp '2150-13-01 12:00:00'",
        ),
        (
            '6,11,101,2150-01-01,2150-01-01 12:00:00,,Nursing notes,Report,5,,"x"',
            r"row 6, column CATEGORY: unknown note category 'Nursing notes'",
        ),
        (
            '6,eleven,101,2150-01-01,2150-01-01 12:00:00,,Nursing,Report,5,,"x"',
            r"row 6, column SUBJECT_ID: expected an integer, got 'eleven'",
        ),
    ],
)
def test_bad_notes_name_file_row_and_value_and_leave_nothing(tmp_path, bad_row, message):
    folder = tmp_path / "mimic"
    folder.mkdir()
    (folder / "NOTEEVENTS.csv").write_text(_notes_csv(ROWS + [bad_row]))
    out = tmp_path / "notes.parquet"
    with pytest.raises(MedbiasInputError, match=r"NOTEEVENTS.csv: " + message):
        ingest_notes(folder, out, CATEGORIES, chunk_size=2)
    assert not out.exists() and not (tmp_path / "notes.parquet.part").exists()


def test_small_table_timestamps_and_demographics(tmp_path):
    folder = tmp_path / "mimic"
    folder.mkdir()
    (folder / "PATIENTS.csv").write_text(
        ",".join(MIMIC_TABLES["PATIENTS"]) + "\n1,10,F,2080-05-01 00:00:00,,,,0\n2,11,M,1850-01-01 00:00:00,,,,0\n"
    )
    adm_cols = MIMIC_TABLES["ADMISSIONS"]

    def adm(row, subject, hadm, lang, eth):
        values = dict.fromkeys(adm_cols, "")
        values.update(
            ROW_ID=row,
            SUBJECT_ID=subject,
            HADM_ID=hadm,
            ADMITTIME="2150-04-30 10:00:00",
            DISCHTIME="2150-05-03 10:00:00",
            INSURANCE="Medicare",
            LANGUAGE=lang,
            ETHNICITY=eth,
        )
        return ",".join(str(values[c]) for c in adm_cols)

    (folder / "ADMISSIONS.csv").write_text(
        ",".join(adm_cols)
        + "\n"
        + adm(1, 10, 100, "ENGL", "WHITE - RUSSIAN")
        + "\n"
        + adm(2, 11, 101, "", "PATIENT DECLINED TO ANSWER")
        + "\n"
    )
    demo = admission_demographics(read_table(folder, "PATIENTS"), read_table(folder, "ADMISSIONS"))
    assert demo["age"].tolist() == [69.0, AGE_OVER_89]  # birthday not yet reached; shifted over-89 age
    assert demo["language"].tolist() == ["English", "Missing"]
    assert demo["ethnicity"].tolist() == ["WHITE", "UNKNOWN"]
    (folder / "ICUSTAYS.csv").write_text(
        ",".join(MIMIC_TABLES["ICUSTAYS"])
        + "\n1,10,100,200,carevue,MICU,MICU,1,1,2150-04-31 10:00:00,2150-05-01 10:00:00,1.0\n"
    )
    with pytest.raises(
        MedbiasInputError, match=r"ICUSTAYS.csv: row 1, column INTIME: malformed timestamp '2150-04-31 10:00:00'"
    ):
        read_table(folder, "ICUSTAYS")


def test_group_mappings():
    assert ethnicity_group("HISPANIC/LATINO - PUERTO RICAN") == "HISPANIC/LATINO"
    assert ethnicity_group("ASIAN - CHINESE") == "ASIAN" and ethnicity_group("BLACK/CAPE VERDEAN") == "BLACK"
    assert ethnicity_group("MULTI RACE ETHNICITY") == "OTHER" and ethnicity_group(None) == "UNKNOWN"
    assert language_group("SPAN") == "Other" and language_group(float("nan")) == "Missing"
