"""Frozen [CLS] features from a BERT encoder (Zhang et al. 2020, section 4.1).

Each text goes in the sequence-A position with B left empty ([CLS] A [SEP]); the vector is the
concatenation of the [CLS] states of the requested layers (the downstream tasks use the last four;
the post-hoc attribute probe of Table D4 the last one). Texts are sorted by length and batched under
``torch.inference_mode``, so padding is short; rows come back in input order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def cls_vectors(encoder, tokenizer, texts: Sequence[str], layers: Sequence[int] = (-1,), batch_size: int = 64,
                max_length: int = 512) -> np.ndarray:
    """(len(texts), hidden * len(layers)) float32 array of [CLS] states of ``layers`` (negative indices
    count from the last layer; ``encoder`` is a BertModel or any model with hidden states)."""
    import torch

    order = np.argsort([len(t) for t in texts], kind="stable")
    device = next(encoder.parameters()).device
    out = None
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            encoded = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=max_length,
                                return_tensors="pt").to(device)
            states = encoder(**encoded, output_hidden_states=True).hidden_states
            vectors = torch.cat([states[layer][:, 0] for layer in layers], dim=-1).float().cpu().numpy()
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)
