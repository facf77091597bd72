"""MIMIC-III v1.4 ingest: the small tables into memory, NOTEEVENTS in chunks to Parquet.

Headers may be upper-case (full database) or lower-case (public demo); files plain or gzipped.
Columns are checked before anything is read in full; a malformed timestamp or an unknown note
category stops with one line naming the file, row and value. Row numbers count data rows from 1
(the header is row 0). A file that cannot be read to its end (a truncated gzip, a CSV cut mid-row,
a byte that is not UTF-8) stops with one line naming it (``medbias.core.errors.reading``).

The files derived from MIMIC-III that the workflow reads whole are validated here too: the
mimic-code acuity exports, the PhysioNet phenotype annotations and the mimic3-benchmarks test split.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from medbias.core.errors import MedbiasInputError, reading
from medbias.io.formats import (
    ACUITY_EXPORTS,
    ANNOTATION_COLUMNS,
    ANNOTATION_PHENOTYPES,
    MIMIC_DATE_FORMAT,
    MIMIC_DATETIME_FORMAT,
    MIMIC_TABLES,
    check_columns,
    find_table,
)

log = logging.getLogger(__name__)

TIMESTAMP_COLUMNS: dict[str, tuple[str, ...]] = {
    "PATIENTS": ("DOB", "DOD"),
    "ADMISSIONS": ("ADMITTIME", "DISCHTIME", "DEATHTIME"),
    "ICUSTAYS": ("INTIME", "OUTTIME"),
    "NOTEEVENTS": ("CHARTTIME",),
}
DATE_COLUMNS: dict[str, tuple[str, ...]] = {"NOTEEVENTS": ("CHARTDATE",)}
NOTE_COLUMNS = (
    "ROW_ID",
    "SUBJECT_ID",
    "HADM_ID",
    "CHARTDATE",
    "CHARTTIME",
    "CATEGORY",
    "DESCRIPTION",
    "ISERROR",
    "TEXT",
)


def table_path(folder: str | Path, table: str) -> Path:
    path = find_table(folder, table)
    if path is None:
        raise MedbiasInputError(f"{folder}: no {table}.csv(.gz) (nor {table.lower()}.csv(.gz))")
    return path


def _first_bad(mask: pd.Series) -> int:
    """The position of the first True in ``mask`` (the first faulty row, counted from 0)."""
    return int(mask.to_numpy().nonzero()[0][0])


def _parse_times(frame: pd.DataFrame, columns: Iterable[str], fmt: str, path: Path, row_offset: int) -> None:
    """Parse timestamp columns in place with a strict format; report the first bad value."""
    for column in columns:
        raw = frame[column]
        parsed = pd.to_datetime(raw, format=fmt, errors="coerce")
        bad = raw.notna() & (raw.astype(str).str.strip() != "") & parsed.isna()
        if bad.any():
            i = _first_bad(bad)
            raise MedbiasInputError(
                f"{path}: row {row_offset + i + 1}, column {column}: malformed timestamp {raw.iloc[i]!r} "
                f"(expected {fmt})"
            )
        frame[column] = parsed


INTEGER_COLUMNS = ("ROW_ID", "SUBJECT_ID", "HADM_ID", "ICUSTAY_ID", "SEQ_NUM")


def _check_integers(frame: pd.DataFrame, path: Path, row_offset: int) -> None:
    """Identifier columns must hold integers (or be empty where MIMIC allows it); report the first bad value."""
    for column in (c for c in INTEGER_COLUMNS if c in frame):
        raw = frame[column]
        if pd.api.types.is_integer_dtype(raw):
            continue
        numeric = pd.to_numeric(raw, errors="coerce")
        bad = raw.notna() & (numeric.isna() | (numeric % 1 != 0))
        if bad.any():
            i = _first_bad(bad)
            raise MedbiasInputError(
                f"{path}: row {row_offset + i + 1}, column {column}: expected an integer, got {raw.iloc[i]!r}"
            )
        frame[column] = numeric.astype("Int64")


def read_table(folder: str | Path, table: str, usecols: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a small MIMIC table (not NOTEEVENTS) with canonical upper-case columns and parsed times."""
    path = table_path(folder, table)
    check_columns(path, MIMIC_TABLES[table])
    wanted = [c.upper() for c in (usecols or MIMIC_TABLES[table])]
    with reading(path):  # every column is read: with usecols, pandas drops a row's surplus fields without a word
        frame = pd.read_csv(
            path, dtype={"ICD9_CODE": str, "icd9_code": str}, keep_default_na=False, na_values=[""], low_memory=False
        )
    frame.columns = [c.upper() for c in frame.columns]
    frame = frame[[c for c in frame.columns if c in wanted]]
    _check_integers(frame, path, 0)
    _parse_times(frame, [c for c in TIMESTAMP_COLUMNS.get(table, ()) if c in frame], MIMIC_DATETIME_FORMAT, path, 0)
    return frame


def ingest_notes(
    folder: str | Path,
    output: str | Path,
    allowed_categories: Iterable[str],
    chunk_size: int = 50_000,
) -> dict[str, int]:
    """Stream NOTEEVENTS in chunks into ``output`` (Parquet), dropping ISERROR rows and notes without
    HADM_ID (outpatient), and return the counts. Memory is bounded by ``chunk_size``.

    The Parquet is written to a temporary name and renamed at the end, so a failure leaves nothing.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = table_path(folder, "NOTEEVENTS")
    check_columns(path, MIMIC_TABLES["NOTEEVENTS"])
    allowed = set(allowed_categories)
    counts = {"notes_read": 0, "iserror_dropped": 0, "outpatient_dropped": 0, "notes_kept": 0}
    tmp = Path(f"{output}.part")
    writer = None
    schema = pa.schema(
        [
            ("ROW_ID", pa.int64()),
            ("SUBJECT_ID", pa.int64()),
            ("HADM_ID", pa.int64()),
            ("CHARTDATE", pa.timestamp("ns")),
            ("CHARTTIME", pa.timestamp("ns")),
            ("CATEGORY", pa.string()),
            ("DESCRIPTION", pa.string()),
            ("TEXT", pa.string()),
        ]
    )
    try:
        reader = pd.read_csv(
            path,
            chunksize=chunk_size,
            keep_default_na=False,
            na_values=[""],
            dtype={"TEXT": str, "text": str, "CATEGORY": str, "category": str},
            low_memory=False,
        )
        for chunk in _chunks_read(reader, path, counts, chunk_size):
            offset = counts["notes_read"]
            chunk.columns = [c.upper() for c in chunk.columns]
            chunk = chunk[list(NOTE_COLUMNS)]
            unknown = ~chunk["CATEGORY"].isin(allowed)
            if unknown.any():
                i = _first_bad(unknown)
                raise MedbiasInputError(
                    f"{path}: row {offset + i + 1}, column CATEGORY: unknown note category "
                    f"{chunk['CATEGORY'].iloc[i]!r}"
                )
            _check_integers(chunk, path, offset)
            _parse_times(chunk, ["CHARTTIME"], MIMIC_DATETIME_FORMAT, path, offset)
            _parse_times(chunk, ["CHARTDATE"], MIMIC_DATE_FORMAT, path, offset)
            counts["notes_read"] += len(chunk)
            iserror = pd.to_numeric(chunk["ISERROR"], errors="coerce").fillna(0).astype(int) == 1
            counts["iserror_dropped"] += int(iserror.sum())
            chunk = chunk[~iserror]
            outpatient = chunk["HADM_ID"].isna()
            counts["outpatient_dropped"] += int(outpatient.sum())
            chunk = chunk[~outpatient].drop(columns=["ISERROR"])
            chunk = chunk.astype({"HADM_ID": "int64"})
            table = pa.Table.from_pandas(chunk, schema=schema, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(str(tmp), schema)
            writer.write_table(table)
            counts["notes_kept"] += len(chunk)
            log.info("NOTEEVENTS: %d rows read", counts["notes_read"])
        if writer is None:
            writer = pq.ParquetWriter(str(tmp), schema)
        writer.close()
        writer = None
        os.replace(tmp, output)
    finally:
        if writer is not None:
            writer.close()
        if tmp.exists():
            tmp.unlink()
    return counts


def _chunks_read(reader, path: Path, counts: dict[str, int], chunk_size: int):
    """The chunks of ``reader``; a reading error becomes one line naming the file and the block of
    data rows being read when it struck (the rows before the block were read without fault)."""
    while True:
        try:
            with reading(path):
                chunk = next(reader)
        except StopIteration:
            return
        except MedbiasInputError as error:
            first = counts["notes_read"] + 1
            raise MedbiasInputError(
                f"{error} (in data rows {first} to {first + chunk_size - 1}, the block being read)"
            ) from error.__cause__
        yield chunk


def read_acuity_export(folder: str | Path, name: str) -> pd.DataFrame:
    """One mimic-code concept export (oasis, sapsii or sofa; one row per ICU stay): the identifier
    columns integers, the score columns numbers (empty where mimic-code left them empty)."""
    path = find_table(folder, name)
    if path is None:
        raise MedbiasInputError(f"{folder}: no {name}.csv(.gz)")
    check_columns(path, ACUITY_EXPORTS[name], case_insensitive=False)
    with reading(path):
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""], low_memory=False)
    for column in ACUITY_EXPORTS[name]:
        raw = frame[column]
        numeric = pd.to_numeric(raw, errors="coerce")
        if column.endswith("_id"):
            bad, expected = numeric.isna() | (numeric % 1 != 0), "an integer"
        else:
            bad, expected = raw.notna() & numeric.isna(), "a number (or an empty cell)"
        if bad.any():
            i = _first_bad(bad)
            raise MedbiasInputError(f"{path}: row {i + 1}, column {column}: expected {expected}, got {raw.iloc[i]!r}")
        frame[column] = numeric
    return frame


ANNOTATION_LABEL_COLUMNS: tuple[str, ...] = ANNOTATION_PHENOTYPES + ("NONE", "UNSURE")


def read_annotations(path: str | Path) -> pd.DataFrame:
    """The PhysioNet phenotype annotations (one row per note and annotator): identifiers integers,
    OPERATOR present, every phenotype, NONE and UNSURE label 0 or 1. Any other value (2, -1, yes, an
    empty cell) stops with one line naming the file, row and column: a label is never guessed."""
    path = Path(path)
    check_columns(path, ANNOTATION_COLUMNS, case_insensitive=False)
    with reading(path):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if frame.empty:
        raise MedbiasInputError(f"{path}: no annotation rows (only the header)")
    _check_integers(frame, path, 0)  # read as text, an empty identifier is "" and is refused too
    frame = frame.astype({column: "int64" for column in ("ROW_ID", "SUBJECT_ID", "HADM_ID")})
    empty = frame["OPERATOR"].str.strip() == ""
    if empty.any():
        raise MedbiasInputError(
            f"{path}: row {_first_bad(empty) + 1}, column OPERATOR: empty (each row is one annotator's)"
        )
    for column in ANNOTATION_LABEL_COLUMNS:
        values = frame[column].str.strip()
        bad = ~values.isin(["0", "1"])
        if bad.any():
            i = _first_bad(bad)
            raise MedbiasInputError(
                f"{path}: row {i + 1}, column {column}: label {frame[column].iloc[i]!r} is not 0 or 1"
            )
        frame[column] = values.astype("int64")
    return frame


SPLIT_FLAGS = ("0", "1")


def read_benchmark_split(path: str | Path) -> pd.DataFrame:
    """The mimic3-benchmarks test split (``testset.csv``: ``SUBJECT_ID,flag`` rows without a header,
    flag 1 = test): columns SUBJECT_ID (int) and flag (0/1).

    A first line whose first field names the column (``subject_id``, any case) is taken for a header
    and skipped; any other non-integer SUBJECT_ID, a flag other than 0 or 1, a row without two fields,
    a SUBJECT_ID listed twice or a file with no test subject stops with one line naming the file and
    row (a split read wrongly would silently leave the paper's test set empty)."""
    import csv

    path = Path(path)
    with reading(path), open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    start = 1 if rows and rows[0] and rows[0][0].strip().lower() == "subject_id" else 0
    subjects: list[int] = []
    flags: list[int] = []
    seen: dict[int, int] = {}
    for number, row in enumerate(rows[start:], start=start + 1):
        if not row or not any(field.strip() for field in row):
            continue
        if len(row) != 2:
            raise MedbiasInputError(f"{path}: line {number}: expected 2 fields (SUBJECT_ID,flag), got {len(row)}")
        subject, flag = row[0].strip(), row[1].strip()
        if not subject.isdigit():
            hint = " (a header line? the file has none: SUBJECT_ID,flag rows)" if number == 1 else ""
            raise MedbiasInputError(
                f"{path}: line {number}, column SUBJECT_ID: expected an integer, got {subject!r}{hint}"
            )
        if flag not in SPLIT_FLAGS:
            raise MedbiasInputError(f"{path}: line {number}, column flag: expected 0 or 1 (1 = test), got {flag!r}")
        if int(subject) in seen:
            raise MedbiasInputError(
                f"{path}: line {number}: SUBJECT_ID {subject} is listed twice (line {seen[int(subject)]})"
            )
        seen[int(subject)] = number
        subjects.append(int(subject))
        flags.append(int(flag))
    if 1 not in flags:
        raise MedbiasInputError(
            f"{path}: no test subject (no row with flag 1); the split would leave every task without test stays"
        )
    return pd.DataFrame({"SUBJECT_ID": subjects, "flag": flags})
