"""Rule script: a tiny vignette model of the demo world (plain GPT-2 or chat Llama), trained from random
weights on answered vignettes with the planted decision (``medbias.synth.vignettes``)."""

import torch

from medbias.core.lm_training import switch_off_dropout, train_language_model
from medbias.core.logs import setup_rule_logging
from medbias.io.vignettes import read_vignette_set
from medbias.synth.tiny_models import build_tiny_model, train_byte_bpe
from medbias.synth.vignettes import (
    CHAT_TEMPLATE,
    answered_cells,
    build_chat_model,
    corpus_texts,
    planted_probabilities,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p, settings = snakemake.params, snakemake.params.settings
torch.set_num_threads(snakemake.threads)
vset = read_vignette_set("demo", snakemake.input.vignettes)
cells = answered_cells(
    vset, settings["copies"], planted_probabilities(settings["planted"], settings["control"]), p.seed
)
plain = corpus_texts(vset, cells, p.prompts["prompt" if p.arch == "gpt2" else "chat_prompt"])
tokenizer = train_byte_bpe(plain, p.vocab_size, add_bos_eos=False, keep_inner_punctuation=True)
if p.arch == "gpt2":
    texts = plain
    model = build_tiny_model("gpt2", tokenizer, dict(p.gpt2), p.seed)
else:
    tokenizer.chat_template = CHAT_TEMPLATE
    texts = corpus_texts(vset, cells, p.prompts["chat_prompt"], tokenizer, p.prompts["system_prompt"])
    model = build_chat_model(tokenizer, settings["chat"], p.seed)
switch_off_dropout(model)
log.info(
    "tiny vignette %s: vocabulary %d, %d parameters, %d answered questions",
    p.arch,
    len(tokenizer),
    sum(t.numel() for t in model.parameters()),
    len(texts),
)
train_language_model(
    model,
    tokenizer,
    "causal",
    texts,
    steps=settings["steps"],
    batch_size=settings["batch_size"],
    learning_rate=settings["learning_rate"],
    seed=p.seed,
    max_length=settings["max_length"],
    log=log,
)
model.save_pretrained(snakemake.output[0])
tokenizer.save_pretrained(snakemake.output[0])
