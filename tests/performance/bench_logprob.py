"""Benchmark: log-probability scoring, batched vs one sentence at a time.

    .venv/bin/python tests/performance/bench_logprob.py [--sentences 512]

On the tiny demo BERT (if the demo world is built) and on a randomly initialised BERT-base-sized model
(12 layers, hidden 768, vocabulary 30,522) on the CPU; goal: at least 5x on BERT-base size. The
scores of both paths are compared (they must agree to 1e-4).
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

from medbias.io.resources import read_attributes, read_templates  # noqa: E402
from medbias.metrics.logprob import build_items, log_probability_scores, target_token_ids  # noqa: E402


def reference_one_at_a_time(model, tokenizer, items, targets):
    """The reference code's way: one sentence per forward pass, the MLM head over every position."""
    ids = list(targets.values())
    out = np.zeros((len(items), len(ids)))
    with torch.inference_mode():
        for i, item in enumerate(items):
            rows = []
            for sentence in (item.target_sentence, item.prior_sentence):
                enc = tokenizer(sentence, return_tensors="pt")
                position = enc["input_ids"][0].tolist().index(tokenizer.mask_token_id)
                rows.append(torch.log_softmax(model(**enc).logits[0, position], -1)[ids].numpy())
            out[i] = rows[0] - rows[1]
    return out


def run(name, model, tokenizer, n_sentences, batch_size):
    attributes = read_attributes(REPO / "config/resources/hurtfulwords-templates/attributes.csv")
    templates, _ = read_templates(
        REPO / "config/resources/hurtfulwords-templates/templates.txt", {c for _, c in attributes}
    )
    items = build_items(templates, attributes, tokenizer)
    items = (items * (n_sentences // len(items) + 1))[: n_sentences // 2]  # each item scores 2 sentences
    targets, _ = target_token_ids(tokenizer, ["he", "she", "man", "woman"])
    t0 = time.perf_counter()
    batched = log_probability_scores(model, tokenizer, items, targets, batch_size=batch_size)
    t_batched = time.perf_counter() - t0
    t0 = time.perf_counter()
    single = log_probability_scores(model, tokenizer, items, targets, batch_size=1)
    t_single = time.perf_counter() - t0
    t0 = time.perf_counter()
    reference = reference_one_at_a_time(model, tokenizer, items, targets)
    t_reference = time.perf_counter() - t0
    n_pieces = np.mean([len(tokenizer(it.target_sentence)["input_ids"]) for it in items])
    print(f"{name}: {2 * len(items)} sentences of {n_pieces:.0f} pieces on average")
    print(f"  batched (batch {batch_size}, head at the mask only): {t_batched:.2f} s")
    print(f"  one at a time, same engine: {t_single:.2f} s ({t_single / t_batched:.1f}x slower)")
    print(
        f"  one at a time, full logits (reference code style): {t_reference:.2f} s "
        f"({t_reference / t_batched:.1f}x slower)"
    )
    print(
        f"  max |difference| batched vs one at a time: {np.abs(batched - single).max():.1e}, vs reference: "
        f"{np.abs(batched - reference).max():.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=512)
    args = parser.parse_args()
    torch.set_num_threads(2)
    from transformers import AutoModelForMaskedLM, AutoTokenizer, BertConfig, BertForMaskedLM

    tiny = REPO / "results/demo_world/models/tiny-bert"
    if tiny.exists():
        run(
            "tiny demo BERT",
            AutoModelForMaskedLM.from_pretrained(tiny).eval(),
            AutoTokenizer.from_pretrained(tiny),
            args.sentences * 4,
            256,
        )
        tokenizer = AutoTokenizer.from_pretrained(tiny)
    else:
        print("tiny demo BERT not built (run the demo first); skipped")
        from medbias.synth.tiny_models import train_wordpiece

        tokenizer = train_wordpiece(["he has hypertension", "she has copd"] * 100, 200)
    torch.manual_seed(0)
    base = BertForMaskedLM(BertConfig(vocab_size=30522)).eval()
    run("random BERT-base size (word pieces from the demo tokenizer)", base, tokenizer, args.sentences, 32)


if __name__ == "__main__":
    main()
