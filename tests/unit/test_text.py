"""Clinical text: every placeholder family, hard sentence-splitting cases, packing and windowing."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

from medbias.core.note_text import (
    PHI_TOKENS,
    pack_sequences,
    placeholder_family,
    replace_placeholders,
    split_sentences,
    window_starts,
)

FACTS = (REPO / "config/resources/mimic-facts/deid_placeholders.txt").read_text()
EXPECTED = {
    "Age over 90 ": "age_over_90",
    "2126-9-19": "date",
    "9-19": "date",
    "2126": "date",
    "1-/2126": "date",
    "Month (only) 123": "date",
    "Month Day Year (2) ": "date",
    "Date range (1) 105469": "date",
    "Holiday ": "date",
    "Known lastname ": "name",
    " First Name ": "name",
    "Doctor Last Name (ambig) ": "name",
    "Name6 (MD) ": "name",
    "Initials (NamePattern4) ": "name",
    "Dictator Info ": "name",
    "Hospital1 18": "hospital",
    "Hospital Unit Name 153": "hospital",
    "Wardname ": "hospital",
    "Location (un) 4265": "location",
    "Street Address(1) ": "location",
    "State/Zipcode ": "location",
    "PO Box ": "location",
    "Telephone/Fax (1) ": "contact",
    "E-mail address ": "contact",
    "Pager number ": "contact",
    "Medical Record Number ": "number",
    "Serial Number": "number",
    "MD Number(1) ": "number",
    "Clip Number (Radiology) ": "number",
    "Numeric Identifier ": "number",
    " ": "other",
    "Company ": "other",
}


@pytest.mark.parametrize(("inside", "family"), EXPECTED.items())
def test_placeholder_families(inside, family):
    assert placeholder_family(inside) == family


def test_every_listed_placeholder_maps_to_a_family():
    examples = [m for m in re.findall(r"\[\*\*(.*?)\*\*\]", FACTS) if "<type>" not in m]
    assert len(examples) > 90
    families = {placeholder_family(m) for m in examples}
    assert families == set(PHI_TOKENS)  # every family occurs; none falls through unexpectedly
    unmatched = [m for m in examples if placeholder_family(m) == "other"]
    assert sorted(unmatched) == sorted([" ", "Company ", "University/College "])


def test_replace_keeps_numbers_and_counts_families():
    text, counts = replace_placeholders(
        "T 98.6 F on [**2151-7-16**] seen by [**Doctor Last Name **] at [**Hospital1 18**]."
    )
    assert "98.6 F" in text and "[PHI_DATE]" in text and "[PHI_NAME]" in text and "[PHI_HOSPITAL]" in text
    assert "[**" not in text and counts == {"date": 1, "name": 1, "hospital": 1}


HARD_CASES = [
    ("Pt. is a 67 yo man. He was seen by Dr. Smith today.", ["Pt. is a 67 yo man.", "He was seen by Dr. Smith today."]),
    ("Given lasix 40 mg b.i.d. Tolerated well.", ["Given lasix 40 mg b.i.d. Tolerated well."]),
    ("T 98.6 HR 88 BP 120/80. RR 18.", ["T 98.6 HR 88 BP 120/80.", "RR 18."]),
    (
        "History of Present Illness:\nChest pain.\nPast Medical History:\n1. CHF\n2. DM",
        ["History of Present Illness: Chest pain.", "Past Medical History:", "1. CHF", "2. DM"],
    ),
    ("Meds:\n- aspirin 81 mg\n- metoprolol 2.5mg", ["Meds:", "- aspirin 81 mg", "- metoprolol 2.5mg"]),
    ("Plan discussed.\n\nFamily updated by phone", ["Plan discussed.", "Family updated by phone"]),
    ("Seen on [PHI_DATE]. [PHI_NAME] called back.", ["Seen on [PHI_DATE].", "[PHI_NAME] called back."]),
    ("Creatinine 1.2, up from 0.9. Will recheck.", ["Creatinine 1.2, up from 0.9.", "Will recheck."]),
    ("s/p CABG x3. No events.", ["s/p CABG x3.", "No events."]),
]


@pytest.mark.parametrize(("text", "expected"), HARD_CASES)
def test_sentence_splitter_hard_cases(text, expected):
    assert split_sentences(text) == expected


def test_packing_reaches_the_minimum_and_keeps_order():
    assert pack_sequences([5, 10, 6, 30, 3], 20) == [(0, 3), (3, 5)]  # the short tail joins the last sequence
    assert pack_sequences([4, 3], 20) == [(0, 2)]  # a short note is one sequence
    assert pack_sequences([25, 21], 20) == [(0, 1), (1, 2)]
    assert pack_sequences([], 20) == []


def test_windows():
    assert window_starts(100) == [0]
    assert window_starts(512) == [0]
    assert window_starts(513) == [0, 256]
    assert window_starts(1024) == [0, 256, 512]
    assert len(window_starts(100_000)) == 10
