"""The reference the batched pseudo-log-likelihood is tested and benchmarked against, written apart
from the module it checks: one masked copy per forward pass, the full logits of every position,
no batching, no padding, no head shortcut."""

from __future__ import annotations


def pseudo_log_likelihood_one_at_a_time(model, tokenizer, sentence: str) -> float:
    """PLL(S) = sum over the sentence's non-special tokens s_i of log P(s_i | S with s_i masked)
    (Salazar et al. 2020)."""
    import torch

    ids = tokenizer(sentence)["input_ids"]
    special = set(tokenizer.all_special_ids)
    total = 0.0
    with torch.inference_mode():
        for j, token in enumerate(ids):
            if token in special:
                continue
            copy = list(ids)
            copy[j] = tokenizer.mask_token_id
            logits = model(input_ids=torch.tensor([copy], device=next(model.parameters()).device)).logits[0, j]
            total += float(torch.log_softmax(logits.float(), dim=-1)[token])
    return total
