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
