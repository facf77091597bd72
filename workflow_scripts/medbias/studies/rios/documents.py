"""The rios study's documents as units: the gender-word swap applied to whole documents (the
document-level null: each document's words swapped or not by a coin flip) and seeded samples of a
decade's documents (the model search's training sample).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medbias.core.errors import MedbiasInputError


def pair_mapping(
    first: Sequence[str], second: Sequence[str], names: tuple[str, str] = ("first", "second")
) -> dict[str, str]:
    """The symmetric word swap first[i] <-> second[i] (a bijection). Raises MedbiasInputError naming
    the lists when their lengths differ or a word repeats or sits in both lists."""
    if len(first) != len(second):
        raise MedbiasInputError(
            f"word pairs: '{names[0]}' has {len(first)} words and '{names[1]}' {len(second)}; "
            f"a swap pairs them by position, so they need the same length"
        )
    words = [*first, *second]
    repeated = sorted({w for w in words if words.count(w) > 1})
    if repeated:
        raise MedbiasInputError(
            f"word pairs '{names[0]}'/'{names[1]}': {', '.join(repeated)} occur(s) more than once; "
            f"a swap needs every word once"
        )
    return {**dict(zip(first, second)), **dict(zip(second, first))}


def document_swap_flags(n_documents: int, rng: np.random.Generator) -> np.ndarray:
    """One fair coin per document: True = the document's paired words are swapped."""
    return rng.random(n_documents) < 0.5


class SwappedDocuments:
    """A restartable iterable of token lists: ``documents`` (itself restartable, e.g. ParquetSentences)
    with every token found in ``mapping`` replaced in the documents whose flag in ``swap`` is True
    (the i-th document yielded takes flag i). Each pass yields the same corpus, as gensim needs."""

    def __init__(self, documents, mapping: Mapping[str, str], swap: np.ndarray):
        self.documents = documents
        self.mapping = dict(mapping)
        self.swap = np.asarray(swap, dtype=bool)

    def __iter__(self) -> Iterator[list[str]]:
        count = 0
        for tokens, flip in itertools.zip_longest(self.documents, self.swap.tolist()):
            if tokens is None:
                break
            if flip is None:
                raise ValueError(f"SwappedDocuments: more documents than the {len(self.swap)} swap flags")
            count += 1
            yield [self.mapping.get(t, t) for t in tokens] if flip else tokens
        if count != len(self.swap):
            raise ValueError(f"SwappedDocuments: {count} documents for {len(self.swap)} swap flags")


class SelectedDocuments:
    """A restartable iterable of the documents of ``documents`` (itself restartable) whose flag in
    ``keep`` is True, in corpus order."""

    def __init__(self, documents, keep: np.ndarray):
        self.documents = documents
        self.keep = np.asarray(keep, dtype=bool)

    def __iter__(self) -> Iterator[list[str]]:
        for tokens, kept in zip(self.documents, self.keep.tolist(), strict=True):
            if kept:
                yield tokens


@dataclass(frozen=True)
class DocumentSample:
    """A seeded sample of a corpus's documents (``sample_documents``): ``keep`` flags each document
    of the corpus, in order; ``tokens`` and ``total_tokens`` count the sample's and the corpus's."""

    keep: np.ndarray
    tokens: int
    total_tokens: int

    @property
    def whole(self) -> bool:
        return bool(self.keep.all())

    @property
    def fraction(self) -> float:
        """The sample's share of the corpus's tokens (1.0 for the whole corpus)."""
        return self.tokens / self.total_tokens if self.total_tokens else 1.0

    def of(self, documents):
        """The sample's documents of ``documents`` (the corpus itself when the sample is all of it)."""
        return documents if self.whole else SelectedDocuments(documents, self.keep)

    def summary(self) -> dict[str, Any]:
        return {
            "documents": int(self.keep.sum()),
            "total_documents": int(len(self.keep)),
            "tokens": self.tokens,
            "total_tokens": self.total_tokens,
            "token_fraction": round(self.fraction, 6),
        }


def sample_documents(documents, max_tokens: int, seed: int) -> DocumentSample:
    """Whole documents drawn in a seeded random order until the next one would take the sample past
    ``max_tokens`` tokens (at least one document); the whole corpus when it holds no more than
    ``max_tokens`` tokens or ``max_tokens`` is 0. One pass over ``documents`` counts their tokens."""
    counts = np.fromiter((len(tokens) for tokens in documents), dtype=np.int64)
    total = int(counts.sum())
    keep = np.ones(len(counts), dtype=bool)
    if 0 < max_tokens < total:
        order = np.random.default_rng(seed).permutation(len(counts))
        within = np.cumsum(counts[order]) <= max_tokens
        within[0] = True
        keep[:] = False
        keep[order[within]] = True
    return DocumentSample(keep, int(counts[keep].sum()), total)
