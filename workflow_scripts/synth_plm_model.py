"""Rule script: train a tiny plm model of the demo world on the plm corpus, from random weights."""

import gzip

import torch

from medbias.core.lm_training import switch_off_dropout, train_language_model
from medbias.core.logs import setup_rule_logging
from medbias.synth.tiny_models import build_tiny_model, train_byte_bpe, train_wordpiece

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)
with gzip.open(snakemake.input.corpus, "rt", encoding="utf-8") as handle:
    sentences = handle.read().splitlines()
if p.arch == "bert":
    tokenizer = train_wordpiece(sentences, p.vocab_size, keep_inner_punctuation=True)
else:
    tokenizer = train_byte_bpe(sentences, p.vocab_size, add_bos_eos=(p.arch == "bart"), keep_inner_punctuation=True)
model = build_tiny_model(p.arch, tokenizer, dict(p.model_params), p.seed, masked_only=True)
switch_off_dropout(model)
log.info(
    "tiny plm %s: vocabulary %d, %d parameters, %d sentences",
    p.arch,
    len(tokenizer),
    sum(t.numel() for t in model.parameters()),
    len(sentences),
)
kind = {"bert": "masked", "gpt2": "causal", "bart": "seq2seq"}[p.arch]
losses = train_language_model(
    model,
    tokenizer,
    kind,
    sentences,
    steps=p.training["steps"],
    batch_size=p.training["batch_size"],
    learning_rate=p.training["learning_rate"],
    seed=p.seed,
    max_length=p.training["max_length"],
    length_chunks=p.training["length_chunks"],
    log=log,
)
model.save_pretrained(snakemake.output[0])
tokenizer.save_pretrained(snakemake.output[0])
