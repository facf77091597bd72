"""Benchmark: overhead of a debiasing projection (SentenceDebias/INLP) applied inside the model as
one matrix product on the hidden states (``medbias.studies.plm.debias.attach_projection``).

    .venv/bin/python tests/performance/bench_debias_hook.py [--batch 32] [--length 16] [--repeats 20]

A randomly initialised BERT-base-sized encoder on the CPU: median forward time with and without
the hook, and the check that the hooked output equals the plain output times P.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))

from medbias.studies.plm.debias import attach_projection, projection_from_basis  # noqa: E402


def timed(model, ids, repeats):
    times = []
    with torch.inference_mode():
        model(input_ids=ids)
        for _ in range(repeats):
            start = time.perf_counter()
            output = model(input_ids=ids).last_hidden_state
            times.append(time.perf_counter() - start)
    return statistics.median(times), output


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(2)
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(), add_pooling_layer=False).eval()
    ids = torch.randint(1000, 30000, (args.batch, args.length))
    plain_s, plain = timed(model, ids, args.repeats)
    p = projection_from_basis(np.random.default_rng(0).normal(size=(768, 4)), 768)
    handle = attach_projection(model.base_model, p)
    hooked_s, hooked = timed(model, ids, args.repeats)
    handle.remove()
    torch.testing.assert_close(hooked, plain @ torch.as_tensor(p, dtype=torch.float32), atol=1e-4, rtol=1e-4)
    print(f"BERT-base size, batch {args.batch} x {args.length} tokens, CPU, 2 threads, median of {args.repeats}")
    print(
        f"plain forward {1000 * plain_s:.1f} ms, with the projection hook {1000 * hooked_s:.1f} ms: "
        f"overhead {1000 * (hooked_s - plain_s):.2f} ms ({100 * (hooked_s / plain_s - 1):.1f}%)"
    )


if __name__ == "__main__":
    main()
