"""Language-model training on plain sentences, for each registry kind.

One loop serves two callers: the demo world trains its tiny plm models from random weights, and the
Dropout debiasing method (Xie et al. 2024, section 5.1, after Webster et al. 2020) continues a
model's pretraining with raised dropout. Objectives:

- masked: a share ``mask_fraction`` of the non-special tokens of every sentence chosen, 80% of them
  replaced by the mask token, 10% by a random token, 10% left (BERT's rule), the loss on all chosen;
- causal: next-token prediction over the whole sentence after BOS (the model's own shifted loss);
- seq2seq: denoising, the masked sentence in the encoder and the original in the decoder (BART's
  token-masking objective).

Batches are drawn and masked from a generator seeded per step, so a run is deterministic on the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medbias.core.batching import length_chunks
from medbias.core.errors import MedbiasInputError

# config keys that set the dropout on hidden states, per architecture family
DROPOUT_KEYS = ("hidden_dropout_prob", "resid_pdrop", "embd_pdrop", "dropout")


def dropout_overrides(config, dropout: float) -> dict[str, float]:
    """The config keys of ``config`` (a transformers config) that set hidden-state dropout, all set
    to ``dropout``; a config with none of them is one error."""
    keys = {key: dropout for key in DROPOUT_KEYS if hasattr(config, key)}
    if not keys:
        raise MedbiasInputError(f"model type {config.model_type!r} has none of the dropout settings {DROPOUT_KEYS}")
    return keys


def switch_off_dropout(model) -> None:
    """Set every dropout module of ``model`` to p = 0 (the demo's tiny models learn planted effects
    only without dropout)."""
    import torch

    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0


def mask_tokens(ids: np.ndarray, maskable: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Positions chosen for masking: each maskable position with probability ``fraction``, and at
    least one per row that has any maskable position."""
    chosen = (rng.random(ids.shape) < fraction) & maskable
    for row in np.flatnonzero(~chosen.any(axis=1) & maskable.any(axis=1)):
        chosen[row, rng.choice(np.flatnonzero(maskable[row]))] = True
    return chosen


def linear_warmup_decay(step: int, warmup: int, total: int) -> float:
    """Learning-rate factor: linear warm-up to 1 over ``warmup`` steps, then linear decay to 0."""
    if step < warmup:
        return (step + 1) / max(1, warmup)
    return max(0.0, (total - step) / max(1, total - warmup))


def bert_corruption_choice(draw):
    """BERT's 80/10/10 rule (Devlin et al. 2019) for uniform draws in [0, 1), one per chosen token (or
    word, under whole-word masking): (becomes the mask token, becomes a random token); the rest stay
    as they are. Works on a float or an array of draws. The one home of the rule: the clinical BERT's
    whole-word masking (``studies.hurtful.pretrain``) and ``bert_corruption`` both use it."""
    return draw < 0.8, (draw >= 0.8) & (draw < 0.9)


def bert_corruption(ids: np.ndarray, chosen: np.ndarray, tokenizer, rng: np.random.Generator) -> np.ndarray:
    """BERT's 80/10/10 rule (``bert_corruption_choice``) on the chosen positions, the random tokens
    drawn among the non-special ones. Without the random and kept tokens, the last layer's states
    of visible words are never trained to stand for the word, and their geometry (what SEAT pools)
    is arbitrary: in the demo's calibration, race SEAT signs flipped between seeds."""
    to_mask, to_random = bert_corruption_choice(rng.random(ids.shape))
    special = sorted(set(tokenizer.all_special_ids))
    ordinary = np.setdiff1d(np.arange(len(tokenizer)), special)
    corrupted = ids.copy()
    corrupted[chosen & to_mask] = tokenizer.mask_token_id
    swap = chosen & to_random
    corrupted[swap] = rng.choice(ordinary, size=int(swap.sum()))
    return corrupted


def training_batch(
    tokenizer, kind: str, sentences: Sequence[str], rng: np.random.Generator, max_length: int, mask_fraction: float
) -> dict[str, Any]:
    """The model inputs and labels of one batch under ``kind``'s objective (module docstring)."""
    import torch

    from medbias.core.batching import pad_sequences

    encoded = tokenizer(list(sentences), truncation=True, max_length=max_length)
    rows = encoded["input_ids"]
    bos = tokenizer.bos_token_id
    if kind == "causal" and bos is not None:
        # causal models are scored after BOS (medbias.core.sentence_likelihood), so they learn with it in front
        rows = [r if r[:1] == [bos] else [bos, *r][:max_length] for r in rows]
    ids, attention = (t.numpy() for t in pad_sequences(rows, tokenizer.pad_token_id or 0))
    special = np.isin(ids, list(tokenizer.all_special_ids))
    if kind == "causal":
        labels = np.where(attention == 1, ids, -100)
        return {
            "input_ids": torch.as_tensor(ids),
            "attention_mask": torch.as_tensor(attention),
            "labels": torch.as_tensor(labels),
        }
    chosen = mask_tokens(ids, (attention == 1) & ~special, mask_fraction, rng)
    if kind == "masked":
        masked = bert_corruption(ids, chosen, tokenizer, rng)
        labels = np.where(chosen, ids, -100)
    elif kind == "seq2seq":
        masked = np.where(chosen, tokenizer.mask_token_id, ids)
        labels = np.where(attention == 1, ids, -100)
    else:
        raise MedbiasInputError(f"unknown model kind {kind!r} (masked, causal, seq2seq)")
    batch = {
        "input_ids": torch.as_tensor(masked),
        "attention_mask": torch.as_tensor(attention),
        "labels": torch.as_tensor(labels),
    }
    return batch


def chunked_loss(model, batch: dict[str, Any], kind: str, chunks: int):
    """``model``'s loss on ``batch`` computed over runs of rows of similar length, each trimmed to its
    longest row (``medbias.core.batching.length_chunks``): each run's mean loss weighted by the
    tokens it scores (the labels other than -100; for a causal model, after the shift), so the
    result is the whole batch's mean loss up to floating-point rounding."""
    parts = length_chunks(batch["attention_mask"], chunks)
    if len(parts) == 1:
        return model(**batch).loss

    def scored_tokens(labels):
        return ((labels[:, 1:] if kind == "causal" else labels) != -100).sum()

    total = scored_tokens(batch["labels"])
    loss = 0.0
    for rows, width in parts:
        part = {key: value[rows, :width].contiguous() for key, value in batch.items()}
        loss = loss + model(**part).loss * (scored_tokens(part["labels"]) / total)
    return loss


def train_language_model(
    model,
    tokenizer,
    kind: str,
    sentences: Sequence[str],
    *,
    steps: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    max_length: int = 64,
    mask_fraction: float = 0.15,
    warmup_fraction: float = 0.1,
    length_chunks: int = 1,
    log=None,
) -> list[float]:
    """Train ``model`` in place for ``steps`` steps of AdamW with linear warm-up and decay on
    batches of ``sentences`` drawn without replacement (reshuffled each pass); returns the losses.
    ``length_chunks`` > 1 runs each batch as that many runs of similar length (``chunked_loss``):
    the same loss with less padding computed."""
    import torch

    if not sentences:
        raise MedbiasInputError("language-model training needs at least one sentence")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    warmup = int(warmup_fraction * steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: linear_warmup_decay(s, warmup, steps))
    order, cursor, losses = rng.permutation(len(sentences)), 0, []
    device = next(model.parameters()).device
    model.train()
    for step in range(steps):
        if cursor + batch_size > len(order):
            order, cursor = rng.permutation(len(sentences)), 0
        rows = order[cursor : cursor + batch_size]
        cursor += batch_size
        batch = training_batch(tokenizer, kind, [sentences[i] for i in rows], rng, max_length, mask_fraction)
        loss = chunked_loss(model, {k: v.to(device) for k, v in batch.items()}, kind, length_chunks)
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
        if log and ((step + 1) % 100 == 0 or step + 1 == steps):
            log.info(
                "step %d/%d loss %.4f (mean of last 100: %.4f)",
                step + 1,
                steps,
                losses[-1],
                float(np.mean(losses[-100:])),
            )
    model.eval()
    return losses
