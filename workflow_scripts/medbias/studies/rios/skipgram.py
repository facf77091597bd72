"""The per-decade skip-gram models of Rios et al. (2020, section 3): the search over Chiu et al.'s
(2016) hyperparameters scored on UMNSRS similarity, and the seed replicates of the chosen setting.

At the real scale (about 4.5 G tokens over six decades) one training of the default setting costs
about 50 core-hours, so the search of 38 settings (larger windows and vectors cost more) costs about
3,000 per replicate (scripts/plan_scale.py). Two choices keep the paper's method and
make it affordable:

- the search may run on a seeded sample of each decade's articles (``search_tokens``); every
  candidate's min_count is scaled to the sample (``scale_min_count``) so a candidate keeps about the
  vocabulary it would keep on the whole decade, and the chosen setting is then trained on the whole
  decade, which is the model every table reads;
- replicates r > 0 may retrain replicate 0's chosen setting under their own seeds
  (``replicates_search: once``) instead of searching again, so their spread is the training seed's.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.seeds import document_null_seed
from medbias.core.skipgram import train_skipgram
from medbias.metrics.similarity import SIMILARITY_KEYS, similarity_record
from medbias.studies.rios.analyses import gender_swap_mapping, weat_statistics
from medbias.studies.rios.documents import SwappedDocuments, document_swap_flags, sample_documents

log = logging.getLogger(__name__)


def scale_min_count(setting: Mapping[str, Any], fraction: float) -> dict[str, Any]:
    """``setting`` for a sample holding ``fraction`` of the corpus's tokens: a word seen c times in the
    corpus is expected c x fraction times in the sample, so min_count becomes round(c x fraction),
    at least 1 where c is at least 1, and the sample keeps about the words the corpus would."""
    count = int(setting["min_count"])
    scaled = count if fraction >= 1 or count == 0 else max(1, round(count * fraction))
    return {**setting, "min_count": scaled}


def candidate_settings(
    defaults: Mapping[str, Any], grid: Mapping[str, Sequence[Any]], strategy: str
) -> list[dict[str, Any]]:
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


SETTING_KEYS: tuple[str, ...] = ("negative", "sample", "min_count", "alpha", "vector_size", "window")


def chosen_setting(search: Mapping[str, Any], keys: Iterable[str] = SETTING_KEYS) -> dict[str, Any]:
    """The setting a search record chose, in the whole decade's units (its min_count is the decade's)."""
    best = search["candidates"][search["best_candidate"]]
    return {key: best[key] for key in keys}


def search_decade(
    documents,
    pairs: Sequence[tuple[str, str, float]],
    tokenize,
    *,
    defaults: Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    strategy: str,
    epochs: int,
    seed: int,
    workers: int,
    search_tokens: int,
):
    """One decade's model search (module docstring); returns (vectors, record).

    ``documents``: the decade's restartable token lists. The candidates train on the whole decade, or
    on a sample of at most ``search_tokens`` tokens (0: never sampled) drawn under ``seed``; in that
    case the chosen setting is trained again on the whole decade under ``seed``. The record holds
    every candidate's score, the sample (``search_sample``) and the returned model's own UMNSRS
    evaluation (``final``)."""
    sample = sample_documents(documents, search_tokens, seed)
    vectors, scores, best = search_skipgram(
        sample.of(documents), defaults, grid, strategy, epochs, seed, workers, pairs, tokenize, sample.fraction
    )
    record: dict[str, Any] = {
        "strategy": strategy,
        "best_candidate": best,
        "candidates": scores,
        "search_sample": sample.summary(),
    }
    if sample.whole:
        final = {key: scores[best][key] for key in SIMILARITY_KEYS}
        record["final"] = {**final, "trained_on": "the whole decade (the best candidate itself)"}
        return vectors, record
    vectors = train_skipgram(documents, chosen_setting(record), epochs, seed, workers)
    record["final"] = {
        **similarity_record(vectors, pairs, tokenize),
        "trained_on": "the whole decade (the chosen setting, trained again after the sample's search)",
    }
    return vectors, record


def retrain_chosen(
    documents,
    search: Mapping[str, Any],
    pairs: Sequence[tuple[str, str, float]],
    tokenize,
    *,
    epochs: int,
    seed: int,
    workers: int,
):
    """A seed replicate of the setting replicate 0's ``search`` chose, trained on the whole decade
    under ``seed``; returns (vectors, record)."""
    setting = chosen_setting(search)
    vectors = train_skipgram(documents, setting, epochs, seed, workers)
    return vectors, {
        "strategy": "once: replicate 0's chosen setting, trained again under this replicate's seed",
        "setting": setting,
        "final": {**similarity_record(vectors, pairs, tokenize), "trained_on": "the whole decade"},
    }


DOCUMENT_NULL_COLUMNS = [
    "decade",
    "draw",
    "seed",
    "swapped_documents",
    "documents",
    "decade_documents",
    "min_count",
    "test",
    "mean_difference",
    "effect_size",
]


def document_null_draws(
    documents,
    wordsets: Mapping[str, Any],
    setting: Mapping[str, Any],
    *,
    decade: str,
    draws: int,
    sample_tokens: int,
    epochs: int,
    seed: int,
    workers: int,
    min_fraction: float,
    log: logging.Logger,
) -> pd.DataFrame:
    """The document-level null of one decade's WEAT (``analyses.document_null_columns``): each draw
    swaps the male and female words (paired by position) in a random half of the articles and
    retrains ``setting`` under a seed of its own (``replication.document_null_seed``), recording every
    WEAT test's mean difference and d (``DOCUMENT_NULL_COLUMNS``). When the decade holds more than
    ``sample_tokens`` tokens the draws train on a sample of its articles drawn under ``seed`` (min_count
    scaled to it), and draw -1 is ``setting`` on that sample without swaps: the value the draws are
    compared with."""
    mapping = gender_swap_mapping(wordsets)
    sample = sample_documents(documents, sample_tokens, seed)
    corpus, n_documents = sample.of(documents), int(sample.keep.sum())
    trained = scale_min_count(setting, sample.fraction)
    log.info(
        "decade %s: %d draws of the document-level null over %d of its %d articles (%d of %d tokens), setting %s",
        decade,
        draws,
        n_documents,
        len(sample.keep),
        sample.tokens,
        sample.total_tokens,
        trained,
    )

    def record(vectors, draw: int, draw_seed: int, swapped: int) -> pd.DataFrame:
        stats = weat_statistics(vectors, wordsets, min_fraction)
        log.info(
            "%s: %d articles swapped; mean differences %s",
            f"draw {draw + 1}/{draws}" if draw >= 0 else "the sample's own model",
            swapped,
            ", ".join(f"{r.test} {r.mean_difference:+.4f}" for r in stats.itertuples()),
        )
        return stats.assign(
            decade=decade,
            draw=draw,
            seed=draw_seed,
            swapped_documents=swapped,
            documents=n_documents,
            decade_documents=len(sample.keep),
            min_count=trained["min_count"],
        )

    frames = []
    if not sample.whole:
        frames.append(record(train_skipgram(corpus, trained, epochs, seed, workers), -1, seed, 0))
    for draw in range(draws):
        draw_seed = document_null_seed(seed, draw)
        flags = document_swap_flags(n_documents, np.random.default_rng(draw_seed))
        vectors = train_skipgram(SwappedDocuments(corpus, mapping, flags), trained, epochs, draw_seed, workers)
        frames.append(record(vectors, draw, draw_seed, int(flags.sum())))
    return pd.concat(frames, ignore_index=True)[DOCUMENT_NULL_COLUMNS]


def write_empty_model(path: str, vector_size: int) -> None:
    """A word2vec binary file with no words (a decade without articles: the tables say so)."""
    with open(path, "wb") as handle:
        handle.write(f"0 {vector_size}\n".encode())
