"""The scale plan's arithmetic (medbias.pipeline.scale): the node schedule and the cost conversions,
on hand-computed cases."""

from __future__ import annotations

import pytest

from medbias.pipeline.scale.costs import grid_cost_with_workers, grid_flops_per_row_epoch, stacked_grid_cost
from medbias.pipeline.scale.rows import Row, word2vec_rows
from medbias.pipeline.scale.schedule import schedule


def _row(rule, jobs, hours, threads, gpus=0, after=(), pretraining=False):
    return Row(
        rule,
        jobs,
        "",
        "",
        "",
        hours * jobs * threads * (gpus == 0),
        hours * jobs * gpus,
        threads,
        gpus,
        hours,
        tuple(after),
        pretraining,
    )


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
    rows = [
        _row("hurtful_pretrain", 5, 10.0, 8, gpus=1, pretraining=True),
        _row("hurtful_features", 1, 1.0, 4, gpus=1, after=["hurtful_pretrain"]),
    ]
    assert schedule(rows, 16, 4, include_pretraining=False)[0] == pytest.approx(1.0)
    # with it: 5 jobs on 4 GPUs but 8 threads each, so two at a time on 16 cores: 3 rounds of 10 h, then 1 h
    assert schedule(rows, 16, 4, include_pretraining=True)[0] == pytest.approx(31.0)


def test_a_priority_rule_keeps_its_cores():
    """mimic_ingest (priority, 1 thread, 0.5 h) starts first and 15 one-hour parse jobs take the other
    cores. When the ingest ends, mimic_notes (priority, 16 threads) is ready but does not fit: no parse
    job starts in the freed core, so at 1 h it gets all 16 and ends at 3 h; the 17 other parse jobs
    then take two rounds (5 h). Without the hold the parse jobs would starve it until they were done."""
    rows = [
        _row("mimic_ingest", 1, 0.5, 1),
        _row("mimic_notes", 1, 2.0, 16, after=["mimic_ingest"]),
        _row("rios_parse", 32, 1.0, 1),
    ]
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
    gpu = {
        "mlp_grid_gpu_s_per_1k_rows": 0.19,
        "mlp_grid_gpu_s_per_1k_rows_by_processes": {"1": 0.28, "2": 0.17, "4": 0.09},
    }
    assert grid_cost_with_workers(gpu, 4) == (0.09, "4 processes")
    assert grid_cost_with_workers(gpu, 3) == (0.17, "2 processes")  # the largest measured count not above
    assert grid_cost_with_workers({"mlp_grid_gpu_s_per_1k_rows": 0.19}, 4) == (0.19, "one process")
    assert grid_cost_with_workers(gpu, 1) == (0.28, "one process")


def test_stacked_grid_cost_measured_or_from_flops():
    assert stacked_grid_cost({"device": "NVIDIA H200", "mlp_grid_stacked_gpu_s_per_1k_task_rows": 0.03}) == (
        0.03,
        "measured, 28 tasks stacked",
    )
    seconds, how = stacked_grid_cost({"device": "NVIDIA H200"})
    assert seconds == pytest.approx(grid_flops_per_row_epoch() * 1000 / (0.25 * 67e12)) and "not measured" in how
    assert stacked_grid_cost({"device": "NVIDIA A100-SXM4-80GB"})[0] == pytest.approx(seconds * 67 / 19.5)


def test_word2vec_rows_by_hand():
    """Two decades of 5 M and 40 M tokens, 2 epochs, search cost 100 and one setting 4 core-s per M
    token-epochs, 8 threads, 3 replicates, 9 null draws; samples of at most 10 M tokens."""
    rios = {
        "replicates": 3,
        "document_null_draws": 9,
        "document_null_tokens": 10_000_000,
        "word2vec": {"epochs": 2, "search_tokens": 10_000_000, "replicates_search": "once"},
    }
    pm = {"articles": {"a": 5, "b": 40}, "tokens_per_article": {"a": 1e6, "b": 1e6}}
    cpu = {"w2v_search_core_s_per_mtoken_epoch": 100.0, "w2v_default_core_s_per_mtoken_epoch": 4.0, "w2v_candidates": 5}
    threads = {"rios_word2vec": 8, "rios_document_null": 8}
    search, replicate, null = word2vec_rows(rios, pm, cpu, "here", threads)
    # search: 2 epochs x (5 + 10 M) x 100, then decade b (40 M, sampled) again at the chosen setting: 2 x 40 x 4
    assert search.core_hours * 3600 == pytest.approx(2 * 15 * 100 + 2 * 40 * 4) and search.jobs == 2
    # replicates 1 and 2: the whole 45 M tokens, 2 epochs, one setting
    assert replicate.core_hours * 3600 == pytest.approx(2 * 45 * 2 * 4) and replicate.jobs == 4
    # the null: decade a whole (9 draws x 5 M), b a 10 M sample (9 draws + its own model) x 2 epochs x 4
    assert null.core_hours * 3600 == pytest.approx((9 * 5 + 10 * 10) * 2 * 4)
    each = word2vec_rows(
        {
            **rios,
            "document_null_tokens": 0,
            "word2vec": {**rios["word2vec"], "search_tokens": 0, "replicates_search": "each"},
        },
        pm,
        cpu,
        "here",
        threads,
    )
    assert len(each) == 2  # no retraining rule: every replicate searches
    assert each[0].core_hours * 3600 == pytest.approx(3 * 2 * 45 * 100) and each[0].jobs == 6
    assert each[1].core_hours * 3600 == pytest.approx(9 * 45 * 2 * 4)
