"""PubMed baseline ingest: stream ``pubmed*.xml(.gz)`` files into per-decade token corpora.

Rules (Rios et al. 2020, section 3, and the PubMed distribution's own semantics):
- files are read in name order; a later version of a PMID replaces the earlier one, and a
  DeleteCitation removes the PMID as of that point (a later re-issue brings it back);
- PubmedBookArticle records are skipped and counted;
- text = ArticleTitle + every AbstractText, inline markup kept as text (``itertext``);
- year = PubDate/Year, else the first four digits of PubDate/MedlineDate, else the article is
  counted as undated and excluded;
- text is lower-cased and tokenised with gensim's simple tokenizer (``gensim.utils.tokenize``).

Memory is constant per file: ``iterparse`` with every top-level record cleared after use. Two passes
over the files: the first records (file, position) of every article version and every deletion in
compact arrays (16 bytes per article), the second writes only the final versions.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree.ElementTree import ParseError, iterparse

import numpy as np

from medbias.core.errors import MedbiasInputError

_YEAR = re.compile(r"\d{4}")


@dataclass(frozen=True)
class Decade:
    start: int
    end: int  # inclusive

    @property
    def label(self) -> str:
        return f"{self.start}-{self.end}"

    def __contains__(self, year: int) -> bool:
        return self.start <= year <= self.end


def parse_decades(spec: Sequence[Sequence[int]]) -> list[Decade]:
    """Decades from [[start, end], ...]; they must be ordered and must not overlap."""
    decades = [Decade(int(a), int(b)) for a, b in spec]
    for d in decades:
        if d.end < d.start:
            raise MedbiasInputError(f"config key 'rios.decades': {d.label} ends before it starts")
    for prev, cur in zip(decades, decades[1:]):
        if cur.start <= prev.end:
            raise MedbiasInputError(f"config key 'rios.decades': {prev.label} and {cur.label} overlap")
    return decades


def _open(path: Path):
    return gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")


@dataclass(frozen=True)
class ArticleEvent:
    pmid: int
    year: int | None
    text: str


def _article_year(article) -> int | None:
    pub_date = article.find("MedlineCitation/Article/Journal/JournalIssue/PubDate")
    if pub_date is None:
        return None
    year = pub_date.findtext("Year")
    if year and year.strip().isdigit():
        return int(year.strip())
    match = _YEAR.search(pub_date.findtext("MedlineDate") or "")
    return int(match.group()) if match else None


def _article_text(article) -> str:
    parts = []
    title = article.find("MedlineCitation/Article/ArticleTitle")
    if title is not None:
        parts.append("".join(title.itertext()))
    for abstract in article.iterfind("MedlineCitation/Article/Abstract/AbstractText"):
        parts.append("".join(abstract.itertext()))
    return " ".join(p.strip() for p in parts if p.strip())


def iter_records(path: str | Path) -> Iterator[tuple[str, object]]:
    """Stream one file's records in order: ("article", ArticleEvent), ("delete", pmid), ("book", pmid).

    Raises MedbiasInputError naming the file and the position of a malformed or truncated file.
    """
    path = Path(path)
    try:
        with _open(path) as handle:
            context = iterparse(handle, events=("start", "end"))
            _, root = next(context)
            for event, element in context:
                if event != "end":
                    continue
                tag = element.tag
                if tag == "PubmedArticle":
                    pmid = int(element.findtext("MedlineCitation/PMID"))
                    yield "article", ArticleEvent(pmid, _article_year(element), _article_text(element))
                    root.clear()
                elif tag == "DeleteCitation":
                    for pmid in element.iterfind("PMID"):
                        yield "delete", int(pmid.text)
                    root.clear()
                elif tag == "PubmedBookArticle":
                    yield "book", int(element.findtext("BookDocument/PMID") or -1)
                    root.clear()
    except ParseError as exc:
        line, column = exc.position
        raise MedbiasInputError(f"{path}: malformed XML at line {line}, column {column} ({exc})") from exc
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise MedbiasInputError(f"{path}: truncated or corrupt gzip stream ({exc})") from exc
    except StopIteration as exc:
        raise MedbiasInputError(f"{path}: empty file (no XML root element)") from exc


@dataclass
class VersionIndex:
    """Where the final version of every live PMID is: one keep-mask per file over its articles."""

    keep: list[np.ndarray]
    book_articles: int = 0
    deleted: int = 0  # PMIDs removed by DeleteCitation (and not re-issued later)
    replaced: int = 0  # article versions superseded by a later version
    unknown_deletions: int = 0  # DeleteCitation PMIDs never seen in these files
    files: list[str] = field(default_factory=list)


def index_versions(paths: Sequence[str | Path]) -> VersionIndex:
    """First pass: find the final version of each PMID, applying deletions in file order."""
    pmids_per_file: list[np.ndarray] = []
    deletions: list[tuple[int, int, int]] = []  # (pmid, file, position before which it applies)
    books = 0
    for f, path in enumerate(paths):
        pmids: list[int] = []
        for kind, value in iter_records(path):
            if kind == "article":
                pmids.append(value.pmid)  # type: ignore[union-attr]
            elif kind == "delete":
                deletions.append((int(value), f, len(pmids)))  # type: ignore[arg-type]
            else:
                books += 1
        pmids_per_file.append(np.asarray(pmids, dtype=np.int64))
    sizes = [len(p) for p in pmids_per_file]
    all_pmids = np.concatenate(pmids_per_file) if pmids_per_file else np.zeros(0, np.int64)
    order = np.concatenate([np.arange(n) for n in sizes]) if sizes else np.zeros(0, np.int64)
    file_of = np.repeat(np.arange(len(sizes)), sizes)
    rank = file_of.astype(np.int64) * (1 << 40) + order  # global order of every article version
    # last version per PMID: sort by (pmid, rank), take the last of each run
    sort = np.lexsort((rank, all_pmids))
    last = np.ones(len(sort), dtype=bool)
    if len(sort) > 1:
        last[:-1] = all_pmids[sort][1:] != all_pmids[sort][:-1]
    keep_flat = np.zeros(len(all_pmids), dtype=bool)
    keep_flat[sort[last]] = True
    deleted = unknown = 0
    if deletions:
        last_rank = dict(zip(all_pmids[sort[last]].tolist(), rank[sort[last]].tolist()))
        last_index = dict(zip(all_pmids[sort[last]].tolist(), sort[last].tolist()))
        for pmid, f, position in deletions:
            if pmid not in last_rank:
                unknown += 1
            elif last_rank[pmid] < f * (1 << 40) + position and keep_flat[last_index[pmid]]:
                keep_flat[last_index[pmid]] = False
                deleted += 1
    bounds = np.cumsum([0] + sizes)
    keep = [keep_flat[bounds[i] : bounds[i + 1]] for i in range(len(sizes))]
    replaced = int(len(all_pmids) - last.sum())
    return VersionIndex(keep, books, deleted, replaced, unknown, [Path(p).name for p in paths])


def tokenize(text: str) -> list[str]:
    """Lower-cased alphabetic tokens (gensim's simple tokenizer), as Rios et al."""
    from gensim.utils import tokenize as gensim_tokenize

    return list(gensim_tokenize(text, lower=True))


@dataclass(frozen=True)
class FinalArticle:
    pmid: int
    year: int | None
    tokens: list[str]


def iter_final_articles(paths: Sequence[str | Path], index: VersionIndex) -> Iterator[FinalArticle]:
    """Second pass: the final version of each live article, tokenised, in file order."""
    for f, path in enumerate(paths):
        position = 0
        for kind, value in iter_records(path):
            if kind != "article":
                continue
            if index.keep[f][position]:
                yield FinalArticle(value.pmid, value.year, tokenize(value.text))  # type: ignore[union-attr]
            position += 1


def write_decade_corpora(
    paths: Sequence[str | Path], decades: Sequence[Decade], outputs: dict[str, str | Path], batch_size: int = 1000
) -> dict[str, object]:
    """Ingest ``paths`` into one Parquet file per decade (columns pmid, year, n_tokens, tokens as a
    space-joined string) and return the counts behind Table 1 (nothing excluded goes uncounted)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tqdm import tqdm

    paths = sorted(paths, key=lambda p: Path(p).name)
    index = index_versions(paths)
    schema = pa.schema([("pmid", pa.int64()), ("year", pa.int32()), ("n_tokens", pa.int32()), ("tokens", pa.string())])
    writers = {d.label: pq.ParquetWriter(str(outputs[d.label]), schema) for d in decades}
    buffers: dict[str, list[FinalArticle]] = {d.label: [] for d in decades}
    counts = {d.label: {"articles": 0, "tokens": 0} for d in decades}
    undated = outside = 0

    def flush(label: str) -> None:
        rows = buffers[label]
        if rows:
            writers[label].write_table(pa.table({
                "pmid": [r.pmid for r in rows], "year": [r.year for r in rows],
                "n_tokens": [len(r.tokens) for r in rows], "tokens": [" ".join(r.tokens) for r in rows],
            }, schema=schema))
            rows.clear()

    try:
        for article in tqdm(iter_final_articles(paths, index), desc="articles", mininterval=10):
            if article.year is None:
                undated += 1
                continue
            decade = next((d for d in decades if article.year in d), None)
            if decade is None:
                outside += 1
                continue
            buffers[decade.label].append(article)
            counts[decade.label]["articles"] += 1
            counts[decade.label]["tokens"] += len(article.tokens)
            if len(buffers[decade.label]) >= batch_size:
                flush(decade.label)
        for label in buffers:
            flush(label)
    finally:
        for writer in writers.values():
            writer.close()
    return {
        "files": index.files,
        "decades": [{"decade": d.label, **counts[d.label]} for d in decades],
        "undated": undated,
        "outside_decades": outside,
        "deleted": index.deleted,
        "deletions_of_unknown_pmids": index.unknown_deletions,
        "replaced_versions": index.replaced,
        "book_articles": index.book_articles,
    }
