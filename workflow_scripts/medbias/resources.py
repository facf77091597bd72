"""Readers for the reference data in config/resources/ (word sets, UMNSRS)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import yaml


def read_wordsets(path: str | Path) -> dict[str, Any]:
    """A word-set file (YAML): attributes, WEAT tests, RIPA pairs, ECT sets."""
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def read_umnsrs(path: str | Path) -> list[tuple[str, str, float]]:
    """UMNSRS pairs as (term1, term2, mean rating on the 0-1600 scale), terms as printed."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [(row["Term1"], row["Term2"], float(row["Mean"])) for row in csv.DictReader(handle)]
