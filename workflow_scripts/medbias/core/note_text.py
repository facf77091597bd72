"""Clinical note text: de-identification placeholders, sentence splitting, sequence packing and
sliding windows (Zhang et al. 2020, section 3.3).

- Every MIMIC-III placeholder ``[**...**]`` becomes one special token naming its family (the
  reference code left them to be split into word pieces); the tokens are added to the tokenizer as
  special tokens so they are never split.
- Numbers and decimals are kept ("98.6" stays "98.6"; the reference code's ``[0-9]+\\.`` turned it
  into "6").
- Sentences are split by rules that know clinical text: section headers, numbered and dashed lists,
  abbreviations ("pt.", "b.i.d.", "dr."), decimals and vital signs.
- Consecutive sentences are packed into sequences of at least ``min_pieces`` word pieces (20 in the
  paper); a short remainder at the end of a note joins the sequence before it.
- Long notes are cut into windows of ``window`` word pieces with stride ``stride``, at most
  ``max_windows`` (512, 256 and 10 in the paper).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PHI_TOKENS: dict[str, str] = {
    "date": "[PHI_DATE]",
    "name": "[PHI_NAME]",
    "location": "[PHI_LOCATION]",
    "hospital": "[PHI_HOSPITAL]",
    "contact": "[PHI_CONTACT]",
    "number": "[PHI_NUMBER]",
    "age_over_90": "[PHI_AGE90]",
    "other": "[PHI_OTHER]",
}

PLACEHOLDER = re.compile(r"\[\*\*(.*?)\*\*\]", re.DOTALL)

# ordered: the first family whose pattern matches the placeholder's inside wins
_FAMILY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("age_over_90", re.compile(r"^\s*age over 90", re.I)),
    (
        "date",
        re.compile(r"^\s*(\d{1,4}([-/]\d{0,2}){0,2}|\d{1,2}-/\d{4}|(month|day|year|date range|holiday)\b.*)\s*$", re.I),
    ),
    ("contact", re.compile(r"^\s*(telephone|e-mail|url|pager)", re.I)),
    (
        "number",
        re.compile(
            r"^\s*(medical record|social security|serial|job number|md number|clip number|numeric identifier|"
            r"provider number|unit number)",
            re.I,
        ),
    ),
    ("hospital", re.compile(r"^\s*(hospital|wardname)", re.I)),
    ("location", re.compile(r"^\s*(location|street address|apartment address|state|country|po box)", re.I)),
    (
        "name",
        re.compile(
            r"^\s*(known (first|last)name|(doctor |female |male )?(first|last) name|name\d*\b|name prefix|"
            r"initials?\b|name initial|dictator info|attending info|cc contact info)",
            re.I,
        ),
    ),
)


def placeholder_family(inside: str) -> str:
    """The family of one placeholder given the text between ``[**`` and ``**]``."""
    for family, pattern in _FAMILY_PATTERNS:
        if pattern.search(inside):
            return family
    return "other"


def replace_placeholders(text: str) -> tuple[str, dict[str, int]]:
    """Replace every placeholder by its family's special token; also count the families."""
    counts: dict[str, int] = {}

    def swap(match: re.Match[str]) -> str:
        family = placeholder_family(match.group(1))
        counts[family] = counts.get(family, 0) + 1
        return f" {PHI_TOKENS[family]} "

    return PLACEHOLDER.sub(swap, text), counts


ABBREVIATIONS = frozenset(
    """pt pts dr mr mrs ms vs approx appt e.g i.e etc no hx dx rx tx sx fx st b.i.d t.i.d q.i.d q.d p.o p.r
    q.h q.o.d h.s a.m p.m mg ml cc inc jr sr fig neg pos yo y.o w/ s/p c/o""".split()
)
_SECTION_HEADER = re.compile(r"^\s*[A-Z][A-Za-z /&()-]{1,40}:\s")
_LIST_ITEM = re.compile(r"^\s*(\d{1,2}[.)]|[-*\u2022])\s+")
_SENTENCE_END = re.compile(r"[.?!]+[\"')\]]*\s+")


def _no_boundary_after(chunk: str) -> bool:
    """True when the period ending ``chunk`` is not a sentence end: an abbreviation ("pt.",
    "b.i.d."), a single initial ("J.") or a list number standing alone ("1.")."""
    if re.fullmatch(r"\s*\d{1,2}[.)]\s*", chunk):
        return True
    last = chunk.rstrip().rsplit(None, 1)[-1].lower() if chunk.strip() else ""
    last = last.rstrip(".?!").lstrip("([\"'")
    return last in ABBREVIATIONS or bool(re.fullmatch(r"[a-z]", last)) or bool(re.fullmatch(r"([a-z]\.)+[a-z]?", last))


def split_sentences(text: str) -> list[str]:
    """Split a clinical note into sentences.

    Boundaries: blank lines; a line that starts a section header ("Past Medical History:") or a list
    item ("1.", "-"); sentence-ending punctuation followed by whitespace and an upper-case letter,
    digit or placeholder token, unless the word before it is a known abbreviation or an initial.
    Decimals ("98.6", "2.5mg") never split because no whitespace follows the point.
    """
    sentences: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.split("\n")
        current: list[str] = []
        for line in lines:
            if current and (_SECTION_HEADER.match(line) or _LIST_ITEM.match(line)):
                sentences.extend(_split_inline(" ".join(current)))
                current = []
            current.append(line.strip())
        if current:
            sentences.extend(_split_inline(" ".join(current)))
    return [s for s in (re.sub(r"\s+", " ", s).strip() for s in sentences) if s]


def _split_inline(text: str) -> list[str]:
    pieces, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        following = text[end : end + 1]
        if not following or not (following.isupper() or following.isdigit() or following == "["):
            continue
        chunk = text[start : match.start() + 1]
        if _no_boundary_after(chunk):
            continue
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def pack_sequences(piece_counts: Sequence[int], min_pieces: int = 20) -> list[tuple[int, int]]:
    """Group consecutive sentences into sequences of at least ``min_pieces`` word pieces.

    Returns [start, end) sentence index ranges. A remainder shorter than ``min_pieces`` at the end
    joins the previous sequence; a note shorter than ``min_pieces`` in total is one sequence.
    """
    ranges: list[tuple[int, int]] = []
    start, total = 0, 0
    for i, count in enumerate(piece_counts):
        total += count
        if total >= min_pieces:
            ranges.append((start, i + 1))
            start, total = i + 1, 0
    if start < len(piece_counts):
        if ranges:
            ranges[-1] = (ranges[-1][0], len(piece_counts))
        else:
            ranges.append((start, len(piece_counts)))
    return ranges


def window_starts(n_pieces: int, window: int = 512, stride: int = 256, max_windows: int = 10) -> list[int]:
    """Start offsets of the sliding windows over a note of ``n_pieces`` word pieces: every ``stride``
    until a window reaches the end, at most ``max_windows`` (a short note is one window)."""
    starts = [0]
    while starts[-1] + window < n_pieces and len(starts) < max_windows:
        starts.append(starts[-1] + stride)
    return starts


# --- Gender swapping and neutralization (Sogancioglu et al. 2023, Table III) ---------------------
# Male term -> female term. 'her' is both the possessive and the object form, so her -> his|him is
# decided by the word after it (``her_counterpart``). 'Sex: M' / 'Sex: F' is the MIMIC-III
# discharge-summary field; a standalone 'M' or 'F' anywhere else ("98.6 F", units) is not gender.
TABLE_III_SWAP: dict[str, str] = {
    "he": "she",
    "she": "he",
    "man": "woman",
    "woman": "man",
    "his": "her",
    "him": "her",
    "male": "female",
    "female": "male",
}
TABLE_III_NEUTRAL: dict[str, str] = {
    "he": "patient",
    "she": "patient",
    "man": "patient",
    "woman": "patient",
    "his": "its",
    "her": "its",
    "him": "its",
    "male": "",
    "female": "",
}
# after these words (or punctuation, or the end of the text) 'her' is an object: her -> him
HER_OBJECT_FOLLOWERS: frozenset[str] = frozenset(
    (
        "to",
        "and",
        "or",
        "but",
        "nor",
        "with",
        "at",
        "for",
        "in",
        "into",
        "on",
        "onto",
        "of",
        "from",
        "by",
        "about",
        "as",
        "than",
        "that",
        "this",
        "these",
        "those",
        "if",
        "when",
        "while",
        "because",
        "so",
        "until",
        "after",
        "before",
        "since",
        "today",
        "yesterday",
        "tomorrow",
        "tonight",
        "now",
        "again",
        "back",
        "up",
        "down",
        "out",
        "off",
        "over",
        "here",
        "there",
        "is",
        "was",
        "were",
        "will",
        "would",
        "who",
        "which",
        "the",
        "a",
        "an",
        "some",
        "any",
        "all",
        "well",
        "very",
        "too",
        "also",
        "once",
        "twice",
        "daily",
        "regularly",
        "via",
        "per",
        "without",
        "through",
        "during",
        "throughout",
    )
)
_GENDER_TERM = re.compile(r"\b(he|she|man|woman|his|him|her|male|female)\b", re.IGNORECASE)
_SEX_FIELD = re.compile(r"\b(sex:[ \t]*)([MF])\b", re.IGNORECASE)
_NEXT_WORD = re.compile(r"\s*([A-Za-z]+|\S)?")


def match_case(replacement: str, original: str) -> str:
    """``replacement`` in the case pattern of ``original`` (HE -> SHE, He -> She, he -> she)."""
    if not replacement:
        return replacement
    if original.isupper() and len(original) > 1:
        return replacement.upper()
    if original[0].isupper():
        return replacement[0].upper() + replacement[1:]
    return replacement


def her_counterpart(text: str, end: int) -> str:
    """'him' when the 'her' ending at ``end`` is an object (followed by punctuation, the end of the
    text or a word of ``HER_OBJECT_FOLLOWERS``: "gave it to her.", "told her that"), else 'his'
    (possessive: "her mother", "her home medications")."""
    following = _NEXT_WORD.match(text, end).group(1)
    if following is None or not following[0].isalpha() or following.lower() in HER_OBJECT_FOLLOWERS:
        return "him"
    return "his"


def swap_gender(text: str) -> str:
    """Every Table III term replaced by its opposite: whole words only, case preserved, 'her' by
    ``her_counterpart``, and the 'Sex: M'/'Sex: F' field flipped (no other standalone letter)."""

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.lower()
        target = her_counterpart(text, match.end()) if lower == "her" else TABLE_III_SWAP[lower]
        return match_case(target, word)

    swapped = _GENDER_TERM.sub(swap, text)
    return _SEX_FIELD.sub(lambda m: m.group(1) + ("F" if m.group(2).upper() == "M" else "M"), swapped)


def neutralize_gender(text: str) -> str:
    """Every Table III term replaced by its neutral form (he/she/man/woman -> patient, his/her/him ->
    its, male/female removed, 'Sex: M' -> 'Sex: '): whole words only, case preserved."""
    neutral = _GENDER_TERM.sub(lambda m: match_case(TABLE_III_NEUTRAL[m.group(0).lower()], m.group(0)), text)
    return _SEX_FIELD.sub(lambda m: m.group(1), neutral)


_WORD = re.compile(r"[A-Za-z]+")


def clean_for_embedding(text: str) -> str:
    """The paper's pre-processing (section III-B): digits, special symbols and punctuation removed,
    then one-character terms; the remaining words joined by single spaces (case kept, for cased
    embeddings)."""
    return " ".join(word for word in _WORD.findall(text) if len(word) > 1)
