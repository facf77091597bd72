"""Rule script (rios): WEAT (Figure 1), ECT (Figure 2) or RIPA (Table 4) across all decades."""

import pandas as pd

from medbias.embeddings import load_word_vectors
from medbias.logs import setup_rule_logging
from medbias.plots import plot_ect_by_decade, plot_weat_by_decade
from medbias.resources import read_wordsets
from medbias.rios import ect_by_decade, ripa_by_decade, table4_wide, weat_by_decade
from medbias.tables import write_table

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
wordsets = read_wordsets(snakemake.input.wordsets)
loaded = {d: load_word_vectors(path, "word2vec_binary") for d, path in zip(p.decades, snakemake.input.vectors)}
vectors = {d: kv for d, kv in loaded.items() if len(kv) > 0}
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
    table, coverage = weat_by_decade(vectors, wordsets, seed=p.seed, budget=p.budget, alternative=p.alternative,
                                     n_bootstrap=p.bootstrap, min_fraction=p.min_fraction)
    note = (f"Effect size: Caliskan's d with ddof=1; p: {p.alternative} permutation test over re-partitions of the "
            f"male and female words (exact when at most {p.budget:,} partitions, else {p.budget:,} sampled without "
            f"replacement, p=(k+1)/(N+1)); CI: {p.bootstrap} bootstrap replicates resampling words within each set.")
    write_rios_table(table, out.csv, out.md, "Figure 1 data: WEAT per decade and stereotype", note)
    write_rios_table(coverage, out.coverage_csv, out.coverage_md, "Table 2 word sets: coverage per decade (WEAT)")
    plot_weat_by_decade(table, out.png, out.pdf)
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
