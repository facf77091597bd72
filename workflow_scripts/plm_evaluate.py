"""Rule script: SEAT and StereoSet-style scores of one plm model, plain or debiased.

debias = none | dropout (the continued-pretraining folder) | sentencedebias | inlp (the fitted
projection, applied to the sentence encoder's last hidden states by one forward hook). A registry
model that transformers cannot load (loader: ofa) keeps its rows, marked, with the reason; an
encoder, or a checkpoint without a trained language-model head, gets SEAT and StereoSet rows marked
"not applicable" with the reason (its likelihoods would come from random weights).
"""

import time

import numpy as np
import pandas as pd
import torch

from medbias.studies.plm.debias import attach_projection
from medbias.io.jsonio import write_json
from medbias.core.sentence_likelihood import sentence_log_likelihood
from medbias.core.logs import setup_rule_logging
from medbias.core.models import lm_head_problem
from medbias.core.encoders import load_or_mark, sentence_encoder
from medbias.studies.plm.seat import read_seat_tests, run_seat
from medbias.studies.plm.stereoset import stereoset_summary

snakemake = globals()["snakemake"]
log = setup_rule_logging(snakemake.log[0])
p = snakemake.params
out = snakemake.output
torch.set_num_threads(snakemake.threads)
device = "cuda" if torch.cuda.is_available() else "cpu"
tests = read_seat_tests(snakemake.input.wordsets)
sentences = pd.read_parquet(snakemake.input.sentences)
pairs = pd.read_parquet(snakemake.input.pairs)
summary = {"model": p.model, "debias": p.debias, "source": p.entry["source"], "kind": p.entry["kind"], "device": device}


def finish_without_likelihoods(stereoset_status: str) -> None:
    """StereoSet rows marked with the reason, no sentence score, the summary; then stop."""
    pd.DataFrame({"family": list(p.families), "status": stereoset_status}).to_csv(out.stereoset, index=False)
    pd.DataFrame({"sentence_id": pd.Series(dtype="int64"), "log_likelihood": pd.Series(dtype="float64"),
                  "tokens": pd.Series(dtype="int64")}).to_parquet(out.sentence_scores, index=False)
    write_json(out.summary, summary)
    raise SystemExit(0)


model, tokenizer, source, unloadable = load_or_mark(p.model, p.entry, device, log)
if unloadable:
    summary["status"] = unloadable
    pd.DataFrame({"test": list(tests), "status": unloadable}).to_csv(out.seat, index=False)
    finish_without_likelihoods(unloadable)

encoder = sentence_encoder(model, source.kind)
if p.debias in ("sentencedebias", "inlp"):
    projection = np.load(snakemake.input.projection)["projection"]
    attach_projection(encoder, projection)
    summary["projection_rank_removed"] = int(round(projection.shape[0] - np.trace(projection)))
    log.info("%s: %s projection attached (removes %d directions)", p.model, p.debias, summary["projection_rank_removed"])

started = time.perf_counter()
seat = run_seat(
    encoder, tokenizer, tests, p.seat["templates"], model_name=p.model, pooling=p.seat["pooling"],
    batch_size=p.batch_size, max_length=p.max_length, prepend_bos=(source.kind == "causal"),
    budget=p.seat["permutation_budget"], alternative=p.seat["alternative"], n_bootstrap=p.seat["bootstrap"],
    min_fraction=p.seat["min_set_fraction"], seed=p.seed, null_draws=p.seat["calibrated_null_draws"],
    null_pool=p.seat["null_pool_words"], alpha=p.seat["alpha"],
    progress=lambda name, row: log.info("SEAT %s: d = %.3f, p = %.4g, calibrated p = %.4g", name, row["effect_size"],
                                        row["p_value"], row["p_calibrated"]),
)
seat.insert(0, "status", "ok")
seat.to_csv(out.seat, index=False)
summary["seat_seconds"] = time.perf_counter() - started

no_head = lm_head_problem(model, source.kind)
if no_head:  # an encoder, or a checkpoint saved without its LM head: no likelihood-based score
    log.warning("%s: StereoSet-style scores %s", p.model, no_head)
    summary.update(status="ok", stereoset_status=no_head)
    finish_without_likelihoods(no_head)

started = time.perf_counter()
texts = sentences.sort_values("sentence_id")["text"].tolist()
log.info("scoring %d StereoSet-style sentences (%s likelihood)", len(texts), source.kind)
scores, tokens = sentence_log_likelihood(model, tokenizer, source.kind, texts, p.batch_size)
summary["stereoset_seconds"] = time.perf_counter() - started
summary["sentences_per_second"] = len(texts) / max(summary["stereoset_seconds"], 1e-9)
pd.DataFrame({"sentence_id": np.arange(len(texts)), "log_likelihood": scores, "tokens": tokens}).to_parquet(
    out.sentence_scores, index=False)
stereo = stereoset_summary(pairs, scores, p.ties_as_half)
stereo.insert(0, "status", "ok")
stereo.to_csv(out.stereoset, index=False)
for row in stereo[(stereo["blank"] == "all") & (stereo["template"] == "all")].itertuples():
    log.info("StereoSet %s: ss %.2f, lms %.2f, ties %d of %d pairs", row.family, row.ss, row.lms, row.ties, row.pairs)
summary.update(status="ok", stereoset_status="ok")
write_json(out.summary, summary)
