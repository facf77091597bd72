"""Synthetic PubMed baseline files (``pubmedYYnNNNN.xml.gz``) spanning 1960-2020.

The XML follows the PubmedArticleSet DTD in the parts the ingest reads: PMID with Version,
ArticleTitle with inline markup, several AbstractText with Label, PubDate/Year or
PubDate/MedlineDate ('1998 Dec-1999 Jan'), a PubmedBookArticle, an update file that revises PMIDs
and one DeleteCitation.

Planted effect (calibrated in shared/notes/demo-calibration.md): every article is a 'male' or a
'female' article (its gender words come from one list), and for each planted target pair (A, B) an
article is an A-article with probability (1 + s) / 2 if male and (1 - s) / 2 if female, with s
falling by decade. Cell counts are exact (stratified), not coin flips. Control pairs are assigned
50/50 independently of gender. Deleted, undated and book articles come from a separate neutral pool,
so the stratified cells stay exact after the ingest removes them.
"""

from __future__ import annotations

import gzip
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

DECADES: tuple[tuple[int, int], ...] = (
    (1960, 1969), (1970, 1979), (1980, 1989), (1990, 1999), (2000, 2009), (2010, 2020),
)
MALE_WORDS = ("male", "man", "boy", "brother", "he", "him", "his", "son", "father", "uncle", "grandfather")
FEMALE_WORDS = ("female", "woman", "girl", "sister", "she", "her", "hers", "daughter", "mother", "aunt", "grandmother")


@dataclass(frozen=True)
class TargetPair:
    name: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    strengths: tuple[float, ...]  # one per decade; all zero for a control


PLANTED_PAIRS: tuple[TargetPair, ...] = (
    TargetPair(
        "career_family",
        ("executive", "management", "professional", "corporation", "salary", "office", "business", "career"),
        ("home", "parents", "children", "family", "cousins", "marriage", "wedding", "relatives"),
        (0.5, 0.4, 0.3, 0.2, 0.1, 0.0),
    ),
)
CONTROL_PAIRS: tuple[TargetPair, ...] = (
    TargetPair(
        "instruments_weapons",
        ("bagpipe", "cello", "guitar", "lute", "trombone", "banjo", "clarinet", "harmonica"),
        ("arrow", "club", "gun", "missile", "spear", "axe", "dagger", "harpoon"),
        (0.0,) * 6,
    ),
)

FILLER = tuple("""
patients study results treatment clinical disease cells effect analysis levels group data
therapy risk response protein expression blood cancer increased associated compared activity
significant method model function cases development factors human specific years potential
role gene tissue using observed changes high acute chronic control serum rate evidence trial
outcome mortality infection receptor dose mice rats plasma liver kidney brain heart lung tumor
surgery diagnosis clinical imaging children adults population cohort incidence prevalence
samples measured performed following induced reduced normal age weeks months days mechanism
pathway inhibition binding structure membrane enzyme antibody virus bacteria strain culture
growth injury pain pressure flow volume weight body muscle bone skin cardiac renal hepatic
pulmonary neural vascular immune inflammatory metabolic clinical therapeutic surgical
randomized prospective retrospective multivariate regression logistic survival hazard ratio
confidence interval median mean deviation sensitivity specificity accuracy detection screening
""".split())
MARKUP_TAGS = ("i", "sup", "b", "sub")
LABELS = ("BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
GENDER_RATE = 0.06
DOMAIN_RATE = 0.06
REVISED_MARKER = "corrigendum"  # appears only in revised versions, so the ingest's replacement is testable


@dataclass
class Article:
    pmid: int
    year: int | None
    medline_date: str | None
    title: list[str]
    sections: list[list[str]]


def _stratified_sides(n_docs: int, male: np.ndarray, strength: float, rng: np.random.Generator) -> np.ndarray:
    """True = A-article; exactly round(n_male (1+s)/2) male and round(n_female (1-s)/2) female A-articles."""
    sides = np.zeros(n_docs, dtype=bool)
    for is_male, share in ((True, (1 + strength) / 2), (False, (1 - strength) / 2)):
        idx = np.flatnonzero(male == is_male)
        sides[rng.choice(idx, round(share * len(idx)), replace=False)] = True
    return sides


def _zipf_weights(n: int) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1)
    return w / w.sum()


def _document_tokens(
    rng: np.random.Generator, gender_words: tuple[str, ...] | None, domain_words: list[tuple[str, ...]]
) -> list[str]:
    length = int(rng.integers(50, 151))
    u = rng.random(length)
    filler = rng.choice(len(FILLER), size=length, p=_zipf_weights(len(FILLER)))
    pick = rng.integers(0, 1 << 30, size=(length, 2))
    tokens = []
    for i in range(length):
        if gender_words is not None and u[i] < GENDER_RATE:
            tokens.append(gender_words[pick[i, 0] % len(gender_words)])
        elif domain_words and u[i] < GENDER_RATE + DOMAIN_RATE:
            words = domain_words[pick[i, 0] % len(domain_words)]
            tokens.append(words[pick[i, 1] % len(words)])
        else:
            tokens.append(FILLER[filler[i]])
    return tokens


def _split_article(tokens: list[str], rng: np.random.Generator) -> tuple[list[str], list[list[str]]]:
    n_title = min(len(tokens) // 4, int(rng.integers(6, 13)))
    title, body = tokens[:n_title], tokens[n_title:]
    n_sections = int(rng.integers(1, 4))
    cuts = sorted(rng.choice(np.arange(1, len(body)), n_sections - 1, replace=False).tolist()) if n_sections > 1 else []
    sections = [body[i:j] for i, j in zip([0] + cuts, cuts + [len(body)])]
    return title, sections


def generate_articles(articles_per_decade: int, seed: int) -> tuple[list[Article], list[Article], dict[str, Any]]:
    """The planted articles of every decade and a neutral pool (for deletions and undated records).

    Returns (planted, neutral, truth).
    """
    rng = np.random.default_rng(seed)
    planted: list[Article] = []
    truth_decades = []
    pmid = 1000
    for d, (start, end) in enumerate(DECADES):
        n = articles_per_decade
        male = np.zeros(n, dtype=bool)
        male[rng.choice(n, n // 2, replace=False)] = True
        sides = {p.name: _stratified_sides(n, male, p.strengths[d], rng) for p in PLANTED_PAIRS + CONTROL_PAIRS}
        cells = {}
        for p in PLANTED_PAIRS + CONTROL_PAIRS:
            s = sides[p.name]
            cells[p.name] = {
                "male_a": int((male & s).sum()), "male_b": int((male & ~s).sum()),
                "female_a": int((~male & s).sum()), "female_b": int((~male & ~s).sum()),
                "strength": p.strengths[d],
            }
        for k in range(n):
            domains = [p.a if sides[p.name][k] else p.b for p in PLANTED_PAIRS + CONTROL_PAIRS]
            tokens = _document_tokens(rng, MALE_WORDS if male[k] else FEMALE_WORDS, domains)
            title, sections = _split_article(tokens, rng)
            year = int(rng.integers(start, end + 1))
            medline = None
            if rng.random() < 0.1:  # dated by MedlineDate only
                medline = f"{year} {MONTHS[rng.integers(12)]}-{year + 1} {MONTHS[rng.integers(12)]}"
                if year == end:
                    medline = f"{year} {MONTHS[rng.integers(6)]}-{MONTHS[6 + rng.integers(6)]}"
            planted.append(Article(pmid, year if medline is None else None, medline, title, sections))
            pmid += 1
        truth_decades.append({"decade": f"{start}-{end}", "start": start, "end": end, "articles": n,
                              "male_articles": int(male.sum()), "cells": cells})
    neutral = []
    for _ in range(max(6, articles_per_decade // 50)):
        tokens = _document_tokens(rng, None, [])
        title, sections = _split_article(tokens, rng)
        neutral.append(Article(pmid, int(rng.integers(1960, 2021)), None, title, sections))
        pmid += 1
    truth = {
        "decades": truth_decades,
        "male_words": list(MALE_WORDS),
        "female_words": list(FEMALE_WORDS),
        "planted_pairs": [{"name": p.name, "a": list(p.a), "b": list(p.b), "strengths": list(p.strengths),
                           "expected": "male words closer to A; strength falls by decade; null in the last decade"}
                          for p in PLANTED_PAIRS],
        "control_pairs": [{"name": p.name, "a": list(p.a), "b": list(p.b), "expected": "no association"}
                          for p in CONTROL_PAIRS],
        "recipe": {"gender_rate": GENDER_RATE, "domain_rate": DOMAIN_RATE, "tokens_per_article": [50, 150]},
    }
    return planted, neutral, truth


def _marked_up(tokens: list[str], rng: np.random.Generator) -> str:
    """Tokens joined into text, with inline markup around some filler words and sentence breaks."""
    parts = []
    for i, token in enumerate(tokens):
        text = escape(token)
        if token in FILLER and rng.random() < 0.03:
            tag = MARKUP_TAGS[rng.integers(len(MARKUP_TAGS))]
            text = f"<{tag}>{text}</{tag}>"
        parts.append(text + ("." if i % 12 == 11 else ""))
    return " ".join(parts)


def article_xml(article: Article, rng: np.random.Generator, version: int = 1, extra_tokens: tuple[str, ...] = ()) -> str:
    """One PubmedArticle element as text."""
    if article.medline_date is not None:
        pub_date = f"<MedlineDate>{escape(article.medline_date)}</MedlineDate>"
    elif article.year is not None:
        pub_date = f"<Year>{article.year}</Year><Month>{MONTHS[rng.integers(12)]}</Month>"
    else:
        pub_date = "<MedlineDate>Spring-Summer</MedlineDate>"
    sections = [list(s) for s in article.sections]
    sections[-1] = sections[-1] + list(extra_tokens)
    if len(sections) == 1:
        abstract = f"<AbstractText>{_marked_up(sections[0], rng)}</AbstractText>"
    else:
        abstract = "".join(
            f'<AbstractText Label="{LABELS[i % 4]}" NlmCategory="{LABELS[i % 4]}">{_marked_up(s, rng)}</AbstractText>'
            for i, s in enumerate(sections)
        )
    return (
        '<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="{version}">{article.pmid}</PMID>'
        '<Article PubModel="Print"><Journal><JournalIssue CitedMedium="Print">'
        f"<PubDate>{pub_date}</PubDate></JournalIssue><Title>Journal of Synthetic Medicine</Title></Journal>"
        f"<ArticleTitle>{_marked_up(article.title, rng)}</ArticleTitle>"
        f"<Abstract>{abstract}</Abstract><Language>eng</Language></Article></MedlineCitation>"
        '<PubmedData><PublicationStatus>ppublish</PublicationStatus></PubmedData></PubmedArticle>\n'
    )


def book_xml(pmid: int) -> str:
    return (
        "<PubmedBookArticle><BookDocument>"
        f'<PMID Version="1">{pmid}</PMID><Book><BookTitle>Synthetic Handbook</BookTitle>'
        "<PubDate><Year>2005</Year></PubDate></Book>"
        "<Abstract><AbstractText>book chapter text that is not an article</AbstractText></Abstract>"
        "</BookDocument></PubmedBookArticle>\n"
    )


HEADER = (
    '<?xml version="1.0" encoding="utf-8"?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n<PubmedArticleSet>\n'
)


def write_pubmed(
    out_dir: str | Path, articles_per_decade: int, n_files: int, seed: int, year_prefix: str = "26"
) -> tuple[list[Path], dict[str, Any], list[str]]:
    """Write ``n_files`` baseline files plus one update file; return (paths, truth, final texts).

    The update file re-issues 1% of the planted articles with the word 'corrigendum' appended (the
    ingest must keep only the later version) and deletes the neutral pool's first third with
    DeleteCitation. The neutral pool's second third is undated. Final texts (one article per entry,
    after revisions and deletions, book and undated articles excluded) feed the demo's tiny models.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    planted, neutral, truth = generate_articles(articles_per_decade, seed)
    rng = np.random.default_rng(seed + 1)
    k = len(neutral) // 3
    deleted, undated, kept_neutral = neutral[:k], neutral[k : 2 * k], neutral[2 * k :]
    for a in undated:
        a.year, a.medline_date = None, None
    baseline = planted + neutral
    order = rng.permutation(len(baseline))
    chunks = np.array_split(order, n_files)
    paths = []
    book_pmid = 999
    for f, chunk in enumerate(chunks, start=1):
        path = out_dir / f"pubmed{year_prefix}n{f:04d}.xml.gz"
        with _open_gz(path) as handle:
            handle.write(HEADER)
            if f == 1:
                handle.write(book_xml(book_pmid))
            for idx in chunk:
                handle.write(article_xml(baseline[idx], rng))
            handle.write("</PubmedArticleSet>\n")
        paths.append(path)
    revised = [planted[i] for i in sorted(rng.choice(len(planted), max(1, len(planted) // 100), replace=False))]
    path = out_dir / f"pubmed{year_prefix}n{n_files + 1:04d}.xml.gz"
    with _open_gz(path) as handle:
        handle.write(HEADER)
        for a in revised:
            handle.write(article_xml(a, rng, version=1, extra_tokens=(REVISED_MARKER,)))
        handle.write("<DeleteCitation>" + "".join(f'<PMID Version="1">{a.pmid}</PMID>' for a in deleted)
                     + "</DeleteCitation>\n</PubmedArticleSet>\n")
    paths.append(path)
    revised_ids = {a.pmid for a in revised}
    texts = []
    for a in planted + kept_neutral:
        tokens = a.title + [t for s in a.sections for t in s] + ([REVISED_MARKER] if a.pmid in revised_ids else [])
        texts.append(" ".join(tokens))
    truth.update({
        "files": [p.name for p in paths],
        "book_articles": [book_pmid],
        "revised_pmids": sorted(revised_ids),
        "revised_marker": REVISED_MARKER,
        "deleted_pmids": [a.pmid for a in deleted],
        "undated_pmids": [a.pmid for a in undated],
        "neutral_dated_pmids": [a.pmid for a in kept_neutral],
        "articles_after_ingest": len(planted) + len(kept_neutral),
    })
    return paths, truth, texts


def _open_gz(path: Path) -> io.TextIOWrapper:
    """A text handle writing gzip with a zero timestamp, so that the same seed gives the same bytes."""
    return io.TextIOWrapper(gzip.GzipFile(path, "wb", compresslevel=6, mtime=0), encoding="utf-8")
