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


def read_text_lines(path: str | Path) -> list[str]:
    """The non-empty lines of a text file (gzip-compressed when its name ends in .gz), stripped."""
    import gzip

    from medbias.core.errors import reading

    opener = gzip.open if str(path).endswith(".gz") else open
    with reading(path), opener(path, "rt", encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip()]


def split_held_out(texts: list[str], held_out: int, max_texts: int | None = None) -> tuple[list[str], list[str]]:
    """(training texts, held-out texts) of a corpus: the last ``held_out`` texts are held out (the
    perplexity check of every model), the first ``max_texts`` of the rest are the training texts."""
    if held_out >= len(texts):
        raise ValueError(f"the corpus has {len(texts)} texts: too few to hold out {held_out}")
    train = texts[: len(texts) - held_out] if held_out else list(texts)
    return (train[:max_texts] if max_texts is not None else train), texts[len(texts) - held_out :] if held_out else []
