"""The scale plan's arithmetic (tests/benchmarks/bench_scale_plan.py): the node schedule and the cost
conversions, on hand-computed cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_scale_plan import Row, grid_cost_with_workers, grid_flops_per_row_epoch, schedule  # noqa: E402


def _row(rule, jobs, hours, threads, gpus=0, after=(), pretraining=False):
    return Row(rule, jobs, "", "", "", hours * jobs * threads * (gpus == 0), hours * jobs * gpus, threads, gpus, hours,
               tuple(after), pretraining)


def test_cpu_jobs_pack_onto_the_cores_and_wait_for_their_rule():
    """Four 8-thread jobs of 3 h on 16 cores: two rounds, 6 h; a 1-thread job of 1 h that waits for
    them starts at 6 h."""
    rows = [_row("rios_word2vec", 4, 3.0, 8), _row("rios_weat", 1, 1.0, 1, after=["rios_word2vec"])]
    hours, finished = schedule(rows, cores=16, gpus=4, include_pretraining=False)
    assert hours == pytest.approx(7.0)
    assert finished == {"rios_word2vec": pytest.approx(6.0), "rios_weat": pytest.approx(7.0)}


def test_gpu_jobs_share_the_gpus_and_go_first():
    """Six 1-GPU jobs of 2 h on 4 GPUs: 4 h. A CPU job that wants all 16 cores waits for the GPU jobs'
    threads (4 each): the first four take all 16, the last two half of them, so it starts at 4 h."""
    rows = [_row("hurtful_features", 6, 2.0, 4, gpus=1), _row("rios_ingest", 1, 1.0, 16)]
    hours, finished = schedule(rows, cores=16, gpus=4, include_pretraining=False)
    assert finished["hurtful_features"] == pytest.approx(4.0)
    assert finished["rios_ingest"] == pytest.approx(5.0)  # after the last two GPU jobs release their cores at 4 h
    assert hours == pytest.approx(5.0)


def test_pretraining_rows_count_as_done_when_left_out():
    rows = [_row("hurtful_pretrain", 5, 10.0, 8, gpus=1, pretraining=True),
            _row("hurtful_features", 1, 1.0, 4, gpus=1, after=["hurtful_pretrain"])]
    assert schedule(rows, 16, 4, include_pretraining=False)[0] == pytest.approx(1.0)
    # with it: 5 jobs on 4 GPUs but 8 threads each, so two at a time on 16 cores: 3 rounds of 10 h, then 1 h
    assert schedule(rows, 16, 4, include_pretraining=True)[0] == pytest.approx(31.0)


def test_a_priority_rule_keeps_its_cores():
    """mimic_ingest (priority, 1 thread, 0.5 h) starts first and 15 one-hour parse jobs take the other
    cores. When the ingest ends, mimic_notes (priority, 16 threads) is ready but does not fit: no parse
    job starts in the freed core, so at 1 h it gets all 16 and ends at 3 h; the 17 other parse jobs
    then take two rounds (5 h). Without the hold the parse jobs would starve it until they were done."""
    rows = [_row("mimic_ingest", 1, 0.5, 1), _row("mimic_notes", 1, 2.0, 16, after=["mimic_ingest"]),
            _row("rios_parse", 32, 1.0, 1)]
    hours, finished = schedule(rows, 16, 4, include_pretraining=False)
    assert finished["mimic_notes"] == pytest.approx(3.0) and hours == pytest.approx(5.0)


def test_grid_flops_and_the_measured_process_counts():
    """The default grid's weights by hand: the 1-layer net 3076; for ratio r and L layers the widths
    3076 -> 3076//r -> ... -> 1."""
    expected = 3076
    for layers in (2, 3, 4):
        for ratio in (2, 4, 6):
            widths = [3076]
            for _ in range(layers - 1):
                widths.append(max(2, widths[-1] // ratio))
            expected += 2 * sum(a * b for a, b in zip([*widths], [*widths[1:], 1]))  # two dropouts
    assert grid_flops_per_row_epoch() == pytest.approx(expected * 6.5)
    gpu = {"mlp_grid_gpu_s_per_1k_rows": 0.19, "mlp_grid_gpu_s_per_1k_rows_by_processes": {"1": 0.28, "2": 0.17, "4": 0.09}}
    assert grid_cost_with_workers(gpu, 4) == (0.09, "4 processes")
    assert grid_cost_with_workers(gpu, 3) == (0.17, "2 processes")  # the largest measured count not above
    assert grid_cost_with_workers({"mlp_grid_gpu_s_per_1k_rows": 0.19}, 4) == (0.19, "one process")
