"""Rule script (mimic): the base model's tokenizer with the placeholder tokens added as special tokens."""

from medbias.core.logs import setup_rule_logging
from medbias.core.models import load_tokenizer, resolve_model_source
from medbias.core.note_pipeline import extend_tokenizer

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
source = resolve_model_source(snakemake.params.name, snakemake.params.entry)
tokenizer = load_tokenizer(source.source)
added = extend_tokenizer(tokenizer)
log.info("%s: %d placeholder tokens added (vocabulary now %d)", source.source, added, len(tokenizer))
tokenizer.save_pretrained(snakemake.output[0])
