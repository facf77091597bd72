"""MIMIC-III v1.4 ingest: the small tables into memory, NOTEEVENTS in chunks to Parquet.

Headers may be upper-case (full database) or lower-case (public demo); files plain or gzipped.
Columns are checked before anything is read in full; a malformed timestamp or an unknown note
category stops with one line naming the file, row and value. Row numbers count data rows from 1
(the header is row 0).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.io.formats import MIMIC_DATE_FORMAT, MIMIC_DATETIME_FORMAT, MIMIC_TABLES, check_columns, find_table

log = logging.getLogger(__name__)

TIMESTAMP_COLUMNS: dict[str, tuple[str, ...]] = {
    "PATIENTS": ("DOB", "DOD"),
    "ADMISSIONS": ("ADMITTIME", "DISCHTIME", "DEATHTIME"),
    "ICUSTAYS": ("INTIME", "OUTTIME"),
    "NOTEEVENTS": ("CHARTTIME",),
}
DATE_COLUMNS: dict[str, tuple[str, ...]] = {"NOTEEVENTS": ("CHARTDATE",)}
NOTE_COLUMNS = ("ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "CATEGORY", "DESCRIPTION", "ISERROR", "TEXT")


def table_path(folder: str | Path, table: str) -> Path:
    path = find_table(folder, table)
    if path is None:
        raise MedbiasInputError(f"{folder}: no {table}.csv(.gz) (nor {table.lower()}.csv(.gz))")
    return path


def _parse_times(frame: pd.DataFrame, columns: Iterable[str], fmt: str, path: Path, row_offset: int) -> None:
    """Parse timestamp columns in place with a strict format; report the first bad value."""
    for column in columns:
        raw = frame[column]
        parsed = pd.to_datetime(raw, format=fmt, errors="coerce")
        bad = raw.notna() & (raw.astype(str).str.strip() != "") & parsed.isna()
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            raise MedbiasInputError(
                f"{path}: row {row_offset + i + 1}, column {column}: malformed timestamp {raw.iloc[i]!r} (expected {fmt})"
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
            i = int(bad.to_numpy().nonzero()[0][0])
            raise MedbiasInputError(f"{path}: row {row_offset + i + 1}, column {column}: expected an integer, got {raw.iloc[i]!r}")
        frame[column] = numeric.astype("Int64")


def read_table(folder: str | Path, table: str, usecols: Iterable[str] | None = None) -> pd.DataFrame:
    """Read a small MIMIC table (not NOTEEVENTS) with canonical upper-case columns and parsed times."""
    path = table_path(folder, table)
    check_columns(path, MIMIC_TABLES[table])
    wanted = {c.upper() for c in (usecols or MIMIC_TABLES[table])}
    frame = pd.read_csv(path, usecols=lambda c: c.upper() in wanted, dtype={"ICD9_CODE": str, "icd9_code": str},
                        keep_default_na=False, na_values=[""], low_memory=False)
    frame.columns = [c.upper() for c in frame.columns]
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
    schema = pa.schema([
        ("ROW_ID", pa.int64()), ("SUBJECT_ID", pa.int64()), ("HADM_ID", pa.int64()),
        ("CHARTDATE", pa.timestamp("ns")), ("CHARTTIME", pa.timestamp("ns")), ("CATEGORY", pa.string()),
        ("DESCRIPTION", pa.string()), ("TEXT", pa.string()),
    ])
    try:
        reader = pd.read_csv(path, chunksize=chunk_size, keep_default_na=False, na_values=[""],
                             dtype={"TEXT": str, "text": str, "CATEGORY": str, "category": str}, low_memory=False)
        for chunk in reader:
            offset = counts["notes_read"]
            chunk.columns = [c.upper() for c in chunk.columns]
            chunk = chunk[list(NOTE_COLUMNS)]
            unknown = ~chunk["CATEGORY"].isin(allowed)
            if unknown.any():
                i = int(unknown.to_numpy().nonzero()[0][0])
                raise MedbiasInputError(
                    f"{path}: row {offset + i + 1}, column CATEGORY: unknown note category {chunk['CATEGORY'].iloc[i]!r}"
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
