"""Gzip files the workflow writes, with a fixed header time (0), so that the same config gives the
same bytes: gzip otherwise stamps each file with the moment it was written."""

from __future__ import annotations

import gzip
import io
from pathlib import Path


def gzip_text_writer(path: str | Path, compresslevel: int = 6) -> io.TextIOWrapper:
    """A UTF-8 text handle that writes ``path`` as gzip with header time 0."""
    return io.TextIOWrapper(gzip.GzipFile(path, "wb", compresslevel=compresslevel, mtime=0), encoding="utf-8")


def write_gzip_lines(path: str | Path, lines: list[str]) -> None:
    """Write ``lines`` (one per line, a final line end) to ``path`` as gzip with header time 0."""
    with gzip_text_writer(path) as handle:
        handle.write("\n".join(lines) + "\n")


def read_corpus_split(path: str | Path, held_out: int, max_texts: int | None = None) -> tuple[list[str], list[str]]:
    """(training texts, held-out texts) of a one-text-per-line corpus (gzip-compressed when its name
    ends in .gz; empty lines skipped, texts stripped): the last ``held_out`` texts are held out (the
    perplexity check of every model), the first ``max_texts`` of the rest are the training texts.
    Streamed in two passes (a count, then the texts), so memory holds only the texts returned."""
    import gzip
    from collections import deque

    from medbias.core.errors import reading

    opener = gzip.open if str(path).endswith(".gz") else open

    def texts():
        with reading(path), opener(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    yield line.strip()

    total = sum(1 for _ in texts())
    if held_out >= total:
        raise ValueError(f"{path}: {total} texts, too few to hold out {held_out}")
    available = total - held_out
    keep = available if max_texts is None else min(max_texts, available)
    train: list[str] = []
    last: deque[str] = deque(maxlen=held_out or 1)
    for i, text in enumerate(texts()):
        if i < keep:
            train.append(text)
        if i >= available:
            last.append(text)
    return train, list(last) if held_out else []
