"""Benchmark: pretraining throughput (MLM + NSP + adversary) in sequences per second.

    .venv/bin/python tests/benchmarks/bench_pretrain.py [--steps 6]

SciBERT size (12 layers, hidden 768, vocabulary 31,090), sequences of 128 word pieces, on the CPU
(float32) and, where CUDA is present, on the GPU in bf16 autocast; plus the tiny demo size. Compared
with the paper's budget: one epoch of about 8 million sequences at length 128 on four GPUs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow_scripts"))

from medbias.studies.hurtful.pretrain import AdversarialPretrainer  # noqa: E402


def pretraining_rate(
    config_kwargs: dict, batch: int, steps: int, device: str, length: int = 128, warmup: int = 1
) -> tuple[float, int]:
    """Sequences per second of pretraining steps (MLM + NSP + the adversary, AdamW; bf16 autocast on a
    GPU) at ``length`` pieces, after ``warmup`` untimed steps; and the model's parameter count."""
    from transformers import BertConfig, BertForPreTraining

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
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    return steps * batch / (time.perf_counter() - t0), sum(p.numel() for p in model.parameters())


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
