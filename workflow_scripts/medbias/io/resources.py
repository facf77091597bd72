"""Readers for the reference data in config/resources/: the one home of word-set files (the YAML
sets of Rios et al. and Xie et al., Caliskan et al.'s WEAT.json), UMNSRS, templates and attributes."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from medbias.core.errors import MedbiasInputError
from medbias.io.yamlfile import load_yaml

SEAT_SETS = ("X", "Y", "A", "B")


def read_wordsets(path: str | Path) -> dict[str, Any]:
    """A word-set file (YAML): attributes, WEAT tests, RIPA pairs, ECT sets."""
    return load_yaml(path)


def read_seat_tests(path: str | Path) -> dict[str, dict[str, Any]]:
    """The SEAT tests of a word-set file in Xie et al. 2024's form (``tests: {name: {X, Y, A, B,
    identity_context}}``); a missing or empty set, or a word listed twice in one set, is one error
    naming the file, test and set."""
    data = read_wordsets(path) or {}
    tests = data.get("tests")
    if not isinstance(tests, dict) or not tests:
        raise MedbiasInputError(f"{path}: no 'tests' mapping of SEAT tests")
    for name, test in tests.items():
        for key in (*SEAT_SETS, "identity_context"):
            if not test.get(key):
                raise MedbiasInputError(f"{path}: test '{name}' has no (or an empty) '{key}'")
        for key in SEAT_SETS:
            words = [str(w) for w in test[key]]
            repeated = sorted({w for w in words if words.count(w) > 1})
            if repeated:
                raise MedbiasInputError(f"{path}: test '{name}' set {key} lists {repeated[0]!r} more than once")
            test[key] = words
    return tests


def read_caliskan_wordsets(path: str | Path) -> dict[str, list[str]]:
    """Caliskan et al. (2017)'s word sets (WEAT.json): set name -> words."""
    import json

    return json.loads(Path(path).read_text(encoding="utf-8"))


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
