"""The scale planner's command line: ``python -m medbias.pipeline.scale`` (``scripts/plan_scale.py``
runs the same)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from medbias.pipeline.cost_probes import REPO
from medbias.pipeline.scale.costs import ASSUMED_MFU, derived_gpu_costs
from medbias.pipeline.scale.measure import (
    cpu_model,
    measure_bert_cpu,
    measure_bootstrap,
    measure_gpu,
    measure_mitigation,
    measure_mlp_grid,
    measure_notes,
    measure_pubmed,
    measure_word2vec,
)
from medbias.pipeline.scale.rows import build_plan, real_config
from medbias.pipeline.scale.schedule import markdown


def tokenizer_source(args: argparse.Namespace) -> Path:
    """The BERT WordPiece tokenizer the measurements tokenize with (``--tokenizer``), checked first."""
    folder = args.tokenizer
    if folder is None or not (folder / "tokenizer_config.json").is_file():
        sys.exit(
            f"medbias: --tokenizer {folder or ''}: measuring here needs a BERT WordPiece tokenizer's folder "
            "(bert-base-uncased or your clinical BERT; its tokenizer_config.json), or --cpu-costs FILE.json"
        )
    return folder


def command_line() -> argparse.ArgumentParser:
    """The planner's arguments."""
    parser = argparse.ArgumentParser(description="The scale planner: a measured plan for the full real run.")
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
    parser.add_argument(
        "--quick",
        action="store_true",
        help="time a quarter of the BERT sequences, classifier-grid rows and reduction stays: a rougher plan in "
        "less time, for trying the command",
    )
    return parser


def measure_cpu_costs(args: argparse.Namespace, counts: dict, config: dict) -> dict[str, float]:
    """One unit of every heavy rule timed on this machine's CPU (``--quick``: a quarter of the BERT
    sequences, grid rows and reduction stays), each step's time printed as it ends."""
    share = 4 if args.quick else 1
    decade_tokens = float(
        np.median(
            [
                counts["pubmed"]["articles"][d] * counts["pubmed"]["tokens_per_article"][d]
                for d in counts["pubmed"]["articles"]
            ]
        )
    )
    test_stays = int(counts["mimic"]["stays"]["pa"] * counts["mimic"]["test_share"])
    validation_stays = int(counts["mimic"]["stays"]["pa"] * (1 - counts["mimic"]["test_share"]) * 0.2)
    steps = (
        ("note ingest and processing", lambda: measure_notes(args.notes, tokenizer_source(args))),
        ("PubMed map and reduce", measure_pubmed),
        ("skip-gram search settings", lambda: measure_word2vec(config, args.w2v_tokens, decade_tokens)),
        ("BERT-base forward passes", lambda: measure_bert_cpu(args.threads, tokenizer_source(args), 64 // share)),
        (
            "classifier grid (CPU)",
            lambda: {"mlp_grid_core_s_per_1k_rows": measure_mlp_grid(4000 // share, "cpu") * args.threads},
        ),
        ("mitigation and intersections", lambda: measure_mitigation(test_stays, validation_stays, 2000 // share)),
        ("fairness bootstrap", lambda: {"bootstrap_s_per_task": measure_bootstrap(test_stays)}),
    )
    cpu: dict[str, float] = {}
    for label, step in steps:
        t0 = time.perf_counter()
        cpu.update(step())
        print(f"measured {label} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return cpu


def main() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one core per measured unit, as in the rules' workers
    args = command_line().parse_args()
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
    started = time.perf_counter()
    cpu = json.loads(args.cpu_costs.read_text()) if args.cpu_costs else measure_cpu_costs(args, counts, config)
    if args.save_cpu_costs:
        args.save_cpu_costs.write_text(json.dumps({**cpu, "where": f"{os.cpu_count()}-core {cpu_model()}"}, indent=1))
    cpu_where = f"here: {cpu.get('where', f'{os.cpu_count()}-core {cpu_model()}')}"
    if args.gpu_costs:
        gpu = json.loads(args.gpu_costs.read_text())
        gpu_where = f"on {gpu['device']} ({args.gpu_costs.name})"
    else:
        gpu, gpu_where = derived_gpu_costs(), f"not measured: FLOPs at {ASSUMED_MFU:.0%} of an A100's bf16 peak"
    rows = build_plan(config, counts, cpu, gpu, gpu_where, cpu_where)
    if args.cpu_costs:
        measured = f"read from {args.cpu_costs.name}"
    else:
        quick = " (--quick: a quarter of the units)" if args.quick else ""
        measured = f"measured in {time.perf_counter() - started:.0f} s{quick}"
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
