"""Rule script (rios): WEAT (Figure 1), ECT (Figure 2) or RIPA (Table 4) across all decades."""

import pandas as pd

from medbias.embeddings import load_word_vectors
from medbias.logs import setup_rule_logging
from medbias.plots import plot_ect_by_decade, plot_weat_by_decade
from medbias.resources import read_wordsets
from medbias.rios import (
    document_null_columns,
    ect_by_decade,
    ripa_by_decade,
    table4_wide,
    weat_by_decade,
    weat_trends,
)
from medbias.tables import write_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
wordsets = read_wordsets(snakemake.input.wordsets)
paths = list(snakemake.input.vectors)
replicates = getattr(p, "replicates", 1)  # WEAT reads every seed replicate, decade-major; ECT and RIPA replicate 0
loaded = {d: [load_word_vectors(path, "word2vec_binary") for path in paths[i * replicates:(i + 1) * replicates]]
          for i, d in enumerate(p.decades)}
seeded = {d: kvs for d, kvs in loaded.items() if len(kvs[0]) > 0}
vectors = {d: kvs[0] for d, kvs in seeded.items()}
empty = [d for d in loaded if d not in vectors]
EMPTY_NOTE = f"Decades without articles (no model, left out): {', '.join(empty)}." if empty else ""
if empty:
    log.warning(EMPTY_NOTE)
if not vectors:
    raise SystemExit("medbias: no decade has articles; nothing to measure (see table1_articles.md)")
out = snakemake.output


def write_rios_table(frame: pd.DataFrame, csv: str, md: str, title: str, note: str = "") -> None:
    write_table(frame, csv, md, title, (note, EMPTY_NOTE), digits=4)


if p.analysis == "weat":
    table, seeds, coverage = weat_by_decade(seeded, wordsets, seed=p.seed, budget=p.budget, alternative=p.alternative,
                                            n_bootstrap=p.bootstrap, min_fraction=p.min_fraction, null_draws=p.null_draws)
    calibrated = (f"p_calibrated ({p.alternative}): the same test for random attribute sets A' and B' of the same "
                  f"sizes, each word replaced by a random vocabulary word of its frequency bin (never a word of the "
                  f"word-set file), {p.null_draws:,} draws, p=(k+1)/(N+1), on the projection of the male - female "
                  f"centroid difference on the unit A - B direction (d saturates); it holds the male and female words' "
                  f"shared component fixed, which the permutation test does not (that test is anti-conservative on "
                  f"trained embeddings). calibrated_ci (d) and md_ci (mean difference): the test inverted under a shift "
                  f"(the estimate minus the null's 2.5%/97.5% deviations from its centre; null_center: the projection's). "
                  f"**significant: p_calibrated < 0.05** (the figure's filled markers)."
                  if p.null_draws else "significant: classic p < 0.05 (no calibrated null configured).")
    note = (f"Replicate 0 (the one model the paper trains) with the spread over {replicates} training seed replicate(s): "
            f"d_seed_mean/sd, md_seed_mean/sd, significant_seeds (every replicate's row: fig1_weat_seeds.csv). "
            f"Effect size: Caliskan's d with ddof=1 (it saturates near 2 for strong effects; mean_difference, "
            f"mean s(male) - mean s(female), does not); p_value: classic {p.alternative} permutation test over "
            f"re-partitions of the male and female words (exact when at most {p.budget:,} partitions, else {p.budget:,} "
            f"sampled without replacement, p=(k+1)/(N+1)); ci: {p.bootstrap} bootstrap replicates resampling words "
            f"within each set (conservative: it shrinks d towards 0). " + calibrated)
    document_paths = list(getattr(snakemake.input, "document_null", []))
    if document_paths:
        null = pd.concat([pd.read_csv(path) for path in document_paths], ignore_index=True)
        table = document_null_columns(table, null, p.alternative)
        note += (f" p_document ({p.alternative}): the document-level null, {p.document_null_draws} skip-gram models per "
                 f"decade retrained (own seeds, replicate 0's setting) on the corpus with the male and female words "
                 f"swapped in a random half of the articles; p=(k+1)/(K+1) on the mean difference (smallest "
                 f"1/{p.document_null_draws + 1}); it keeps the words' document clustering and the seed's variance, "
                 f"which both other tests leave out; md_document_null_mean/sd: the null's centre and spread; "
                 f"every draw: document_null/<decade>.csv. The stars stay on p_calibrated.")
    write_rios_table(table, out.csv, out.md, "Figure 1 data: WEAT per decade and stereotype", note)
    seeds.to_csv(out.seeds_csv, index=False)
    trends = weat_trends(seeds, list(seeded))
    write_rios_table(trends, out.trend_csv, out.trend_md, "Figure 1 trend: WEAT across decades",
                     "Slope: least-squares change per decade step of the seed-averaged mean difference (md) and effect "
                     "size (d); slope_seed_sd: between-seed SD of the per-seed slopes; trend_p: exact two-sided "
                     "permutation test of the decade labels on the seed-averaged values (all orderings), so seeds "
                     "count as replicates within a decade, not as independent decades.")
    write_rios_table(coverage, out.coverage_csv, out.coverage_md, "Table 2 word sets: coverage per decade (WEAT)")
    plot_weat_by_decade(table, seeds, out.png, out.pdf)
elif p.analysis == "ect":
    table, coverage = ect_by_decade(vectors, wordsets, seed=p.seed, n_bootstrap=p.bootstrap, min_fraction=p.min_fraction)
    write_rios_table(table, out.csv, out.md, "Figure 2 data: ECT per decade",
                f"ECT: Spearman rho between the targets' cosine to the mean male and mean female vector (1 = no bias); "
                f"CI: {p.bootstrap} bootstrap replicates resampling targets and attribute words.")
    write_rios_table(coverage, out.coverage_csv, out.coverage_md, "ECT word sets: coverage per decade")
    plot_ect_by_decade(table, out.png, out.pdf)
else:
    scores, top, pairs = ripa_by_decade(vectors, wordsets, top=p.top, min_fraction=p.min_fraction)
    scores.to_csv(out.scores_csv, index=False)
    write_rios_table(top, out.csv, out.md, f"Table 4: the {p.top} most male and most female words per decade (RIPA)",
                "RIPA: dot product with the first principal component of the male-minus-female pair differences "
                "(uncentred, signed toward male); positive = male side.")
    write_rios_table(table4_wide(top), out.wide_csv, out.wide_md, "Table 4 as printed (1960s = appendix A)")
    write_rios_table(pairs, out.pairs_csv, out.pairs_md, "RIPA gender pairs used per decade")
log.info("wrote %s outputs", p.analysis)
