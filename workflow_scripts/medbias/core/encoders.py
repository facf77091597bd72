"""Sentence encoders of every registry kind: loading a model or marking it unloadable, choosing the
encoder stack (the base model, a seq2seq model's encoder), out-of-vocabulary words, pooled sentence
vectors and the checks on a debiasing projection. Shared by the plm study, the audit card and the
fine-tuning of Table 6.

Sentence vectors are the attention-mask-aware mean of the last hidden states (the encoder's for
seq2seq models, the decoder stack's for causal models, with BOS in front), or the first or last
token's state (``POOLINGS``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from medbias.core.errors import MedbiasInputError


def load_or_mark(name: str, entry: Mapping[str, Any], device: str, log=None):
    """(model, tokenizer, source, None) of a registry entry, or (None, None, None, reason) for an
    entry with a non-default ``loader`` that transformers cannot load (BiomedGPT's OFA): the study
    keeps such a model's rows, marked with the reason. Any other loading error propagates."""
    from medbias.core.models import load_model_and_tokenizer, resolve_model_source

    try:
        source = resolve_model_source(name, entry)
        model, tokenizer = load_model_and_tokenizer(source, device)
    except MedbiasInputError as error:
        if entry.get("loader", "auto") == "auto":
            raise
        if log:
            log.warning("%s", error)
        return None, None, None, f"not loadable: {error}"
    return model, tokenizer, source, None


def sentence_encoder(model, kind: str):
    """The module whose last hidden states represent a sentence: the base model of a masked or
    causal LM or of an encoder, the encoder of a seq2seq LM."""
    if kind == "seq2seq":
        return model.get_encoder()
    if kind in ("masked", "causal", "encoder"):
        return model.base_model
    raise MedbiasInputError(f"unknown model kind {kind!r} (masked, causal, seq2seq, encoder)")


# --- StereoSet-style examples (section 3.2, Table 3) ------------------------------------------------

POOLINGS = ("mean", "first", "last")


def unknown_words(tokenizer, words: Sequence[str]) -> list[str]:
    """The words every piece of which is the tokenizer's unknown token (out of vocabulary)."""
    unk = tokenizer.unk_token_id
    if unk is None:
        return []
    pieces = tokenizer(list(words), add_special_tokens=False)["input_ids"]
    return [w for w, ids in zip(words, pieces) if not ids or all(i == unk for i in ids)]


def pooled_sentence_vectors(
    encoder,
    tokenizer,
    sentences: Sequence[str],
    pooling: str = "mean",
    batch_size: int = 64,
    max_length: int = 64,
    prepend_bos: bool = False,
) -> np.ndarray:
    """One vector per sentence from the last hidden states of ``encoder`` (with the tokenizer's
    special tokens, and BOS in front with ``prepend_bos`` for causal models whose tokenizer adds
    none): the attention-mask-aware mean, the first or the last real token."""
    import torch

    from medbias.core.batching import device_batches, masked_token_sums

    if pooling not in POOLINGS:
        raise MedbiasInputError(f"config key 'plm.seat.pooling': {pooling!r} is not one of {POOLINGS}")
    ids = tokenizer(list(sentences), truncation=True, max_length=max_length)["input_ids"]
    bos = tokenizer.bos_token_id
    if prepend_bos and bos is not None:
        ids = [s if s[:1] == [bos] else [bos, *s] for s in ids]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out = np.zeros((len(sentences), encoder.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for rows, batch, attention in device_batches(encoder, ids, pad, batch_size):
            states = encoder(input_ids=batch, attention_mask=attention).last_hidden_state.float().cpu()
            attention = attention.cpu()
            if pooling == "mean":
                token_sums, token_counts = masked_token_sums(states, attention)
                vectors = token_sums / token_counts.clamp(min=1)
            elif pooling == "first":
                vectors = states[:, 0]
            else:
                vectors = states[torch.arange(len(rows)), attention.sum(dim=1) - 1]
            out[rows] = vectors.numpy()
    return out


def piece_counts(tokenizer, words: Sequence[str], cap: int = 6) -> list[int]:
    """Tokens of each word as it follows a space (at most ``cap``): the length profile SEAT's
    calibrated null matches."""
    pieces = tokenizer([" " + w for w in words], add_special_tokens=False)["input_ids"]
    return [max(1, min(cap, len(ids))) for ids in pieces]


def projection_checks(
    projection: np.ndarray,
    vectors: np.ndarray,
    basis: np.ndarray | None = None,
    labels: np.ndarray | None = None,
    make_classifier=None,
) -> dict[str, float]:
    """What a debiasing projection must satisfy, measured: idempotent (max |PP - P|), symmetric,
    the removed basis (SentenceDebias) has no projection left (max |B^T P v| over the vectors), and
    the attribute's linear separability is gone (INLP: a fresh classifier's accuracy on P v against
    the majority-class rate)."""
    checks = {
        "idempotence_error": float(np.abs(projection @ projection - projection).max()),
        "symmetry_error": float(np.abs(projection - projection.T).max()),
    }
    projected = vectors @ projection
    if basis is not None:
        q, _ = np.linalg.qr(basis)
        checks["removed_direction_max_abs"] = float(np.abs(projected @ q).max())
        checks["removed_direction_before_max_abs"] = float(np.abs(vectors @ q).max())
    if labels is not None and make_classifier is not None:
        before, after = make_classifier(), make_classifier()
        checks["accuracy_before"] = float(before.fit(vectors, labels).score(vectors, labels))
        checks["accuracy_after"] = float(after.fit(projected, labels).score(projected, labels))
        checks["majority_rate"] = float(max(np.mean(labels), 1 - np.mean(labels)))
    return checks


# --- Tables 2, 4 and 5 ---------------------------------------------------------------------------
