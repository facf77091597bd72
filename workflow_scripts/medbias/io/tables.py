"""Paper tables as CSV plus Markdown."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd


def _cell(value: object, digits: int) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (floats to ``digits`` places, no index)."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(_cell(v, digits) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows]) + "\n"


def write_table(
    frame: pd.DataFrame, csv: str | None, md: str, title: str, notes: tuple[str, ...] = (), digits: int = 3
) -> None:
    """A paper table as CSV (when ``csv`` is given) and as Markdown: a title, the table, then notes."""
    if csv is not None:
        frame.to_csv(csv, index=False)
    text = f"# {title}\n\n{markdown_table(frame, digits)}"
    if any(notes):
        text += "\n" + "\n".join(n for n in notes if n) + "\n"
    with open(md, "w", encoding="utf-8") as handle:
        handle.write(text)


@dataclass(frozen=True)
class PaperTable:
    """A paper table as a study's table builder returns it: the rows, the title and the notes printed
    under it (``write_paper_table`` writes it as CSV and Markdown)."""

    frame: pd.DataFrame
    title: str
    notes: tuple[str, ...] = ()
    digits: int = 3


def write_paper_table(table: PaperTable, csv: str | None, md: str) -> None:
    """``write_table`` of a PaperTable."""
    write_table(table.frame, csv, md, table.title, table.notes, digits=table.digits)
