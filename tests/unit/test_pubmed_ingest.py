"""PubMed ingest on hand-written files: versions, deletions, books, dates, markup, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from medbias.core.errors import MedbiasInputError
from medbias.io.pubmed import index_versions, iter_final_articles, iter_records, parse_decades, write_decade_corpora

HEAD = '<?xml version="1.0"?>\n<PubmedArticleSet>\n'
TAIL = "</PubmedArticleSet>\n"


def article(pmid: int, date: str, title: str, abstracts: tuple[str, ...] = ()) -> str:
    abstract = "".join(f'<AbstractText Label="L{i}">{a}</AbstractText>' for i, a in enumerate(abstracts))
    return (f'<PubmedArticle><MedlineCitation><PMID Version="1">{pmid}</PMID><Article><Journal><JournalIssue>'
            f"<PubDate>{date}</PubDate></JournalIssue></Journal><ArticleTitle>{title}</ArticleTitle>"
            f"<Abstract>{abstract}</Abstract></Article></MedlineCitation></PubmedArticle>\n")


def write(path: Path, body: str, gz: bool = True) -> Path:
    data = (HEAD + body + TAIL).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture
def files(tmp_path):
    f1 = write(tmp_path / "pubmed26n0001.xml.gz",
               article(1, "<Year>1965</Year>", "Career of <i>the</i> man", ("He works.", "In an office."))
               + article(2, "<MedlineDate>1998 Dec-1999 Jan</MedlineDate>", "Family study")
               + article(3, "<MedlineDate>Spring</MedlineDate>", "Undated thing")
               + article(4, "<Year>1950</Year>", "Too early")
               + '<PubmedBookArticle><BookDocument><PMID Version="1">9</PMID></BookDocument></PubmedBookArticle>'
               + article(5, "<Year>2012</Year>", "Deleted later")
               + article(6, "<Year>2013</Year>", "Deleted then reissued"))
    f2 = write(tmp_path / "pubmed26n0002.xml",
               article(1, "<Year>1965</Year>", "Career revised corrigendum")
               + '<DeleteCitation><PMID Version="1">5</PMID><PMID Version="1">6</PMID><PMID Version="1">777</PMID></DeleteCitation>'
               + article(6, "<Year>2014</Year>", "Reissued"), gz=False)
    return [f1, f2]


def test_records_text_and_years(files):
    records = list(iter_records(files[0]))
    first = records[0][1]
    assert first.pmid == 1 and first.year == 1965 and first.text == "Career of the man He works. In an office."
    assert records[1][1].year == 1998  # first four digits of MedlineDate
    assert records[2][1].year is None
    assert ("book", 9) in records


def test_versions_deletions_and_reissue(files):
    index = index_versions(files)
    assert index.keep[0].tolist() == [False, True, True, True, False, False]  # 1 replaced, 5 and 6 deleted
    assert index.keep[1].tolist() == [True, True]  # revised 1, re-issued 6
    assert (index.deleted, index.unknown_deletions, index.replaced, index.book_articles) == (1, 1, 2, 1)
    final = {a.pmid: a for a in iter_final_articles(files, index)}
    assert final[1].tokens == ["career", "revised", "corrigendum"] and final[6].year == 2014
    assert 5 not in final


def test_deleting_the_first_article_of_the_first_file(tmp_path):
    """The first article of the first file has global rank 0; its deletion still applies (it was once
    skipped because rank 0 is falsy)."""
    first = write(tmp_path / "pubmed26n0001.xml.gz", article(11, "<Year>1975</Year>", "First")
                  + article(12, "<Year>1975</Year>", "Second"))
    later = write(tmp_path / "pubmed26n0002.xml.gz",
                  '<DeleteCitation><PMID Version="1">11</PMID></DeleteCitation>' + article(13, "<Year>1976</Year>", "Third"))
    index = index_versions([first, later])
    assert index.keep[0].tolist() == [False, True] and index.keep[1].tolist() == [True]
    assert (index.deleted, index.unknown_deletions, index.replaced) == (1, 0, 0)
    assert sorted(a.pmid for a in iter_final_articles([first, later], index)) == [12, 13]


def test_decade_corpora_and_counts(files, tmp_path):
    decades = parse_decades([[1960, 1969], [1990, 1999], [2010, 2020], [2030, 2039]])
    outputs = {d.label: tmp_path / f"{d.label}.parquet" for d in decades}
    summary = write_decade_corpora(files, decades, outputs)
    counts = {d["decade"]: d["articles"] for d in summary["decades"]}
    assert counts == {"1960-1969": 1, "1990-1999": 1, "2010-2020": 1, "2030-2039": 0}  # empty decade reported
    assert (summary["undated"], summary["outside_decades"], summary["deleted"], summary["book_articles"]) == (1, 1, 1, 1)
    frame = pd.read_parquet(outputs["1960-1969"])
    assert frame["tokens"].tolist() == ["career revised corrigendum"] and frame["n_tokens"].tolist() == [3]
    assert len(pd.read_parquet(outputs["2030-2039"])) == 0


def test_malformed_xml_names_file_and_position(tmp_path):
    path = tmp_path / "pubmed26n0003.xml"
    path.write_text(HEAD + article(1, "<Year>1970</Year>", "ok") + "<PubmedArticle><Broken></PubmedArticle>")
    with pytest.raises(MedbiasInputError, match=r"pubmed26n0003.xml: malformed XML at line 4, column \d+"):
        list(iter_records(path))


def test_truncated_gzip_is_reported(tmp_path):
    data = gzip.compress((HEAD + article(1, "<Year>1970</Year>", "x" * 5000) * 20 + TAIL).encode())
    path = tmp_path / "pubmed26n0004.xml.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(MedbiasInputError, match=r"pubmed26n0004.xml.gz: (truncated|malformed)"):
        list(iter_records(path))


def test_decades_must_not_overlap():
    with pytest.raises(MedbiasInputError, match="1960-1970 and 1970-1979 overlap"):
        parse_decades([[1960, 1970], [1970, 1979]])
