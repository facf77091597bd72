"""Fill-in-the-blank completions of a masked language model (Zhang et al. 2020, Figure 1 and
Appendix B): for each template and each word put in its slot, the model's greedy completion of
every mask and its top-k tokens, in length-sorted batches (``core.batching``)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from medbias.core.batching import device_batches
from medbias.core.errors import MedbiasInputError
from medbias.core.templates import fill_template


def fill_in_the_blanks(
    model,
    tokenizer,
    templates: Sequence[str],
    fills: Sequence[str],
    slot: str = "[RACE]",
    top_k: int = 5,
    batch_size: int = 64,
) -> pd.DataFrame:
    """For each template and each word put in ``slot``, the model's completion of every ``[MASK]``:
    greedy (left to right, each filled mask fed back before the next, as one pass per mask over all
    sentences) and the top-k tokens with their probabilities when all masks are open at once."""
    import torch

    if not templates:
        return pd.DataFrame()
    for template in templates:
        if slot not in template or "[MASK]" not in template:
            raise MedbiasInputError(f"fill-in-the-blank template {template!r}: needs {slot} and at least one [MASK]")
    cases = [(template, fill) for template in templates for fill in fills]
    sentences = [fill_template(t, {slot: f, "[MASK]": tokenizer.mask_token}) for t, f in cases]
    ids = [list(map(int, row)) for row in tokenizer(sentences)["input_ids"]]
    masks = [[j for j, token in enumerate(row) if token == tokenizer.mask_token_id] for row in ids]
    pad = tokenizer.pad_token_id if getattr(tokenizer, "pad_token_id", None) is not None else 0
    tops: list = [None] * len(cases)
    greedy: list[list[int]] = [[] for _ in cases]
    with torch.inference_mode():
        for rows, batch, attention in device_batches(model, ids, pad, batch_size):
            logits = model(input_ids=batch, attention_mask=attention).logits
            for r, i in enumerate(rows):
                tops[i] = torch.softmax(logits[r, masks[i]].float(), dim=-1).topk(top_k, dim=-1)
        filled = [list(row) for row in ids]
        for step in range(max(len(m) for m in masks)):
            open_cases = [i for i, m in enumerate(masks) if len(m) > step]
            for rows, batch, attention in device_batches(model, [filled[i] for i in open_cases], pad, batch_size):
                logits = model(input_ids=batch, attention_mask=attention).logits
                for r, k in enumerate(rows):
                    i = open_cases[k]
                    token = int(logits[r, masks[i][step]].argmax())
                    filled[i][masks[i][step]] = token
                    greedy[i].append(token)
    rows_out = []
    for i, (template, fill) in enumerate(cases):
        for k in range(len(masks[i])):
            tokens = tokenizer.convert_ids_to_tokens(tops[i].indices[k].tolist())
            rows_out.append(
                {
                    "template": template,
                    "fill": fill,
                    "mask": k + 1,
                    "greedy": tokenizer.convert_ids_to_tokens(greedy[i][k]),
                    "top_k": ", ".join(f"{t} ({p:.3f})" for t, p in zip(tokens, tops[i].values[k].tolist())),
                }
            )
    return pd.DataFrame(rows_out)
