"""Sentence log-likelihoods under masked, causal and seq2seq language models (Xie et al. 2024,
section 3.2: StereoSet-style scoring; Salazar et al. 2020 for the pseudo-log-likelihood).

- masked: pseudo-log-likelihood, PLL(S) = sum_i log P(s_i | S with s_i masked), over every
  non-special token; all masked copies of all sentences go through the model in length-sorted
  batches, and the language-model head runs only at the masked position of each copy.
- causal: sum_t log P(s_t | BOS, s_<t) over the sentence's tokens, with the model's BOS token
  prepended (GPT-2's ``<|endoftext|>``); the first token is scored too.
- seq2seq: the decoder's log-likelihood of the sentence given the sentence as encoder input (sum of
  the label tokens' log-probabilities, end-of-sentence token included, as the model's own loss).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medbias.core.batching import device_batches
from medbias.core.self_debias import SelfDebias, batch_log_probs


def masked_lm_head(model):
    """The function from the encoder's last hidden states to vocabulary logits, exactly as the
    model's own forward applies it, for the masked-LM classes whose head is known; None for any
    other class (its full forward pass is used then, which is always right, only slower).

    ELECTRA's generator head is its ``generator_predictions`` (dense, GELU, LayerNorm) followed by
    ``generator_lm_head``; taking the last linear layer alone gives wrong scores. DistilBERT's head
    is four separate modules."""
    name = type(model).__name__
    if name == "BertForMaskedLM":
        return model.cls
    if name == "BertForPreTraining":  # its cls also holds the next-sentence head
        return model.cls.predictions
    if name in ("RobertaForMaskedLM", "XLMRobertaForMaskedLM", "CamembertForMaskedLM"):
        return model.lm_head
    if name == "AlbertForMaskedLM":
        return model.predictions
    if name == "ElectraForMaskedLM":
        return lambda hidden: model.generator_lm_head(model.generator_predictions(hidden))
    if name == "DistilBertForMaskedLM":
        return lambda hidden: model.vocab_projector(
            model.vocab_layer_norm(model.activation(model.vocab_transform(hidden)))
        )
    return None


def masked_copies(
    token_ids: Sequence[Sequence[int]], special_ids: set[int], mask_id: int
) -> tuple[list[list[int]], np.ndarray, np.ndarray, np.ndarray]:
    """Every sentence once per scoreable token, with that token replaced by the mask: (copies, owner
    sentence, masked position, original token id) per copy."""
    copies, owner, position, target = [], [], [], []
    for i, ids in enumerate(token_ids):
        for j, token in enumerate(ids):
            if token in special_ids:
                continue
            copy = list(ids)
            copy[j] = mask_id
            copies.append(copy)
            owner.append(i)
            position.append(j)
            target.append(token)
    return copies, np.array(owner, dtype=np.int64), np.array(position, dtype=np.int64), np.array(target, dtype=np.int64)


def full_precision(logits):
    """Logits in float32 at least (half and bfloat16 are widened; float64 stays float64)."""
    import torch

    return logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits


def masked_position_log_probs(
    model,
    sequences: Sequence[Sequence[int]],
    positions: np.ndarray,
    targets: np.ndarray,
    pad_id: int,
    batch_size: int = 64,
    self_debias: SelfDebias | None = None,
) -> np.ndarray:
    """log P(targets[i] | sequences[i]) at the masked position ``positions[i]`` of each token-id
    sequence (the mask already in place), in length-sorted batches; the language-model head runs only
    at that position (``masked_lm_head``), or the full forward pass for a class whose head is unknown.
    With ``self_debias``, the distribution at the mask is Self-Debias's (``core.self_debias``): each
    batch also runs once with each of its prefixes inserted."""
    import torch

    out = np.zeros(len(sequences), dtype=np.float64)
    if not len(sequences):
        return out
    head = masked_lm_head(model)
    device = next(model.parameters()).device

    def logits_at(ids, attention, at):
        picked = torch.arange(len(at), device=device)
        if head is not None:
            hidden = model.base_model(input_ids=ids, attention_mask=attention).last_hidden_state
            return full_precision(head(hidden[picked, at].unsqueeze(1))[:, 0])
        return full_precision(model(input_ids=ids, attention_mask=attention).logits[picked, at])

    with torch.inference_mode():
        for rows, ids, attention in device_batches(
            model, sequences, pad_id, batch_size, prefix_order(sequences, self_debias)
        ):
            at = torch.as_tensor(positions[rows], device=device)
            log_probs = batch_log_probs(
                logits_at(ids, attention, at),
                rows,
                sequences,
                pad_id,
                self_debias,
                lambda p_ids, p_attention, shift, chosen: logits_at(
                    p_ids.to(device), p_attention.to(device), at[chosen] + shift
                ),
            )
            picked = torch.arange(len(rows), device=device)
            out[rows] = log_probs[picked, torch.as_tensor(targets[rows], device=device)].cpu().numpy()
    return out


def prefix_order(sequences: Sequence[Sequence[int]], self_debias: SelfDebias | None) -> np.ndarray | None:
    """The batch order under Self-Debias: by the sequences' prefixes, then by length, so that a batch
    mostly shares one prefix and each prefixed pass runs on whole batches; None (by length) without."""
    if self_debias is None:
        return None
    first = [self_debias.item_prefixes[i][0] for i in range(len(sequences))]
    return np.lexsort(([len(x) for x in sequences], first))


def pad_id_of(tokenizer, fallback: int | None = 0) -> int:
    """The tokenizer's padding id (padding is masked out, so any id serves when it has none)."""
    return tokenizer.pad_token_id if tokenizer.pad_token_id is not None else fallback


def pseudo_log_likelihood(
    model, tokenizer, sentences: Sequence[str], batch_size: int = 64, max_length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(PLL, scored tokens) per sentence under a masked LM (module docstring), batched; with
    ``max_length``, each text is cut to that many tokens (special tokens included) first."""
    encoded = tokenizer(list(sentences), truncation=max_length is not None, max_length=max_length)["input_ids"]
    copies, owner, position, target = masked_copies(encoded, set(tokenizer.all_special_ids), tokenizer.mask_token_id)
    values = masked_position_log_probs(model, copies, position, target, pad_id_of(tokenizer), batch_size)
    scores = np.zeros(len(sentences), dtype=np.float64)
    np.add.at(scores, owner, values)
    return scores, np.bincount(owner, minlength=len(sentences))


def causal_token_log_probs(
    model,
    sequences: Sequence[Sequence[int]],
    pad_id: int,
    batch_size: int = 32,
    self_debias: SelfDebias | None = None,
) -> list[np.ndarray]:
    """log P(s_t | s_<t) for t = 1 .. len-1 of each token-id sequence (its first token, BOS, is only
    conditioned on), in length-sorted right-padded batches; with ``self_debias``, each next-token
    distribution is Self-Debias's (``core.self_debias``), each prefix inserted after BOS."""
    import torch

    out: list[np.ndarray] = [np.zeros(0)] * len(sequences)
    device = next(model.parameters()).device
    with torch.inference_mode():
        for rows, ids, attention in device_batches(
            model, sequences, pad_id, batch_size, prefix_order(sequences, self_debias)
        ):
            logits = full_precision(model(input_ids=ids, attention_mask=attention).logits)[:, :-1]

            def prefixed_logits(p_ids, p_attention, shift, chosen, width=logits.shape[1]):
                p_logits = model(input_ids=p_ids.to(device), attention_mask=p_attention.to(device)).logits
                return full_precision(p_logits)[:, shift : shift + width]

            log_probs = batch_log_probs(logits, rows, sequences, pad_id, self_debias, prefixed_logits)
            token_scores = log_probs.gather(-1, ids[:, 1:].unsqueeze(-1))[..., 0].cpu().numpy()
            for r, i in enumerate(rows):
                out[i] = token_scores[r, : len(sequences[i]) - 1].astype(np.float64)
    return out


def bos_id_of(tokenizer) -> int:
    """The token a causal model's first word is conditioned on: BOS, else EOS (GPT-2's both)."""
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if bos is None:
        raise ValueError("causal scoring needs a BOS (or EOS) token to condition the first word on")
    return bos


def causal_log_likelihood(
    model, tokenizer, sentences: Sequence[str], batch_size: int = 32, max_length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(log-likelihood, scored tokens) per sentence under a causal LM: BOS prepended, every
    sentence token scored given the ones before it; right padding is masked out. With
    ``max_length``, each text is cut to that many tokens (BOS included) first."""
    bos = bos_id_of(tokenizer)
    pieces = tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
    cut = None if max_length is None else max_length - 1
    encoded = [[bos, *ids[:cut]] for ids in pieces]
    token_scores = causal_token_log_probs(model, encoded, pad_id_of(tokenizer, bos), batch_size)
    return np.array([t.sum() for t in token_scores]), np.array([len(e) - 1 for e in encoded])


def seq2seq_log_likelihood(
    model, tokenizer, sentences: Sequence[str], batch_size: int = 32, max_length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(log-likelihood, scored tokens) per sentence under a seq2seq LM: the sentence is the encoder
    input and the decoder's labels; label padding is ignored."""
    import torch

    encoded = tokenizer(list(sentences), truncation=max_length is not None, max_length=max_length)["input_ids"]
    pad = tokenizer.pad_token_id
    scores = np.zeros(len(sentences))
    with torch.inference_mode():
        for rows, ids, attention in device_batches(model, encoded, pad, batch_size):
            labels = ids.masked_fill(attention == 0, -100)
            # the decoder inputs the model would derive from the labels, without it also computing a loss
            decoder_ids = model.prepare_decoder_input_ids_from_labels(labels=labels)
            logits = model(input_ids=ids, attention_mask=attention, decoder_input_ids=decoder_ids).logits.float()
            log_probs = torch.log_softmax(logits, dim=-1)
            keep = labels != -100
            token_scores = log_probs.gather(-1, labels.clamp(min=0).unsqueeze(-1))[..., 0] * keep
            scores[rows] = token_scores.sum(dim=1).cpu().numpy()
    return scores, np.array([len(e) for e in encoded])


def sentence_log_likelihood(
    model, tokenizer, kind: str, sentences: Sequence[str], batch_size: int = 32, max_length: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch on the registry's model kind (masked, causal, seq2seq); ``max_length`` cuts each text."""
    scorers = {"masked": pseudo_log_likelihood, "causal": causal_log_likelihood, "seq2seq": seq2seq_log_likelihood}
    if kind not in scorers:
        raise ValueError(f"unknown model kind {kind!r} (masked, causal, seq2seq)")
    return scorers[kind](model, tokenizer, sentences, batch_size, max_length)
