"""Rule script: synthetic PubMed baseline and update files with a fading planted association."""

from pathlib import Path

from medbias.core.logs import setup_rule_logging
from medbias.io.gzipped import write_gzip_lines
from medbias.io.jsonio import write_json
from medbias.io.resources import read_umnsrs, read_wordsets
from medbias.synth.pubmed import write_pubmed

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
paths, truth, texts = write_pubmed(
    Path(snakemake.output.files[0]).parent,
    p.articles_per_decade,
    p.n_files,
    p.seed,
    read_wordsets(snakemake.input.wordsets),
    read_umnsrs(snakemake.input.umnsrs),
)
expected = {Path(x).name for x in snakemake.output.files}
if {x.name for x in paths} != expected:
    raise RuntimeError(f"generator wrote {[x.name for x in paths]}, rule declares {sorted(expected)}")
write_gzip_lines(snakemake.output.corpus, texts)
log.info("wrote %d files, %d final articles", len(paths), len(texts))
write_json(snakemake.output.truth, {"pubmed": truth})
