"""Benchmark: pseudo-log-likelihood scoring (Xie et al. 2024, StereoSet-style tests), batched vs one
masked copy at a time.

    .venv/bin/python tests/performance/bench_pll.py [--sentences 48] [--batch-size 64]

A randomly initialised BERT-base-sized masked LM (12 layers, hidden 768, vocabulary 30,522) on the
CPU scores short template sentences both ways; goal: batched at least 5x faster. The two paths'
scores must agree to 1e-3 (float32 sums over about a dozen tokens).
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

from likelihood_reference import pseudo_log_likelihood_one_at_a_time  # noqa: E402

from medbias.core.sentence_likelihood import pseudo_log_likelihood  # noqa: E402
from medbias.synth.tiny_models import train_wordpiece  # noqa: E402

IDENTITIES = ["gay", "lesbian", "bisexual", "transgender", "black", "white", "asian", "hispanic"]
DISEASES = ["hiv", "depression", "sickle cell disease", "diabetes", "hypertension", "pneumonia"]
FRAMES = [
    "the {i} patient needs treatment for {d}.",
    "as a {i} person, the patient has {d}.",
    "{d} is common in the {i} patient who came in today.",
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=48)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    torch.set_num_threads(2)
    sentences = [f.format(i=i, d=d) for f in FRAMES for i in IDENTITIES for d in DISEASES][: args.sentences]
    tokenizer = train_wordpiece(sentences * 5, 400)
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig()).eval()  # BERT-base defaults: 12 x 768, vocabulary 30,522
    tokens = sum(len(tokenizer(s)["input_ids"]) - 2 for s in sentences)
    start = time.perf_counter()
    batched, _ = pseudo_log_likelihood(model, tokenizer, sentences, args.batch_size)
    batched_s = time.perf_counter() - start
    start = time.perf_counter()
    single = np.array([pseudo_log_likelihood_one_at_a_time(model, tokenizer, s) for s in sentences])
    single_s = time.perf_counter() - start
    print(f"{len(sentences)} sentences, {tokens} masked copies, BERT-base size, CPU, {torch.get_num_threads()} threads")
    print(
        f"batched (batch {args.batch_size}, head at the mask only): {batched_s:.1f} s "
        f"({tokens / batched_s:.0f} copies/s)"
    )
    print(f"one masked copy per forward pass:                {single_s:.1f} s ({tokens / single_s:.0f} copies/s)")
    print(f"speed-up {single_s / batched_s:.1f}x (goal >= 5x); max |difference| {np.abs(batched - single).max():.2e}")
    assert np.allclose(batched, single, atol=1e-3)


if __name__ == "__main__":
    main()
