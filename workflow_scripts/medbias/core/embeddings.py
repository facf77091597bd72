"""Static word embeddings: corpora as restartable sentence streams, skip-gram training, the
UMNSRS-based model search of Rios et al. (2020, section 4.1), and loading word-vector files."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from medbias.core.errors import MedbiasInputError

log = logging.getLogger(__name__)


class ParquetSentences:
    """A restartable iterable of token lists read in batches from a corpus Parquet file
    (column ``tokens``: space-joined tokens), so gensim can make several passes in bounded memory."""

    def __init__(self, path: str | Path, batch_size: int = 10_000):
        self.path = str(path)
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[list[str]]:
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(self.path).iter_batches(batch_size=self.batch_size, columns=["tokens"]):
            for text in batch.column(0).to_pylist():
                if text:
                    yield text.split(" ")


def train_skipgram(sentences, params: Mapping[str, Any], epochs: int, seed: int, workers: int):
    """gensim skip-gram (sg=1) with ``params`` (negative, sample, min_count, alpha, vector_size,
    window); returns the KeyedVectors. With workers=1 the same seed gives the same vectors."""
    from gensim.models import Word2Vec

    model = Word2Vec(sentences=sentences, sg=1, epochs=epochs, seed=seed, workers=workers, **params)
    return model.wv


def pair_mapping(first: Sequence[str], second: Sequence[str], names: tuple[str, str] = ("first", "second")) -> dict[str, str]:
    """The symmetric word swap first[i] <-> second[i] (a bijection). Raises MedbiasInputError naming
    the lists when their lengths differ or a word repeats or sits in both lists."""
    if len(first) != len(second):
        raise MedbiasInputError(f"word pairs: '{names[0]}' has {len(first)} words and '{names[1]}' {len(second)}; "
                                f"a swap pairs them by position, so they need the same length")
    words = [*first, *second]
    repeated = sorted({w for w in words if words.count(w) > 1})
    if repeated:
        raise MedbiasInputError(f"word pairs '{names[0]}'/'{names[1]}': {', '.join(repeated)} occur(s) more than once; "
                                f"a swap needs every word once")
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
        return {"documents": int(self.keep.sum()), "total_documents": int(len(self.keep)), "tokens": self.tokens,
                "total_tokens": self.total_tokens, "token_fraction": round(self.fraction, 6)}


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


def scale_min_count(setting: Mapping[str, Any], fraction: float) -> dict[str, Any]:
    """``setting`` for a sample holding ``fraction`` of the corpus's tokens: a word seen c times in the
    corpus is expected c x fraction times in the sample, so min_count becomes round(c x fraction),
    at least 1 where c is at least 1, and the sample keeps about the words the corpus would."""
    count = int(setting["min_count"])
    scaled = count if fraction >= 1 or count == 0 else max(1, round(count * fraction))
    return {**setting, "min_count": scaled}


@dataclass(frozen=True)
class SimilarityEvaluation:
    rho: float
    pairs_used: int
    pairs_total: int
    multiword_pairs_used: int


def term_vector(vectors, term: str, tokenize, lookup=None) -> np.ndarray | None:
    """A term's vector: its single token's, or the mean of its tokens' vectors for a multi-word
    term; None when any token is out of vocabulary. ``lookup(token)`` (vector or None) replaces the
    exact lookup in ``vectors`` (e.g. a lower-case fallback)."""
    tokens = tokenize(term)
    found = [lookup(t) if lookup is not None else (vectors[t] if t in vectors else None) for t in tokens]
    if not tokens or any(v is None for v in found):
        return None
    return np.mean(found, axis=0)


def similarity_spearman(vectors, pairs: Sequence[tuple[str, str, float]], tokenize) -> SimilarityEvaluation:
    """Spearman's rho between cosine similarity and human ratings over the pairs whose terms are
    in the vocabulary (UMNSRS "UMLS-Sim" in Rios et al. Table 3); multi-word terms are averaged."""
    cosines, ratings, multi = [], [], 0
    for a, b, rating in pairs:
        va, vb = term_vector(vectors, a, tokenize), term_vector(vectors, b, tokenize)
        if va is None or vb is None:
            continue
        denom = np.linalg.norm(va) * np.linalg.norm(vb)
        cosines.append(float(va @ vb / denom) if denom else 0.0)
        ratings.append(rating)
        multi += len(tokenize(a)) > 1 or len(tokenize(b)) > 1
    rho = float(spearmanr(cosines, ratings).statistic) if len(cosines) >= 3 else float("nan")
    return SimilarityEvaluation(rho, len(cosines), len(pairs), multi)


SIMILARITY_KEYS: tuple[str, ...] = ("rho", "pairs_used", "multiword_pairs_used", "vocabulary")


def similarity_record(vectors, pairs: Sequence[tuple[str, str, float]], tokenize) -> dict[str, Any]:
    """One model's UMNSRS similarity as a search records it (``SIMILARITY_KEYS``): Spearman's rho
    (``similarity_spearman``), the pairs and multi-word pairs used, and the vocabulary's size."""
    evaluation = similarity_spearman(vectors, pairs, tokenize)
    return dict(zip(SIMILARITY_KEYS, (evaluation.rho, evaluation.pairs_used, evaluation.multiword_pairs_used,
                                      len(vectors))))


def candidate_settings(defaults: Mapping[str, Any], grid: Mapping[str, Sequence[Any]], strategy: str) -> list[dict[str, Any]]:
    """Settings to try. ``grid``: the full Cartesian product. ``one_at_a_time`` (Chiu et al. 2016):
    the defaults, then each parameter varied alone over its values with the others at default."""
    if strategy == "grid":
        keys = list(grid)
        return [{**defaults, **dict(zip(keys, values))} for values in itertools.product(*(grid[k] for k in keys))]
    if strategy != "one_at_a_time":
        raise ValueError(f"unknown search strategy {strategy!r} (expected grid or one_at_a_time)")
    settings = [dict(defaults)]
    for key, values in grid.items():
        for value in values:
            candidate = {**defaults, key: value}
            if candidate not in settings:
                settings.append(candidate)
    return settings


def search_skipgram(
    sentences,
    defaults: Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    strategy: str,
    epochs: int,
    seed: int,
    workers: int,
    pairs: Sequence[tuple[str, str, float]],
    tokenize,
    token_fraction: float = 1.0,
):
    """Train every candidate setting, score it on ``pairs``; return (best vectors, all scores).

    The best candidate has the highest rho; ties (and NaN scores) go to the earlier candidate.
    ``sentences`` may be a sample holding ``token_fraction`` of the corpus's tokens: each candidate
    then trains with its min_count scaled to the sample (``scale_min_count``; recorded as
    ``trained_min_count``), while its record keeps the corpus's values.
    """
    scores: list[dict[str, Any]] = []
    best_vectors, best_rho, best_index = None, -np.inf, 0
    for i, setting in enumerate(candidate_settings(defaults, grid, strategy)):
        trained = scale_min_count(setting, token_fraction)
        vectors = train_skipgram(sentences, trained, epochs, seed, workers)
        evaluation = similarity_record(vectors, pairs, tokenize)
        log.info("candidate %d %s: rho=%.4f over %d pairs", i, setting, evaluation["rho"], evaluation["pairs_used"])
        scores.append({"candidate": i, **setting, "trained_min_count": trained["min_count"], **evaluation})
        rho = evaluation["rho"] if np.isfinite(evaluation["rho"]) else -np.inf
        if best_vectors is None or rho > best_rho:
            best_vectors, best_rho, best_index = vectors, rho, i
    return best_vectors, scores, best_index
