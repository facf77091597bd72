"""Errors that the workflow reports to the user as one line: the config's before any job starts, an
input file's in the first job that reads it.

A rule script that stops on a ``MedbiasInputError`` writes one line, ``medbias: <message>``, to its log
(no traceback: ``report_input_errors``); the Snakefile's ``onerror`` handler prints the ``medbias:``
lines of the jobs that failed in this run on the terminal (``medbias.pipeline.runs.input_fault_lines``). Readers of the
user's files wrap their library calls in ``reading(path)``, so that a truncated gzip, a CSV cut
mid-row or a byte that is not UTF-8 becomes such a line naming the file, not a library's traceback.
"""

from __future__ import annotations

import contextlib
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

PREFIX = "medbias: "


class MedbiasInputError(ValueError):
    """Bad user input (config key, file, column, model, word). The message is one line that names
    the offending item and what was expected."""


def describe_read_error(error: BaseException) -> str | None:
    """What a library's reading error says about the file, in words; None for an error that is not
    about the file's bytes (a bug, not a bad input)."""
    import gzip

    import pandas as pd

    if isinstance(error, EOFError):
        return "the file ends early (a truncated or partly copied file?)"
    if isinstance(error, (gzip.BadGzipFile, zlib.error)):
        return f"not a readable gzip file ({error})"
    if isinstance(error, UnicodeDecodeError):
        return (
            f"a byte that is not {error.encoding} ({error.object[error.start : error.start + 1]!r}); the "
            f"file must be UTF-8 text"
        )
    if isinstance(error, pd.errors.ParserError):
        return f"malformed CSV ({str(error).strip().splitlines()[0]})"
    if isinstance(error, pd.errors.EmptyDataError):
        return "the file is empty"
    return None


@contextlib.contextmanager
def reading(path: str | Path) -> Iterator[None]:
    """Turn a reading error of the file at ``path`` (truncated gzip, CSV parse error, bytes that are
    not UTF-8) into a MedbiasInputError naming the file; a MedbiasInputError passes unchanged."""
    try:
        yield
    except MedbiasInputError:
        raise
    except Exception as error:
        description = describe_read_error(error)
        if description is None:
            raise
        raise MedbiasInputError(f"{path}: {description}") from error


def report_input_errors() -> None:
    """Make an uncaught MedbiasInputError end the process with one line, ``medbias: <message>``, on
    stderr (a rule script's log) and exit status 1; any other error keeps its traceback."""
    previous = sys.excepthook

    def hook(kind, error, traceback) -> None:
        if isinstance(error, MedbiasInputError):
            print(f"{PREFIX}{one_line(str(error))}", file=sys.stderr, flush=True)
            return
        previous(kind, error, traceback)

    sys.excepthook = hook


def one_line(message: str) -> str:
    """``message`` on one line (a multi-line library message joined with ' / ')."""
    return " / ".join(part.strip() for part in message.splitlines() if part.strip())
