"""A run's life in its working folder: the record of a running Snakemake, the locks a killed one left
behind, and the input faults a failed run's jobs reported.

Snakemake locks the files a run reads and writes (``.snakemake/locks/<n>.{input,output}.lock``) and
removes the locks when it ends. A run killed outright (``kill -9``, a node that goes down) cannot:
the same command then stops with ``LockException``. Snakemake records no owner in its locks, so the
workflow records its own: each run writes ``.snakemake/medbias-runs/<pid>.json`` (host, pid and the
process's start time) when its jobs start and deletes it when it ends. A later run on the same host
that finds locks whose every recorded owner is gone releases them, with one line that says so; a
lock with no record, or one whose owner lives or ran on another host, is left to Snakemake's own
message. So is the lock of a run whose jobs ran on a cluster (SLURM): they may outlive the run, and a
second copy of a running job would write the same files; the line then says what to check first. With
``rerun-incomplete`` (``profiles/default``) the jobs the killed run left half-written
then run again: the command resumes as typed.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from medbias.core.errors import PREFIX
from medbias.core.logs import NOTE_PREFIX

RUNS_FOLDER = "medbias-runs"


def process_start_time(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (field 22 of /proc/<pid>/stat), so
    that a new process that reuses a dead run's pid is not taken for it; None when there is no such
    process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def record_run(snakemake_folder: Path, pid: int | None = None, executor: str = "local", remote: bool = False) -> Path:
    """Write the record of the run of process ``pid`` (this process by default) and the executor its
    jobs run on (``remote``: outside this process, e.g. SLURM); return the record's path."""
    pid = os.getpid() if pid is None else pid
    folder = snakemake_folder / RUNS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{pid}.json"
    path.write_text(
        json.dumps(
            {
                "host": socket.gethostname(),
                "pid": pid,
                "started": process_start_time(pid),
                "executor": executor,
                "remote": remote,
            }
        )
    )
    return path


def forget_run(snakemake_folder: Path, pid: int | None = None) -> None:
    """Delete the record of the run of process ``pid`` (this process by default)."""
    pid = os.getpid() if pid is None else pid
    (snakemake_folder / RUNS_FOLDER / f"{pid}.json").unlink(missing_ok=True)


def _gone(record: dict) -> bool:
    """True when the recorded run ran on this host and its process no longer exists."""
    if record.get("host") != socket.gethostname():
        return False
    started = process_start_time(int(record["pid"]))
    return started is None or started != record.get("started")


def release_stale_locks(snakemake_folder: Path) -> str | None:
    """Release the locks of runs that were killed: when ``.snakemake/locks`` holds lock files and every
    recorded run ended without removing its record, on this host, delete the locks and the records and
    return one line that says so; otherwise change nothing and return None."""
    locks = sorted((snakemake_folder / "locks").glob("*.lock")) if (snakemake_folder / "locks").is_dir() else []
    records_folder = snakemake_folder / RUNS_FOLDER
    paths = sorted(records_folder.glob("*.json")) if records_folder.is_dir() else []
    records = []
    for path in paths:
        try:
            records.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            return None
    if not locks or not records or not all(_gone(record) for record in records):
        return None
    remote = [record for record in records if record.get("remote")]
    if remote:  # its jobs may outlive it: a second copy of a running job would write the same files
        record = remote[0]
        return (
            f"{NOTE_PREFIX}the run of process {record['pid']} on this host ended without releasing its lock, "
            f"and its jobs ran on {record.get('executor', 'a cluster')}, where they may still be running; when "
            "the queue holds none of them (squeue --me), run snakemake --unlock once, then the same command"
        )
    for path in [*locks, *paths]:
        path.unlink(missing_ok=True)
    pids = ", ".join(str(record["pid"]) for record in records)
    return (
        f"{NOTE_PREFIX}the run of process {pids} on this host ended without releasing its lock "
        "(killed?); lock released, and its unfinished jobs run again (rerun-incomplete)"
    )


def _prefixed_lines_since(log_files: list[Path], since: float, prefix: str) -> list[list[str]]:
    """Per log file written at or after ``since`` (a Unix time), in order, its lines that start with
    ``prefix``; a file that cannot be read is passed over."""
    found: list[list[str]] = []
    for path in log_files:
        try:
            if path.stat().st_mtime < since:
                continue
            text = path.read_text(errors="replace")
        except OSError:
            continue
        found.append([line for line in text.splitlines() if line.startswith(prefix)])
    return found


def input_fault_lines(log_files: list[Path], since: float) -> list[str]:
    """The last ``medbias:`` line of each log file written at or after ``since`` (a Unix time): what
    the jobs that stopped on a bad input in this run said, once each, in the logs' order."""
    lines: list[str] = []
    for found in _prefixed_lines_since(log_files, since, PREFIX):
        if found and found[-1] not in lines:
            lines.append(found[-1])
    return lines


def note_lines(log_files: list[Path], since: float) -> list[str]:
    """Every ``medbias (note):`` line (``medbias.core.logs.note_for_user``) of the log files written at
    or after ``since`` (a Unix time), once each, in the logs' order."""
    lines: list[str] = []
    for found in _prefixed_lines_since(log_files, since, NOTE_PREFIX):
        lines += [line for line in dict.fromkeys(found) if line not in lines]
    return lines
