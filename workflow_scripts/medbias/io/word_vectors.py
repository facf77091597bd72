"""Word-vector files as gensim KeyedVectors, in every format the registry's ``vectors`` entries name
(word2vec binary or text, fastText .bin, gensim's own KeyedVectors file)."""

from __future__ import annotations

from pathlib import Path


def load_word_vectors(path: str | Path, fmt: str):
    """Load a word-vector file as gensim KeyedVectors: word2vec binary or text, fastText .bin, or a
    gensim KeyedVectors file."""
    from gensim.models import KeyedVectors

    if fmt == "word2vec_binary":
        return KeyedVectors.load_word2vec_format(str(path), binary=True)
    if fmt == "word2vec_text":
        return KeyedVectors.load_word2vec_format(str(path), binary=False)
    if fmt == "fasttext_bin":
        from gensim.models.fasttext import load_facebook_vectors

        return load_facebook_vectors(str(path))
    if fmt == "keyedvectors":
        return KeyedVectors.load(str(path))
    raise ValueError(f"unknown word-vector format {fmt!r}")
