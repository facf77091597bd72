"""Rule script: the StereoSet-style sentences and pairs of the plm study (Table 3 templates)."""

from medbias.core.logs import setup_rule_logging
from medbias.io.jsonio import write_json
from medbias.io.resources import read_seat_tests
from medbias.studies.plm.stereoset_style import stereoset_examples

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
tests = read_seat_tests(snakemake.input.wordsets)
sentences, pairs = stereoset_examples(tests, p.families, p.templates, p.unrelated)
sentences.to_parquet(snakemake.output.sentences, index=False)
pairs.to_parquet(snakemake.output.pairs, index=False)
counts = {
    "sentences": len(sentences),
    "pairs": len(pairs),
    "pairs_by": pairs.groupby(["family", "test", "blank"]).size().rename("pairs").reset_index().to_dict("records"),
    "templates": dict(p.templates),
    "unrelated": list(p.unrelated),
}
write_json(snakemake.output.counts, counts)
log.info("%d sentences, %d pairs", len(sentences), len(pairs))
