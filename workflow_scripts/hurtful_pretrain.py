"""Rule script (hurtful): continue pretraining the base BERT on the note sequences (MLM + NSP), as
the baseline or with an adversary for one protected attribute; phases of increasing length.

The downstream validation and test subjects are left out when configured; the test subjects' pairs
are the adversary's held-out set. Resumes from the last checkpoint of a killed run.
"""

import shutil
import time
from pathlib import Path

import pandas as pd
import torch
from transformers import AutoTokenizer, BertForPreTraining

from medbias.demographics import ATTRIBUTE_CLASSES
from medbias.jsonio import write_json
from medbias.logs import setup_rule_logging
from medbias.models import resolve_model_source
from medbias.pretrain import (
    AdversarialPretrainer,
    adversary_accuracy,
    batch_maker,
    build_pretraining_data,
    train_steps,
    unmasked_batches,
)

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
cfg = p.pretrain
torch.manual_seed(p.seed)
torch.set_num_threads(snakemake.threads)

tokenizer = AutoTokenizer.from_pretrained(snakemake.input.tokenizer)
source = resolve_model_source(p.base_name, p.base_entry)
overrides = {}
if cfg["dropout"] is not None:
    overrides = {"hidden_dropout_prob": cfg["dropout"], "attention_probs_dropout_prob": cfg["dropout"]}
bert = BertForPreTraining.from_pretrained(source.source, **overrides)
bert.resize_token_embeddings(len(tokenizer), mean_resizing=False)  # the eight placeholder tokens
attribute = p.attribute
n_classes = len(ATTRIBUTE_CLASSES[attribute]) if attribute else 0
model = AdversarialPretrainer(bert, n_classes, cfg["adversary_lambda"])
log.info("variant %s from %s: %d parameters, adversary on %s", p.variant, source.source,
         sum(x.numel() for x in model.parameters()), attribute or "nothing")

sequences = pd.read_parquet(snakemake.input.sequences, columns=["ROW_ID", "SUBJECT_ID", "HADM_ID", "seq_index", "text"])
demographics = pd.read_parquet(snakemake.input.demographics)
samples = pd.read_parquet(snakemake.input.samples, columns=["SUBJECT_ID", "split"])
heldout = set(samples.loc[samples["split"].isin(["val", "test"]), "SUBJECT_ID"])
test_subjects = set(samples.loc[samples["split"] == "test", "SUBJECT_ID"])
excluded = heldout if cfg["exclude_heldout_subjects"] else set()
log.info("%d sequences; %d downstream validation/test subjects %s", len(sequences), len(heldout),
         "left out of pretraining" if excluded else "kept in pretraining (exclude_heldout_subjects: false)")

def evaluate(pretrainer):  # the baseline's record holds its losses only
    return {}


eval_pairs = 0

if attribute:
    eval_frame = sequences[sequences["SUBJECT_ID"].isin(test_subjects)]
    eval_data = build_pretraining_data(eval_frame, demographics, tokenizer, cfg["phases"][0]["max_length"], p.seed + 7)
    eval_data = eval_data.sample(cfg["eval_pairs"], p.seed + 7)  # pairs from all test subjects, not the first notes'
    eval_pairs = len(eval_data.input_ids)
    eval_batches = unmasked_batches(eval_data, tokenizer, 256, attribute)
    log.info("adversary held-out set: %d pairs of test subjects%s", eval_pairs,
             "" if excluded else " (NOT held out of pretraining)")

    def evaluate(pretrainer):
        return adversary_accuracy(pretrainer, eval_batches)

checkpoints = Path(p.checkpoints)
curve, phases = [], []
started = time.time()
for k, phase in enumerate(cfg["phases"]):
    data = build_pretraining_data(sequences, demographics, tokenizer, phase["max_length"], p.seed + k,
                                  exclude_subjects=excluded)
    warmup = cfg["adversary_warmup_steps"] if k == 0 else 0
    batch_at, per_epoch = batch_maker(data, tokenizer, phase["batch_size"], p.seed + k, attribute, warmup)
    steps = phase["epochs"] * per_epoch
    if phase.get("max_steps"):
        steps = min(steps, phase["max_steps"])
    log.info("phase %d: length %d, batch %d, %d pairs, %d steps (%d per epoch)", k + 1, phase["max_length"],
             phase["batch_size"], len(data.input_ids), steps, per_epoch)
    record = []
    phase_start = time.time()
    train_steps(model, batch_at, steps, cfg["learning_rate"], round(cfg["warmup_fraction"] * steps),
                str(checkpoints / f"phase{k + 1}"), cfg["checkpoint_every"], log=log, evaluate=evaluate,
                eval_every=cfg["eval_every"], record=record)
    seconds = time.time() - phase_start
    curve += [{"phase": k + 1, **row} for row in record]
    phases.append({"phase": k + 1, "max_length": phase["max_length"], "batch_size": phase["batch_size"],
                   "pairs": len(data.input_ids), "steps": steps, "sequences_seen": steps * phase["batch_size"],
                   "seconds_this_run": round(seconds, 1)})

output = Path(snakemake.output.model)
bert.save_pretrained(output)
tokenizer.save_pretrained(output)
pd.DataFrame(curve).to_csv(snakemake.output.curve, index=False)
write_json(snakemake.output.summary, {
    "variant": p.variant, "base_model": source.source, "adversary_attribute": attribute,
    "adversary_lambda": cfg["adversary_lambda"] if attribute else None,
    "excluded_subjects": len(excluded), "heldout_pairs": eval_pairs if attribute else None, "phases": phases,
    "device": "cuda" if torch.cuda.is_available() else "cpu",
})
shutil.rmtree(checkpoints, ignore_errors=True)  # kept only while a run may be resumed
log.info("done in %.0f s", time.time() - started)
