"""Paper tables and pages, and their one writer: a ``PaperTable`` (rows, title, notes) as CSV plus
Markdown, and a ``PaperPage`` (a title, then sections of tables and paragraphs) as Markdown.

Every table builder of the studies returns a ``PaperTable``; the rule scripts only write it
(``write_paper_table``). A page of several tables (Table V for every learner, the planted recovery,
the demo world's summary, an audit card) is a ``PaperPage`` written by ``write_page``; a single table's
Markdown is the page of its one table followed by its notes, so both come out of ``page_markdown``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd


def _cell(value: object, digits: int) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pd.DataFrame, digits: int = 3) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (floats to ``digits`` places, no index; a pipe in a
    header or cell is escaped, as in "mean |d|", so that it does not split the column)."""
    header = "| " + " | ".join(str(c).replace("|", "\\|") for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    rows = ["| " + " | ".join(_cell(v, digits) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *rows]) + "\n"


@dataclass(frozen=True)
class PaperTable:
    """A paper table as a study's table builder returns it: the rows, the title and the notes printed
    under it (``write_paper_table`` writes it as CSV and Markdown)."""

    frame: pd.DataFrame
    title: str
    notes: tuple[str, ...] = ()
    digits: int = 3


@dataclass(frozen=True)
class Section:
    """One table of a page, under a ``## heading`` (none: the table alone)."""

    frame: pd.DataFrame
    heading: str | None = None
    digits: int = 3


@dataclass(frozen=True)
class PaperPage:
    """A Markdown page: ``# title``, then its blocks in order, one blank line apart: a ``Section``
    (a table under its heading) or a paragraph of Markdown text."""

    title: str
    blocks: tuple[Section | str, ...]


def page_markdown(page: PaperPage) -> str:
    """The page's Markdown text."""
    parts = []
    for block in page.blocks:
        if isinstance(block, Section):
            heading = f"## {block.heading}\n\n" if block.heading else ""
            parts.append(heading + markdown_table(block.frame, block.digits))
        else:
            parts.append(block + "\n")
    return f"# {page.title}\n\n" + "\n".join(parts)


def table_page(table: PaperTable) -> PaperPage:
    """A single table's page: the table, then its (non-empty) notes, one per line."""
    notes = [note for note in table.notes if note]
    return PaperPage(table.title, (Section(table.frame, digits=table.digits), *(["\n".join(notes)] if notes else [])))


def write_page(page: PaperPage, md: str) -> None:
    """Write ``page`` as Markdown to ``md``."""
    with open(md, "w", encoding="utf-8") as handle:
        handle.write(page_markdown(page))


def write_paper_table(table: PaperTable, csv: str | None, md: str) -> None:
    """A paper table as CSV (when ``csv`` is given) and as Markdown (``table_page``)."""
    if csv is not None:
        table.frame.to_csv(csv, index=False)
    write_page(table_page(table), md)
