"""SEAT of Xie et al. 2024 (section 3, Table 2): word sets, contextualising templates and the test run.

SEAT (May et al. 2019) puts every word of a set into template sentences and runs the WEAT of
``medbias.metrics.association`` on the sentence vectors: X and Y are the identity sentences, A and B
the disease sentences; a positive effect size means X's sentences sit closer to A's than Y's do (the
majority group with the non-stereotypical diseases, the minority group with its stereotypical ones).
Sentence vectors come from ``medbias.core.encoders.pooled_sentence_vectors``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from medbias.core.encoders import piece_counts, pooled_sentence_vectors, unknown_words
from medbias.core.errors import MedbiasInputError
from medbias.core.templates import WORD_SLOT, check_template, fill_template
from medbias.core.vocabulary import null_pool_words
from medbias.io.resources import SEAT_SETS


def contextualise(words: Sequence[str], templates: Sequence[str], where: str) -> list[tuple[str, str]]:
    """(word, sentence) for every word in every template; a template without exactly one [W] slot is
    one error naming ``where`` (the config key) and the template."""
    for template in templates:
        check_template(template, [WORD_SLOT], where)
    return [(word, fill_template(template, {WORD_SLOT: word})) for word in words for template in templates]


def seat_sentences(test: Mapping[str, Any], templates: Mapping[str, Sequence[str]]) -> dict[str, list[tuple[str, str]]]:
    """The contextualised sentences of each set of a SEAT test: identities with the templates of the
    test's ``identity_context``, diseases with the ``disease`` templates."""
    context = test["identity_context"]
    if context not in templates:
        raise MedbiasInputError(f"config key 'plm.seat.templates': no templates for identity context {context!r}")
    return {
        "X": contextualise(test["X"], templates[context], f"plm.seat.templates.{context}"),
        "Y": contextualise(test["Y"], templates[context], f"plm.seat.templates.{context}"),
        "A": contextualise(test["A"], templates["disease"], "plm.seat.templates.disease"),
        "B": contextualise(test["B"], templates["disease"], "plm.seat.templates.disease"),
    }


def in_vocabulary_sets(
    test: Mapping[str, Any], tokenizer, model: str, test_name: str, min_fraction: float
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(kept words, out-of-vocabulary words) per set; a set keeping fewer than ``min_fraction`` of
    its words (or none) is one error naming the model, test, set and words."""
    kept, dropped = {}, {}
    for key in SEAT_SETS:
        unknown = unknown_words(tokenizer, test[key])
        kept[key] = [w for w in test[key] if w not in unknown]
        dropped[key] = unknown
        if not kept[key] or len(kept[key]) < min_fraction * len(test[key]):
            raise MedbiasInputError(
                f"model '{model}', SEAT test '{test_name}' set {key}: {len(unknown)} of {len(test[key])} words "
                f"are out of vocabulary ({', '.join(unknown[:5])})"
            )
    return kept, dropped


def random_phrases(words: Sequence[str], length: int, n_phrases: int, seed: int) -> list[str]:
    """``n_phrases`` distinct phrases of ``length`` random single-token ``words`` (fewer when the words
    do not allow that many), drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    if length == 1:
        return (
            list(words[:n_phrases])
            if len(words) <= n_phrases
            else [words[i] for i in sorted(rng.choice(len(words), n_phrases, replace=False))]
        )
    phrases = dict.fromkeys(
        " ".join(words[i] for i in rng.choice(len(words), length, replace=False)) for _ in range(4 * n_phrases)
    )
    return list(phrases)[:n_phrases]


def run_seat(
    encoder,
    tokenizer,
    tests: Mapping[str, Mapping[str, Any]],
    templates: Mapping[str, Sequence[str]],
    *,
    model_name: str,
    pooling: str,
    batch_size: int,
    max_length: int,
    prepend_bos: bool,
    budget: int,
    alternative: str,
    n_bootstrap: int,
    min_fraction: float,
    seed: int,
    null_draws: int = 0,
    null_pool: int = 200,
    alpha: float = 0.05,
    progress=None,
):
    """Every SEAT test on one encoder (Xie et al. 2024, eq. 1-2, via ``metrics.association.weat``):
    each set's words (out-of-vocabulary ones left out and listed) in their templates, one pooled
    vector per sentence, effect size, permutation p-value and bootstrap interval over sentences.
    With ``null_draws``, the calibrated null (``metrics.association.calibrated_null``): each word of A
    and B replaced by a random phrase of as many tokens (``piece_counts``: a four-piece disease name
    by four random single-token words, ``random_phrases`` of ``null_pool_words``) in the same disease
    templates, a word's association the mean over its sentences. Test i draws from ``seed + i``. One row per test."""
    import pandas as pd

    from medbias.metrics.association import calibrated_columns, sentence_null, weat

    def vectors_of(texts):
        return pooled_sentence_vectors(encoder, tokenizer, texts, pooling, batch_size, max_length, prepend_bos)

    pool_words: list[str] = []
    null_phrases: dict[int, list[str]] = {}  # pieces -> random phrases of that many single-token words
    null_vectors: dict[int, np.ndarray] = {}
    if null_draws:
        every_word = [w for test in tests.values() for k in SEAT_SETS for w in test[k]]
        pool_words = null_pool_words(tokenizer, every_word, null_pool, seed)
    rows = []
    for i, (name, test) in enumerate(tests.items()):
        kept, dropped = in_vocabulary_sets(test, tokenizer, model_name, name, min_fraction)
        sets = seat_sentences({**test, **kept}, templates)
        texts = sorted({s for pairs in sets.values() for _, s in pairs})
        lookup = dict(zip(texts, vectors_of(texts)))
        rng = np.random.default_rng(seed + i)
        result = weat(
            lookup,
            *[[s for _, s in sets[k]] for k in SEAT_SETS],
            rng=rng,
            budget=budget,
            alternative=alternative,
            n_bootstrap=n_bootstrap,
            min_fraction=0.0,
        )
        calibrated = {}
        n_a = len(kept["A"])
        lengths = piece_counts(tokenizer, [*kept["A"], *kept["B"]]) if null_draws else []
        for k in sorted(set(lengths) - set(null_phrases)):
            null_phrases[k] = random_phrases(pool_words, k, null_pool, seed + k)
            sentences = contextualise(null_phrases[k], templates["disease"], "plm.seat.templates.disease")
            null_vectors[k] = vectors_of([sentence for _, sentence in sentences]).astype(np.float64)
        if null_draws and all(len(null_phrases[k]) >= lengths.count(k) for k in set(lengths)):
            order = sorted(set(lengths))
            offsets = np.cumsum([0] + [len(null_phrases[k]) for k in order])
            start = dict(zip(order, offsets[:-1]))
            pool_vectors = np.vstack([null_vectors[k] for k in order])
            pool_groups = np.repeat(np.arange(offsets[-1]), len(templates["disease"]))
            candidates = [np.arange(start[k], start[k] + len(null_phrases[k])) for k in lengths]
            null = sentence_null(
                lookup,
                {k: [s for _, s in sets[k]] for k in SEAT_SETS},
                n_a,
                pool_vectors,
                pool_groups,
                candidates,
                null_draws,
                rng,
                effect=result.effect_size,
                mean_difference=result.mean_difference,
                alternative=alternative,  # type: ignore[arg-type]
            )
            calibrated = {**calibrated_columns(null), "null_pool_words": len(pool_words)}
        elif null_draws:
            calibrated = {"null_pool_words": len(pool_words)}  # too few whole words: no calibrated p, said so
        p_star = calibrated.get("p_calibrated", result.p_value if not null_draws else float("nan"))
        rows.append(
            {
                "test": name,
                "effect_size": result.effect_size,
                "p_value": result.p_value,
                "p_exact": result.p_exact,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                "mean_difference": result.mean_difference,
                "p_calibrated": float("nan"),
                **calibrated,
                "significant": bool(p_star < alpha),
                **{f"n_{k}": len(sets[k]) for k in SEAT_SETS},
                "out_of_vocabulary": "; ".join(f"{k}: {', '.join(v)}" for k, v in dropped.items() if v),
            }
        )
        if progress:
            progress(name, rows[-1])
    return pd.DataFrame(rows)
