"""Skip-gram word vectors (gensim, sg=1) trained on a corpus read as a restartable stream of token
lists, so that gensim's several passes stay in bounded memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any


class ParquetSentences:
    """A restartable iterable of token lists read in batches from a corpus Parquet file
    (column ``tokens``: space-joined tokens), so gensim can make several passes in bounded memory."""

    def __init__(self, path: str | Path, batch_size: int = 10_000):
        self.path = str(path)
        self.batch_size = batch_size

    def __iter__(self) -> Iterator[list[str]]:
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(self.path).iter_batches(batch_size=self.batch_size, columns=["tokens"]):
            for text in batch.column(0).to_pylist():
                if text:
                    yield text.split(" ")


def train_skipgram(sentences, params: Mapping[str, Any], epochs: int, seed: int, workers: int):
    """gensim skip-gram (sg=1) with ``params`` (negative, sample, min_count, alpha, vector_size,
    window); returns the KeyedVectors. With workers=1 the same seed gives the same vectors."""
    from gensim.models import Word2Vec

    model = Word2Vec(sentences=sentences, sg=1, epochs=epochs, seed=seed, workers=workers, **params)
    return model.wv
