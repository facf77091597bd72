"""A site's own note-length table, measured from its NOTEEVENTS: per CATEGORY, the number of notes
and the mean, spread and quantiles of TEXT length in characters. Aggregates only: no note text
leaves the function. The table has the columns of ``config/resources/mimic-facts/note_lengths.tsv``
(plus quantiles), so the real-length benchmark can run on a site's measured distribution.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from medbias.io.formats import check_columns
from medbias.io.mimic import table_path

LENGTH_QUANTILES = (0.5, 0.9, 0.99)


def measure_note_lengths(folder: str | Path, styles: dict[str, str], chunk_size: int = 100_000) -> pd.DataFrame:
    """Per CATEGORY of ``folder``'s NOTEEVENTS: notes, mean_chars, sigma_log (standard deviation of the
    log length, for the lognormal the benchmark draws from), median/p90/p99 characters, and the text
    ``style`` from ``styles`` ("nursing" for a category it does not name). Streams ``chunk_size`` rows
    at a time; keeps one integer per note."""
    path = table_path(folder, "NOTEEVENTS")
    check_columns(path, ("CATEGORY", "TEXT"))
    lengths: dict[str, list[np.ndarray]] = {}
    reader = pd.read_csv(
        path,
        chunksize=chunk_size,
        keep_default_na=False,
        dtype=str,
        low_memory=False,
        usecols=lambda c: c.upper() in ("CATEGORY", "TEXT"),
    )
    for chunk in reader:
        chunk.columns = [c.upper() for c in chunk.columns]
        for category, text in chunk.groupby("CATEGORY")["TEXT"]:
            lengths.setdefault(category, []).append(text.str.len().to_numpy())
    rows = []
    for category, parts in lengths.items():
        n = np.concatenate(parts)
        logs = np.log(np.maximum(n, 1))
        rows.append(
            {
                "category": category,
                "notes": len(n),
                "mean_chars": round(float(n.mean())),
                "sigma_log": round(float(logs.std()), 2),
                "style": styles.get(category, "nursing"),
                **{f"q{int(q * 100)}_chars": int(np.quantile(n, q)) for q in LENGTH_QUANTILES},
            }
        )
    return pd.DataFrame(rows).sort_values("notes", ascending=False, ignore_index=True)
