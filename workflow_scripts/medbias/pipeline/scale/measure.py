"""What the scale planner measures on the machine it runs on: one unit of every heavy rule's work at
the real model sizes, on the CPU (``--tokenizer`` names the WordPiece the BERT-base units tokenize with)
or on a CUDA GPU (``--measure-gpu``)."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import numpy as np

from medbias.pipeline.cost_probes import REPO, classifier_grid
from medbias.pipeline.scale.costs import BF16_PEAKS, card_peak


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


def measure_bert_cpu(threads: int, tokenizer_source: Path, sequences: int = 64) -> dict[str, float]:
    """Core-seconds (wall x threads) of BERT-base on the CPU: one 512-piece window's last-four-layer
    [CLS] features; one probe sequence of 40 pieces; one SEAT sentence encoding; one StereoSet-style
    sentence's pseudo-log-likelihood (one masked copy per token), with the WordPiece tokenizer at
    ``tokenizer_source``; each timed on ``sequences`` sequences (an eighth as many windows)."""
    import torch

    from medbias.core.batching import cls_vectors_of_ids
    from medbias.core.models import load_tokenizer
    from medbias.core.sentence_likelihood import pseudo_log_likelihood

    torch.set_num_threads(threads)
    encoder = bert_base()
    rng = np.random.default_rng(0)
    windows, short, sentence = (
        random_sequences(rng, max(2, sequences // 8), 510),
        random_sequences(rng, sequences, 40),
        random_sequences(rng, sequences, 12),
    )
    cls_vectors_of_ids(encoder, windows[:2], 0, (-4, -3, -2, -1), 2)  # warm-up
    window_s = _timed(cls_vectors_of_ids, encoder, windows, 0, (-4, -3, -2, -1), 8) / len(windows)
    probe_s = _timed(cls_vectors_of_ids, encoder, short, 0, (-1,), 64) / len(short)
    seat_s = _timed(cls_vectors_of_ids, encoder, sentence, 0, (-1,), 64) / len(sentence)
    tokenizer = load_tokenizer(tokenizer_source)
    texts = pll_texts(rng, sequences)
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


# long: each unit of the mitigation stage and the intersections is timed on the same simulated stays
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


def cpu_model() -> str:
    """The processor's model name (Linux), else its architecture."""
    import platform

    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.machine()
