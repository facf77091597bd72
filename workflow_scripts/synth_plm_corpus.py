"""Rule script: the plm demo corpus (identity terms with their stereotypical diseases) and its truth."""

from medbias.core.logs import setup_rule_logging
from medbias.io.gzipped import write_gzip_lines
from medbias.io.jsonio import write_json
from medbias.io.resources import read_seat_tests
from medbias.synth.plm import plm_corpus, plm_truth

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
tests = read_seat_tests(snakemake.input.wordsets)
sentences, counts = plm_corpus(tests, p.mentions_per_group, p.seed)
write_gzip_lines(snakemake.output.corpus, sentences)
log.info("plm corpus: %d sentences", len(sentences))
write_json(snakemake.output.truth, {"plm": plm_truth(tests, counts, p.trained_models)})
