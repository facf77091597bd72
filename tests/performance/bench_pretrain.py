"""Benchmark: pretraining throughput (MLM + NSP + adversary) in sequences per second.

    .venv/bin/python tests/performance/bench_pretrain.py [--steps 6]

SciBERT size (12 layers, hidden 768, vocabulary 31,090), sequences of 128 word pieces, on the CPU
(float32) and, where CUDA is present, on the GPU in bf16 autocast; plus the tiny demo size. Compared
with the paper's budget: one epoch of about 8 million sequences at length 128 on four GPUs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow_scripts"))

from medbias.pipeline.cost_probes import pretraining_rate  # noqa: E402


def measure(name: str, config_kwargs: dict, batch: int, steps: int, device: str) -> float:
    rate, _ = pretraining_rate(config_kwargs, batch, steps, device)
    print(
        f"{name} on {device}: {rate:,.1f} sequences/s (batch {batch}, length 128); one epoch of 8 M sequences "
        f"= {8e6 / rate / 3600:,.1f} hours"
    )
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()
    torch.set_num_threads(2)
    base = dict(vocab_size=31090)
    tiny = dict(vocab_size=2000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=512)
    measure("tiny demo size", tiny, 32, args.steps * 5, "cpu")
    measure("SciBERT size", base, 8, args.steps, "cpu")
    if torch.cuda.is_available():
        measure("SciBERT size", base, 32, args.steps * 10, "cuda")
    else:
        print("no CUDA device here: the GPU figure needs a machine with one")


if __name__ == "__main__":
    main()
