"""Part of the demo DAG through a real single-node SLURM cluster on localhost, with the shipped
profile (`snakemake --profile cluster/slurm`), checking that every job went through sbatch.

Needs root (the daemons) and Debian's slurm-wlm and munge (installed with apt-get when missing).
Where they cannot be had the test is skipped with the reason, never silently.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, demo_config, snakemake_bin, write_config

pytestmark = [pytest.mark.integration, pytest.mark.slurm]
CLUSTER = REPO / "tests" / "integration" / "slurm_cluster.sh"
TARGET = "results/demo_world/truth.json"
EXPECTED_RULES = {"synth_mimic", "synth_pubmed", "synth_logprob_resources", "synth_mental_truth", "synth_plm_corpus",
                  "synth_truth"}


def _skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "SLURM test skipped: needs root to start munged, slurmctld and slurmd"
    have_slurm = all(shutil.which(b) for b in ("slurmctld", "slurmd", "munged", "sbatch"))
    if not have_slurm and not shutil.which("apt-get"):
        return "SLURM test skipped: slurm-wlm/munge are not installed and apt-get is missing"
    if Path("/etc/slurm/slurm.conf").exists() and not Path("/etc/slurm/slurm.conf").is_symlink():
        return "SLURM test skipped: /etc/slurm/slurm.conf belongs to a real cluster on this machine"
    return None


@pytest.fixture
def cluster(tmp_path):
    reason = _skip_reason()
    if reason:
        print(reason)
        pytest.skip(reason)
    install = subprocess.run(["bash", str(CLUSTER), "install"], capture_output=True, text=True, timeout=600)
    if install.returncode != 0:
        pytest.fail(f"apt-get could not install slurm-wlm and munge: {install.stderr[-2000:]}")
    state = tmp_path / "slurm"
    start = subprocess.run(["bash", str(CLUSTER), "start", str(state)], capture_output=True, text=True, timeout=120)
    try:
        assert start.returncode == 0, start.stdout + start.stderr
        yield state
    finally:
        subprocess.run(["bash", str(CLUSTER), "stop", str(state)], timeout=60)


def test_demo_jobs_run_through_sbatch_with_the_profile(cluster, tmp_path):
    workdir = tmp_path / "run"
    workdir.mkdir()
    configfile = write_config(workdir / "config.yaml", demo_config(scale=0.05))
    env = {
        **os.environ,
        "SLURM_CONF": str(cluster / "slurm.conf"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    # no accounting on this test cluster: squeue is the status command (sacct would hang forever)
    cmd = [
        "timeout", "-k", "10", "420", snakemake_bin(), "-s", str(REPO / "Snakefile"), "-d", str(workdir),
        "--profile", str(REPO / "cluster" / "slurm"), "--configfile", str(configfile),
        "--slurm-status-command", "squeue", "--slurm-no-account",
        "--slurm-init-seconds-before-status-checks", "2", "--slurm-keep-successful-logs", "--", TARGET,
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=workdir, timeout=480)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    submitted = re.findall(r"has been submitted with SLURM jobid (\d+) \(log: .*/rule_(\w+)/", output)
    assert {rule for _, rule in submitted} == EXPECTED_RULES, output[-3000:]
    controller_log = (cluster / "slurmctld.log").read_text()
    for jobid, _ in submitted:
        assert re.search(rf"_slurm_rpc_submit_batch_job: JobId={jobid}\b", controller_log), jobid
    assert (workdir / TARGET).is_file()
    for rule in EXPECTED_RULES:
        job_logs = list((workdir / ".snakemake" / "slurm_logs" / f"rule_{rule}").glob("*.log"))
        assert job_logs and f"rule {rule}:" in job_logs[0].read_text(), rule
