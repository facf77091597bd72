"""Rule script (audit): Caliskan et al.'s (2017) WEATs on one word-vector entry for its audit card
(``medbias.studies.audit.card.weat_rows``), with the coverage of every word set and the calibrated null's p."""

from medbias.core.logs import setup_rule_logging
from medbias.io.resources import read_caliskan_wordsets
from medbias.io.word_vectors import load_word_vectors
from medbias.studies.audit.card import weat_rows

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
vectors = load_word_vectors(snakemake.input.vectors, p.entry["format"])
wordsets = read_caliskan_wordsets(snakemake.input.wordsets)
rows = weat_rows(
    vectors,
    wordsets,
    seed=p.seed,
    budget=p.budget,
    n_bootstrap=p.bootstrap,
    min_fraction=p.min_fraction,
    null_draws=p.null_draws,
)
rows.to_csv(snakemake.output[0], index=False)
for row in rows.itertuples():
    log.info(
        "%s: %s",
        row.test,
        row.status
        if row.status != "ok"
        else f"d = {row.effect_size:+.3f}, p = {row.p_value:.3g}, calibrated p = {row.p_calibrated:.3g}",
    )
