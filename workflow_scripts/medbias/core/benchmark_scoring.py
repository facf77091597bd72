"""Sentence scores of the field's benchmarks, computed as the published scripts compute them, but in
batches on ``medbias.core.sentence_likelihood`` (one masked or causal forward pass per batch of
sequences, not one per sentence).

- CrowS-Pairs (Nangia et al. 2020, the authors' metric.py), masked LMs: the two sentences' token ids
  are aligned with difflib's SequenceMatcher; the tokens in its ``equal`` blocks are the unmodified
  ones. Each unmodified token that is not a special token is masked alone, in its own sentence, and a
  sentence's score is the sum of log P(token | rest). (The published script skips the first and last
  matched token, which are [CLS] and [SEP] for every tokenizer that adds them; skipping the special
  tokens by id is the same there and stays right for a tokenizer that adds none.)
- CrowS-Pairs, causal LMs (bias-bench, Meade et al. 2022): the sentence's joint log probability,
  the first token conditioned on BOS.
- StereoSet intrasentence (Nadeem et al. 2021, the authors' dataloader and discriminative evaluator),
  masked LMs: the filler word is encoded without special tokens into pieces p_1..p_k; for piece i the
  context's BLANK is replaced, as text, by the decoded pieces p_1..p_{i-1} followed by one mask token
  (the later pieces are absent), the text is tokenized again, and P(p_i) at the mask is taken; the
  completion's score is the MEAN of these probabilities.
- StereoSet, causal LMs: the probabilities of the tokens that carry the filler (intrasentence) or the
  second sentence (intersentence), each given BOS and everything before it, averaged the same way
  (``completion``); or, with ``sentence``, the geometric mean probability of every token of the whole
  sentence (the form of the authors' generative evaluator).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np

from medbias.core.self_debias import SelfDebias
from medbias.core.sentence_likelihood import (
    bos_id_of,
    causal_log_likelihood,
    causal_token_log_probs,
    full_precision,
    masked_position_log_probs,
    pad_id_of,
)

STEREOSET_BLANK = "BLANK"
CAUSAL_STEREOSET_SCORES = ("completion", "sentence")


def unmodified_positions(first: Sequence[int], second: Sequence[int]) -> tuple[list[int], list[int]]:
    """Positions of the tokens the two id sequences share, in difflib's ``equal`` opcodes (CrowS-Pairs'
    ``get_span``): index i of the first list and of the second list are the same token."""
    matcher = difflib.SequenceMatcher(None, list(first), list(second))
    one, two = [], []
    for tag, a_start, a_end, b_start, b_end in matcher.get_opcodes():
        if tag == "equal":
            one.extend(range(a_start, a_end))
            two.extend(range(b_start, b_end))
    return one, two


def crows_pairs_masked_scores(
    model,
    tokenizer,
    more: Sequence[str],
    less: Sequence[str],
    batch_size: int = 64,
    self_debias: SelfDebias | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score of sent_more, score of sent_less, unmodified tokens scored) per pair under a masked LM
    (module docstring); all masked copies of all pairs go through the model in shared batches.
    ``self_debias``: Self-Debias with the prefixes of each pair (``core.self_debias``)."""
    special = set(tokenizer.all_special_ids)
    mask = tokenizer.mask_token_id
    ids_more = tokenizer(list(more))["input_ids"]
    ids_less = tokenizer(list(less))["input_ids"]
    copies, positions, targets, owner = [], [], [], []
    scored = np.zeros(len(ids_more), dtype=np.int64)
    for pair, (a, b) in enumerate(zip(ids_more, ids_less)):
        span_a, span_b = unmodified_positions(a, b)
        for i, j in zip(span_a, span_b):
            if a[i] in special:
                continue
            scored[pair] += 1
            for side, (ids, at) in enumerate(((a, i), (b, j))):
                copy = list(ids)
                copy[at] = mask
                copies.append(copy)
                positions.append(at)
                targets.append(ids[at])
                owner.append(2 * pair + side)
    values = masked_position_log_probs(
        model,
        copies,
        np.asarray(positions, dtype=np.int64),
        np.asarray(targets, dtype=np.int64),
        pad_id_of(tokenizer),
        batch_size,
        self_debias.for_items([o // 2 for o in owner]) if self_debias else None,
    )
    sums = np.zeros(2 * len(ids_more), dtype=np.float64)
    np.add.at(sums, np.asarray(owner, dtype=np.int64), values)
    return sums[0::2], sums[1::2], scored


def crows_pairs_causal_scores(
    model,
    tokenizer,
    more: Sequence[str],
    less: Sequence[str],
    batch_size: int = 32,
    self_debias: SelfDebias | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(joint log P of sent_more, of sent_less, tokens of sent_more) per pair under a causal LM;
    ``self_debias``: Self-Debias with the prefixes of each pair."""
    n = len(more)
    if self_debias is None:
        scores, tokens = causal_log_likelihood(model, tokenizer, [*more, *less], batch_size)
        return scores[:n], scores[n:], tokens[:n]
    bos = bos_id_of(tokenizer)
    encoded = [[bos, *ids] for ids in tokenizer([*more, *less], add_special_tokens=False)["input_ids"]]
    debias = self_debias.for_items([i % n for i in range(2 * n)])
    values = causal_token_log_probs(model, encoded, pad_id_of(tokenizer, bos), batch_size, debias)
    scores = np.array([v.sum() for v in values])
    return scores[:n], scores[n:], np.array([len(e) - 1 for e in encoded[:n]])


def masked_filler_items(
    tokenizer, contexts: Sequence[str], fillers: Sequence[str]
) -> tuple[list[list[int]], np.ndarray, np.ndarray, np.ndarray]:
    """The masked sequences of StereoSet's masked-LM scoring (module docstring): (token ids, mask
    position, target piece, completion index) per filler piece."""
    mask_token, mask_id = tokenizer.mask_token, tokenizer.mask_token_id
    sequences, positions, targets, owner = [], [], [], []
    for k, (context, word) in enumerate(zip(contexts, fillers)):
        pieces = tokenizer.encode(word, add_special_tokens=False)
        if not pieces:
            raise ValueError(f"StereoSet filler {word!r} has no tokens")
        for i, piece in enumerate(pieces):
            insertion = tokenizer.decode(pieces[:i])
            ids = tokenizer(context.replace(STEREOSET_BLANK, f"{insertion}{mask_token}"))["input_ids"]
            sequences.append(ids)
            positions.append(ids.index(mask_id))
            targets.append(piece)
            owner.append(k)
    return sequences, np.asarray(positions, dtype=np.int64), np.asarray(targets, dtype=np.int64), np.asarray(owner)


def stereoset_masked_scores(
    model,
    tokenizer,
    contexts: Sequence[str],
    fillers: Sequence[str],
    batch_size: int = 64,
    self_debias: SelfDebias | None = None,
) -> np.ndarray:
    """StereoSet intrasentence score of each (context, filler) completion under a masked LM: the
    mean probability of the filler's pieces, each predicted at one mask given the pieces before it
    (``self_debias``: Self-Debias with the prefixes of each completion)."""
    sequences, positions, targets, owner = masked_filler_items(tokenizer, contexts, fillers)
    debias = self_debias.for_items(owner) if self_debias else None
    log_probs = masked_position_log_probs(
        model, sequences, positions, targets, pad_id_of(tokenizer), batch_size, debias
    )
    sums = np.bincount(owner, weights=np.exp(log_probs), minlength=len(contexts))
    return sums / np.bincount(owner, minlength=len(contexts))


def causal_span_items(
    tokenizer, texts: Sequence[str], spans: Sequence[tuple[int, int]]
) -> tuple[list[list[int]], list[np.ndarray]]:
    """(BOS + token ids of each text, mask over the text's tokens of those that overlap the
    character span ``spans[i]``), from the fast tokenizer's offsets."""
    bos = bos_id_of(tokenizer)
    encoded = tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True)
    sequences, in_span = [], []
    for ids, offsets, (start, end) in zip(encoded["input_ids"], encoded["offset_mapping"], spans):
        sequences.append([bos, *ids])
        in_span.append(np.array([b > start and a < end for a, b in offsets], dtype=bool))
    return sequences, in_span


def stereoset_causal_scores(
    model,
    tokenizer,
    texts: Sequence[str],
    spans: Sequence[tuple[int, int]],
    score: str = "completion",
    batch_size: int = 32,
    self_debias: SelfDebias | None = None,
) -> np.ndarray:
    """StereoSet score of each text under a causal LM: the mean probability of the tokens that
    overlap the character span (``completion``) or the geometric mean probability of all tokens
    (``sentence``), every token given BOS and the tokens before it (``self_debias``: Self-Debias
    with the prefixes of each text)."""
    if score not in CAUSAL_STEREOSET_SCORES:
        raise ValueError(f"StereoSet causal score {score!r}: one of {CAUSAL_STEREOSET_SCORES}")
    sequences, in_span = causal_span_items(tokenizer, texts, spans)
    pad = pad_id_of(tokenizer, bos_id_of(tokenizer))
    log_probs = causal_token_log_probs(model, sequences, pad, batch_size, self_debias)
    out = np.full(len(texts), np.nan)
    for i, (values, chosen) in enumerate(zip(log_probs, in_span)):
        if score == "sentence":
            out[i] = float(np.exp(values.mean()))
        elif chosen.any():
            out[i] = float(np.exp(values[chosen]).mean())
    return out


def filled_texts(contexts: Sequence[str], fillers: Sequence[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """The contexts with their BLANK replaced by the fillers, and each filler's character span."""
    texts, spans = [], []
    for context, word in zip(contexts, fillers):
        start = context.index(STEREOSET_BLANK)
        texts.append(context.replace(STEREOSET_BLANK, word))
        spans.append((start, start + len(word)))
    return texts, spans


def joined_texts(contexts: Sequence[str], sentences: Sequence[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """Intersentence: the context, a space and the candidate sentence, with the candidate's span."""
    texts = [f"{c} {s}" for c, s in zip(contexts, sentences)]
    return texts, [(len(c) + 1, len(c) + 1 + len(s)) for c, s in zip(contexts, sentences)]


def segment_ids(pairs: Sequence[Sequence[int]], sep_id: int) -> list[list[int]]:
    """BERT's segment ids of encoded sentence pairs, for a tokenizer that gives none: 0 up to and
    including the first [SEP], 1 after it."""
    out = []
    for ids in pairs:
        first = list(ids).index(sep_id) + 1
        out.append([0] * first + [1] * (len(ids) - first))
    return out


def next_sentence_probabilities(
    model, tokenizer, contexts: Sequence[str], sentences: Sequence[str], batch_size: int = 64
) -> np.ndarray:
    """P(the sentence follows the context) from a next-sentence head (StereoSet's intersentence score
    of a masked model; label 0 of BERT's head is "is next"), the pairs encoded as [CLS] context [SEP]
    sentence [SEP] with their segment ids, in length-sorted batches."""
    import torch

    from medbias.core.batching import pad_sequences, padded_batches

    encoded = tokenizer(list(contexts), list(sentences))
    types = (
        encoded["token_type_ids"]
        if "token_type_ids" in encoded
        else segment_ids(encoded["input_ids"], tokenizer.sep_token_id)
    )
    device = next(model.parameters()).device
    out = np.zeros(len(contexts), dtype=np.float64)
    with torch.inference_mode():
        for rows, ids, attention in padded_batches(encoded["input_ids"], pad_id_of(tokenizer), batch_size):
            segments, _ = pad_sequences([types[i] for i in rows], 0)
            logits = model(
                input_ids=ids.to(device), attention_mask=attention.to(device), token_type_ids=segments.to(device)
            ).logits
            out[rows] = torch.softmax(full_precision(logits), dim=-1)[:, 0].cpu().numpy()
    return out
