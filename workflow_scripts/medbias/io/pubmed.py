"""PubMed baseline ingest as map and reduce: each ``pubmed*.xml(.gz)`` file is parsed on its own into a
Parquet table of its records (``parse_file``, one job per file), then one reduce resolves versions and
deletions across the files in file order and writes the per-decade token corpora
(``write_decade_corpora``).

Rules (Rios et al. 2020, section 3, and the PubMed distribution's own semantics):
- files are read in name order; a later version of a PMID replaces the earlier one, and a
  DeleteCitation removes the PMID as of that point (a later re-issue brings it back);
- PubmedBookArticle records are skipped and counted;
- text = ArticleTitle + every AbstractText, inline markup kept as text (``itertext``);
- year = PubDate/Year, else the first four digits of PubDate/MedlineDate, else the article is
  counted as undated and excluded;
- text is lower-cased and tokenised with gensim's simple tokenizer (``gensim.utils.tokenize``).

Memory is flat in file size: the map streams its file with ``iterparse`` (every top-level record
cleared after use) and writes its rows in batches; the reduce first reads only the record kinds and
PMIDs of every parsed file (16 bytes per article version) to find each PMID's final version, then
streams the kept articles into the decades in file order, exactly as the single-process ingest did
(its outputs are byte-identical).
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
        if cur.start < prev.start:
            raise MedbiasInputError(
                f"config key 'rios.decades': {cur.label} is listed after {prev.label}; "
                "list the decades from the earliest to the latest"
            )
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


def _pmid(text: str | None, path: Path) -> int:
    """An article's PMID as an integer; a missing or non-integer PMID stops with one line."""
    if text is None or not text.strip().isdigit():
        raise MedbiasInputError(
            f"{path}: a PubmedArticle has {'no PMID' if text is None else f'PMID {text!r}'} "
            "(expected MedlineCitation/PMID to hold an integer)"
        )
    return int(text)


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
                    pmid = _pmid(element.findtext("MedlineCitation/PMID"), path)
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


# the record kinds of a parsed file's ``event`` column
ARTICLE, DELETE, BOOK = 0, 1, 2


def tokenize(text: str) -> list[str]:
    """Lower-cased alphabetic tokens (gensim's simple tokenizer), as Rios et al."""
    from gensim.utils import tokenize as gensim_tokenize

    return list(gensim_tokenize(text, lower=True))


def _parsed_schema():
    import pyarrow as pa

    return pa.schema(
        [
            ("event", pa.int8()),
            ("pmid", pa.int64()),
            ("year", pa.int32()),
            ("n_tokens", pa.int32()),
            ("tokens", pa.string()),
        ]
    )


def parse_file(path: str | Path, output: str | Path, batch_size: int = 5000) -> dict[str, object]:
    """Map step: one PubMed file's records, in file order, as Parquet rows (event: ARTICLE, DELETE or
    BOOK; pmid; and for an article its year (null when undated), token count and space-joined tokens).
    A DeleteCitation gives one DELETE row per PMID. Rows are written ``batch_size`` at a time, so memory
    does not grow with the file. Returns the file's counts (for the log)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _parsed_schema().with_metadata({"source": Path(path).name})
    counts = {"file": Path(path).name, "articles": 0, "deleted_pmids": 0, "book_articles": 0}
    columns: dict[str, list] = {name: [] for name in schema.names}

    def add(event: int, pmid: int, year: int | None = None, tokens: list[str] | None = None) -> None:
        columns["event"].append(event)
        columns["pmid"].append(pmid)
        columns["year"].append(year)
        columns["n_tokens"].append(None if tokens is None else len(tokens))
        columns["tokens"].append(None if tokens is None else " ".join(tokens))

    def flush(writer) -> None:
        if columns["event"]:
            writer.write_table(pa.table(columns, schema=schema))
            for values in columns.values():
                values.clear()

    with pq.ParquetWriter(str(output), schema) as writer:
        for kind, value in iter_records(path):
            if kind == "article":
                add(ARTICLE, value.pmid, value.year, tokenize(value.text))  # type: ignore[union-attr]
                counts["articles"] += 1
            elif kind == "delete":
                add(DELETE, int(value))  # type: ignore[arg-type]
                counts["deleted_pmids"] += 1
            else:
                add(BOOK, int(value))  # type: ignore[arg-type]
                counts["book_articles"] += 1
            if len(columns["event"]) >= batch_size:
                flush(writer)
        flush(writer)
    return counts


def parsed_source(parsed: str | Path) -> str:
    """The name of the PubMed file a parsed table came from."""
    import pyarrow.parquet as pq

    return pq.read_schema(str(parsed)).metadata[b"source"].decode()


@dataclass(frozen=True)
class FileRecords:
    """One file's records as the version index needs them: the PMIDs of its articles in order, each
    deletion as (pmid, number of the file's articles before it), and its book-article count."""

    article_pmids: np.ndarray
    deletions: list[tuple[int, int]]
    book_articles: int


def parsed_file_records(parsed: str | Path) -> FileRecords:
    """FileRecords of a parsed file, reading only its event and pmid columns."""
    import pyarrow.parquet as pq

    table = pq.read_table(str(parsed), columns=["event", "pmid"])
    events = table.column("event").to_numpy()
    pmids = table.column("pmid").to_numpy()
    is_article = events == ARTICLE
    articles_before = np.cumsum(is_article) - is_article  # articles that precede each row
    deletions = [
        (int(pmid), int(before)) for pmid, before in zip(pmids[events == DELETE], articles_before[events == DELETE])
    ]
    return FileRecords(pmids[is_article].astype(np.int64), deletions, int((events == BOOK).sum()))


def xml_file_records(path: str | Path) -> FileRecords:
    """FileRecords of a PubMed XML file, streamed."""
    pmids: list[int] = []
    deletions: list[tuple[int, int]] = []
    books = 0
    for kind, value in iter_records(path):
        if kind == "article":
            pmids.append(value.pmid)  # type: ignore[union-attr]
        elif kind == "delete":
            deletions.append((int(value), len(pmids)))  # type: ignore[arg-type]
        else:
            books += 1
    return FileRecords(np.asarray(pmids, dtype=np.int64), deletions, books)


@dataclass
class VersionIndex:
    """Where the final version of every live PMID is: one keep-mask per file over its articles."""

    keep: list[np.ndarray]
    book_articles: int = 0
    deleted: int = 0  # PMIDs removed by DeleteCitation (and not re-issued later)
    replaced: int = 0  # article versions superseded by a later version
    unknown_deletions: int = 0  # DeleteCitation PMIDs never seen in these files
    files: list[str] = field(default_factory=list)


def index_records(records: Sequence[FileRecords], names: Sequence[str]) -> VersionIndex:
    """Find the final version of each PMID across the files (``records`` in file order), applying each
    deletion at its place: it removes the version current at that point, and a later version re-issues
    the PMID."""
    sizes = [len(r.article_pmids) for r in records]
    all_pmids = np.concatenate([r.article_pmids for r in records]) if records else np.zeros(0, np.int64)
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
    deletions = [(pmid, f, position) for f, r in enumerate(records) for pmid, position in r.deletions]
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
    return VersionIndex(keep, sum(r.book_articles for r in records), deleted, replaced, unknown, list(names))


def index_versions(paths: Sequence[str | Path]) -> VersionIndex:
    """The version index of PubMed XML files, in the order given."""
    return index_records([xml_file_records(p) for p in paths], [Path(p).name for p in paths])


@dataclass(frozen=True)
class FinalArticle:
    pmid: int
    year: int | None
    n_tokens: int
    tokens: str  # space-joined


def iter_final_articles(
    parsed: Sequence[str | Path], index: VersionIndex, batch_size: int = 10000
) -> Iterator[FinalArticle]:
    """The final version of each live article of the parsed files, in file order, read in batches."""
    import pyarrow.parquet as pq

    for f, path in enumerate(parsed):
        position = 0
        for batch in pq.ParquetFile(str(path)).iter_batches(batch_size=batch_size):
            rows = batch.to_pydict()
            for event, pmid, year, n_tokens, tokens in zip(
                rows["event"], rows["pmid"], rows["year"], rows["n_tokens"], rows["tokens"]
            ):
                if event != ARTICLE:
                    continue
                if index.keep[f][position]:
                    yield FinalArticle(pmid, year, n_tokens, tokens)
                position += 1


def write_decade_corpora(
    parsed: Sequence[str | Path], decades: Sequence[Decade], outputs: dict[str, str | Path], batch_size: int = 1000
) -> dict[str, object]:
    """Reduce step: the parsed files (``parse_file``'s tables, in any order: they are taken in the
    name order of their source files) into one Parquet file per decade (columns pmid, year, n_tokens,
    tokens as a space-joined string) and the counts behind Table 1 (nothing excluded goes uncounted)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tqdm import tqdm

    sources = {str(p): parsed_source(p) for p in parsed}
    parsed = sorted(parsed, key=lambda p: sources[str(p)])
    index = index_records([parsed_file_records(p) for p in parsed], [sources[str(p)] for p in parsed])
    schema = pa.schema([("pmid", pa.int64()), ("year", pa.int32()), ("n_tokens", pa.int32()), ("tokens", pa.string())])
    writers = {d.label: pq.ParquetWriter(str(outputs[d.label]), schema) for d in decades}
    buffers: dict[str, list[FinalArticle]] = {d.label: [] for d in decades}
    counts = {d.label: {"articles": 0, "tokens": 0} for d in decades}
    undated = outside = 0

    def flush(label: str) -> None:
        rows = buffers[label]
        if rows:
            writers[label].write_table(
                pa.table(
                    {
                        "pmid": [r.pmid for r in rows],
                        "year": [r.year for r in rows],
                        "n_tokens": [r.n_tokens for r in rows],
                        "tokens": [r.tokens for r in rows],
                    },
                    schema=schema,
                )
            )
            rows.clear()

    try:
        for article in tqdm(iter_final_articles(parsed, index), desc="articles", mininterval=10):
            if article.year is None:
                undated += 1
                continue
            decade = next((d for d in decades if article.year in d), None)
            if decade is None:
                outside += 1
                continue
            buffers[decade.label].append(article)
            counts[decade.label]["articles"] += 1
            counts[decade.label]["tokens"] += article.n_tokens
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


def ingest_files(
    paths: Sequence[str | Path], decades: Sequence[Decade], outputs: dict[str, str | Path], workdir: str | Path
) -> dict[str, object]:
    """Map then reduce in one process: each XML file parsed into ``workdir``, then the decade corpora
    (what the workflow's jobs do, for tests and benchmarks)."""
    parsed = []
    for path in paths:
        target = Path(workdir) / f"{Path(path).name}.parquet"
        parse_file(path, target)
        parsed.append(target)
    return write_decade_corpora(parsed, decades, outputs)
