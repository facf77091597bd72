"""PubMed ingest on hand-written files: versions, deletions, books, dates, markup, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest
from pubmed_helpers import HEAD, TAIL, article, write

from medbias.core.errors import MedbiasInputError
from medbias.io.pubmed import (
    ARTICLE,
    BOOK,
    DELETE,
    index_versions,
    ingest_files,
    iter_final_articles,
    iter_records,
    parse_decades,
    parse_file,
    parsed_file_records,
    parsed_source,
    write_decade_corpora,
    xml_file_records,
)


@pytest.fixture
def files(tmp_path):
    f1 = write(
        tmp_path / "pubmed26n0001.xml.gz",
        article(1, "<Year>1965</Year>", "Career of <i>the</i> man", ("He works.", "In an office."))
        + article(2, "<MedlineDate>1998 Dec-1999 Jan</MedlineDate>", "Family study")
        + article(3, "<MedlineDate>Spring</MedlineDate>", "Undated thing")
        + article(4, "<Year>1950</Year>", "Too early")
        + '<PubmedBookArticle><BookDocument><PMID Version="1">9</PMID></BookDocument></PubmedBookArticle>'
        + article(5, "<Year>2012</Year>", "Deleted later")
        + article(6, "<Year>2013</Year>", "Deleted then reissued"),
    )
    f2 = write(
        tmp_path / "pubmed26n0002.xml",
        article(1, "<Year>1965</Year>", "Career revised corrigendum")
        + '<DeleteCitation><PMID Version="1">5</PMID><PMID Version="1">6</PMID><PMID '
        'Version="1">777</PMID></DeleteCitation>' + article(6, "<Year>2014</Year>", "Reissued"),
        gz=False,
    )
    return [f1, f2]


def test_records_text_and_years(files):
    records = list(iter_records(files[0]))
    first = records[0][1]
    assert first.pmid == 1 and first.year == 1965 and first.text == "Career of the man He works. In an office."
    assert records[1][1].year == 1998  # first four digits of MedlineDate
    assert records[2][1].year is None
    assert ("book", 9) in records


def parsed(files, folder: Path) -> list[Path]:
    """The map step of each file, as the workflow's one job per file runs it."""
    outputs = []
    for path in files:
        outputs.append(folder / f"{path.name}.parquet")
        parse_file(path, outputs[-1])
    return outputs


def test_versions_deletions_and_reissue(files, tmp_path):
    index = index_versions(files)
    assert index.keep[0].tolist() == [False, True, True, True, False, False]  # 1 replaced, 5 and 6 deleted
    assert index.keep[1].tolist() == [True, True]  # revised 1, re-issued 6
    assert (index.deleted, index.unknown_deletions, index.replaced, index.book_articles) == (1, 1, 2, 1)
    final = {a.pmid: a for a in iter_final_articles(parsed(files, tmp_path), index)}
    assert final[1].tokens == "career revised corrigendum" and final[1].n_tokens == 3 and final[6].year == 2014
    assert 5 not in final


def test_a_parsed_file_keeps_every_record_in_file_order(files, tmp_path):
    """The map step's table: one row per article, deleted PMID and book article, in file order."""
    first, second = parsed(files, tmp_path)
    rows = pd.read_parquet(second)
    assert rows["event"].tolist() == [ARTICLE, DELETE, DELETE, DELETE, ARTICLE]
    assert rows["pmid"].tolist() == [1, 5, 6, 777, 6]
    assert rows["tokens"].tolist()[0] == "career revised corrigendum" and pd.isna(rows["tokens"].iloc[1])
    first_rows = pd.read_parquet(first)
    assert (first_rows["event"] == BOOK).sum() == 1 and pd.isna(first_rows.loc[2, "year"])  # the undated article
    assert parsed_source(second) == "pubmed26n0002.xml"
    # the index read back from the parsed tables equals the one streamed from the XML (peer computation)
    for xml, table in zip(files, (first, second)):
        from_xml, from_table = xml_file_records(xml), parsed_file_records(table)
        assert from_table.article_pmids.tolist() == from_xml.article_pmids.tolist()
        assert (from_table.deletions, from_table.book_articles) == (from_xml.deletions, from_xml.book_articles)


def test_an_update_file_deletes_a_record_that_an_earlier_files_job_parsed(tmp_path):
    """Each file is parsed by its own job, which knows nothing of the others: the deletion in the
    update file reaches the baseline's record only in the reduce, and the reduce takes the files in
    their name order whatever order its inputs come in."""
    baseline = write(
        tmp_path / "pubmed26n0001.xml.gz",
        article(21, "<Year>1981</Year>", "Kept") + article(22, "<Year>1982</Year>", "Withdrawn later"),
    )
    update = write(tmp_path / "pubmed26n1400.xml.gz", '<DeleteCitation><PMID Version="1">22</PMID></DeleteCitation>')
    parsed_baseline, parsed_update = parsed([baseline, update], tmp_path)
    assert pd.read_parquet(parsed_baseline)["pmid"].tolist() == [21, 22]  # the baseline's job kept 22
    decades = parse_decades([[1980, 1989]])
    outputs = {"1980-1989": tmp_path / "1980s.parquet"}
    summary = write_decade_corpora([parsed_update, parsed_baseline], decades, outputs)
    assert pd.read_parquet(outputs["1980-1989"])["pmid"].tolist() == [21]
    assert summary["deleted"] == 1 and summary["files"] == ["pubmed26n0001.xml.gz", "pubmed26n1400.xml.gz"]


def test_deleting_the_first_article_of_the_first_file(tmp_path):
    """The first article of the first file has global rank 0; its deletion still applies (it was once
    skipped because rank 0 is falsy)."""
    first = write(
        tmp_path / "pubmed26n0001.xml.gz",
        article(11, "<Year>1975</Year>", "First") + article(12, "<Year>1975</Year>", "Second"),
    )
    later = write(
        tmp_path / "pubmed26n0002.xml.gz",
        '<DeleteCitation><PMID Version="1">11</PMID></DeleteCitation>' + article(13, "<Year>1976</Year>", "Third"),
    )
    index = index_versions([first, later])
    assert index.keep[0].tolist() == [False, True] and index.keep[1].tolist() == [True]
    assert (index.deleted, index.unknown_deletions, index.replaced) == (1, 0, 0)
    assert sorted(a.pmid for a in iter_final_articles(parsed([first, later], tmp_path), index)) == [12, 13]


def test_decade_corpora_and_counts(files, tmp_path):
    decades = parse_decades([[1960, 1969], [1990, 1999], [2010, 2020], [2030, 2039]])
    outputs = {d.label: tmp_path / f"{d.label}.parquet" for d in decades}
    summary = ingest_files(files, decades, outputs, tmp_path)
    counts = {d["decade"]: d["articles"] for d in summary["decades"]}
    assert counts == {"1960-1969": 1, "1990-1999": 1, "2010-2020": 1, "2030-2039": 0}  # empty decade reported
    assert (summary["undated"], summary["outside_decades"], summary["deleted"], summary["book_articles"]) == (
        1,
        1,
        1,
        1,
    )
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
