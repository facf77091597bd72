"""Batched inference over token-id sequences, one loop for every model and study: sequences sorted
by length, right-padded per batch with an attention mask (``pad_sequences``, ``device_batches``), run
under ``torch.inference_mode``, rows returned in input order. On top of it the frozen features:

- [CLS] features of a BERT encoder (Zhang et al. 2020, section 4.1): each text in the sequence-A
  position with B left empty ([CLS] A [SEP]); the vector is the concatenation of the [CLS] states of
  the requested layers (the downstream tasks use the last four; the attribute probe of Table D4 the
  last one);
- the attention-mask-aware mean of the last hidden states over a whole note's windows (Sogancioglu
  et al. 2023), with ``masked_token_sums`` the one home of mask-aware pooling;
- the mean state of one word's pieces in a template sentence (``span_vectors``).

``sentence_likelihood``, ``encoders`` and the fine-tuning of Table 6 batch through ``device_batches``
too. Training splits a random batch into runs of similar length (``length_chunks``), so that each run
computes little padding while the loss stays the whole batch's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def length_chunks(attention_mask, chunks: int) -> list[tuple[object, int]]:
    """A right-padded batch's rows split into ``chunks`` runs of similar length: (row indices, the
    run's longest row), the rows sorted by length. Run through a model one at a time, each run
    trimmed to its own longest row computes little padding: in a random batch of 128 of the demo's
    note pairs the longest is 78 tokens on average, the four runs' longest 62 on average.
    ``chunks`` <= 1 gives one run of every row at the batch's width."""
    import torch

    if chunks <= 1:
        return [(torch.arange(attention_mask.shape[0], device=attention_mask.device), attention_mask.shape[1])]
    lengths = attention_mask.sum(dim=1)
    order = torch.argsort(lengths, stable=True)
    return [(rows, int(lengths[rows].max())) for rows in torch.chunk(order, chunks) if len(rows)]


def cls_vectors(
    encoder, tokenizer, texts: Sequence[str], layers: Sequence[int] = (-1,), batch_size: int = 64, max_length: int = 512
) -> np.ndarray:
    """(len(texts), hidden * len(layers)) float32 array of [CLS] states of ``layers`` (negative indices
    count from the last layer; ``encoder`` is a BertModel or any model with hidden states)."""
    ids = tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]
    return cls_vectors_of_ids(encoder, ids, tokenizer.pad_token_id, layers, batch_size)


def cls_vectors_of_ids(
    encoder,
    sequences: Sequence[Sequence[int]],
    pad_id: int,
    layers: Sequence[int] = (-1,),
    batch_size: int = 64,
    progress=None,
) -> np.ndarray:
    """[CLS] states of ``layers`` for token-id sequences that already hold [CLS] ... [SEP]: sorted by
    length, right-padded per batch with an attention mask, rows returned in input order.
    ``progress(done, total)`` is called after every batch."""
    import torch

    out: dict[str, np.ndarray] = {}

    def collect(rows, states, attention):
        vectors = torch.cat([states[layer][:, 0] for layer in layers], dim=-1).float().cpu().numpy()
        if "x" not in out:
            out["x"] = np.zeros((len(sequences), vectors.shape[1]), dtype=np.float32)
        out["x"][rows] = vectors

    _run_padded(encoder, sequences, pad_id, batch_size, collect, progress)
    return out.get("x", np.zeros((0, 0), dtype=np.float32))


def note_windows(
    piece_ids: Sequence[int], cls_id: int, sep_id: int, window: int = 512, stride: int = 256, max_windows: int = 10
) -> list[list[int]]:
    """The note's sliding windows as model inputs, [CLS] + ``window - 2`` pieces + [SEP] each, at the
    offsets of ``medbias.core.note_text.window_starts`` (the same windows the cohorts counted)."""
    from medbias.core.note_text import window_starts

    inner = window - 2
    return [
        [cls_id, *piece_ids[start : start + inner], sep_id]
        for start in window_starts(len(piece_ids), inner, stride, max_windows)
    ]


def note_piece_ids(sequences, tokenizer, row_ids) -> dict[int, list[int]]:
    """Word-piece ids of each note in ``row_ids``, rebuilt from its packed sequences (``ROW_ID``,
    ``seq_index``, ``text``) in order: a sequence is whole sentences joined by spaces, so its pieces are
    the note's pieces in that stretch."""
    wanted = sequences[sequences["ROW_ID"].isin(set(row_ids))].sort_values(["ROW_ID", "seq_index"])
    encoded = tokenizer(wanted["text"].tolist(), add_special_tokens=False)["input_ids"]
    pieces: dict[int, list[int]] = {}
    for row_id, ids in zip(wanted["ROW_ID"].tolist(), encoded):
        pieces.setdefault(int(row_id), []).extend(ids)
    return pieces


def _special_ids(tokenizer) -> tuple[int | None, int | None]:
    first = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    last = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    return first, last


def pad_sequences(sequences: Sequence[Sequence[int]], pad_id: int):
    """(input ids, attention mask) of ``sequences`` right-padded with ``pad_id`` to the longest one
    (CPU long tensors)."""
    import torch

    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    attention = torch.zeros((len(sequences), length), dtype=torch.long)
    for r, sequence in enumerate(sequences):
        ids[r, : len(sequence)] = torch.as_tensor(sequence)
        attention[r, : len(sequence)] = 1
    return ids, attention


def padded_batches(
    sequences: Sequence[Sequence[int]], pad_id: int, batch_size: int, order: Sequence[int] | None = None
):
    """Yield (rows, input ids, attention mask) for length-sorted batches of token-id sequences,
    right-padded with ``pad_id`` (CPU long tensors; ``rows`` index ``sequences``). ``order`` replaces
    the sort by token count (e.g. a sort by the texts' characters)."""
    if order is None:
        order = np.argsort([len(s) for s in sequences], kind="stable")
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        yield (rows, *pad_sequences([sequences[i] for i in rows], pad_id))


def device_batches(
    model, sequences: Sequence[Sequence[int]], pad_id: int, batch_size: int, order: Sequence[int] | None = None
):
    """``padded_batches`` with the input ids and attention mask on ``model``'s device. Callers run it
    under ``torch.inference_mode``."""
    device = next(model.parameters()).device
    for rows, ids, attention in padded_batches(sequences, pad_id, batch_size, order):
        yield rows, ids.to(device), attention.to(device)


def masked_token_sums(states, attention):
    """(sum of the states of the unmasked tokens, number of unmasked tokens) per row: states (batch,
    tokens, hidden), attention (batch, tokens) with 1 for real tokens. Their ratio is the
    attention-mask-aware mean pooling."""
    mask = attention.unsqueeze(-1).float()
    return (states * mask).sum(dim=1), mask.sum(dim=1)


def _run_padded(
    encoder, sequences: Sequence[Sequence[int]], pad_id: int, batch_size: int, handle, progress=None
) -> None:
    """``device_batches`` through ``encoder`` under inference mode; ``handle(rows, hidden_states,
    attention_mask)`` receives every batch (the model's tuple of per-layer states and the mask, on its
    device)."""
    import torch

    done = 0
    with torch.inference_mode():
        for rows, ids, attention in device_batches(encoder, sequences, pad_id, batch_size):
            output = encoder(input_ids=ids, attention_mask=attention, output_hidden_states=True)
            handle(rows, output.hidden_states, attention)
            done += len(rows)
            if progress is not None:
                progress(done, len(sequences))


def mean_pooled_vectors(
    encoder,
    tokenizer,
    texts: Sequence[str],
    max_length: int = 512,
    stride: int = 256,
    batch_size: int = 16,
    progress=None,
) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, windows) per text: the attention-mask-aware mean of the last hidden states over
    every token of every window of the text (special tokens included, padding excluded). Windows
    hold ``max_length - 2`` word pieces between the model's first and last special tokens, at
    ``stride`` piece offsets, covering the whole text (Sogancioglu et al. 2023: the mean over the note)."""
    from medbias.core.note_text import window_starts

    first, last = _special_ids(tokenizer)
    inner = max_length - (first is not None) - (last is not None)
    sequences, owner = [], []
    pieces = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    for i, ids in enumerate(pieces):
        starts = window_starts(len(ids), inner, stride, max_windows=10**9)
        for start in starts:
            chunk = ids[start : start + inner]
            sequences.append(([first] if first is not None else []) + chunk + ([last] if last is not None else []))
            owner.append(i)
    owner = np.asarray(owner)
    hidden = encoder.config.hidden_size
    sums = np.zeros((len(texts), hidden), dtype=np.float64)
    counts = np.zeros(len(texts), dtype=np.float64)

    def accumulate(rows, states, attention):
        token_sums, token_counts = masked_token_sums(states[-1].float().cpu(), attention.cpu())
        np.add.at(sums, owner[rows], token_sums.numpy())
        np.add.at(counts, owner[rows], token_counts[:, 0].numpy())

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    _run_padded(encoder, sequences, pad, batch_size, accumulate, progress)
    return (sums / np.maximum(counts, 1)[:, None]).astype(np.float32), np.bincount(owner, minlength=len(texts))


def span_vectors(
    encoder, tokenizer, sentences: Sequence[str], spans: Sequence[tuple[int, int]], batch_size: int = 64
) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, unknown) per sentence: the mean last hidden state of the word pieces whose
    characters lie in ``spans[i]`` (the word's own pieces, not the sentence), and whether every one
    of those pieces is the unknown token (the word has no representation)."""
    encoded = tokenizer(list(sentences), return_offsets_mapping=True)
    piece_rows: list[list[int]] = []
    unknown = np.zeros(len(sentences), dtype=bool)
    for i, (offsets, ids) in enumerate(zip(encoded["offset_mapping"], encoded["input_ids"])):
        start, end = spans[i]
        rows = [j for j, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end]
        if not rows:
            raise ValueError(f"no word piece covers characters {start}-{end} of template sentence {i}")
        piece_rows.append(rows)
        unknown[i] = tokenizer.unk_token_id is not None and all(ids[j] == tokenizer.unk_token_id for j in rows)
    out = np.zeros((len(sentences), encoder.config.hidden_size), dtype=np.float32)

    def collect(rows, states, attention):
        last = states[-1].float().cpu()
        for r, i in enumerate(rows):
            out[i] = last[r, piece_rows[i]].mean(dim=0).numpy()

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    _run_padded(encoder, encoded["input_ids"], pad, batch_size, collect)
    return out, unknown


def sigmoid_outputs(forward, features: np.ndarray, device, batch_size: int = 4096, axis: int = 0) -> np.ndarray:
    """sigmoid(forward(x)) for row batches x of the feature matrix ``features`` (float32 on
    ``device``) under inference mode, the batches' outputs joined along ``axis`` (0 when ``forward``
    gives one value per row, 1 for a stack of tasks that gives [tasks, rows]); None for no rows."""
    import torch

    out = []
    with torch.inference_mode():
        for start in range(0, len(features), batch_size):
            x = torch.as_tensor(features[start : start + batch_size], dtype=torch.float32, device=device)
            out.append(torch.sigmoid(forward(x)).float().cpu().numpy())
    return np.concatenate(out, axis=axis) if out else None
