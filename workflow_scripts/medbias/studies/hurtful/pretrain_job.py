"""One pretraining job of the hurtful study (Zhang et al. 2020, sections 3.3 and 4.4): the base
BERT continued on the note sequences (MLM + NSP), as the baseline or with an adversary for one
protected attribute, phase by phase; in one process or in one process per GPU.

The downstream validation and test subjects are left out when configured; the test subjects' pairs
are the adversary's held-out set. Resumes from the last checkpoint of a killed run.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from medbias.core.logs import setup_rule_logging
from medbias.core.models import job_device, load_for_pretraining, load_tokenizer, resolve_model_source
from medbias.io.jsonio import write_json
from medbias.studies.hurtful.demographics import ATTRIBUTE_CLASSES
from medbias.studies.hurtful.pretrain import (
    AdversarialPretrainer,
    adversary_accuracy,
    batch_maker,
    build_pretraining_data,
    train_steps,
    unmasked_batches,
)


# long: what each data-parallel process runs, start to end, in one accelerate state; the main one writes
def run_pretraining(
    inputs: dict[str, str], outputs: dict[str, str], params: dict[str, Any], threads: int, log_path: str
) -> None:
    """Pretrain one variant and write its folder, curve and summary (``hurtful_pretrain``'s
    outputs). Under data parallelism every process runs this function; the first one logs and
    writes the outputs, the others train their share of each batch."""
    from accelerate import PartialState

    cuda = job_device() == "cuda"
    state = PartialState(cpu=not cuda)
    main = state.is_main_process
    log = setup_rule_logging(log_path) if main else logging.getLogger("medbias.silent")
    if not main:
        log.setLevel(logging.WARNING)
    cfg = params["pretrain"]
    torch.manual_seed(params["seed"])
    torch.set_num_threads(max(1, threads // state.num_processes))

    tokenizer = load_tokenizer(inputs["tokenizer"])
    source = resolve_model_source(params["base_name"], params["base_entry"])
    overrides = {}
    if cfg["dropout"] is not None:
        overrides = {"hidden_dropout_prob": cfg["dropout"], "attention_probs_dropout_prob": cfg["dropout"]}
    bert = load_for_pretraining(source.source, overrides)
    bert.resize_token_embeddings(len(tokenizer), mean_resizing=False)  # the eight placeholder tokens
    attribute = params["attribute"]
    n_classes = len(ATTRIBUTE_CLASSES[attribute]) if attribute else 0
    model = AdversarialPretrainer(bert, n_classes, cfg["adversary_lambda"], cfg["length_chunks"])
    log.info(
        "variant %s from %s: %d parameters, adversary on %s; %d process(es) on %s",
        params["variant"],
        source.source,
        sum(x.numel() for x in model.parameters()),
        attribute or "nothing",
        state.num_processes,
        "GPU" if cuda else "CPU",
    )

    sequences = pd.read_parquet(inputs["sequences"], columns=["ROW_ID", "SUBJECT_ID", "HADM_ID", "seq_index", "text"])
    demographics = pd.read_parquet(inputs["demographics"])
    samples = pd.read_parquet(inputs["samples"], columns=["SUBJECT_ID", "split"])
    heldout = set(samples.loc[samples["split"].isin(["val", "test"]), "SUBJECT_ID"])
    test_subjects = set(samples.loc[samples["split"] == "test", "SUBJECT_ID"])
    excluded = heldout if cfg["exclude_heldout_subjects"] else set()
    log.info(
        "%d sequences; %d downstream validation/test subjects %s",
        len(sequences),
        len(heldout),
        "left out of pretraining" if excluded else "kept in pretraining (exclude_heldout_subjects: false)",
    )

    evaluate, eval_pairs = None, 0
    if attribute:
        eval_frame = sequences[sequences["SUBJECT_ID"].isin(test_subjects)]
        eval_data = build_pretraining_data(
            eval_frame, demographics, tokenizer, cfg["phases"][0]["max_length"], params["seed"] + 7
        )
        eval_data = eval_data.sample(cfg["eval_pairs"], params["seed"] + 7)  # pairs from all test subjects
        eval_pairs = len(eval_data.input_ids)
        eval_batches = unmasked_batches(eval_data, tokenizer, 256, attribute)
        log.info(
            "adversary held-out set: %d pairs of test subjects%s",
            eval_pairs,
            "" if excluded else " (NOT held out of pretraining)",
        )

        def evaluate(pretrainer):
            return adversary_accuracy(pretrainer, eval_batches)
    else:

        def evaluate(pretrainer):  # the baseline's record holds its losses only
            return {}

    checkpoints = Path(params["checkpoints"])
    curve, phases = [], []
    started = time.time()
    for k, phase in enumerate(cfg["phases"]):
        data = build_pretraining_data(
            sequences, demographics, tokenizer, phase["max_length"], params["seed"] + k, exclude_subjects=excluded
        )
        warmup = cfg["adversary_warmup_steps"] if k == 0 else 0
        batch_at, per_epoch = batch_maker(data, tokenizer, phase["batch_size"], params["seed"] + k, attribute, warmup)
        steps = phase["epochs"] * per_epoch
        if phase.get("max_steps"):
            steps = min(steps, phase["max_steps"])
        learning_rate = phase.get("learning_rate", cfg["learning_rate"])
        log.info(
            "phase %d: length %d, batch %d, %d pairs, %d steps (%d per epoch), peak learning rate %g",
            k + 1,
            phase["max_length"],
            phase["batch_size"],
            len(data.input_ids),
            steps,
            per_epoch,
            learning_rate,
        )
        record = []
        phase_start = time.time()
        train_steps(
            model,
            batch_at,
            steps,
            learning_rate,
            round(cfg["warmup_fraction"] * steps),
            str(checkpoints / f"phase{k + 1}"),
            cfg["checkpoint_every"],
            log=log,
            evaluate=evaluate,
            eval_every=cfg["eval_every"],
            record=record,
        )
        seconds = time.time() - phase_start
        curve += [{"phase": k + 1, **row} for row in record]
        phases.append(
            {
                "phase": k + 1,
                "max_length": phase["max_length"],
                "batch_size": phase["batch_size"],
                "pairs": len(data.input_ids),
                "steps": steps,
                "sequences_seen": steps * phase["batch_size"],
                "learning_rate": learning_rate,
                "seconds_this_run": round(seconds, 1),
            }
        )

    state.wait_for_everyone()
    if not main:
        return
    output = Path(outputs["model"])
    bert.save_pretrained(output)
    tokenizer.save_pretrained(output)
    pd.DataFrame(curve).to_csv(outputs["curve"], index=False)
    write_json(
        outputs["summary"],
        {
            "variant": params["variant"],
            "base_model": source.source,
            "adversary_attribute": attribute,
            "adversary_lambda": cfg["adversary_lambda"] if attribute else None,
            "excluded_subjects": len(excluded),
            "heldout_pairs": eval_pairs if attribute else None,
            "phases": phases,
            "device": "cuda" if cuda else "cpu",
            "processes": state.num_processes,
        },
    )
    shutil.rmtree(checkpoints, ignore_errors=True)  # kept only while a run may be resumed
    log.info("done in %.0f s", time.time() - started)
