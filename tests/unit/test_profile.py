"""The run profile on a hand-written Snakemake log: job-seconds, threads, critical path, core use."""

from __future__ import annotations

import pytest

from medbias.pipeline.profile import (
    budget_comparison,
    format_budget,
    format_profile,
    parse_snakemake_log,
    profile_run,
    read_budget,
    read_run,
)

HEADER = """Assuming unrestricted shared filesystem usage.

SNAKEMAKE
=========
  Date: 2026-11-27 10:00:00
  Snakemake version: 9.27.1

Building DAG of jobs...
Provided cores: 2
"""


def job(stamp: str, rule: str, jobid: int, inputs: str, outputs: str, extra: str = "") -> str:
    return (
        f"[Fri Nov 27 {stamp} 2026]\nlocalrule {rule}:\n    input: {inputs}\n    output: {outputs}\n"
        f"    log: logs/{rule}.log\n    jobid: {jobid}\n{extra}    resources: tmpdir=/tmp\n"
    )


def finished(stamp: str, jobid: int, rule: str) -> str:
    return f"[Fri Nov 27 {stamp} 2026]\nFinished jobid: {jobid} (Rule: {rule})\n"


# prepare 0-10 s; train (2 threads) reads prepare's file 10-40 s; index reads a file inside prepare's
# folder 10-15 s; report reads both 40-45 s. An error block's own "jobid:" line starts no job.
LOG = (
    HEADER
    + job("10:00:02", "prepare", 1, "config.yaml", "results/data.csv, results/folder")
    + finished("10:00:12", 1, "prepare")
    + job("10:00:12", "train", 2, "results/data.csv", "results/model.bin", "    threads: 2\n")
    + job("10:00:12", "index", 3, "results/folder/part.txt", "results/index.txt")
    + finished("10:00:17", 3, "index")
    + "[Fri Nov 27 10:00:20 2026]\nError in rule other:\n    message: None\n    jobid: 9\n"
    + finished("10:00:42", 2, "train")
    + job("10:00:42", "report", 4, "results/model.bin, results/index.txt", "results/report.md", "    threads: 1\n")
    + finished("10:00:47", 4, "report")
    + "[Fri Nov 27 10:00:47 2026]\nJob 6: report: done; see results/report.md\nReason: Missing output files\n"
    + finished("10:00:47", 6, "announce")
    + job("10:00:47", "never_done", 5, "results/report.md", "results/late.md")
)


def test_jobs_threads_and_times_are_read_from_the_log():
    run = parse_snakemake_log(LOG)
    assert run.cores == 2 and run.started.isoformat() == "2026-11-27T10:00:00"
    by_id = {job.jobid: job for job in run.jobs}
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6]
    assert by_id[6].rule == "announce" and by_id[6].duration == 0  # a rule with a message: prints "Job 6: ..."
    assert by_id[2].threads == 2 and by_id[2].duration == 30 and by_id[2].inputs == ["results/data.csv"]
    assert by_id[1].outputs == ["results/data.csv", "results/folder"]
    assert by_id[5].finished is None


def test_profile_known_answer():
    profile = profile_run(parse_snakemake_log(LOG))
    assert profile.wall_seconds == 47 and profile.jobs == 5
    assert profile.unfinished == ["never_done (job 5)"]
    totals = {rule.rule: rule for rule in profile.rules}
    assert totals["train"].job_seconds == 30 and totals["train"].core_seconds == 60
    # the longest chain: prepare 10 + train 30 + report 5; index (5 s, via a file in prepare's folder) is off it
    assert [job.rule for job in profile.path] == ["prepare", "train", "report"]
    # reserved: 10 + 60 + 5 + 5 = 80 core-seconds of 2 cores x 47 s
    assert profile.reserved_share == pytest.approx(80 / 94)
    text = format_profile(profile)
    assert "wall time: 0.8 min (47 s), 5 jobs finished, 1 started and not finished: never_done (job 5)" in text
    assert "critical path 45 s over 3 jobs" in text
    assert profile.milestones == [(47.0, "report: done; see results/report.md")]
    assert "- 0.8 min: report: done" in text


def test_a_file_inside_an_output_folder_links_the_jobs():
    log = (
        HEADER
        + job("10:00:00", "prepare", 1, "a", "results/folder")
        + finished("10:00:01", 1, "prepare")
        + job("10:00:01", "index", 2, "results/folder/part.txt", "b")
        + finished("10:00:09", 2, "index")
    )
    assert [job.rule for job in profile_run(parse_snakemake_log(log)).path] == ["prepare", "index"]


def test_benchmark_files_give_seconds_and_cpu(tmp_path):
    (tmp_path / ".snakemake" / "log").mkdir(parents=True)
    text = LOG.replace("    jobid: 2\n", "    jobid: 2\n    benchmark: timings/train.tsv\n")
    (tmp_path / ".snakemake" / "log" / "2026-11-27T100000.000000.snakemake.log").write_text(text)
    (tmp_path / "timings").mkdir()
    (tmp_path / "timings" / "train.tsv").write_text(
        "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
        "29.5\t0:00:29\t100\t200\t90\t95\t0\t1\t180\t55.0\n"
    )
    profile = profile_run(read_run(tmp_path))
    train = next(rule for rule in profile.rules if rule.rule == "train")
    assert train.job_seconds == 29.5 and train.cpu_seconds == 55.0
    assert profile.cpu_share == pytest.approx(55 / 94)
    assert "train" not in profile.unmeasured_rules and "prepare" in profile.unmeasured_rules


def test_budget_round_trip_and_comparison(tmp_path):
    profile = profile_run(parse_snakemake_log(LOG))
    path = tmp_path / "budget.tsv"
    path.write_text(format_budget(profile, "2-core test machine, idle\ncommit abc"))
    budget = read_budget(path)
    assert budget == {
        "announce": (1, 0.0),
        "index": (1, 5.0),
        "prepare": (1, 10.0),
        "report": (1, 5.0),
        "train": (1, 30.0),
    }
    budget["train"] = (1, 20.0)
    del budget["index"]
    budget["gone"] = (1, 3.0)
    comparison = budget_comparison(profile, budget)
    assert "| train | 30 | 20 | +10 |" in comparison.splitlines()[2]
    assert "Rules without a budget line: index" in comparison
    assert "Budget lines no job of this log ran: gone" in comparison


def test_the_newest_log_in_which_a_job_ran_is_read(tmp_path):
    logs = tmp_path / ".snakemake" / "log"
    logs.mkdir(parents=True)
    (logs / "2026-11-27T100000.000000.snakemake.log").write_text(LOG)
    (logs / "2026-11-27T110000.000000.snakemake.log").write_text(HEADER + "Nothing to be done.\n")  # snakemake -n
    assert read_run(tmp_path).path.name == "2026-11-27T100000.000000.snakemake.log"


def test_a_folder_without_a_log_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"medbias: {tmp_path}: no Snakemake log"):
        read_run(tmp_path)
