"""Sogancioglu et al. 2023's Figure 2: Bolukbasi et al.'s Direct Bias of the depression synonyms in
every embedding (``medbias.metrics.association.direct_bias``), with the vectors each kind of
embedding gives a word.

Word-vector models: each word's vector (a multi-word synonym: the mean of its words' vectors, all of
which must have one). Contextual models: each word inside template sentences, represented by the mean
last hidden state of its own word pieces (gender words averaged over the pair templates; every
synonym, multi-word ones whole, in the synonym template).

The signed lean is also judged against random words (``random_words``, represented the same way):
the synonyms lean to a gender only if they lean more than random sets of as many words do."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from medbias.core.errors import MedbiasInputError
from medbias.core.templates import WORD_SLOT, fill_with_span

Vector = np.ndarray | None


def contextual_word_vectors(model, tokenizer, words: Sequence[str], templates: Sequence[str]) -> list[Vector]:
    """Per word: the mean over ``templates`` of its in-context vector (its own pieces' mean last hidden
    state); None for a word whose pieces are all unknown tokens in every template."""
    from medbias.core.batching import span_vectors

    sentences, spans, owner = [], [], []
    for i, word in enumerate(words):
        for template in templates:
            sentence, span = fill_with_span(template, WORD_SLOT, word)
            sentences.append(sentence)
            spans.append(span)
            owner.append(i)
    vectors, unknown = span_vectors(model.base_model, tokenizer, sentences, spans)
    owner_index = np.array(owner)
    out: list[Vector] = []
    for i in range(len(words)):
        rows = owner_index == i
        out.append(None if unknown[rows].all() else vectors[rows].mean(axis=0))
    return out


WHOLE_WORD = re.compile(r"^[a-z]{3,}$")


def random_words(
    vocabulary: Sequence[str], exclude: set[str], n: int, rng: np.random.Generator, most_frequent: int = 50_000
) -> list[str]:
    """``n`` words drawn without replacement from the first ``most_frequent`` entries of ``vocabulary``
    (word2vec and fastText files list the most frequent first) that are lower-case alphabetic words of
    at least three letters (no word pieces, special tokens or numbers) and not in ``exclude``; all of
    them where there are fewer."""
    candidates = [w for w in list(vocabulary)[:most_frequent] if WHOLE_WORD.match(w) and w not in exclude]
    if len(candidates) <= n:
        return candidates
    return [candidates[i] for i in sorted(rng.choice(len(candidates), n, replace=False))]


def direct_bias_row(
    name: str,
    entry: Mapping[str, Any],
    label: str,
    pairs: Sequence[tuple[str, str]],
    pair_vectors: Sequence[tuple[Vector, Vector]],
    synonyms: Sequence[str],
    synonym_vectors: Sequence[Vector],
    random_vectors: Sequence[Vector],
    *,
    min_pairs: int,
    bootstrap: int,
    null_draws: int,
    rng: np.random.Generator,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Figure 2's row of one embedding (Direct Bias and the signed mean cosine, each with its 95%
    interval, and the lean the signed interval implies; the signed mean of random words and the
    calibrated p of the synonyms' lean against them, ``lean_against_random_words``) and its coverage
    (the definitional pairs and synonyms with and without vectors).

    Fewer than ``min_pairs`` pairs with vectors, or no synonym with one, stops with one line naming the
    embedding and what is missing."""
    from medbias.metrics.association import (
        direct_bias,
        lean_against_random_words,
        relation_vector,
        unit_rows,
    )

    used = [(f, m) for f, m in pair_vectors if f is not None and m is not None]
    missing_pairs = [f"{a}/{b}" for (a, b), (f, m) in zip(pairs, pair_vectors) if f is None or m is None]
    found = [v for v in synonym_vectors if v is not None]
    missing_synonyms = [s for s, v in zip(synonyms, synonym_vectors) if v is None]
    coverage = {
        "pairs_used": len(used),
        "pairs_missing": missing_pairs,
        "synonyms_used": len(found),
        "synonyms_requested": len(synonyms),
        "synonyms_missing": missing_synonyms,
    }
    if len(used) < min_pairs:
        raise MedbiasInputError(
            f"mental.direct_bias: embedding {name!r} has vectors for {len(used)} definitional pairs "
            f"(minimum {min_pairs}); missing: {', '.join(missing_pairs)}"
        )
    if not found:
        raise MedbiasInputError(f"mental.direct_bias: embedding {name!r} has no vector for any depression synonym")
    female, male = np.stack([f for f, _ in used]).astype(float), np.stack([m for _, m in used]).astype(float)
    result = direct_bias(np.stack(found).astype(float), female, male, bootstrap, rng)
    lean = "female" if result.signed_low > 0 else "male" if result.signed_high < 0 else "none (interval holds 0)"
    randoms = [v for v in random_vectors if v is not None]
    if len(randoms) < 2:
        raise MedbiasInputError(
            f"mental.direct_bias: embedding {name!r} has vectors for {len(randoms)} random words "
            "(the calibrated lean needs some)"
        )
    random_cosines = unit_rows(np.stack(randoms).astype(float)) @ relation_vector(female, male)
    random_mean, p_calibrated = lean_against_random_words(result.signed, random_cosines, result.words, null_draws, rng)
    row = {
        "embedding": name,
        "label": label,
        "type": entry["type"],
        "direct_bias": result.direct_bias,
        "direct_bias_low": result.direct_bias_low,
        "direct_bias_high": result.direct_bias_high,
        "signed_mean_cos": result.signed,
        "signed_low": result.signed_low,
        "signed_high": result.signed_high,
        "lean": lean,
        "random_words": len(randoms),
        "random_words_signed_mean": random_mean,
        "signed_p_calibrated": p_calibrated,
        "synonyms": result.words,
        "pairs": result.pairs,
        "gender_direction_variance": result.explained_variance,
    }
    return row, coverage
