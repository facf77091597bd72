"""The units of the heavy rules' work, timed: what the scale planner (``scripts/plan_scale.py``) and the
performance benchmarks (``tests/performance/``) measure a machine with. Each builds the real inputs of
one unit (NOTEEVENTS rows, a pretraining step, one epoch of the classifier grid) from synthetic data of
the real shape and returns its time; none reads anything a study wrote."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[3]
NOTE_LENGTHS = REPO / "config/resources/mimic-facts/note_lengths.tsv"
# the classifiers' input width: four [CLS] layers of 768 and the acuity scores
CLASSIFIER_WIDTH = 3076


def noteevents_frame(notes: pd.DataFrame) -> pd.DataFrame:
    """Notes (``CATEGORY``, ``TEXT``) as NOTEEVENTS rows in the real column layout."""
    n = len(notes)
    return pd.DataFrame(
        {
            "ROW_ID": np.arange(1, n + 1),
            "SUBJECT_ID": 10_000 + np.arange(n) // 40,
            "HADM_ID": 100_000 + np.arange(n) // 10,
            "CHARTDATE": "2150-01-01",
            "CHARTTIME": "2150-01-01 08:00:00",
            "STORETIME": "",
            "CATEGORY": notes["CATEGORY"],
            "DESCRIPTION": "Report",
            "CGID": "",
            "ISERROR": "",
            "TEXT": notes["TEXT"],
        }
    )


def note_stage_seconds(
    texts: list[str], tokenizer, window: int = 512, stride: int = 256, max_windows: int = 10
) -> dict[str, np.ndarray]:
    """Seconds each note spends in each stage of ``process_note`` (splitting, tokenizing and packing)
    plus building its window inputs."""
    from medbias.core.batching import note_windows
    from medbias.core.note_text import pack_sequences, replace_placeholders, split_sentences

    cost = {stage: np.zeros(len(texts)) for stage in ("split", "tokenize_pack", "window")}
    clock = time.perf_counter
    for i, text in enumerate(texts):
        t0 = clock()
        clean, _ = replace_placeholders(text)
        sentences = split_sentences(clean)
        t1 = clock()
        ids = tokenizer(sentences, add_special_tokens=False)["input_ids"] if sentences else []
        pack_sequences([len(x) for x in ids], 20)
        t2 = clock()
        note_windows(
            [p for x in ids for p in x], tokenizer.cls_token_id, tokenizer.sep_token_id, window, stride, max_windows
        )
        t3 = clock()
        cost["split"][i], cost["tokenize_pack"][i], cost["window"][i] = t1 - t0, t2 - t1, t3 - t2
    return cost


def note_tokenizer(source: str | Path, folder: Path):
    """The WordPiece tokenizer at ``source`` (a BERT's folder) with the note pipeline's placeholder
    tokens added, as a user's clinical BERT has them, saved to ``folder``."""
    from medbias.core.models import load_tokenizer
    from medbias.core.note_pipeline import extend_tokenizer

    tokenizer = load_tokenizer(source)
    extend_tokenizer(tokenizer)
    tokenizer.save_pretrained(folder)
    return tokenizer


def pretraining_rate(
    config_kwargs: dict, batch: int, steps: int, device: str, length: int = 128, warmup: int = 1
) -> tuple[float, int]:
    """Sequences per second of pretraining steps (MLM + NSP + the adversary, AdamW; bf16 autocast on a
    GPU) at ``length`` pieces, after ``warmup`` untimed steps; and the model's parameter count."""
    import torch
    from transformers import BertConfig, BertForPreTraining

    from medbias.studies.hurtful.pretrain import AdversarialPretrainer

    torch.manual_seed(0)
    config = BertConfig(**config_kwargs)
    model = AdversarialPretrainer(BertForPreTraining(config), n_classes=2).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(5, config.vocab_size, (batch, length), device=device)
    inputs = dict(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        token_type_ids=torch.zeros_like(ids),
        mlm_labels=torch.where(torch.rand(batch, length, device=device) < 0.15, ids, -100),
        nsp_labels=torch.zeros(batch, dtype=torch.long, device=device),
        attribute=torch.zeros(batch, dtype=torch.long, device=device),
    )
    autocast = (
        torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        if device == "cuda"
        else torch.autocast("cpu", enabled=False)
    )

    def step():
        with autocast:
            loss, _ = model(**inputs)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    for _ in range(warmup):
        step()
    _synchronise(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _synchronise(device)
    return steps * batch / (time.perf_counter() - t0), sum(p.numel() for p in model.parameters())


def classifier_grid():
    """The default classifier grid, read from the schema with plain YAML (a GPU node may lack the
    config checker's jsonschema)."""
    import yaml

    from medbias.studies.hurtful.classify import network_grid

    schema = yaml.safe_load((REPO / "config/schema.yaml").read_text())
    grid = schema["properties"]["hurtful"]["properties"]["downstream"]["properties"]["grid"]["properties"]
    return network_grid(grid["layers"]["default"], grid["width_ratio"]["default"], grid["dropout"]["default"])


def grid_seconds(tasks: int, rows: int, device: str, stacked: bool, grid=None) -> float:
    """Seconds to train every network of ``grid`` (default: the schema's) for one epoch on ``tasks``
    tasks sharing ``rows`` training rows (and a quarter as many validation rows), stacked or one task
    at a time."""
    from medbias.studies.hurtful.classify import train_networks

    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows + rows // 4, CLASSIFIER_WIDTH)).astype(np.float32)
    y = (x[:, :tasks] + rng.normal(size=(len(x), tasks)) > 1).astype(np.float32)
    train, val = slice(0, rows), slice(rows, None)
    grid = classifier_grid() if grid is None else grid
    run = dict(max_epochs=1, patience=5, batch_size=256, device=device)
    train_networks(x[:512], y[:512, :2], x[:128], y[:128, :2], grid[-1], [0, 1], **run)  # warm-up
    _synchronise(device)
    start = time.perf_counter()
    for config in grid:
        if stacked:
            train_networks(x[train], y[train], x[val], y[val], config, list(range(tasks)), **run)
        else:
            for task in range(tasks):
                train_networks(
                    x[train], y[train, task : task + 1], x[val], y[val, task : task + 1], config, [task], **run
                )
    _synchronise(device)
    return time.perf_counter() - start


def stacked_grid_cost(tasks: int, rows: int, device: str) -> float:
    """Seconds per 1,000 task-row-epochs of the grid with ``tasks`` tasks stacked."""
    return grid_seconds(tasks, rows, device, stacked=True) / (tasks * rows / 1000)


def _synchronise(device: str) -> None:
    if device == "cuda":
        import torch

        torch.cuda.synchronize()
