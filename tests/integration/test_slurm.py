"""Part of the demo DAG through a real single-node SLURM cluster on localhost, with the shipped
profile as users type it (`snakemake --profile slurm` from the repository root): every job goes
through sbatch, a GPU rule gets the node's GPU (a generic resource), CPUs follow the rules'
threads, a cached rule is restored inside its SLURM job, and a failing job names its rule.

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

pytestmark = pytest.mark.slurm
CLUSTER = REPO / "tests" / "integration" / "slurm_cluster.sh"
TARGET = "results/demo_world/truth.json"
WORD_VECTORS = "results/demo_world/word-vectors/general-w2v.bin"  # a cached rule
PROJECTION = "results/plm/projections/bart_base/sentencedebias.npz"  # a GPU rule
EXPECTED_RULES = {
    "synth_mimic",
    "synth_pubmed",
    "synth_logprob_resources",
    "synth_mental_truth",
    "synth_plm_corpus",
    "synth_vignettes",
    "synth_truth",
}


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


def _run_as_typed(cluster: Path, workdir: Path, cache: Path, config: dict, targets: list[str], *extra: str):
    """`snakemake --profile slurm` from the repository root, as a user types it, plus this test
    cluster's own arguments (no accounting: squeue is the status command; no account to name)."""
    workdir.mkdir()
    configfile = write_config(workdir / "config.yaml", config)
    env = {
        **os.environ,
        "SLURM_CONF": str(cluster / "slurm.conf"),
        "SNAKEMAKE_OUTPUT_CACHE": str(cache),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    cmd = [
        "timeout",
        "-k",
        "10",
        "600",
        snakemake_bin(),
        "--profile",
        "slurm",
        "-d",
        str(workdir),
        "--slurm-status-command",
        "squeue",
        "--slurm-no-account",
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--slurm-keep-successful-logs",
        *extra,
        *targets,
        "--configfile",
        str(configfile),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=660)
    submitted = re.findall(
        r"has been submitted with SLURM jobid (\d+) \(log: .*/rule_(\w+)/", result.stdout + result.stderr
    )
    return result, result.stdout + result.stderr, submitted


def _job(jobid: str, cluster: Path) -> str:
    """What the controller granted a job (it keeps finished jobs for MinJobAge = 600 s)."""
    shown = subprocess.run(
        ["scontrol", "show", "job", "-o", jobid],
        capture_output=True,
        text=True,
        env={**os.environ, "SLURM_CONF": str(cluster / "slurm.conf")},
    )
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def _job_log(workdir: Path, rule: str) -> str:
    logs = list((workdir / ".snakemake" / "slurm_logs" / f"rule_{rule}").rglob("*.log"))
    assert logs, rule
    return "\n".join(log.read_text() for log in logs)


def test_demo_jobs_run_through_sbatch_with_gpus_threads_cache_and_failures(cluster, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    config = demo_config(scale=0.05)
    config["plm"]["gpus"] = 1  # as on a cluster: the plm rules ask for a GPU

    # 1. the demo world's inputs, a cached word-vector job and a GPU job (the tiny BART's projection)
    first = tmp_path / "first"
    result, output, submitted = _run_as_typed(cluster, first, cache, config, [TARGET, WORD_VECTORS, PROJECTION])
    assert result.returncode == 0, output[-4000:]
    assert {rule for _, rule in submitted} == EXPECTED_RULES | {
        "synth_word_vectors",
        "synth_tiny_model",
        "plm_examples",
        "plm_projection",
    }, output[-3000:]
    controller_log = (cluster / "slurmctld.log").read_text()
    for jobid, _ in submitted:
        assert re.search(rf"_slurm_rpc_submit_batch_job: JobId={jobid}\b", controller_log), jobid
    for rule in EXPECTED_RULES:
        assert f"rule {rule}:" in _job_log(first, rule), rule
    granted = {rule: _job(jobid, cluster) for jobid, rule in submitted}
    # the GPU job got the GPU, the profile's CPUs (set-threads), memory and time
    assert "TresPerJob=gres:gpu:1" in granted["plm_projection"], granted["plm_projection"]
    assert "NumCPUs=4 " in granted["plm_projection"] and "MinMemoryNode=62.50G" in granted["plm_projection"]
    assert "TimeLimit=04:00:00" in granted["plm_projection"]
    # a CPU job: CPUs from the rule's threads (2), no GPU
    assert "NumCPUs=2 " in granted["synth_tiny_model"] and "gpu" not in granted["synth_tiny_model"]
    assert "NumCPUs=1 " in granted["synth_mimic"]
    assert (first / PROJECTION).is_file()
    assert f"Moving output file {WORD_VECTORS} to cache." in _job_log(first, "synth_word_vectors")

    # 2. a second results folder: the cached job is restored inside its SLURM job; a checkpoint that
    # passes the checks made before any job (config, weights file, tokenizer) but whose weights file is
    # corrupt fails its job, and the failure names the rule, the model and its log
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "bert", "architectures": ["BertForMaskedLM"]}')
    (broken / "model.safetensors").write_bytes(b"\x00" * 64)
    (broken / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\npatient\n")
    config["models"]["broken"] = {"source": str(broken), "kind": "masked", "studies": []}
    second = tmp_path / "second"
    result, output, submitted = _run_as_typed(
        cluster,
        second,
        cache,
        config,
        [WORD_VECTORS, PROJECTION.replace("bart_base", "broken")],
        "--retries",
        "0",
        "--keep-going",
    )
    assert result.returncode != 0
    assert "Symlinking output file" in _job_log(second, "synth_word_vectors")
    assert (second / WORD_VECTORS).read_bytes() == (first / WORD_VECTORS).read_bytes()
    assert "training word2vec" not in (second / "logs/synth/word_vectors_general.log").read_text()
    assert re.search(r"Error in rule plm_projection:", output), output[-4000:]
    assert "model=broken" in output and "logs/plm/projection_broken_sentencedebias.log" in output
    assert (second / "logs/plm/projection_broken_sentencedebias.log").read_text().strip()
    assert not (second / PROJECTION.replace("bart_base", "broken")).exists()
