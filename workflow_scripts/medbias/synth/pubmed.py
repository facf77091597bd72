"""Synthetic PubMed baseline files (``pubmedYYnNNNN.xml.gz``) spanning 1960-2020.

The XML follows the PubmedArticleSet DTD in the parts the ingest reads: PMID with Version,
ArticleTitle with inline markup, several AbstractText with Label, PubDate/Year or
PubDate/MedlineDate ('1998 Dec-1999 Jan'), a PubmedBookArticle, an update file that revises PMIDs
and one DeleteCitation.

Planted effect: every article is a 'male' or a
'female' article (its gender words come from one list), and for each planted target pair (A, B) an
article is an A-article with probability (1 + s) / 2 if male and (1 - s) / 2 if female, with s
falling by decade. Cell counts are exact (stratified), not coin flips. Control pairs are assigned
50/50 independently of gender. Deleted, undated and book articles come from a separate neutral pool,
so the stratified cells stay exact after the ingest removes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import numpy as np

from medbias.io.gzipped import gzip_text_writer

DECADES: tuple[tuple[int, int], ...] = (
    (1960, 1969),
    (1970, 1979),
    (1980, 1989),
    (1990, 1999),
    (2000, 2009),
    (2010, 2020),
)
MALE_WORDS = ("male", "man", "boy", "brother", "he", "him", "his", "son", "father", "uncle", "grandfather")
FEMALE_WORDS = ("female", "woman", "girl", "sister", "she", "her", "hers", "daughter", "mother", "aunt", "grandmother")


@dataclass(frozen=True)
class TargetPair:
    name: str
    a: tuple[str, ...]
    b: tuple[str, ...]
    strengths: tuple[float, ...]  # one per decade; all zero for a control


# stereotype strength per decade: fades to none; the weakest planted decade is as strong as a planted pair's
# calibrated WEAT star needs to clear its level by 3 SE (docs/demo-world.md, the rios study's stereotypes)
STRENGTHS = (0.9, 0.8, 0.7, 0.6, 0.5, 0.0)
LEAN_STRENGTH = 0.6  # occupations and mental-health words planted to lean male or female in every decade
MALE_OCCUPATIONS = ("mechanic", "surgeon", "investigator", "plumber", "colonel", "fisherman", "butler", "carpenter")
FEMALE_OCCUPATIONS = (
    "nanny",
    "receptionist",
    "housekeeper",
    "hairdresser",
    "ballerina",
    "librarian",
    "teacher",
    "counselor",
)
MALE_MENTAL = ("gambling", "cannabis", "nicotine", "caffeine", "alcoholic", "cocaine", "opioid", "pyromania")
FEMALE_MENTAL = (
    "anorexia",
    "bulimia",
    "hysteria",
    "dysmorphic",
    "munchausen",
    "somatization",
    "histrionic",
    "insomnia",
)


def control_pairs(wordsets: dict[str, Any]) -> tuple[TargetPair, ...]:
    """The word set file's control tests, planted with strength 0 in every decade."""
    return tuple(
        TargetPair(name, tuple(w.lower() for w in t["a"]), tuple(w.lower() for w in t["b"]), (0.0,) * len(DECADES))
        for name, t in wordsets.get("control_tests", {}).items()
    )


def planted_pairs(wordsets: dict[str, Any]) -> tuple[TargetPair, ...]:
    """The five stereotypes of Rios et al. Table 2 with fading strength, then the occupation and
    mental-health leans with constant strength (all lower-cased, as the corpora are)."""
    pairs = [
        TargetPair(name, tuple(w.lower() for w in t["a"]), tuple(w.lower() for w in t["b"]), STRENGTHS)
        for name, t in wordsets["weat_tests"].items()
    ]
    pairs.append(TargetPair("occupations_lean", MALE_OCCUPATIONS, FEMALE_OCCUPATIONS, (LEAN_STRENGTH,) * 6))
    pairs.append(TargetPair("mental_health_lean", MALE_MENTAL, FEMALE_MENTAL, (LEAN_STRENGTH,) * 6))
    return tuple(pairs)


FILLER = tuple(
    """
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
""".split()
)
MARKUP_TAGS = ("i", "sup", "b", "sub")
LABELS = ("BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
GENDER_RATE = 0.06
DOMAIN_RATE_PER_PAIR = 0.04  # each target pair gets the calibrated share of tokens
NEUTRAL_RATE = 0.04  # the other occupation and mental-health words, independent of gender
UMNSRS_RATE = 0.05  # UMNSRS slots (each writes three tokens; see build_vocabulary)
UMNSRS_PAIRS = 120
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


FILLER_WEIGHTS = _zipf_weights(len(FILLER))  # drawn for every filler token: computed once


@dataclass(frozen=True)
class Vocabulary:
    """What a document's tokens are drawn from besides its gender words and target sets."""

    neutral: tuple[str, ...]
    umnsrs_pairs: tuple[tuple[str, str], ...]
    umnsrs_share: np.ndarray  # per pair: probability that a term is written in the pair's shared context
    umnsrs_shared_context: tuple[str, ...]  # per pair
    umnsrs_own_context: dict[str, str]  # per term


def _document_tokens(
    rng: np.random.Generator,
    length: int,
    gender_words: tuple[str, ...] | None,
    domain_words: list[tuple[str, ...]],
    vocab: Vocabulary | None,
) -> list[str]:
    """A document of about ``length`` tokens with EXACT counts per kind: round(rate * length) gender
    words, the same number of target words from each pair's side, neutral words and UMNSRS slots, in
    random order, the rest Zipf filler. Exact counts (and equal length multisets for male and female
    articles) reduce chance imbalances between male and female articles where nothing is planted."""
    units: list[tuple[str, ...]] = []
    if gender_words is not None:
        units += [(gender_words[i],) for i in rng.integers(0, len(gender_words), round(GENDER_RATE * length))]
    for words in domain_words:
        units += [(words[i],) for i in rng.integers(0, len(words), round(DOMAIN_RATE_PER_PAIR * length))]
    if vocab is not None:
        units += [(vocab.neutral[i],) for i in rng.integers(0, len(vocab.neutral), round(NEUTRAL_RATE * length))]
        for k in rng.integers(0, len(vocab.umnsrs_pairs), round(UMNSRS_RATE * length)):
            a, b = vocab.umnsrs_pairs[k]
            term = a if rng.random() < 0.5 else b
            shared = rng.random() < vocab.umnsrs_share[k]
            context = vocab.umnsrs_shared_context[k] if shared else vocab.umnsrs_own_context[term]
            units.append((context, term, context))
    n_filler = max(0, length - len(units))
    units += [(FILLER[i],) for i in rng.choice(len(FILLER), size=n_filler, p=FILLER_WEIGHTS)]
    return [token for i in rng.permutation(len(units)) for token in units[i]]


def build_vocabulary(
    wordsets: dict[str, Any], umnsrs: list[tuple[str, str, float]], pairs: tuple[TargetPair, ...]
) -> Vocabulary:
    """Neutral words (every ECT word not in a planted set) and planted UMNSRS pairs.

    ``UMNSRS_PAIRS`` single-word pairs spanning the rating range are planted. At a UMNSRS slot one of
    them is drawn uniformly, one of its two terms is written as "c term c", and the context word c is
    the pair's shared context with probability rating/1600, else the term's own context. Terms of
    highly rated pairs thus share contexts (what makes skip-gram vectors similar) and cosine tracks the
    human rating (docs/demo-world.md has the correlation it gave). Context words are neutral ECT words
    (independent of gender).
    """
    planted = {w for p in pairs for w in p.a + p.b}
    neutral = sorted({w.lower() for ws in wordsets["ect_sets"].values() for w in ws if w.isalpha()} - planted)
    single = sorted(
        ((a.lower(), b.lower(), r) for a, b, r in umnsrs if a.isalpha() and b.isalpha()), key=lambda x: x[2]
    )
    chosen = [single[i] for i in np.unique(np.linspace(0, len(single) - 1, min(UMNSRS_PAIRS, len(single))).astype(int))]
    terms = sorted({t for a, b, _ in chosen for t in (a, b)})
    rng = np.random.default_rng(len(chosen))
    pool = list(rng.permutation(neutral))
    if len(pool) < len(terms) + len(chosen):
        raise ValueError("too few neutral words to give every UMNSRS term and pair a context")
    own = {t: str(pool.pop()) for t in terms}
    shared = tuple(str(pool.pop()) for _ in chosen)
    return Vocabulary(
        tuple(neutral), tuple((a, b) for a, b, _ in chosen), np.array([r / 1600 for *_, r in chosen]), shared, own
    )


def _split_article(tokens: list[str], rng: np.random.Generator) -> tuple[list[str], list[list[str]]]:
    n_title = min(len(tokens) // 4, int(rng.integers(6, 13)))
    title, body = tokens[:n_title], tokens[n_title:]
    n_sections = int(rng.integers(1, 4))
    cuts = sorted(rng.choice(np.arange(1, len(body)), n_sections - 1, replace=False).tolist()) if n_sections > 1 else []
    sections = [body[i:j] for i, j in zip([0] + cuts, cuts + [len(body)])]
    return title, sections


# long: one generator draws every decade's articles in a fixed order; moving a draw changes the world
def generate_articles(
    articles_per_decade: int, seed: int, wordsets: dict[str, Any], umnsrs: list[tuple[str, str, float]]
) -> tuple[list[Article], list[Article], dict[str, Any]]:
    """The planted articles of every decade and a neutral pool (for deletions and undated records).

    Returns (planted, neutral, truth).
    """
    rng = np.random.default_rng(seed)
    pairs = planted_pairs(wordsets)
    controls = control_pairs(wordsets)
    vocab = build_vocabulary(wordsets, umnsrs, pairs + controls)
    planted: list[Article] = []
    truth_decades = []
    pmid = 1000
    for d, (start, end) in enumerate(DECADES):
        n = articles_per_decade
        male = np.zeros(n, dtype=bool)
        male[rng.choice(n, n // 2, replace=False)] = True
        sides = {p.name: _stratified_sides(n, male, p.strengths[d], rng) for p in pairs + controls}
        cells = {}
        for p in pairs + controls:
            s = sides[p.name]
            cells[p.name] = {
                "male_a": int((male & s).sum()),
                "male_b": int((male & ~s).sum()),
                "female_a": int((~male & s).sum()),
                "female_b": int((~male & ~s).sum()),
                "strength": p.strengths[d],
            }
        # male and female articles get the same multiset of lengths
        half = rng.integers(50, 151, size=n - n // 2)
        lengths = np.empty(n, dtype=int)
        lengths[np.flatnonzero(male)] = half[: male.sum()]
        lengths[np.flatnonzero(~male)] = half[: (~male).sum()]
        for k in range(n):
            domains = [p.a if sides[p.name][k] else p.b for p in pairs + controls]
            tokens = _document_tokens(rng, int(lengths[k]), MALE_WORDS if male[k] else FEMALE_WORDS, domains, vocab)
            title, sections = _split_article(tokens, rng)
            year = int(rng.integers(start, end + 1))
            medline = None
            if rng.random() < 0.1:  # dated by MedlineDate only
                medline = f"{year} {MONTHS[rng.integers(12)]}-{year + 1} {MONTHS[rng.integers(12)]}"
                if year == end:
                    medline = f"{year} {MONTHS[rng.integers(6)]}-{MONTHS[6 + rng.integers(6)]}"
            planted.append(Article(pmid, year if medline is None else None, medline, title, sections))
            pmid += 1
        truth_decades.append(
            {
                "decade": f"{start}-{end}",
                "start": start,
                "end": end,
                "articles": n,
                "male_articles": int(male.sum()),
                "cells": cells,
            }
        )
    neutral = []
    for _ in range(max(6, articles_per_decade // 50)):
        tokens = _document_tokens(rng, int(rng.integers(50, 151)), None, [], None)
        title, sections = _split_article(tokens, rng)
        neutral.append(Article(pmid, int(rng.integers(1960, 2021)), None, title, sections))
        pmid += 1
    truth = {
        "decades": truth_decades,
        "male_words": list(MALE_WORDS),
        "female_words": list(FEMALE_WORDS),
        "planted_pairs": [
            {
                "name": p.name,
                "a": list(p.a),
                "b": list(p.b),
                "strengths": list(p.strengths),
                "expected": "male words closer to A; strength falls by decade; null in the last decade",
            }
            for p in pairs
        ],
        "control_pairs": [
            {"name": p.name, "a": list(p.a), "b": list(p.b), "expected": "no association"} for p in controls
        ],
        "lean_words": {
            "occupations": {
                "male": list(MALE_OCCUPATIONS),
                "female": list(FEMALE_OCCUPATIONS),
                "strength": LEAN_STRENGTH,
            },
            "mental_health": {"male": list(MALE_MENTAL), "female": list(FEMALE_MENTAL), "strength": LEAN_STRENGTH},
            "expected": "RIPA: male words on the male side, female words on the female side, every decade",
        },
        "neutral_words": len(vocab.neutral),
        "umnsrs": {
            "planted_pairs": len(vocab.umnsrs_pairs),
            "terms": len(vocab.umnsrs_own_context),
            "expected": "positive Spearman rho between cosine and rating",
        },
        "recipe": {
            "gender_rate": GENDER_RATE,
            "domain_rate_per_pair": DOMAIN_RATE_PER_PAIR,
            "neutral_rate": NEUTRAL_RATE,
            "umnsrs_rate": UMNSRS_RATE,
            "tokens_per_article": [50, 150],
        },
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


def article_xml(
    article: Article, rng: np.random.Generator, version: int = 1, extra_tokens: tuple[str, ...] = ()
) -> str:
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
        "<PubmedData><PublicationStatus>ppublish</PublicationStatus></PubmedData></PubmedArticle>\n"
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
    out_dir: str | Path,
    articles_per_decade: int,
    n_files: int,
    seed: int,
    wordsets: dict[str, Any],
    umnsrs: list[tuple[str, str, float]],
    year_prefix: str = "26",
) -> tuple[list[Path], dict[str, Any], list[str]]:
    """Write ``n_files`` baseline files plus one update file; return (paths, truth, final texts).

    The update file re-issues 1% of the planted articles with the word 'corrigendum' appended (the
    ingest must keep only the later version) and deletes the neutral pool's first third with
    DeleteCitation. The neutral pool's second third is undated. Final texts (one article per entry,
    after revisions and deletions, book and undated articles excluded) feed the demo's tiny models.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    planted, neutral, truth = generate_articles(articles_per_decade, seed, wordsets, umnsrs)
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
        with gzip_text_writer(path) as handle:
            handle.write(HEADER)
            if f == 1:
                handle.write(book_xml(book_pmid))
            for idx in chunk:
                handle.write(article_xml(baseline[idx], rng))
            handle.write("</PubmedArticleSet>\n")
        paths.append(path)
    revised = [planted[i] for i in sorted(rng.choice(len(planted), max(1, len(planted) // 100), replace=False))]
    path = out_dir / f"pubmed{year_prefix}n{n_files + 1:04d}.xml.gz"
    with gzip_text_writer(path) as handle:
        handle.write(HEADER)
        for a in revised:
            handle.write(article_xml(a, rng, version=1, extra_tokens=(REVISED_MARKER,)))
        handle.write(
            "<DeleteCitation>"
            + "".join(f'<PMID Version="1">{a.pmid}</PMID>' for a in deleted)
            + "</DeleteCitation>\n</PubmedArticleSet>\n"
        )
    paths.append(path)
    revised_ids = {a.pmid for a in revised}
    texts = []
    for a in planted + kept_neutral:
        tokens = a.title + [t for s in a.sections for t in s] + ([REVISED_MARKER] if a.pmid in revised_ids else [])
        texts.append(" ".join(tokens))
    truth.update(
        {
            "files": [p.name for p in paths],
            "book_articles": [book_pmid],
            "revised_pmids": sorted(revised_ids),
            "revised_marker": REVISED_MARKER,
            "deleted_pmids": [a.pmid for a in deleted],
            "undated_pmids": [a.pmid for a in undated],
            "neutral_dated_pmids": [a.pmid for a in kept_neutral],
            "articles_after_ingest": len(planted) + len(kept_neutral),
        }
    )
    return paths, truth, texts
