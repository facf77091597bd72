"""The GPU costs the plan derives where none was measured (FLOPs at an assumed share of a card's
peak), and the classifier grid's cost per unit from a measured or derived figure."""

from __future__ import annotations

from medbias.pipeline.cost_probes import classifier_grid

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
