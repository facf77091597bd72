"""Hand-written PubMed XML files for the ingest tests (unit and workflow)."""

from __future__ import annotations

import gzip
from pathlib import Path

HEAD = '<?xml version="1.0"?>\n<PubmedArticleSet>\n'
TAIL = "</PubmedArticleSet>\n"


def article(pmid: int, date: str, title: str, abstracts: tuple[str, ...] = ()) -> str:
    abstract = "".join(f'<AbstractText Label="L{i}">{a}</AbstractText>' for i, a in enumerate(abstracts))
    return (
        f'<PubmedArticle><MedlineCitation><PMID Version="1">{pmid}</PMID><Article><Journal><JournalIssue>'
        f"<PubDate>{date}</PubDate></JournalIssue></Journal><ArticleTitle>{title}</ArticleTitle>"
        f"<Abstract>{abstract}</Abstract></Article></MedlineCitation></PubmedArticle>\n"
    )


def write(path: Path, body: str, gz: bool = True) -> Path:
    data = (HEAD + body + TAIL).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path
