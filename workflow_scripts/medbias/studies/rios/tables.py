"""Rios et al. 2020's Table 1 (articles per decade), Table 3 (embedding quality), Figure 1 (WEAT),
Figure 2 (ECT) and Table 4 (RIPA) across the decades, as paper tables with the notes that say how each
number was computed (``medbias.studies.rios.analyses`` computes them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from medbias.io.tables import PaperTable
from medbias.studies.rios.analyses import (
    document_null_columns,
    ect_by_decade,
    ripa_by_decade,
    table4_wide,
    weat_by_decade,
    weat_trends,
)
from medbias.studies.rios.skipgram import chosen_setting

DIGITS = 4
TREND_NOTE = (
    "Slope: least-squares change per decade step of the seed-averaged mean difference (md) and effect "
    "size (d); slope_seed_sd: between-seed SD of the per-seed slopes; trend_p: exact two-sided "
    "permutation test of the decade labels on the seed-averaged values (all orderings), so seeds "
    "count as replicates within a decade, not as independent decades."
)
RIPA_NOTE = (
    "RIPA: dot product with the first principal component of the male-minus-female pair differences "
    "(uncentred, signed toward male); positive = male side."
)


@dataclass(frozen=True)
class DecadeVectors:
    """The decades' word vectors: every seed replicate of the decades with articles (``seeded``), the
    replicate-0 model of each (``vectors``), and the decades without articles (``empty``, left out)."""

    seeded: dict[str, list[Any]]
    vectors: dict[str, Any]
    empty: list[str]

    @property
    def empty_note(self) -> str:
        return f"Decades without articles (no model, left out): {', '.join(self.empty)}." if self.empty else ""


def decade_vectors(loaded: Mapping[str, Sequence[Any]]) -> DecadeVectors:
    """Split decade -> [replicate vectors] into the decades with a model and those without articles
    (whose model has an empty vocabulary)."""
    seeded = {d: list(kvs) for d, kvs in loaded.items() if len(kvs[0]) > 0}
    return DecadeVectors(seeded, {d: kvs[0] for d, kvs in seeded.items()}, [d for d in loaded if d not in seeded])


def rios_table(frame: pd.DataFrame, title: str, note: str, decades: DecadeVectors) -> PaperTable:
    """A rios table: four digits, its note, then the decades left out."""
    return PaperTable(frame, title, (note, decades.empty_note), digits=DIGITS)


def weat_note(
    *,
    alternative: str,
    budget: int,
    bootstrap: int,
    null_draws: int,
    replicates: int,
    document_null_draws: int = 0,
    document_null_sampled: Sequence[str] = (),
) -> str:
    """Figure 1's note: which replicate, the effect size, the three p-values and the intervals."""
    calibrated = (
        f"p_calibrated ({alternative}): the same test for random attribute sets A' and B' of the same "
        f"sizes, each word replaced by a random vocabulary word of its frequency bin (never a word of the "
        f"word-set file), {null_draws:,} draws, p=(k+1)/(N+1), on the projection of the male - female "
        f"centroid difference on the unit A - B direction (d saturates); it holds the male and female words' "
        f"shared component fixed, which the permutation test does not (that test is anti-conservative on "
        f"trained embeddings). calibrated_ci (d) and md_ci (mean difference): the test inverted under a shift "
        f"(the estimate minus the null's 2.5%/97.5% deviations from its centre; null_center: the projection's). "
        f"**significant: p_calibrated < 0.05** (the figure's filled markers)."
        if null_draws
        else "significant: classic p < 0.05 (no calibrated null configured)."
    )
    note = (
        f"Replicate 0 (the one model the paper trains) with the spread over {replicates} training seed replicate(s): "
        f"d_seed_mean/sd, md_seed_mean/sd, significant_seeds (every replicate's row: fig1_weat_seeds.csv). "
        f"Effect size: Caliskan's d with ddof=1 (it saturates near 2 for strong effects; mean_difference, "
        f"mean s(male) - mean s(female), does not); p_value: classic {alternative} permutation test over "
        f"re-partitions of the male and female words (exact when at most {budget:,} partitions, else {budget:,} "
        f"sampled without replacement, p=(k+1)/(N+1)); ci: {bootstrap} bootstrap replicates resampling words "
        f"within each set (conservative: it shrinks d towards 0). " + calibrated
    )
    if document_null_draws:
        note += (
            f" p_document ({alternative}): the document-level null, {document_null_draws} skip-gram models per "
            f"decade retrained (own seeds, replicate 0's setting) on the corpus with the male and female words "
            f"swapped in a random half of the articles; p=(k+1)/(K+1) on the mean difference (smallest "
            f"1/{document_null_draws + 1}); it keeps the words' document clustering and the seed's variance, "
            f"which both other tests leave out; md_document_null_mean/sd: the null's centre and spread; "
            f"every draw: document_null/<decade>.csv. The stars stay on p_calibrated."
        )
        if document_null_sampled:
            note += (
                f" In {', '.join(document_null_sampled)} the null's models trained on a sample of the decade's "
                f"articles (rios.document_null_tokens, min_count scaled to the sample), and the mean difference "
                f"they are compared with (md_document_observed) is the chosen setting's on the same sample "
                f"without swaps (draw -1 in the file), not replicate 0's."
            )
    return note


@dataclass(frozen=True)
class WeatTables:
    figure1: PaperTable  # replicate 0 per decade and test, with the seed spread
    seeds: pd.DataFrame  # every replicate's row
    trend: PaperTable  # the slope across decades and its permutation p
    coverage: PaperTable  # Table 2: the word sets' coverage per decade


def weat_tables(
    decades: DecadeVectors,
    wordsets: Mapping[str, Any],
    *,
    seed: int,
    budget: int,
    alternative: str,
    bootstrap: int,
    min_fraction: float,
    null_draws: int,
    document_null: pd.DataFrame | None = None,
    document_null_draws: int = 0,
) -> WeatTables:
    """Figure 1's WEAT per decade (every replicate), its trend and Table 2's coverage; with the
    document-level null's draws, its p beside the others."""
    table, seeds, coverage = weat_by_decade(
        decades.seeded,
        wordsets,
        seed=seed,
        budget=budget,
        alternative=alternative,
        n_bootstrap=bootstrap,
        min_fraction=min_fraction,
        null_draws=null_draws,
    )
    replicates = len(next(iter(decades.seeded.values())))
    with_document = document_null is not None
    if with_document:
        table = document_null_columns(table, document_null, alternative)
    sampled = (
        list(dict.fromkeys(document_null.loc[document_null["draw"] < 0, "decade"]))
        if with_document and "draw" in document_null
        else []
    )
    note = weat_note(
        alternative=alternative,
        budget=budget,
        bootstrap=bootstrap,
        null_draws=null_draws,
        replicates=replicates,
        document_null_draws=document_null_draws if with_document else 0,
        document_null_sampled=sampled,
    )
    return WeatTables(
        figure1=rios_table(table, "Figure 1 data: WEAT per decade and stereotype", note, decades),
        seeds=seeds,
        trend=rios_table(
            weat_trends(seeds, list(decades.seeded)), "Figure 1 trend: WEAT across decades", TREND_NOTE, decades
        ),
        coverage=rios_table(coverage, "Table 2 word sets: coverage per decade (WEAT)", "", decades),
    )


def ect_tables(
    decades: DecadeVectors, wordsets: Mapping[str, Any], *, seed: int, bootstrap: int, min_fraction: float
) -> tuple[PaperTable, PaperTable]:
    """Figure 2's ECT per decade (replicate 0) and its word sets' coverage."""
    table, coverage = ect_by_decade(
        decades.vectors, wordsets, seed=seed, n_bootstrap=bootstrap, min_fraction=min_fraction
    )
    note = (
        f"ECT: Spearman rho between the targets' cosine to the mean male and mean female vector (1 = no bias); "
        f"CI: {bootstrap} bootstrap replicates resampling targets and attribute words."
    )
    return (
        rios_table(table, "Figure 2 data: ECT per decade", note, decades),
        rios_table(coverage, "ECT word sets: coverage per decade", "", decades),
    )


@dataclass(frozen=True)
class RipaTables:
    top: PaperTable  # Table 4, long: the most male and most female words per decade and set
    wide: PaperTable  # Table 4 as printed
    pairs: PaperTable  # the gender pairs used per decade
    scores: pd.DataFrame  # every word's RIPA score


def ripa_tables(decades: DecadeVectors, wordsets: Mapping[str, Any], *, top: int, min_fraction: float) -> RipaTables:
    """Table 4's RIPA rankings per decade (replicate 0), as printed and in long form, and the pairs used."""
    scores, top_words, pairs = ripa_by_decade(decades.vectors, wordsets, top=top, min_fraction=min_fraction)
    return RipaTables(
        top=rios_table(
            top_words, f"Table 4: the {top} most male and most female words per decade (RIPA)", RIPA_NOTE, decades
        ),
        wide=rios_table(table4_wide(top_words), "Table 4 as printed (1960s = appendix A)", "", decades),
        pairs=rios_table(pairs, "RIPA gender pairs used per decade", "", decades),
        scores=scores,
    )


def load_decades(paths: Sequence[str], decades: Sequence[str], replicates: int = 1, log=None) -> DecadeVectors:
    """The decades' word2vec binaries, decade-major with ``replicates`` seed replicates each. The decades
    without articles are named in the log; none with articles stops the job with one line."""
    from medbias.io.word_vectors import load_word_vectors

    loaded = decade_vectors(
        {
            d: [load_word_vectors(path, "word2vec_binary") for path in paths[i * replicates : (i + 1) * replicates]]
            for i, d in enumerate(decades)
        }
    )
    if loaded.empty and log is not None:
        log.warning(loaded.empty_note)
    if not loaded.vectors:
        raise SystemExit("medbias: no decade has articles; nothing to measure (see table1_articles.md)")
    return loaded


def table1_articles(summary: Mapping[str, Any]) -> PaperTable:
    """Table 1: articles and tokens per decade with their total, from the decade corpora's summary
    (``medbias.io.pubmed.write_decade_corpora``); the note counts every article left out and why."""
    table = pd.DataFrame(summary["decades"]).rename(
        columns={"decade": "Year", "articles": "# Articles", "tokens": "# Tokens"}
    )
    total = {"Year": "Total", "# Articles": table["# Articles"].sum(), "# Tokens": table["# Tokens"].sum()}
    excluded = (
        f"Excluded: {summary['undated']} undated, {summary['outside_decades']} outside the decades, "
        f"{summary['deleted']} deleted (DeleteCitation), {summary['book_articles']} book articles; "
        f"{summary['replaced_versions']} superseded versions replaced by later ones; "
        f"{summary['deletions_of_unknown_pmids']} deletions of PMIDs not in these files."
    )
    return PaperTable(
        pd.concat([table, pd.DataFrame([total])], ignore_index=True), "Table 1: articles per decade", (excluded,)
    )


def table3_embedding_quality(searches: Sequence[Mapping[str, Any]], settings: Sequence[str] = ()) -> PaperTable:
    """Table 3: per decade, the UMNSRS similarity (Spearman rho) of the decade's model (the search's
    best candidate, or the chosen setting trained on the whole decade after a sample's search), the
    pairs it covers, and the search that chose its setting."""
    rows = []
    for search in searches:
        if search.get("empty"):
            rows.append({"Year": search["decade"], "Sim": float("nan"), "Pair Cnt": 0, "note": "no articles"})
            continue
        model, sample = search["final"], search["search_sample"]
        rows.append(
            {
                "Year": search["decade"],
                "Sim": model["rho"],
                "Pair Cnt": model["pairs_used"],
                "multi-word pairs": model["multiword_pairs_used"],
                "vocabulary": model["vocabulary"],
                "candidates tried": len(search["candidates"]),
                "searched on (tokens)": sample["tokens"],
                "decade tokens": sample["total_tokens"],
                **chosen_setting(search),
            }
        )
    title = "Table 3: embedding quality per decade (Spearman rho on UMNSRS similarity)"
    return PaperTable(pd.DataFrame(rows), title, tuple(settings), digits=4)
