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


def read_templates(path: str | Path, categories: set[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """Fill-in-the-blank templates as (template, category), and a record of every fix applied.

    The HurtfulWords file has Windows line ends, a line wrapped in quotes (it holds commas) and a
    line without slots ("this is a 82 yo"); quotes and line ends are stripped, lines without a
    target slot and exactly one known category slot are dropped, duplicates are dropped.
    """
    import re

    templates: list[tuple[str, str]] = []
    fixes: list[str] = []
    seen: set[str] = set()
    raw = Path(path).read_bytes().decode("utf-8")
    if "\r" in raw:
        fixes.append("stripped Windows line ends (CRLF)")
    for number, line in enumerate(raw.splitlines(), start=1):
        text = line.strip()
        if len(text) >= 2 and text[0] == text[-1] == '"':
            fixes.append(f"line {number}: removed surrounding quotes")
            text = text[1:-1].strip()
        slots = [s for s in re.findall(r"\[([A-Z]+)\]", text) if s != "GEND"]
        if not text:
            continue
        if "[GEND]" not in text or len(slots) != 1 or slots[0] not in categories:
            fixes.append(f"line {number}: dropped {text!r} (needs [GEND] and one category slot)")
            continue
        if text in seen:
            fixes.append(f"line {number}: dropped duplicate {text!r}")
            continue
        seen.add(text)
        templates.append((text, slots[0]))
    return templates, fixes


def read_attributes(path: str | Path) -> list[tuple[str, str]]:
    """Attribute words per category as (attribute, category)."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [(row["attribute"].strip(), row["category"].strip()) for row in csv.DictReader(handle)]
