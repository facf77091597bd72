"""Log-probability bias score (Kurita et al. 2019; Zhang et al. 2020, Algorithm 1).

For a template with a target slot ([GEND]) and an attribute slot ([DRUG], [CVD], ...):
  p_target = P([MASK] = w | attribute filled in) at the target slot,
  p_prior  = P([MASK] = w | attribute replaced by one [MASK] per word piece of the attribute),
  score(w) = log p_target - log p_prior.

Slot positions are found on word pieces, from the tokenizer's own offsets (the reference code used
whitespace positions, which shift whenever a word splits into pieces). Every sentence is scored once
for all target words (one softmax gives every target word's probability), in batches, under
``torch.inference_mode``; for BERT-style models only the mask position goes through the MLM head.
Target words must be single word pieces in the model's vocabulary (P([MASK] = w) is a one-piece
quantity); others are reported, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medbias.core.batching import device_batches
from medbias.core.errors import MedbiasInputError
from medbias.core.sentence_likelihood import masked_lm_head
from medbias.core.templates import fill_template

TARGET_SLOT = "[GEND]"


@dataclass(frozen=True)
class ScoringItem:
    """One template x attribute: the filled sentence (target slot masked) and its prior sentence."""

    template: str
    category: str
    attribute: str
    target_sentence: str
    prior_sentence: str
    target_char: int  # character offset of the target slot's mask in both sentences


def _fill(template: str, slot: str, fill: str, mask: str) -> tuple[str, int]:
    sentence = fill_template(template, {slot: fill})
    index = sentence.index(TARGET_SLOT)
    return sentence.replace(TARGET_SLOT, mask, 1), index


def build_items(
    templates: Sequence[tuple[str, str]], attributes: Sequence[tuple[str, str]], tokenizer
) -> list[ScoringItem]:
    """Every template x attribute of its category. The target slot becomes the mask token; for the
    prior the attribute becomes as many mask tokens as it has word pieces."""
    mask = tokenizer.mask_token
    items = []
    by_category: dict[str, list[str]] = {}
    for attribute, category in attributes:
        by_category.setdefault(category, []).append(attribute)
    for template, category in templates:
        slot = f"[{category}]"
        if TARGET_SLOT not in template or slot not in template:
            raise MedbiasInputError(f"template {template!r}: needs both {TARGET_SLOT} and {slot}")
        for attribute in by_category.get(category, []):
            n_pieces = len(tokenizer.tokenize(attribute))
            target, char = _fill(template, slot, attribute, mask)
            prior, prior_char = _fill(template, slot, " ".join([mask] * n_pieces), mask)
            if char != prior_char:  # the attribute slot precedes the target slot
                raise MedbiasInputError(f"template {template!r}: the {TARGET_SLOT} slot must come before {slot}")
            items.append(ScoringItem(template, category, attribute, target, prior, char))
    return items


def target_token_ids(tokenizer, words: Sequence[str]) -> tuple[dict[str, int], list[str]]:
    """Ids of the target words that are one word piece; the others are returned to be reported."""
    ids, rejected = {}, []
    for word in words:
        pieces = tokenizer.tokenize(word)
        if len(pieces) == 1 and tokenizer.convert_tokens_to_ids(pieces[0]) != tokenizer.unk_token_id:
            ids[word] = tokenizer.convert_tokens_to_ids(pieces[0])
        else:
            rejected.append(word)
    return ids, rejected


def _token_at(offsets, char: int, sentence: str) -> int:
    """Index of the word piece that starts at character ``char`` (offsets from the fast tokenizer)."""
    for index, (start, end) in enumerate(offsets):
        if start == char and end > start:
            return index
    raise MedbiasInputError(f"sentence {sentence!r}: no word piece starts at the target slot (character {char})")


def mask_log_probs(
    model, tokenizer, sentences: Sequence[str], chars: Sequence[int], target_ids: Sequence[int], batch_size: int = 64
) -> np.ndarray:
    """log P(w) at the word piece starting at ``chars[i]`` of sentence i, for every target id:
    an array (len(sentences), len(target_ids)).

    Sentences are sorted by length in characters and batched (``core.batching``); where the model's
    masked-LM head is known (``core.sentence_likelihood.masked_lm_head``) only the mask positions go
    through it.
    """
    import torch

    encoded = tokenizer(list(sentences), return_offsets_mapping=True)
    positions = np.array(
        [_token_at(offsets, chars[i], sentences[i]) for i, offsets in enumerate(encoded["offset_mapping"])],
        dtype=np.int64,
    )
    order = np.argsort([len(s) for s in sentences], kind="stable")
    out = np.zeros((len(sentences), len(target_ids)))
    head = masked_lm_head(model)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device = next(model.parameters()).device
    ids = torch.tensor(list(target_ids), device=device)
    with torch.inference_mode():
        for rows, batch, attention in device_batches(model, encoded["input_ids"], pad, batch_size, order):
            picked = torch.arange(len(rows), device=device)
            at = torch.as_tensor(positions[rows], device=device)
            if head is not None:
                logits = head(model.base_model(input_ids=batch, attention_mask=attention).last_hidden_state[picked, at])
            else:
                logits = model(input_ids=batch, attention_mask=attention).logits[picked, at]
            out[rows] = torch.log_softmax(logits.float(), dim=-1)[:, ids].cpu().numpy()
    return out


def log_probability_scores(
    model, tokenizer, items: Sequence[ScoringItem], target_ids: dict[str, int], batch_size: int = 64
) -> np.ndarray:
    """score[i, j] = log p_target - log p_prior of target word j for item i (Algorithm 1)."""
    ids = list(target_ids.values())
    chars = [it.target_char for it in items]
    target = mask_log_probs(model, tokenizer, [it.target_sentence for it in items], chars, ids, batch_size)
    prior = mask_log_probs(model, tokenizer, [it.prior_sentence for it in items], chars, ids, batch_size)
    return target - prior
