"""Rule script: fine-tune one plm model (plain or debiased) on every Table 6 benchmark.

The debiasing projection stays attached to the encoder while it is fine-tuned (Xie et al. 2024,
section 6); the Dropout model is fine-tuned as saved. Each benchmark starts from a fresh copy of
the model. A model transformers cannot load keeps its rows, marked.
"""

import copy

import numpy as np
import torch

from medbias.core.encoders import load_or_mark, sentence_encoder
from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device
from medbias.io.jsonio import write_json
from medbias.studies.plm.debias import attach_projection
from medbias.studies.plm.finetune import finetune_and_score, read_bc5cdr, read_glue_task, read_hoc, read_pubmedqa

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
torch.set_num_threads(snakemake.threads)
device = job_device()
result = {"model": p.model, "debias": p.debias, "source": p.entry["source"], "benchmarks": []}
model, tokenizer, source, unloadable = load_or_mark(p.model, p.entry, device, log)
if unloadable:
    result["status"] = unloadable
    write_json(snakemake.output[0], result)
    raise SystemExit(0)

tasks = [("glue", read_glue_task(p.data["glue"], name)) for name in p.glue_tasks]
tasks += [
    ("pubmedqa", read_pubmedqa(p.data["pubmedqa"])),
    ("hoc", read_hoc(p.data["hoc"])),
    ("bc5cdr", read_bc5cdr(p.data["bc5cdr"])),
]
projection = np.load(snakemake.input.projection)["projection"] if p.debias in ("sentencedebias", "inlp") else None
leading_space = tokenizer("a b", add_special_tokens=False)["input_ids"] != (
    tokenizer("a", add_special_tokens=False)["input_ids"] + tokenizer("b", add_special_tokens=False)["input_ids"]
)
for i, (benchmark, task) in enumerate(tasks):
    encoder = copy.deepcopy(sentence_encoder(model, source.kind)).train()
    if projection is not None:
        attach_projection(encoder, projection)
    settings = p.settings[benchmark]
    log.info("%s / %s: %s on %d training examples, %s", p.model, p.debias, task.name, len(task.train.texts), settings)
    row = finetune_and_score(
        encoder,
        tokenizer,
        task,
        learning_rate=settings["learning_rate"],
        batch_size=settings["batch_size"],
        epochs=settings["epochs"],
        max_length=p.max_length,
        seed=p.seed + i,
        leading_space=leading_space,
        log=log,
    )
    log.info("%s: %s %.2f", task.name, row["metric"], row["score"])
    result["benchmarks"].append({"benchmark": benchmark, **row, **settings})
result["status"] = "ok"
write_json(snakemake.output[0], result)
