"""A killed run resumes as typed, and the same config gives the same bytes.

The demo world (the wiring profile's size: its synthetic inputs, corpora, tiny models and word
vectors) is built in a folder of its own, killed with SIGKILL in the middle of a job (Snakemake and its
job, as when a node goes down) and then run again with the same command. The second run must finish
without --unlock or --rerun-incomplete, and every file it wrote must be equal byte for byte to the same
file of the wiring tier's world, which built the same config without interruption (one job a thread, as
here): resuming changes nothing, and neither does the moment of writing (gzip's header time)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import run_config, run_snakemake, snakemake_command, wiring_config, write_config

pytestmark = pytest.mark.wiring

# the uninterrupted build this one is compared with: the wiring world, whose jobs run on one thread each
WIRING_TARGETS = ("demo_world",)
COMMAND = ["--cores", "2", "--max-threads", "1", "demo_world", "--configfile", "config.yaml"]


def _kill_mid_job(folder: Path, timeout: float = 600) -> str:
    """Start the demo world's build in ``folder`` and SIGKILL its process group once the first job
    has finished and another is under way (marked incomplete); return the build's output so far."""
    log = folder / "killed.log"
    with open(log, "w") as handle:
        process = subprocess.Popen(
            snakemake_command(COMMAND, folder),
            stdout=handle,
            stderr=subprocess.STDOUT,
            cwd=folder,
            start_new_session=True,
        )
    incomplete, started = folder / ".snakemake" / "incomplete", time.time()
    try:
        while time.time() - started < timeout:
            assert process.poll() is None, "the build ended before it could be killed:\n" + log.read_text()[-3000:]
            if (
                (folder / "results" / "demo_world" / "truth" / "mimic.json").exists()
                and incomplete.is_dir()
                and any(incomplete.iterdir())
            ):
                time.sleep(1.0)  # well inside a job of seconds
                break
            time.sleep(0.2)
        else:
            pytest.fail("no job was under way within the timeout")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return log.read_text()


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``results/`` but Snakemake's marker of a folder output's time, which a folder
    restored from the output cache does not hold."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted((folder / "results").rglob("*"))
        if p.is_file() and p.name != ".snakemake_timestamp"
    }


@pytest.fixture(scope="module")
def two_worlds(tmp_path_factory, wiring_study) -> tuple[Path, Path, str]:
    """(the uninterrupted world, the killed-and-resumed world, the resuming run's terminal output)."""
    killed = tmp_path_factory.mktemp("killed")
    write_config(killed / "config.yaml", wiring_config())
    _kill_mid_job(killed)
    assert any((killed / ".snakemake" / "locks").glob("*.lock")), "the kill left no lock to release"
    resumed = run_snakemake(COMMAND, killed)  # the command as typed the first time
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    whole = wiring_study(*WIRING_TARGETS)
    assert run_config(whole) == run_config(killed), "the wiring world's config is not this test's"
    return whole, killed, resumed.stdout + resumed.stderr


def test_a_killed_run_resumes_with_the_same_command(two_worlds):
    _, killed, output = two_worlds
    assert "medbias (note): the run of process" in output and "lock released" in output
    assert "LockException" not in output and "IncompleteFilesException" not in output
    assert not list((killed / ".snakemake" / "locks").glob("*.lock"))  # this run released its own
    assert not list((killed / ".snakemake" / "medbias-runs").glob("*.json"))


def test_resumed_and_uninterrupted_worlds_are_equal_byte_for_byte(two_worlds):
    whole, killed, _ = two_worlds
    resumed = _files(killed)
    uninterrupted = {name: (whole / name).read_bytes() for name in resumed if (whole / name).is_file()}
    assert len(resumed) > 30 and sorted(uninterrupted) == sorted(resumed)
    differ = [name for name in resumed if uninterrupted[name] != resumed[name]]
    assert differ == []


def test_every_gzip_the_workflow_writes_has_header_time_zero(two_worlds):
    whole, _, _ = two_worlds
    gzipped = sorted((whole / "results").rglob("*.gz"))
    assert len(gzipped) >= 8  # MIMIC tables, PubMed files, corpora
    for path in gzipped:
        assert path.read_bytes()[4:8] == b"\0\0\0\0", path  # MTIME, bytes 4-7 of the gzip header (RFC 1952)
