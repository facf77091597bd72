"""Counterfactual data augmentation (CDA; Webster et al. 2020, as bias-bench runs it, Meade et al.
2022): the continued-pretraining corpus is augmented two-sided: every text that holds an attribute word
is kept and joined by its counterfactual, in which each attribute word is replaced by its partner (both
directions of every pair at once, so "he told her" becomes "she told him"). bias-bench trains one CDA
model per bias type, each on its own attribute's swaps; the caller passes one attribute's pairs.
Whole words only, case kept.

Two rules make the counterfactual read as a sentence:
- "her" is both the object and the possessive form, so it has two partners (him, his). It becomes
  "him" when the next word is a determiner, preposition, conjunction, pronoun or adverb of
  ``OBJECT_FOLLOWERS``, or when punctuation or the end of the text follows ("gave her the chart" ->
  "gave him the chart", "told her." -> "told him."), and "his" otherwise ("her chest pain" -> "his chest
  pain"). The rule is a heuristic; it errs where an object "her" is followed by a content word
  ("found her unresponsive" -> "found his unresponsive").
- A phrase in which a swap word is a colour, a direction or an idiom, not a social group ("white
  matter", "black stool", "straight leg raise"; ``config/resources/cda/kept_phrases.tsv``), is kept as
  it is: no word inside it is swapped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from medbias.core.errors import MedbiasInputError
from medbias.core.note_text import match_case

OBJECT_FOLLOWERS = frozenset(
    """a an the this that these those some any no every each all both another such what which who whom whose
    to for with at in on from by about of into onto over under after before through during without against
    toward towards upon and or but nor so yet as if when while because than then
    up down out off back home away again too very also only just even still now today yesterday tonight
    here there well once twice
    i me my you your he him his she her it its we us our they them their myself yourself himself herself
    itself ourselves themselves not""".split()
)


def swap_mapping(pairs: Mapping[str, Sequence[Sequence[str]]]) -> dict[str, str]:
    """word -> partner, both directions of every pair of every attribute (lower case). A word given
    two partners keeps the first, except "her", whose partner is chosen in context
    (``counterfactual``); a pair that is not two distinct words is an error naming the attribute."""
    mapping: dict[str, str] = {}
    for attribute, listed in pairs.items():
        for pair in listed:
            if len(pair) != 2 or not all(str(w).strip() for w in pair) or pair[0].lower() == pair[1].lower():
                raise MedbiasInputError(
                    f"config key 'plm.debias.cda.pairs.{attribute}': {pair!r} is not two distinct words"
                )
            a, b = (str(w).lower() for w in pair)
            mapping.setdefault(a, b)
            mapping.setdefault(b, a)
    return mapping


def her_partner(following: str) -> str:
    """The male partner of "her" given the text right after it: "him" before a word of
    ``OBJECT_FOLLOWERS``, punctuation or the end of the text, "his" before any other word."""
    match = re.match(r"\s*([A-Za-z']+)", following)
    if match is None or following[: match.start(1)].strip():
        return "him"
    return "him" if match.group(1).lower() in OBJECT_FOLLOWERS else "his"


def read_kept_phrases(path: str | Path) -> list[tuple[str, str]]:
    """(phrase, attribute) rows of the kept-phrases TSV (``#`` lines are comments); a row without a
    phrase and an attribute is an error naming the file and line."""
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) < 2 or not cells[0].strip() or not cells[1].strip():
            raise MedbiasInputError(f"{path}: line {number}: needs a phrase and an attribute (tab-separated)")
        rows.append((cells[0].strip().lower(), cells[1].strip()))
    return rows


def phrase_pattern(phrases: Sequence[str]) -> re.Pattern[str] | None:
    """A case-insensitive whole-phrase pattern (longest first; any run of spaces between words), or
    None for no phrases."""
    if not phrases:
        return None
    ordered = sorted(set(phrases), key=len, reverse=True)
    alternatives = [r"\s+".join(re.escape(w) for w in p.split()) for p in ordered]
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


def word_pattern(mapping: Mapping[str, str]) -> re.Pattern[str]:
    """A case-insensitive whole-word pattern of the mapping's words (longest first)."""
    words = sorted(mapping, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)


@dataclass
class SwapCounts:
    """What one augmentation did: texts given a counterfactual, words swapped, and each kept phrase
    with how often a swap word inside it was left alone."""

    counterfactuals: int = 0
    swaps: int = 0
    kept: Counter = field(default_factory=Counter)


def counterfactual(
    text: str,
    mapping: Mapping[str, str],
    pattern: re.Pattern[str],
    kept: re.Pattern[str] | None = None,
    counts: SwapCounts | None = None,
) -> str:
    """``text`` with every word of ``mapping`` replaced by its partner (case kept; "her" by
    ``her_partner`` when the mapping offers "his" or "him"), except inside a phrase ``kept`` matches."""
    protected = [(m.start(), m.end(), m.group(0).lower()) for m in kept.finditer(text)] if kept else []
    inside = set()

    def replace(match: re.Match[str]) -> str:
        word = match.group(0)
        for start, end, phrase in protected:
            if start <= match.start() < end:
                if (start, phrase) not in inside and counts is not None:
                    counts.kept[" ".join(phrase.split())] += 1
                inside.add((start, phrase))
                return word
        partner = mapping[word.lower()]
        if word.lower() == "her" and partner in ("his", "him"):
            partner = her_partner(text[match.end() :])
        if counts is not None:
            counts.swaps += 1
        return match_case(partner, word)

    return pattern.sub(replace, text)


def two_sided_augmentation(
    texts: Sequence[str], mapping: Mapping[str, str], kept_phrases: Sequence[str] = ()
) -> tuple[list[str], SwapCounts]:
    """(the texts followed by the counterfactual of each text that holds an attribute word outside a
    kept phrase, what was swapped and kept)."""
    pattern, kept = word_pattern(mapping), phrase_pattern(kept_phrases)
    counts = SwapCounts()
    added = []
    for text in texts:
        if not pattern.search(text):
            continue
        swapped = counterfactual(text, mapping, pattern, kept, counts)
        if swapped != text:
            added.append(swapped)
    counts.counterfactuals = len(added)
    return [*texts, *added], counts
