"""Rule script (mimic): sentences, word pieces, packed sequences and window counts for every note."""

from medbias.core.logs import setup_rule_logging
from medbias.core.note_pipeline import process_notes
from medbias.io.jsonio import write_json

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
totals = process_notes(
    snakemake.input.notes,
    snakemake.input.tokenizer,
    snakemake.output.sequences,
    snakemake.output.counts,
    snakemake.threads,
    p.min_pieces,
    p.window,
    p.stride,
    p.max_windows_per_note,
)
write_json(snakemake.output.summary, totals)
log.info("notes processed: %s", totals)
