"""Words of a tokenizer's vocabulary: the whole-word pool that calibrated nulls draw random words from."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def null_pool_words(tokenizer, exclude: Sequence[str], n_words: int, seed: int) -> list[str]:
    """Random whole words of the tokenizer's vocabulary for SEAT's calibrated null: entries that are
    lower-case letters only (3 or more, after a BPE/SentencePiece word-start mark), not a continuation
    piece, encoded as one token, and in no SEAT set; ``n_words`` of them drawn with ``seed`` (from the
    sorted list, so the draw is deterministic). A tokenizer's vocabulary carries no frequencies, so
    the draw is uniform: the null matches the sets' sizes, not their frequency profile."""
    excluded = {w.lower() for w in exclude}
    words = sorted({t.lstrip("\u0120\u2581") for t in tokenizer.get_vocab() if not t.startswith("##")})
    words = [w for w in words if len(w) >= 3 and w.isalpha() and w.islower() and w.isascii() and w not in excluded]
    pieces = tokenizer([" " + w for w in words], add_special_tokens=False)["input_ids"] if words else []
    single = [w for w, ids in zip(words, pieces) if len(ids) == 1 and ids[0] != tokenizer.unk_token_id]
    if len(single) < n_words:
        return single
    chosen = np.random.default_rng(seed).choice(len(single), size=n_words, replace=False)
    return [single[i] for i in sorted(chosen)]
