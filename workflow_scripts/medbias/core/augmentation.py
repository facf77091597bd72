"""Counterfactual data augmentation (CDA; Webster et al. 2020, as bias-bench runs it, Meade et al.
2022): the continued-pretraining corpus is augmented two-sided: every text that holds an attribute word
is kept and joined by its counterfactual, in which each attribute word is replaced by its partner (both
directions of every pair at once, so "he told her" becomes "she told him"). Whole words only, case kept."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from medbias.core.errors import MedbiasInputError
from medbias.core.note_text import match_case


def swap_mapping(pairs: Mapping[str, Sequence[Sequence[str]]]) -> dict[str, str]:
    """word -> partner, both directions of every pair of every attribute (lower case). A word given
    two partners keeps the first (e.g. "her" -> "his" when (his, her) comes before (him, her)); a
    pair that is not two distinct words is an error naming the attribute."""
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


def counterfactual(text: str, mapping: Mapping[str, str], pattern: re.Pattern[str]) -> str:
    """``text`` with every word of ``mapping`` replaced by its partner (case kept)."""
    return pattern.sub(lambda m: match_case(mapping[m.group(0).lower()], m.group(0)), text)


def word_pattern(mapping: Mapping[str, str]) -> re.Pattern[str]:
    """A case-insensitive whole-word pattern of the mapping's words (longest first)."""
    words = sorted(mapping, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)


def two_sided_augmentation(texts: Sequence[str], mapping: Mapping[str, str]) -> tuple[list[str], int]:
    """(the texts followed by the counterfactual of each text that holds an attribute word, how many
    counterfactuals were added)."""
    pattern = word_pattern(mapping)
    added = [counterfactual(t, mapping, pattern) for t in texts if pattern.search(t)]
    return [*texts, *added], len(added)
