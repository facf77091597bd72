"""One plm evaluation (Xie et al. 2024, sections 3 and 4): SEAT and the StereoSet-style scores of
one registry model, plain or debiased.

debias = none | dropout (the continued-pretraining folder, loaded as the model) | sentencedebias |
inlp (the fitted projection, applied to the sentence encoder's last hidden states by one forward
hook). A registry model that transformers cannot load (loader: ofa) keeps its rows, marked, with the
reason; an encoder, or a checkpoint without a trained language-model head, gets StereoSet rows
marked with the reason (its likelihoods would come from random weights)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd


@dataclass
class PlmEvaluation:
    seat: pd.DataFrame  # one row per SEAT test (``run_seat``), or marked rows
    stereoset: pd.DataFrame  # ``stereoset_summary``'s rows, or one marked row per family
    sentence_scores: pd.DataFrame  # sentence_id, log_likelihood, tokens (empty without likelihoods)
    summary: dict[str, Any]  # status, timings, the projection's removed rank


def _marked_stereoset(families: Sequence[str], status: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    no_scores = pd.DataFrame(
        {
            "sentence_id": pd.Series(dtype="int64"),
            "log_likelihood": pd.Series(dtype="float64"),
            "tokens": pd.Series(dtype="int64"),
        }
    )
    return pd.DataFrame({"family": list(families), "status": status}), no_scores


def evaluate_plm_model(
    name: str,
    entry: Mapping[str, Any],
    debias: str,
    tests: Mapping[str, Any],
    sentences: pd.DataFrame,
    pairs: pd.DataFrame,
    projection: np.ndarray | None,
    *,
    settings: Mapping[str, Any],
    device: str,
    log,
) -> PlmEvaluation:
    """SEAT (``run_seat`` with ``settings['seat']``) then the StereoSet-style scores (sentence
    log-likelihoods of ``sentences``, summarised over ``pairs``) of model ``name``. ``settings``
    holds seat, families, batch_size, max_length, seed and ties_as_half as the rule's params."""
    from medbias.core.encoders import load_or_mark, sentence_encoder
    from medbias.core.models import lm_head_problem
    from medbias.core.sentence_likelihood import sentence_log_likelihood
    from medbias.studies.plm.debias import attach_projection
    from medbias.studies.plm.seat import run_seat
    from medbias.studies.plm.stereoset_style import stereoset_summary

    summary: dict[str, Any] = {
        "model": name,
        "debias": debias,
        "source": entry["source"],
        "kind": entry["kind"],
        "device": device,
    }
    model, tokenizer, source, unloadable = load_or_mark(name, entry, device, log)
    if unloadable:
        summary["status"] = unloadable
        stereo, no_scores = _marked_stereoset(settings["families"], unloadable)
        return PlmEvaluation(pd.DataFrame({"test": list(tests), "status": unloadable}), stereo, no_scores, summary)

    encoder = sentence_encoder(model, source.kind)
    if projection is not None:
        attach_projection(encoder, projection)
        summary["projection_rank_removed"] = int(round(projection.shape[0] - np.trace(projection)))
        log.info("%s: %s projection attached (removes %d directions)", name, debias, summary["projection_rank_removed"])

    seat_settings = settings["seat"]
    started = time.perf_counter()
    seat = run_seat(
        encoder,
        tokenizer,
        tests,
        seat_settings["templates"],
        model_name=name,
        pooling=seat_settings["pooling"],
        batch_size=settings["batch_size"],
        max_length=settings["max_length"],
        prepend_bos=(source.kind == "causal"),
        budget=seat_settings["permutation_budget"],
        alternative=seat_settings["alternative"],
        n_bootstrap=seat_settings["bootstrap"],
        min_fraction=seat_settings["min_set_fraction"],
        seed=settings["seed"],
        null_draws=seat_settings["calibrated_null_draws"],
        null_pool=seat_settings["null_pool_words"],
        alpha=seat_settings["alpha"],
        progress=lambda test, row: log.info(
            "SEAT %s: d = %.3f, p = %.4g, calibrated p = %.4g",
            test,
            row["effect_size"],
            row["p_value"],
            row["p_calibrated"],
        ),
    )
    seat.insert(0, "status", "ok")
    summary["seat_seconds"] = time.perf_counter() - started

    no_head = lm_head_problem(model, source.kind)
    if no_head:  # an encoder, or a checkpoint saved without its LM head: no likelihood-based score
        log.warning("%s: StereoSet-style scores %s", name, no_head)
        summary.update(status="ok", stereoset_status=no_head)
        stereo, no_scores = _marked_stereoset(settings["families"], no_head)
        return PlmEvaluation(seat, stereo, no_scores, summary)

    started = time.perf_counter()
    texts = sentences.sort_values("sentence_id")["text"].tolist()
    log.info("scoring %d StereoSet-style sentences (%s likelihood)", len(texts), source.kind)
    scores, tokens = sentence_log_likelihood(model, tokenizer, source.kind, texts, settings["batch_size"])
    summary["stereoset_seconds"] = time.perf_counter() - started
    summary["sentences_per_second"] = len(texts) / max(summary["stereoset_seconds"], 1e-9)
    stereo = stereoset_summary(pairs, scores, settings["ties_as_half"])
    stereo.insert(0, "status", "ok")
    for row in stereo[(stereo["blank"] == "all") & (stereo["template"] == "all")].itertuples():
        log.info(
            "StereoSet %s: ss %.2f, lms %.2f, ties %d of %d pairs", row.family, row.ss, row.lms, row.ties, row.pairs
        )
    summary.update(status="ok", stereoset_status="ok")
    sentence_scores = pd.DataFrame({"sentence_id": np.arange(len(texts)), "log_likelihood": scores, "tokens": tokens})
    return PlmEvaluation(seat, stereo, sentence_scores, summary)
