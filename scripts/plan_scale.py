"""The scale planner: a measured plan for the full real run (all of MIMIC-III, the PubMed baseline, the 15 PLMs).

    .venv/bin/python scripts/plan_scale.py --tokenizer BERT_FOLDER [--gpu-costs FILE.json] [--markdown OUT.md]
    .venv/bin/python scripts/plan_scale.py --cpu-costs FILE.json [--gpu-costs FILE.json] [--markdown OUT.md]
    .venv/bin/python scripts/plan_scale.py --measure-gpu OUT.json --tokenizer BERT_FOLDER  # with CUDA

Measures the cost of one unit of every heavy rule on this machine, at the real model sizes (BERT-base
for frozen features, PLL, SEAT and the probe; the real classifier grid on 3,076 features; the real
skip-gram search; the real bootstrap), multiplies by the real counts (``scale_plan.yaml`` and the
repository's own config), and prints one table: rule, jobs, units, cost per unit and where it was
measured, core-hours, GPU-hours, and the projected wall time on one 16-core, 4-GPU SLURM node given
each job's threads and GPUs (a greedy list schedule; rule-level order, so a little pessimistic).

GPU costs come from ``--gpu-costs`` (a JSON written by ``--measure-gpu`` on a GPU machine; the
README's table used one measured on an H200), else they are derived from FLOPs at an assumed 40% of an
A100's bf16 peak and marked "not measured". Costs of PLMs other than BERT-base are the BERT-base cost
scaled by compute-equivalent parameters (``scale_plan.yaml``), and marked so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "workflow_scripts"))

from medbias.pipeline.cost_probes import classifier_grid  # noqa: E402
from medbias.pipeline.workflow_rules import declared_rules, rule_of_row  # noqa: E402

A100_BF16_PEAK = 312e12  # NVIDIA A100 datasheet, dense bf16 tensor FLOP/s
A100_FP32_PEAK = 19.5e12  # NVIDIA A100 datasheet, float32 (no tensor cores) FLOP/s
H100_BF16_PEAK = 989e12  # NVIDIA H100/H200 SXM datasheet, dense bf16 tensor FLOP/s
ASSUMED_MFU = 0.40
# each card's peaks by its name: dense bf16 (pretraining's model FLOP utilisation) and float32 without
# tensor cores (the classifier networks train in float32); NVIDIA datasheets, SXM
BF16_PEAKS = (("H100", H100_BF16_PEAK), ("H200", H100_BF16_PEAK), ("A100", A100_BF16_PEAK))
FP32_PEAKS = (("H100", 67e12), ("H200", 67e12), ("A100", A100_FP32_PEAK))
# assumed share of that peak for a stack of 28 tasks' networks (batched products of [28, 256, 3,076] by
# [28, 3,076, 1,538] and smaller, plus batch norm and Adam) until --measure-gpu measures it
STACKED_UTILISATION = 0.25
BERT_BASE_PARAMS = 86e6  # transformer-layer weights of BERT-base (FLOPs per token: 2 per weight forward, 6 in training)


# --- measurements ----------------------------------------------------------------------------------


def _timed(function, *args, **kwargs) -> float:
    start = time.perf_counter()
    function(*args, **kwargs)
    return time.perf_counter() - start


def bert_base(kind: str = "encoder"):
    """A randomly initialised BERT-base (12 x 768, vocabulary 30,522): the cost of a forward pass does
    not depend on the weights."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(), add_pooling_layer=False) if kind == "encoder" else BertForMaskedLM(BertConfig())
    return model.eval()


PLL_WORDS = ("the", "patient", "has", "asthma", "and", "black", "white", "gay", "often", "diabetes", "a", "person")


def random_sequences(rng: np.random.Generator, n: int, pieces: int) -> list[list[int]]:
    """``n`` id sequences of [CLS] + ``pieces`` random word pieces + [SEP] (BERT's ids 101 and 102)."""
    return [[101, *rng.integers(1000, 30000, pieces).tolist(), 102] for _ in range(n)]


def pll_texts(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` sentences of 12 words, the length of the StereoSet-style templates."""
    return [" ".join(rng.choice(PLL_WORDS, 12)) for _ in range(n)]


def measure_notes(n_notes: int, tokenizer_source: Path) -> dict[str, float]:
    """Seconds per MB of note text: the NOTEEVENTS ingest (CSV.gz to Parquet) and the note processing
    of one worker (split, tokenize, pack, count windows) on real-length notes, with the WordPiece
    tokenizer at ``tokenizer_source``; word pieces per character."""
    from medbias.io.mimic import ingest_notes
    from medbias.pipeline.cost_probes import NOTE_LENGTHS, note_stage_seconds, note_tokenizer, noteevents_frame
    from medbias.synth.note_lengths import note_length_table, sample_notes

    table = note_length_table(NOTE_LENGTHS)
    notes = sample_notes(table, n_notes, seed=5)
    mb = notes["TEXT"].str.len().sum() / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "mimic"
        folder.mkdir()
        noteevents_frame(notes).to_csv(
            folder / "NOTEEVENTS.csv.gz", index=False, compression={"method": "gzip", "mtime": 0}
        )
        ingest = _timed(ingest_notes, folder, Path(tmp) / "notes.parquet", table["category"], 50_000)
        tokenizer = note_tokenizer(tokenizer_source, Path(tmp) / "tok")
    cost = note_stage_seconds(notes["TEXT"].tolist(), tokenizer)
    pieces = sum(
        len(ids) for text in notes["TEXT"].head(500) for ids in tokenizer([text], add_special_tokens=False)["input_ids"]
    )
    return {
        "note_ingest_s_per_mb": ingest / mb,
        "note_processing_core_s_per_mb": float(sum(cost.values()).sum()) / mb,
        "pieces_per_char": pieces / notes["TEXT"].head(500).str.len().sum(),
    }


def measure_pubmed() -> dict[str, float]:
    """Seconds per MB of XML: one parse job (the map) and the reduce, on synthetic baseline files."""
    from medbias.io.pubmed import parse_decades, parse_file, write_decade_corpora
    from medbias.io.resources import read_umnsrs, read_wordsets
    from medbias.synth.pubmed import write_pubmed

    wordsets = read_wordsets(REPO / "config/resources/wordsets/rios2020.yaml")
    umnsrs = read_umnsrs(REPO / "config/resources/umnsrs/UMNSRS_similarity.csv")
    with tempfile.TemporaryDirectory() as tmp:
        paths, _, _ = write_pubmed(Path(tmp) / "pm", 1500, 2, 1, wordsets, umnsrs)
        mb = sum(Path(p).stat().st_size for p in paths) / 1e6
        parsed = [Path(tmp) / f"{k}.parquet" for k in range(len(paths))]
        parse = sum(_timed(parse_file, p, out) for p, out in zip(paths, parsed))
        decades = parse_decades([[1960, 1969], [1970, 1979], [1980, 1989], [1990, 1999], [2000, 2009], [2010, 2020]])
        outputs = {d.label: Path(tmp) / f"{d.label}.parquet" for d in decades}
        reduce = _timed(write_decade_corpora, parsed, decades, outputs)
    return {"pubmed_parse_core_s_per_mb": parse / mb, "pubmed_reduce_s_per_mb": reduce / mb}


def zipf_sentences(n_tokens: int, vocabulary: int = 50_000, seed: int = 0) -> list[list[str]]:
    """Sentences of 200 words drawn from a Zipf(1) vocabulary: word frequencies like real text's, which
    is what sets the cost of down-sampling and min_count."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, vocabulary + 1)
    tokens = rng.choice(vocabulary, size=n_tokens, p=p / p.sum())
    words = np.array([f"w{i}" for i in range(vocabulary)])
    return [list(words[tokens[i : i + 200]]) for i in range(0, n_tokens, 200)]


def measure_word2vec(config: dict, n_tokens: int, corpus_tokens: float) -> dict[str, float]:
    """Core-seconds per million token-epochs of every setting of the real search (config defaults and
    grid, Chiu et al.'s one-at-a-time), one gensim worker each; the sum over the search and the
    defaults' own cost (the replicates and the document null retrain one setting). ``min_count`` is
    scaled from a decade of ``corpus_tokens`` to the sample, so that it drops the same share of the
    Zipf text as it would of the decade (down-sampling is a relative frequency already)."""
    from medbias.core.skipgram import train_skipgram
    from medbias.studies.rios.skipgram import candidate_settings

    w2v = config["rios"]["word2vec"]
    sentences = zipf_sentences(n_tokens)
    settings = candidate_settings(w2v["defaults"], w2v["grid"], w2v["search"])

    def scaled(setting: dict) -> dict:
        return {**setting, "min_count": max(1, round(setting["min_count"] * n_tokens / corpus_tokens))}

    costs = [_timed(train_skipgram, sentences, scaled(setting), 1, 1, 1) / (n_tokens / 1e6) for setting in settings]
    return {
        "w2v_search_core_s_per_mtoken_epoch": float(sum(costs)),
        "w2v_default_core_s_per_mtoken_epoch": costs[0],
        "w2v_candidates": float(len(settings)),
    }


def measure_bert_cpu(threads: int, tokenizer_source: Path) -> dict[str, float]:
    """Core-seconds (wall x threads) of BERT-base on the CPU: one 512-piece window's last-four-layer
    [CLS] features; one probe sequence of 40 pieces; one SEAT sentence encoding; one StereoSet-style
    sentence's pseudo-log-likelihood (one masked copy per token), with the WordPiece tokenizer at
    ``tokenizer_source``."""
    import torch

    from medbias.core.batching import cls_vectors_of_ids
    from medbias.core.models import load_tokenizer
    from medbias.core.sentence_likelihood import pseudo_log_likelihood

    torch.set_num_threads(threads)
    encoder = bert_base()
    rng = np.random.default_rng(0)
    windows, short, sentence = (
        random_sequences(rng, 8, 510),
        random_sequences(rng, 64, 40),
        random_sequences(rng, 64, 12),
    )
    cls_vectors_of_ids(encoder, windows[:2], 0, (-4, -3, -2, -1), 2)  # warm-up
    window_s = _timed(cls_vectors_of_ids, encoder, windows, 0, (-4, -3, -2, -1), 8) / len(windows)
    probe_s = _timed(cls_vectors_of_ids, encoder, short, 0, (-1,), 64) / len(short)
    seat_s = _timed(cls_vectors_of_ids, encoder, sentence, 0, (-1,), 64) / len(sentence)
    tokenizer = load_tokenizer(tokenizer_source)
    texts = pll_texts(rng, 64)
    mlm = bert_base("mlm")
    pll_s = _timed(pseudo_log_likelihood, mlm, tokenizer, texts, 64) / len(texts)
    return {
        name: value * threads
        for name, value in (
            ("window_core_s", window_s),
            ("probe_sequence_core_s", probe_s),
            ("seat_sentence_core_s", seat_s),
            ("pll_sentence_core_s", pll_s),
        )
    }


def _grid_worker(rows: int) -> float:
    import torch

    torch.set_num_threads(1)
    return measure_mlp_grid(rows, "cuda")


def concurrent_grid(processes: int, rows: int) -> float:
    """Seconds per 1,000 row-epochs of the grid when ``processes`` processes train grids on one GPU at
    once (aggregate throughput): small networks at batch 256 leave a GPU idle between kernel launches."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_grid_worker, [2000] * processes))  # start-up and warm-up
        start = time.perf_counter()
        list(pool.map(_grid_worker, [rows] * processes))
        return (time.perf_counter() - start) / (processes * rows / 1000)


def measure_mlp_grid(rows: int, device: str) -> float:
    """Seconds per 1,000 training-row epochs of the whole default grid (19 networks) on 3,076 features
    (four [CLS] layers and the acuity scores), batch 256, one epoch each with its validation pass."""
    from medbias.studies.hurtful.classify import train_network

    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, 3076)).astype(np.float32)
    y = (x[:, 0] + rng.normal(size=rows) > 1).astype(np.float32)
    val = rows // 4
    train_network(x[:512], y[:512], x[:128], y[:128], classifier_grid()[-1], 0, max_epochs=1, device=device)  # warm-up
    seconds = sum(
        _timed(train_network, x, y, x[:val], y[:val], config, 0, max_epochs=1, device=device)
        for config in classifier_grid()
    )
    return seconds / (rows / 1000)


def measure_bootstrap(test_rows: int) -> float:
    """Seconds of the fairness bootstrap of one task (1,000 replicates, the four attributes)."""
    from medbias.metrics.fairness import fairness_gaps

    rng = np.random.default_rng(0)
    label = (rng.random(test_rows) < 0.2).astype(int)
    predicted = np.where(rng.random(test_rows) < 0.8, label, 1 - label)
    groups = {
        "gender": ["M", "F"],
        "language": ["English", "Other"],
        "ethnicity": ["WHITE", "BLACK", "HISPANIC", "ASIAN", "OTHER"],
        "insurance": ["Medicare", "Private", "Medicaid"],
    }
    return sum(
        _timed(fairness_gaps, predicted, label, rng.choice(order, test_rows), order, 1000, np.random.default_rng(1))
        for order in groups.values()
    )


def measure_mitigation(test_rows: int, validation_rows: int, train_stays: int) -> dict[str, float]:
    """Seconds of the mitigation stage's and the intersectional analysis's units at the real sizes: the
    post-processor fitted on one task's validation stays and applied to its test stays (one attribute
    of five groups); fairlearn's reduction on ``train_stays`` stay rows of 3,080 features (per 1,000
    stays: a logistic regression's cost grows about linearly in rows); the before/after tables of one
    task, attribute and method (1,000 replicates); one task's worst cells and epsilon for a crossing
    of 24 cells (4,999 null draws per metric, 1,000 replicates)."""
    import pandas as pd

    from medbias.metrics.bootstrap import within_label_resamples
    from medbias.studies.hurtful.intersections import intersectional_task
    from medbias.studies.hurtful.mitigation.reductions import fit_exponentiated_gradient
    from medbias.studies.hurtful.mitigation.threshold import fit_threshold_optimizer
    from medbias.studies.hurtful.mitigation_effects import paired_gap_changes, paired_performance

    rng = np.random.default_rng(0)
    ethnicity = np.array(["WHITE", "BLACK", "HISPANIC/LATINO", "ASIAN", "OTHER"])

    def stays(n: int) -> pd.DataFrame:
        label = (rng.random(n) < 0.2).astype(int)
        score = 1 / (1 + np.exp(-(rng.normal(size=n) + 1.5 * label - 1)))
        return pd.DataFrame(
            {
                "probability": score,
                "label": label,
                "prediction": (score > 0.5).astype(int),
                "ethnicity": rng.choice(ethnicity, n),
                "gender": rng.choice(["F", "M"], n),
                "insurance": rng.choice(["Medicare", "Private", "Medicaid"], n),
                "age": rng.normal(64, 16, n),
            }
        )

    validation, test = stays(validation_rows), stays(test_rows)
    settings = {"constraints": "true_positive_rate_parity", "objective": "balanced_accuracy_score", "grid_size": 1000}

    def threshold() -> None:
        optimizer = fit_threshold_optimizer(validation, "ethnicity", settings)
        optimizer.predict(
            test[["probability"]].to_numpy(), sensitive_features=test["ethnicity"].to_numpy(), random_state=0
        )

    x = rng.normal(size=(train_stays, 3080)).astype(np.float32)
    y = (x[:, 0] + rng.normal(size=train_stays) > 1).astype(int)
    reduction = {
        "constraints": "true_positive_rate_parity",
        "eps": 0.01,
        "max_iter": 50,
        "C": 1.0,
        "solver_iterations": 1000,
    }
    label = test["label"].to_numpy()
    index = within_label_resamples(label, 1000, rng)
    after = np.where(rng.random(test_rows) < 0.9, test["prediction"], 1 - test["prediction"])

    def effects() -> None:
        paired_gap_changes(
            test["prediction"].to_numpy(),
            after,
            label,
            test["ethnicity"].to_numpy(),
            list(ethnicity),
            index,
            {"rows": 20, "positives": 10, "negatives": 10},
        )
        paired_performance(
            test["probability"].to_numpy(),
            test["prediction"].to_numpy(),
            test["probability"].to_numpy(),
            after,
            label,
            index,
        )

    crossing = {
        "age_bands": [18, 45, 65, 80],
        "min_cell": {"rows": 20, "positives": 5, "negatives": 5},
        "null_draws": 4999,
        "smoothing": 0.5,
    }
    return {
        "threshold_s_per_task_attribute": _timed(threshold),
        "reductions_s_per_1k_stays": _timed(
            fit_exponentiated_gradient, x, y, rng.choice(ethnicity, train_stays), reduction
        )
        / (train_stays / 1000),
        "mitigation_effects_s_per_unit": _timed(effects),
        "intersections_s_per_task_crossing": _timed(
            intersectional_task, test, ["gender", "ethnicity", "insurance"], crossing, {}, 1000, rng
        ),
    }


def measure_gpu(out: Path, tokenizer_source: Path) -> None:
    """The GPU costs, on the first CUDA device: BERT-base window features and PLL sentences in float32
    and bf16; SciBERT-size pretraining steps in bf16 autocast at 128 and 512 pieces (tokens/s and model
    FLOP utilisation against the card's bf16 peak, for an A100, H100 or H200); the classifier grid with
    1, 2, 4 and 8 processes sharing the GPU; CPU-vs-GPU agreement of one grid selection."""
    import torch

    from medbias.core.batching import cls_vectors_of_ids
    from medbias.core.models import load_tokenizer
    from medbias.core.sentence_likelihood import pseudo_log_likelihood

    name = torch.cuda.get_device_name(0)
    peak = card_peak(name, BF16_PEAKS)[1]  # for the model FLOP utilisation (left out on other cards)
    result: dict[str, object] = {"device": name, "torch": torch.__version__}
    rng = np.random.default_rng(0)

    def synced(function, *args, **kwargs) -> float:
        torch.cuda.synchronize()
        seconds = _timed(function, *args, **kwargs)
        torch.cuda.synchronize()
        return seconds

    windows, probes, texts = random_sequences(rng, 2048, 510), random_sequences(rng, 4096, 40), pll_texts(rng, 2048)
    tokenizer = load_tokenizer(tokenizer_source)
    for dtype, label in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
        encoder = bert_base().to("cuda", dtype)
        cls_vectors_of_ids(encoder, windows[:128], 0, (-4, -3, -2, -1), 64)
        result[f"window_gpu_s_{label}"] = synced(cls_vectors_of_ids, encoder, windows, 0, (-4, -3, -2, -1), 64) / len(
            windows
        )
        result[f"probe_sequence_gpu_s_{label}"] = synced(cls_vectors_of_ids, encoder, probes, 0, (-1,), 128) / len(
            probes
        )
        mlm = bert_base("mlm").to("cuda", dtype)
        pseudo_log_likelihood(mlm, tokenizer, texts[:64], 64)
        result[f"pll_sentence_gpu_s_{label}"] = synced(pseudo_log_likelihood, mlm, tokenizer, texts, 64) / len(texts)
        del encoder, mlm
        torch.cuda.empty_cache()

    from medbias.pipeline.cost_probes import pretraining_rate

    for length, batch in ((128, 128), (512, 32)):
        sequences_per_s, params = pretraining_rate({"vocab_size": 31090}, batch, 20, "cuda", length=length, warmup=3)
        tokens_per_s = sequences_per_s * length
        result[f"pretrain_tokens_per_s_{length}"] = tokens_per_s
        if peak:
            result[f"pretrain_mfu_{length}"] = 6 * params * tokens_per_s / peak
        result["pretrain_params"] = params
        torch.cuda.empty_cache()

    result["mlp_grid_gpu_s_per_1k_rows"] = measure_mlp_grid(60_000, "cuda")
    # the key grid_cost_with_workers reads
    result["mlp_grid_gpu_s_per_1k_rows_by_processes"] = {str(n): concurrent_grid(n, 20_000) for n in (1, 2, 4, 8)}
    from medbias.pipeline.cost_probes import stacked_grid_cost as measure_stacked

    result["mlp_grid_stacked_gpu_s_per_1k_task_rows"] = measure_stacked(28, 20_000, "cuda")
    result["agreement"] = grid_agreement()
    out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


def grid_agreement() -> dict[str, object]:
    """One task's grid on the CPU and on the GPU: the selected network, c and validation AUPRC of each."""
    from medbias.studies.hurtful.classify import NetworkConfig, select_classifier

    rng = np.random.default_rng(3)
    n, d = 6000, 256
    note = np.arange(n) // 3  # three windows per note, one label per note
    label = (rng.random(n // 3) < 0.3).astype(np.float32)
    y = label[note]
    x = (rng.normal(size=(n, d)) + 0.4 * y[:, None] * (np.arange(d) < 8)).astype(np.float32)
    train, val = slice(0, 4500), slice(4500, n)
    grid = [NetworkConfig(1, 2, 0.0), NetworkConfig(2, 2, 0.0), NetworkConfig(2, 4, 0.2), NetworkConfig(3, 2, 0.2)]
    out = {}
    for device in ("cpu", "cuda"):
        chosen = select_classifier(
            x[train],
            y[train],
            x[val],
            y[val],
            note[val],
            grid,
            [0.5, 1, 2],
            seed=0,
            max_epochs=30,
            patience=3,
            device=device,
        )
        out[device] = {
            "config": chosen.trained.config.__dict__,
            "c": chosen.c,
            "auprc": chosen.validation_auprc,
            "grid_auprc": [r["validation_auprc"] for r in chosen.grid],
        }
    out["max_auprc_difference"] = float(
        np.max(np.abs(np.subtract(out["cpu"]["grid_auprc"], out["cuda"]["grid_auprc"])))
    )
    return out


def derived_gpu_costs() -> dict[str, float]:
    """GPU costs from FLOPs at ASSUMED_MFU of an A100's bf16 peak (not measured)."""
    flops = ASSUMED_MFU * A100_BF16_PEAK
    return {
        # forward passes: 2 FLOPs per weight and token; a window is 512 tokens, a probe sequence 40 + 2
        "window_gpu_s_bf16": 2 * BERT_BASE_PARAMS * 512 / flops,
        "probe_sequence_gpu_s_bf16": 2 * BERT_BASE_PARAMS * 42 / flops,
        # PLL: 12 masked copies of a 14-token sentence; such short batches run at an eighth of that utilisation
        "pll_sentence_gpu_s_fp32": 12 * 2 * BERT_BASE_PARAMS * 14 / (flops / 8),
        # training: 6 FLOPs per parameter (110 M with the embeddings) and token; length 512 at 80% of 128's rate
        "pretrain_tokens_per_s_128": flops / (6 * 110e6),
        "pretrain_tokens_per_s_512": flops / (6 * 110e6) * 0.8,
        # the grid's small float32 networks at batch 256: 5% of an A100's float32 peak
        "mlp_grid_gpu_s_per_1k_rows": grid_flops_per_row_epoch() * 1000 / (0.05 * A100_FP32_PEAK),
    }


def grid_flops_per_row_epoch() -> float:
    """FLOPs of one training row through every network of the grid (forward and backward, 6 per weight)
    plus its share of the validation pass (a quarter as many rows, forward only)."""
    weights = 0
    for config in classifier_grid():
        widths = [3076, *config.widths(3076), 1]
        weights += sum(a * b for a, b in zip(widths, widths[1:]))
    return weights * (6 + 2 * 0.25)


# --- the plan --------------------------------------------------------------------------------------


@dataclass
class Row:
    """One heavy rule at the real scale: ``jobs`` jobs of ``threads`` CPUs and ``gpus`` GPUs, each
    taking ``job_hours`` of wall time; ``core_hours``/``gpu_hours`` the totals; ``after`` the rules it
    waits for."""

    rule: str
    jobs: int
    units: str
    cost: str
    where: str
    core_hours: float
    gpu_hours: float
    threads: int
    gpus: int
    job_hours: float
    after: tuple[str, ...] = ()
    pretraining: bool = False
    notes: list[str] = field(default_factory=list)


def cpu_row(rule, jobs, units, cost, where, core_seconds_total, threads, after=(), **extra) -> Row:
    hours = core_seconds_total / 3600
    return Row(rule, jobs, units, cost, where, hours, 0.0, threads, 0, hours / jobs / threads, tuple(after), **extra)


def gpu_row(rule, jobs, units, cost, where, gpu_seconds_total, threads, after=(), **extra) -> Row:
    hours = gpu_seconds_total / 3600
    return Row(rule, jobs, units, cost, where, 0.0, hours, threads, 1, hours / jobs, tuple(after), **extra)


def real_config(path: Path) -> dict:
    """The resolved real-world config (defaults from the schema, registry models enrolled)."""
    from medbias.pipeline.config import enrol_registry_models, load_config

    return enrol_registry_models(load_config(path, REPO / "config/schema.yaml"))


def card_peak(device: str, peaks) -> tuple[str, float | None]:
    """The card of ``peaks`` (BF16_PEAKS or FP32_PEAKS) whose name is in ``device``, and its peak
    FLOP/s; ("", None) for another card."""
    return next(((card, value) for card, value in peaks if card in device), ("", None))


def stacked_grid_cost(gpu: dict) -> tuple[float, str]:
    """GPU seconds per 1,000 task-row-epochs of the grid when a cohort's 28 phenotype tasks train as
    one stack (``classify.classify_tasks``): measured (``--measure-gpu``), or derived from the grid's
    FLOPs at ``STACKED_UTILISATION`` of the card's float32 peak."""
    if "mlp_grid_stacked_gpu_s_per_1k_task_rows" in gpu:
        return gpu["mlp_grid_stacked_gpu_s_per_1k_task_rows"], "measured, 28 tasks stacked"
    card, peak = card_peak(str(gpu.get("device", "")), FP32_PEAKS)
    if peak is None:  # not measured on a known card: the plan's reference card
        card, peak = "A100", A100_FP32_PEAK
    return (
        grid_flops_per_row_epoch() * 1000 / (STACKED_UTILISATION * peak),
        f"not measured: the grid's FLOPs at {STACKED_UTILISATION:.0%} of the {card}'s float32 peak",
    )


def grid_cost_with_workers(gpu: dict, workers: int) -> tuple[float, str]:
    """GPU seconds per 1,000 row-epochs of the grid with ``workers`` tasks at once on the GPU: the
    measured figure for the largest measured process count not above ``workers``."""
    by_processes = {int(k): v for k, v in gpu.get("mlp_grid_gpu_s_per_1k_rows_by_processes", {}).items()}
    usable = [n for n in by_processes if n <= workers]
    if not usable:
        return gpu["mlp_grid_gpu_s_per_1k_rows"], "one process"
    n = max(usable)
    return by_processes[n], "one process" if n == 1 else f"{n} processes"


def build_plan(
    config: dict, counts: dict, cpu: dict[str, float], gpu: dict[str, float], gpu_where: str, cpu_where: str
) -> list[Row]:
    """Every row of the plan, stage by stage: the notes and the clinical BERT, the downstream classifiers,
    the PubMed study, the mental study and the PLM study."""
    threads = job_threads(config)
    stages = (notes_and_pretraining_rows, classifier_rows, rios_rows, mental_rows, plm_rows)
    return [row for stage in stages for row in stage(config, counts, cpu, gpu, (cpu_where, gpu_where), threads)]


def job_threads(config: dict) -> dict[str, int]:
    """Threads per rule: the cluster profile's set-threads, and the config keys that set a rule's own."""
    profile = __import__("yaml").safe_load((REPO / "cluster/slurm/config.yaml").read_text())
    return {
        **profile.get("set-threads", {}),
        "mimic_notes": config["mimic"]["threads"],
        "rios_word2vec": config["rios"]["word2vec"]["threads"],
        "rios_document_null": config["rios"]["word2vec"]["threads"],
        "hurtful_pretrain": config["hurtful"]["pretrain"]["threads"],
    }


def mimic_sizes(config: dict, counts: dict) -> dict[str, float]:
    """The real run's sizes the MIMIC-III rows share: note text (MB), windows, training rows, tasks."""
    import pandas as pd

    m = counts["mimic"]
    lengths = pd.read_csv(
        REPO / "config/resources/mimic-facts/note_lengths.tsv", sep="\t", comment="#", keep_default_na=False
    )
    return {
        "text_mb": float((lengths["notes"] * lengths["mean_chars"]).sum()) / 1e6,
        "windows": sum(m["stays"][c] * m["windows_per_stay"][c] for c in m["stays"]),
        "train_rows": sum(
            m["tasks"][c] * m["stays"][c] * m["windows_per_stay"][c] * m["train_share"] for c in m["tasks"]
        ),
        "tasks": sum(m["tasks"].values()),
    }


def notes_and_pretraining_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """NOTEEVENTS ingest and processing, the clinical BERT pretraining, the frozen features."""
    cpu_where, gpu_where = where
    m = counts["mimic"]
    sizes = mimic_sizes(config, counts)
    text_mb, windows = sizes["text_mb"], sizes["windows"]
    models = len(config["hurtful"]["downstream"]["models"])
    variants = len(config["hurtful"]["variants"])
    rows: list[Row] = []

    rows.append(
        cpu_row(
            "mimic_ingest",
            1,
            f"{text_mb:,.0f} MB of note text",
            f"{cpu['note_ingest_s_per_mb']:.3f} s/MB",
            cpu_where,
            text_mb * cpu["note_ingest_s_per_mb"],
            1,
        )
    )
    rows.append(
        cpu_row(
            "mimic_notes",
            1,
            f"{text_mb:,.0f} MB of note text",
            f"{cpu['note_processing_core_s_per_mb']:.2f} core-s/MB",
            cpu_where,
            text_mb * cpu["note_processing_core_s_per_mb"],
            threads["mimic_notes"],
            ["mimic_ingest"],
        )
    )
    pretrain_tokens = sum(int(length) * n for length, n in m["pretrain_sequences"].items())
    pretrain_s = sum(
        int(length) * n / gpu[f"pretrain_tokens_per_s_{length}"] for length, n in m["pretrain_sequences"].items()
    )
    rows.append(
        gpu_row(
            "hurtful_pretrain",
            variants,
            f"{variants} x {pretrain_tokens / 1e9:.2f} G tokens",
            f"{gpu['pretrain_tokens_per_s_128']:,.0f} / {gpu['pretrain_tokens_per_s_512']:,.0f} tokens/s (128 / 512)",
            gpu_where,
            variants * pretrain_s,
            threads["hurtful_pretrain"],
            ["mimic_notes"],
            pretraining=True,
        )
    )
    rows.append(
        gpu_row(
            "hurtful_features",
            models,
            f"{models} x {windows / 1e6:.2f} M windows",
            f"{gpu['window_gpu_s_bf16'] * 1e3:.2f} ms/window (bf16)",
            gpu_where,
            models * windows * gpu["window_gpu_s_bf16"],
            threads["hurtful_features"],
            ["hurtful_pretrain", "mimic_notes"],
        )
    )
    return rows


def classifier_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """The downstream classifier grid (stacked phenotypes), its replicates, the gaps, the mitigation
    stage and the probe."""
    cpu_where, gpu_where = where
    m = counts["mimic"]
    sizes = mimic_sizes(config, counts)
    train_rows, tasks = sizes["train_rows"], sizes["tasks"]
    down = config["hurtful"]["downstream"]
    models, replicates = len(down["models"]), down["replicates"]
    variants = len(config["hurtful"]["variants"])
    rows: list[Row] = []
    grid_size = len(classifier_grid())
    row_epochs = train_rows * m["epochs_per_fit"]
    # the cohorts of several tasks (the phenotypes) train as stacks on the GPU; a cohort of one task alone
    stacked_rows = (
        sum(
            m["tasks"][c] * m["stays"][c] * m["windows_per_stay"][c] * m["train_share"]
            for c in m["tasks"]
            if m["tasks"][c] > 1
        )
        * m["epochs_per_fit"]
    )
    classify_jobs = models * replicates
    searched = models if down["replicates_search"] == "once" else classify_jobs  # jobs that search the whole grid
    stacked_s, stacked_how = stacked_grid_cost(gpu)
    alone_s, alone_how = grid_cost_with_workers(gpu, 1)
    unstacked_s = grid_cost_with_workers(gpu, down["classify_workers"])[0]
    job_s = (stacked_rows * stacked_s + (row_epochs - stacked_rows) * alone_s) / 1000
    cost = (
        f"{stacked_s:.4f} s per 1k task-row-epochs of the grid, phenotypes stacked ({stacked_how}); "
        f"{alone_s:.3f} for the one mortality task (measured, {alone_how})"
    )
    classify_rule = "hurtful_classify" if searched < classify_jobs else "hurtful_classify (+ replicates)"
    rows.append(
        gpu_row(
            classify_rule,
            searched,
            f"{searched} x {row_epochs / 1e6:.0f} M row-epochs x {grid_size} networks",
            cost,
            gpu_where,
            searched * job_s,
            threads["hurtful_classify"],
            ["hurtful_features"],
            notes=[
                f"one task at a time instead (4 tasks at once in processes, measured): "
                f"{unstacked_s:.3f} s per 1k row-epochs = "
                f"{searched * row_epochs / 1000 * unstacked_s / 3600:,.0f} GPU-hours; on the CPU: "
                f"{cpu['mlp_grid_core_s_per_1k_rows']:.2f} core-s per 1k row-epochs = "
                f"{classify_jobs * row_epochs / 1000 * cpu['mlp_grid_core_s_per_1k_rows'] / 3600:,.0f} core-hours "
                f"for every replicate's grid"
            ],
        )
    )
    if searched < classify_jobs:  # replicates_search: once
        retrained = classify_jobs - searched
        rows.append(
            gpu_row(
                "hurtful_classify_replicate",
                retrained,
                f"{retrained} x {row_epochs / 1e6:.0f} M row-epochs x 1 network (each task's chosen one)",
                "the grid's cost per network (its mean)",
                gpu_where,
                retrained * job_s / grid_size,
                threads["hurtful_classify"],
                ["hurtful_classify"],
            )
        )
    classifiers = [r.rule for r in rows if r.rule.startswith("hurtful_classify")]
    test_rows = int(m["stays"]["pa"] * m["test_share"])
    rows.append(
        cpu_row(
            "hurtful_gaps (+ replicates)",
            classify_jobs,
            f"{classify_jobs} x {tasks} tasks",
            f"{cpu['bootstrap_s_per_task']:.2f} s/task ({test_rows:,} test stays, 4 attributes, 1,000 replicates)",
            cpu_where,
            classify_jobs * tasks * cpu["bootstrap_s_per_task"],
            1,
            classifiers,
        )
    )
    rows += mitigation_rows(config, m, cpu, cpu_where, gpu, gpu_where, job_s / grid_size, threads)
    probe_units = config["hurtful"]["probe"]["max_sequences"] * variants
    rows.append(
        cpu_row(
            "hurtful_probe",
            1,
            f"{probe_units / 1e3:,.0f} k sequences of ~{m['probe_tokens_per_sequence']} pieces",
            f"{cpu['probe_sequence_core_s'] * 1e3:.0f} core-ms/sequence",
            cpu_where,
            probe_units * cpu["probe_sequence_core_s"],
            threads["hurtful_probe"],
            ["hurtful_pretrain"],
        )
    )

    return rows


def rios_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """PubMed parsing and ingest, and the skip-gram trainings (``word2vec_rows``)."""
    cpu_where, gpu_where = where
    pm = counts["pubmed"]
    rows: list[Row] = []
    rows.append(
        cpu_row(
            "rios_parse",
            pm["files"],
            f"{pm['xml_mb'] / 1e3:,.0f} GB of XML",
            f"{cpu['pubmed_parse_core_s_per_mb']:.2f} core-s/MB",
            cpu_where,
            pm["xml_mb"] * cpu["pubmed_parse_core_s_per_mb"],
            1,
        )
    )
    rows.append(
        cpu_row(
            "rios_ingest",
            1,
            f"{pm['xml_mb'] / 1e3:,.0f} GB of XML",
            f"{cpu['pubmed_reduce_s_per_mb']:.3f} s/MB",
            cpu_where,
            pm["xml_mb"] * cpu["pubmed_reduce_s_per_mb"],
            1,
            ["rios_parse"],
        )
    )
    rows += word2vec_rows(config["rios"], pm, cpu, cpu_where, threads)

    return rows


def mental_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """The mental study's contextual features, one job per contextual embedding."""
    cpu_where, gpu_where = where
    rows: list[Row] = []
    mn = counts["mental"]
    contextual = sum(1 for name in config["mental"].get("embeddings") or [] if name in config["models"]) or 2
    mental_windows = contextual * mn["notes"] * mn["windows_per_note"] * mn["treatments"]
    rows.append(
        gpu_row(
            "mental_features",
            contextual,
            f"{mental_windows / 1e3:,.0f} k windows",
            f"{gpu['window_gpu_s_bf16'] * 1e3:.2f} ms/window (bf16)",
            gpu_where,
            mental_windows * gpu["window_gpu_s_bf16"],
            2,
        )
    )

    return rows


def plm_rows(
    config: dict,
    counts: dict,
    cpu: dict[str, float],
    gpu: dict[str, float],
    where: tuple[str, str],
    threads: dict[str, int],
) -> list[Row]:
    """The PLM evaluations, the Dropout and CDA pretrainings and the fine-tunings, each model's cost the
    BERT-base cost scaled by its parameters."""
    from medbias.pipeline.plan import plm_evaluations, plm_finetunes

    cpu_where, gpu_where = where
    pl = counts["plm"]
    rows: list[Row] = []
    evaluations = plm_evaluations(config["plm"], config["models"])
    size = {name: pl["params_m"][name] / pl["reference_params_m"] for name in pl["params_m"]}
    sentence_s = 0.0
    for model, _ in evaluations:
        kind = config["models"][model]["kind"]
        per_sentence = gpu["pll_sentence_gpu_s_fp32"] * (1 if kind == "masked" else 1 / pl["tokens_per_sentence"])
        sentence_s += size[model] * (
            pl["pll_sentences"] * per_sentence + pl["seat_sentences"] * gpu["window_gpu_s_bf16"] * 16 / 512
        )
    rows.append(
        gpu_row(
            "plm_evaluate",
            len(evaluations),
            f"{len(evaluations)} x ({pl['pll_sentences']:,} likelihood + ~{pl['seat_sentences']:,} SEAT sentences)",
            f"{gpu['pll_sentence_gpu_s_fp32'] * 1e3:.2f} ms/PLL sentence at BERT-base, scaled by parameters",
            gpu_where,
            sentence_s,
            threads["plm_evaluate"],
            ["plm_dropout"],
        )
    )
    dropout = config["plm"]["debias"]["dropout"]
    dropout_tokens = dropout["steps"] * dropout["batch_size"] * dropout["max_length"]
    dropout_s = sum(size[name] * dropout_tokens / gpu["pretrain_tokens_per_s_128"] for name in dropout["models"])
    rows.append(
        gpu_row(
            "plm_dropout",
            len(dropout["models"]),
            f"{len(dropout['models'])} x {dropout_tokens / 1e6:.0f} M tokens",
            "pretraining tokens/s at 128, scaled by parameters",
            gpu_where,
            dropout_s,
            threads["plm_dropout"],
            pretraining=True,
        )
    )
    cda = config["plm"]["debias"]["cda"]
    if "cda" in config["plm"]["debias"]["methods"] and cda["models"]:
        per_type = sum(size[name] * dropout_tokens / gpu["pretrain_tokens_per_s_128"] for name in cda["models"])
        jobs = len(cda["models"]) * len(cda["bias_types"])
        rows.append(
            gpu_row(
                "plm_cda",
                jobs,
                f"{len(cda['models'])} models x {len(cda['bias_types'])} bias types x "
                f"{dropout_tokens / 1e6:.0f} M tokens",
                "pretraining tokens/s at 128, scaled by parameters (the Dropout recipe on the augmented corpus)",
                gpu_where,
                per_type * len(cda["bias_types"]),
                threads.get("plm_cda", threads["plm_dropout"]),
                pretraining=True,
            )
        )
    finetunes = plm_finetunes(config["plm"], config["models"])
    ft_tokens = pl["finetune_examples"] * pl["finetune_tokens_per_example"] * pl["finetune_epochs"]
    ft_s = sum(size[model] * ft_tokens / gpu["pretrain_tokens_per_s_128"] for model, _ in finetunes)
    rows.append(
        gpu_row(
            "plm_finetune",
            len(finetunes),
            f"{len(finetunes)} x {ft_tokens / 1e9:.2f} G tokens",
            "pretraining tokens/s at 128, scaled by parameters",
            gpu_where,
            ft_s,
            threads["plm_finetune"],
            ["plm_dropout"],
        )
    )
    return rows


def mitigation_rows(
    config: dict, m: dict, cpu: dict[str, float], cpu_where: str, gpu: dict, gpu_where: str, network_s: float, threads
) -> list[Row]:
    """The mitigation stage's jobs (one per mitigated model and method that runs as a job), its tables,
    and the intersectional analysis, at the real counts. ``network_s``: one classifier job's cost per
    network of the grid (what reweighing retrains once per attribute)."""
    from medbias.pipeline.plan import mitigation_jobs

    mitigation, sections = config["hurtful"]["mitigation"], config["hurtful"]["intersections"]
    models, attributes = len(mitigation["models"]), len(mitigation["attributes"])
    tasks = sum(m["tasks"].values())
    train_stays = sum(m["tasks"][c] * m["stays"][c] * m["train_share"] for c in m["tasks"])  # over every task
    methods = {method for _, method in mitigation_jobs(mitigation)}
    rows: list[Row] = []
    units = f"{models} x {attributes} attributes x {tasks} tasks"
    if "threshold" in methods:
        rows.append(
            cpu_row(
                "hurtful_mitigate (threshold)",
                models,
                units,
                f"{cpu['threshold_s_per_task_attribute']:.2f} s per task and attribute (measured)",
                cpu_where,
                models * attributes * tasks * cpu["threshold_s_per_task_attribute"],
                1,
                ["hurtful_classify"],
            )
        )
    if "reductions" in methods:
        rows.append(
            cpu_row(
                "hurtful_mitigate (reductions)",
                models,
                f"{units}, {train_stays / tasks / 1e3:,.1f} k training stays each",
                f"{cpu['reductions_s_per_1k_stays']:.2f} s per 1k stays of 3,080 features (measured at 2k, "
                "linear in rows)",
                cpu_where,
                models * attributes * train_stays / 1000 * cpu["reductions_s_per_1k_stays"],
                1,
                ["hurtful_classify"],
            )
        )
    if "reweighing" in methods:
        rows.append(
            gpu_row(
                "hurtful_mitigate (reweighing)",
                models,
                f"{units}, each task's chosen network trained again",
                "the classifier grid's cost per network, once per attribute",
                gpu_where,
                models * attributes * network_s,
                threads["hurtful_classify"],
                ["hurtful_classify"],
            )
        )
    compared = len([method for method in mitigation["methods"] if method != "none"])
    rows.append(
        cpu_row(
            "hurtful_mitigation",
            1,
            f"{models} x {compared} methods x {attributes} attributes x {tasks} tasks",
            f"{cpu['mitigation_effects_s_per_unit']:.2f} s per task, attribute and method (1,000 replicates)",
            cpu_where,
            models * compared * attributes * tasks * cpu["mitigation_effects_s_per_unit"],
            1,
            [r.rule for r in rows],
        )
    )
    crossings = len(sections["crossings"])
    rows.append(
        cpu_row(
            "hurtful_intersections",
            1,
            f"{len(sections['models'])} x {crossings} crossings x {tasks} tasks",
            f"{cpu['intersections_s_per_task_crossing']:.2f} s per task and crossing (4,999 null draws per metric)",
            cpu_where,
            len(sections["models"]) * crossings * tasks * cpu["intersections_s_per_task_crossing"],
            1,
            ["hurtful_classify"],
        )
    )
    return rows


def word2vec_rows(rios: dict, pm: dict, cpu: dict[str, float], cpu_where: str, threads: dict) -> list[Row]:
    """The rios study's skip-gram rows: per decade, the search over min(search_tokens, decade) tokens
    and, where that was a sample, the chosen setting trained on the whole decade; the replicates that
    retrain the chosen setting (replicates_search: once) or search again (each); the document null's
    draws over min(document_null_tokens, decade), plus the sample's own model. A setting not yet chosen
    costs what the default setting costs."""
    w2v = rios["word2vec"]
    decade_mtokens = [pm["articles"][d] * pm["tokens_per_article"][d] / 1e6 for d in pm["articles"]]
    decades, replicates, epochs = len(decade_mtokens), rios["replicates"], w2v["epochs"]
    search_cost, train_cost = cpu["w2v_search_core_s_per_mtoken_epoch"], cpu["w2v_default_core_s_per_mtoken_epoch"]

    def capped(cap: int) -> list[float]:
        return [min(cap / 1e6, n) if cap else n for n in decade_mtokens]

    searched_on = capped(w2v["search_tokens"])
    retrain = sum(n for n, s in zip(decade_mtokens, searched_on) if s < n)  # decades searched on a sample
    searches = 1 if w2v["replicates_search"] == "once" else replicates
    total = sum(decade_mtokens)
    rows = [
        cpu_row(
            "rios_word2vec",
            decades * searches,
            f"{searches} x {cpu['w2v_candidates']:.0f} settings over {sum(searched_on):,.0f} M tokens"
            + (
                f" (samples of at most {w2v['search_tokens'] / 1e6:g} M per decade), then the chosen setting over "
                f"{retrain:,.0f} M"
                if retrain
                else ""
            )
            + f"; x {epochs} epochs",
            f"{search_cost:.0f} core-s per M token-epochs (all settings), {train_cost:.1f} (one setting)",
            cpu_where,
            searches * epochs * (sum(searched_on) * search_cost + retrain * train_cost),
            threads["rios_word2vec"],
            ["rios_ingest"],
        )
    ]
    if searches == 1 and replicates > 1:
        rows.append(
            cpu_row(
                "rios_word2vec_replicate",
                decades * (replicates - 1),
                f"{replicates - 1} x the chosen setting over {total / 1e3:.1f} G tokens x {epochs} epochs",
                f"{train_cost:.1f} core-s per M token-epochs (one setting)",
                cpu_where,
                (replicates - 1) * total * epochs * train_cost,
                threads["rios_word2vec"],
                ["rios_word2vec"],
                notes=[
                    f"its jobs differ by decade: the longest (the largest decade, {max(decade_mtokens):,.0f} M "
                    f"tokens) takes "
                    f"{max(decade_mtokens) * epochs * train_cost / threads['rios_word2vec'] / 3600:.1f} h "
                    f"on {threads['rios_word2vec']} cores"
                ],
            )
        )
    draws = rios["document_null_draws"]
    if draws:
        null_on = capped(rios["document_null_tokens"])
        trainings = sum((draws + (s < n)) * s for s, n in zip(null_on, decade_mtokens))
        rows.append(
            cpu_row(
                "rios_document_null",
                decades,
                f"{draws} draws over {sum(null_on):,.0f} M tokens"
                + (
                    f" (samples of at most {rios['document_null_tokens'] / 1e6:g} M per decade, plus each "
                    f"sample's own model)"
                    if sum(null_on) < total
                    else ""
                )
                + f" x {epochs} epochs",
                f"{train_cost:.1f} core-s per M token-epochs (one setting)",
                cpu_where,
                trainings * epochs * train_cost,
                threads["rios_document_null"],
                ["rios_word2vec"],
            )
        )
    return rows


def schedule(rows: list[Row], cores: int, gpus: int, include_pretraining: bool) -> tuple[float, dict[str, float]]:
    """Wall hours of a greedy list schedule on one node: a job starts when every job of the rules it
    waits for has finished and its threads (at most ``cores``) and GPU are free; GPU jobs first, then
    the longest.
    Rules left out (pretraining) count as done; a ready job of a priority rule (``is_priority_rule``)
    that does not fit keeps lower-priority jobs from starting. Returns the makespan and each rule's
    finishing hour."""
    rows = [r for r in rows if include_pretraining or not r.pretraining]
    present = {r.rule for r in rows}
    priority = {r.rule: is_priority_rule(r.rule) for r in rows}
    pending = [(r.rule, min(r.threads, cores), r.gpus, r.job_hours) for r in rows for _ in range(r.jobs)]
    remaining = {r.rule: r.jobs for r in rows}
    after = {r.rule: [a for a in r.after if a in present] for r in rows}
    running: list[tuple[float, str, int, int]] = []
    now, free_cores, free_gpus, finished = 0.0, cores, gpus, {}
    while pending or running:
        # the workflow's priority rules first (they hold resources for themselves), then GPU jobs (the
        # scarcer resource), then the longest
        pending.sort(key=lambda job: (-priority[job[0]], -job[2], -job[3]))
        started = True
        while started:
            started = False
            for job in pending:
                rule, need_cores, need_gpus, hours = job
                ready = all(remaining[a] == 0 for a in after[rule])
                if ready and priority[rule] and (need_cores > free_cores or need_gpus > free_gpus):
                    break  # nothing of lower priority takes the cores this job waits for
                if ready and need_cores <= free_cores and need_gpus <= free_gpus:
                    pending.remove(job)
                    running.append((now + hours, rule, need_cores, need_gpus))
                    free_cores -= need_cores
                    free_gpus -= need_gpus
                    started = True
                    break
        running.sort()
        end, rule, used_cores, used_gpus = running.pop(0)
        now, free_cores, free_gpus = end, free_cores + used_cores, free_gpus + used_gpus
        remaining[rule] -= 1
        if remaining[rule] == 0:
            finished[rule] = now
    return now, finished


RULES = declared_rules(REPO / "rules")


def is_priority_rule(label: str) -> bool:
    """A row of a rule with ``priority: CRITICAL_PATH_PRIORITY`` in rules/ (the chain to the clinical BERT)."""
    return rule_of_row(label, RULES).priority == "CRITICAL_PATH_PRIORITY"


def study_of(label: str) -> str:
    """The study of a row's rule, by the rule file that declares it."""
    rule = rule_of_row(label, RULES)
    if rule.study is None:
        raise ValueError(f"rule {rule.name} (rules/{rule.file}.smk) belongs to no study")
    return rule.study


def markdown(rows: list[Row], cores: int, gpus: int, sources: str) -> str:
    lines = [
        "| rule | jobs | units | cost per unit | measured | core-hours | GPU-hours | per job | hours per job |",
        "|---|---:|---|---|---|---:|---:|---|---:|",
    ]
    for r in rows:
        flag = " (pretraining)" if r.pretraining else ""
        lines.append(
            f"| `{r.rule}`{flag} | {r.jobs:,} | {r.units} | {r.cost} | {r.where} | {r.core_hours:,.1f} | "
            f"{r.gpu_hours:,.1f} | {r.threads} CPU{', 1 GPU' if r.gpus else ''} | {r.job_hours:,.2f} |"
        )
    lines.append(
        f"| **total** | {sum(r.jobs for r in rows):,} | | | | {sum(r.core_hours for r in rows):,.0f} | "
        f"{sum(r.gpu_hours for r in rows):,.0f} | | |"
    )
    lines.append("")
    for label, include in (("pretraining excluded", False), ("with pretraining", True)):
        hours, finished = schedule(rows, cores, gpus, include)
        last = sorted(finished.items(), key=lambda item: -item[1])[:3]
        lines.append(
            f"- Projected wall time on one {cores}-core, {gpus}-GPU node, the whole DAG, {label}: **{hours:,.1f} h** "
            f"({hours / 24:.1f} days); last to finish: " + ", ".join(f"`{rule}` at {h:,.1f} h" for rule, h in last)
        )
    alone = []
    for study in dict.fromkeys(study_of(r.rule) for r in rows):
        hours, _ = schedule([r for r in rows if study_of(r.rule) == study], cores, gpus, False)
        alone.append(f"{study} {hours:,.1f} h")
        if any(r.pretraining for r in rows if study_of(r.rule) == study):
            alone[-1] += (
                f" ({schedule([r for r in rows if study_of(r.rule) == study], cores, gpus, True)[0]:,.1f} h "
                f"with pretraining)"
            )
    lines.append("- Each study alone on that node, pretraining excluded: " + "; ".join(alone))
    for r in rows:
        lines += [f"- `{r.rule}`: {note}" for note in r.notes]
    lines.append(f"- {sources}")
    return "\n".join(lines)


def cpu_model() -> str:
    """The processor's model name (Linux), else its architecture."""
    import platform

    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.machine()


def tokenizer_source(args: argparse.Namespace) -> Path:
    """The BERT WordPiece tokenizer the measurements tokenize with (``--tokenizer``), checked first."""
    folder = args.tokenizer
    if folder is None or not (folder / "tokenizer_config.json").is_file():
        sys.exit(
            f"medbias: --tokenizer {folder or ''}: measuring here needs a BERT WordPiece tokenizer's folder "
            "(bert-base-uncased or your clinical BERT; its tokenizer_config.json), or --cpu-costs FILE.json"
        )
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gpu-costs", type=Path, help="JSON written by --measure-gpu on a GPU machine")
    parser.add_argument("--measure-gpu", type=Path, metavar="OUT.json", help="measure the GPU costs here and stop")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument(
        "--configfile",
        type=Path,
        default=REPO / "config/mimic.yaml",
        help="the real-world config to plan (default: config/mimic.yaml with the schema's defaults)",
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads of the CPU measurements")
    parser.add_argument(
        "--tokenizer", type=Path, help="a BERT WordPiece tokenizer's folder for the measurements (not with --cpu-costs)"
    )
    parser.add_argument("--cpu-costs", type=Path, help="reuse the CPU costs a previous run saved (--save-cpu-costs)")
    parser.add_argument("--save-cpu-costs", type=Path, help="write the measured CPU costs here (JSON)")
    parser.add_argument("--notes", type=int, default=3000, help="real-length notes of the note measurement")
    parser.add_argument("--w2v-tokens", type=int, default=300_000, help="tokens of each skip-gram measurement")
    args = parser.parse_args()
    if args.measure_gpu:
        from medbias.core.models import job_device

        if job_device() != "cuda":
            sys.exit(
                "medbias: --measure-gpu needs a CUDA GPU, and torch sees none here; run it on a GPU node "
                "and give the plan its JSON with --gpu-costs"
            )
        measure_gpu(args.measure_gpu, tokenizer_source(args))
        return
    import yaml

    counts = yaml.safe_load((REPO / "config/scale_plan.yaml").read_text())
    config = real_config(args.configfile)
    decade_tokens = float(
        np.median(
            [
                counts["pubmed"]["articles"][d] * counts["pubmed"]["tokens_per_article"][d]
                for d in counts["pubmed"]["articles"]
            ]
        )
    )
    started = time.perf_counter()
    cpu: dict[str, float] = json.loads(args.cpu_costs.read_text()) if args.cpu_costs else {}
    for label, step in (
        []
        if args.cpu_costs
        else (
            ("note ingest and processing", lambda: measure_notes(args.notes, tokenizer_source(args))),
            ("PubMed map and reduce", measure_pubmed),
            ("skip-gram search settings", lambda: measure_word2vec(config, args.w2v_tokens, decade_tokens)),
            ("BERT-base forward passes", lambda: measure_bert_cpu(args.threads, tokenizer_source(args))),
            (
                "classifier grid (CPU)",
                lambda: {"mlp_grid_core_s_per_1k_rows": measure_mlp_grid(4000, "cpu") * args.threads},
            ),
            (
                "mitigation and intersections",
                lambda: measure_mitigation(
                    int(counts["mimic"]["stays"]["pa"] * counts["mimic"]["test_share"]),
                    int(counts["mimic"]["stays"]["pa"] * (1 - counts["mimic"]["test_share"]) * 0.2),
                    2000,
                ),
            ),
            (
                "fairness bootstrap",
                lambda: {
                    "bootstrap_s_per_task": measure_bootstrap(
                        int(counts["mimic"]["stays"]["pa"] * counts["mimic"]["test_share"])
                    )
                },
            ),
        )
    ):
        t0 = time.perf_counter()
        cpu.update(step())
        print(f"measured {label} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if args.save_cpu_costs:
        args.save_cpu_costs.write_text(json.dumps({**cpu, "where": f"{os.cpu_count()}-core {cpu_model()}"}, indent=1))
    cpu_where = f"here: {cpu.get('where', f'{os.cpu_count()}-core {cpu_model()}')}"
    if args.gpu_costs:
        gpu = json.loads(args.gpu_costs.read_text())
        gpu_where = f"on {gpu['device']} ({args.gpu_costs.name})"
    else:
        gpu, gpu_where = derived_gpu_costs(), f"not measured: FLOPs at {ASSUMED_MFU:.0%} of an A100's bf16 peak"
    rows = build_plan(config, counts, cpu, gpu, gpu_where, cpu_where)
    measured = (
        f"read from {args.cpu_costs.name}" if args.cpu_costs else f"measured in {time.perf_counter() - started:.0f} s"
    )
    sources = (
        f"Counts: config/scale_plan.yaml (sources there), {args.configfile.name} with the schema's defaults, "
        f"cluster/slurm/config.yaml. CPU costs {measured}; a CPU job's hours assume its threads scale linearly."
    )
    table = markdown(rows, counts["node"]["cores"], counts["node"]["gpus"], sources)
    print(json.dumps({k: round(v, 6) if isinstance(v, float) else v for k, v in cpu.items()}), file=sys.stderr)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")


if __name__ == "__main__":
    main()
