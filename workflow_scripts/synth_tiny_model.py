"""Rule script: train a tokenizer on the demo text and save a randomly initialised tiny model."""

import gzip

import pandas as pd

from medbias.core.logs import setup_rule_logging
from medbias.synth.tiny_models import build_tiny_model, train_byte_bpe, train_wordpiece

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
notes = pd.read_csv(snakemake.input.notes, usecols=["TEXT"])["TEXT"].tolist()
with gzip.open(snakemake.input.corpus, "rt", encoding="utf-8") as handle:
    abstracts = handle.read().splitlines()
texts = notes + abstracts
log.info("training the %s tokenizer on %d texts", p.arch, len(texts))
if p.arch == "bert":
    tokenizer = train_wordpiece(texts, p.vocab_size)
else:
    tokenizer = train_byte_bpe(texts, p.vocab_size, add_bos_eos=(p.arch == "bart"))
model = build_tiny_model(p.arch, tokenizer, dict(p.model_params), p.seed)
n_params = sum(t.numel() for t in model.parameters())
log.info("tiny %s: vocabulary %d, %d parameters", p.arch, len(tokenizer), n_params)
model.save_pretrained(snakemake.output[0])
tokenizer.save_pretrained(snakemake.output[0])
