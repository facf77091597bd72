"""The profile of a finished run: where its wall time went.

A run is read from what Snakemake and the rules leave in its folder: the Snakemake log
(``.snakemake/log/*.snakemake.log``: each job's rule, threads, inputs, outputs and the second it
started and finished) and each rule's ``benchmark:`` file (``timings/**.tsv``: the job's wall
seconds and CPU seconds, measured by Snakemake around the job). From them:

- **wall time**: from Snakemake's start (the log's ``Date:``) to the last job's end;
- **job-seconds per rule**: the jobs' wall seconds summed per rule (benchmark seconds where the rule
  wrote one, else the log's start and finish, to the second), with the threads each reserved;
- **critical path**: the chain of jobs, each needing a file the one before it wrote, whose durations
  sum to the most; no schedule on any number of cores finishes before it;
- **core use**: the core-seconds jobs reserved (threads x seconds) and the CPU seconds they used
  (from the benchmark files), each over the cores times the wall time.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from medbias.core.errors import PREFIX

TIMESTAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
JOB_HEADER = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
FINISHED = re.compile(r"^Finished jobid: (\d+)(?: \(Rule: (\w+)\))?")
MESSAGE_JOB = re.compile(r"^Job (\d+): ")  # a rule with a message: prints it instead of its block
RUN_DATE = re.compile(r"^\s+Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
CORES = re.compile(r"^Provided cores: (\d+)")


@dataclass
class Job:
    """One job of a run, as its Snakemake log and benchmark file record it."""

    jobid: int
    rule: str
    started: datetime
    threads: int = 1
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    benchmark: str | None = None
    finished: datetime | None = None
    seconds: float | None = None  # the benchmark file's wall seconds
    cpu_seconds: float | None = None
    message: str | None = None  # what a rule with a ``message:`` printed instead of its block

    @property
    def duration(self) -> float:
        """Wall seconds: the benchmark's measurement, else the log's (whole seconds)."""
        if self.seconds is not None:
            return self.seconds
        return (self.finished - self.started).total_seconds() if self.finished else 0.0


@dataclass
class RunLog:
    """What one Snakemake log says: when the run started, on how many cores, and its jobs."""

    path: Path
    started: datetime | None
    cores: int | None
    jobs: list[Job]


def parse_timestamp(text: str) -> datetime:
    return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")


def split_files(text: str) -> list[str]:
    return [name.strip() for name in text.split(", ") if name.strip()]


def parse_snakemake_log(text: str, path: Path = Path("snakemake.log")) -> RunLog:
    """Every job that started in a Snakemake log, with its finish time where the log records one."""
    jobs: dict[int, Job] = {}
    started = cores = None
    stamp: datetime | None = None
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if (match := TIMESTAMP.match(line)) is not None:
            stamp = parse_timestamp(match.group(1))
        elif (match := RUN_DATE.match(line)) is not None and started is None:
            started = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S")
        elif (match := CORES.match(line)) is not None:
            cores = int(match.group(1))
        elif (match := FINISHED.match(line)) is not None and int(match.group(1)) in jobs:
            jobs[int(match.group(1))].finished = stamp
            if match.group(2):
                jobs[int(match.group(1))].rule = match.group(2)
        elif (match := MESSAGE_JOB.match(line)) is not None and stamp is not None:
            jobid = int(match.group(1))
            jobs[jobid] = Job(jobid=jobid, rule="(message)", started=stamp, message=line[match.end() :].strip())
        elif (match := JOB_HEADER.match(line)) is not None and stamp is not None:
            fields: dict[str, str] = {}
            while index < len(lines) and lines[index].startswith("    "):
                key, _, value = lines[index].strip().partition(": ")
                fields[key.rstrip(":")] = value
                index += 1
            if "jobid" not in fields:
                continue
            job = Job(
                jobid=int(fields["jobid"]),
                rule=match.group(1),
                started=stamp,
                threads=int(fields.get("threads", 1)),
                inputs=split_files(fields.get("input", "")),
                outputs=split_files(fields.get("output", "")),
                benchmark=fields.get("benchmark"),
            )
            jobs[job.jobid] = job
    return RunLog(path=path, started=started, cores=cores, jobs=list(jobs.values()))


def read_benchmark(path: Path) -> tuple[float, float | None]:
    """A Snakemake benchmark file's wall seconds and CPU seconds (mean over its repeats)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows:
        raise ValueError(f"{PREFIX}{path}: an empty benchmark file")
    seconds = sum(float(row["s"]) for row in rows) / len(rows)
    cpu = [float(row["cpu_time"]) for row in rows if row.get("cpu_time") not in (None, "", "NA", "-")]
    return seconds, (sum(cpu) / len(cpu) if cpu else None)


def newest_log(run_folder: Path) -> Path:
    """The newest Snakemake log of ``run_folder`` in which a job finished (a dry run's log, e.g. of
    ``snakemake -n`` after the run, is passed over)."""
    logs = sorted((run_folder / ".snakemake" / "log").glob("*.snakemake.log"))
    if not logs:
        raise FileNotFoundError(f"{PREFIX}{run_folder}: no Snakemake log under .snakemake/log (is this a run folder?)")
    for log in reversed(logs):
        if "Finished jobid: " in log.read_text(encoding="utf-8", errors="replace"):
            return log
    raise ValueError(f"{PREFIX}{run_folder}: no job finished in any of its {len(logs)} Snakemake logs")


def read_run(run_folder: Path, log: Path | None = None) -> RunLog:
    """The run's log (the newest one unless named) with each finished job's benchmark file read."""
    log = log or newest_log(run_folder)
    run = parse_snakemake_log(log.read_text(encoding="utf-8", errors="replace"), log)
    for job in run.jobs:
        if job.finished is None or job.benchmark is None:
            continue
        path = run_folder / job.benchmark
        if path.is_file():
            job.seconds, job.cpu_seconds = read_benchmark(path)
    return run


def produces(producer: Job, consumer: Job) -> bool:
    """Whether ``consumer`` reads a file (or a file inside a folder) that ``producer`` wrote."""
    outputs = set(producer.outputs)
    return any(
        name in outputs or any(name.startswith(out.rstrip("/") + "/") for out in outputs) for name in consumer.inputs
    )


def critical_path(jobs: list[Job]) -> list[Job]:
    """The chain of finished jobs, each reading a file its predecessor wrote, with the largest sum of
    durations (longest path in the run's job graph, in start order)."""
    finished = sorted((job for job in jobs if job.finished is not None), key=lambda job: (job.started, job.jobid))
    writer: dict[str, Job] = {name: job for job in finished for name in job.outputs}
    best: dict[int, float] = {}
    before: dict[int, Job | None] = {}
    for job in finished:
        parents = {writer[name].jobid: writer[name] for name in job.inputs if name in writer}
        parents |= {
            other.jobid: other
            for other in finished
            if other.jobid not in parents and other.started < job.started and produces(other, job)
        }
        parents.pop(job.jobid, None)
        parent = max(parents.values(), key=lambda p: best.get(p.jobid, 0.0), default=None)
        best[job.jobid] = job.duration + (best.get(parent.jobid, 0.0) if parent else 0.0)
        before[job.jobid] = parent
    if not best:
        return []
    last = max(finished, key=lambda job: best[job.jobid])
    path = [last]
    while (parent := before[path[-1].jobid]) is not None:
        path.append(parent)
    return path[::-1]


@dataclass
class RuleTotal:
    rule: str
    jobs: int
    job_seconds: float
    core_seconds: float  # threads x seconds
    cpu_seconds: float | None
    longest: float


@dataclass
class Profile:
    log: Path
    cores: int | None
    wall_seconds: float
    jobs: int
    unfinished: list[str]
    rules: list[RuleTotal]
    path: list[Job]
    reserved_share: float | None
    cpu_share: float | None
    unmeasured_rules: list[str]
    milestones: list[tuple[float, str]]  # (seconds from the start, message) of the jobs that print one


def profile_run(run: RunLog) -> Profile:
    """The profile of one run log (see the module's docstring)."""
    finished = [job for job in run.jobs if job.finished is not None]
    if not finished:
        raise ValueError(f"{PREFIX}{run.path}: no job finished in this log")
    start = run.started or min(job.started for job in finished)
    wall = (max(job.finished for job in finished) - start).total_seconds()
    totals: dict[str, RuleTotal] = {}
    for job in finished:
        total = totals.setdefault(job.rule, RuleTotal(job.rule, 0, 0.0, 0.0, None, 0.0))
        total.jobs += 1
        total.job_seconds += job.duration
        total.core_seconds += job.duration * job.threads
        total.longest = max(total.longest, job.duration)
        if job.cpu_seconds is not None:
            total.cpu_seconds = (total.cpu_seconds or 0.0) + job.cpu_seconds
    measured_cpu = sum(total.cpu_seconds or 0.0 for total in totals.values())
    capacity = run.cores * wall if run.cores and wall > 0 else None
    return Profile(
        log=run.path,
        cores=run.cores,
        wall_seconds=wall,
        jobs=len(finished),
        unfinished=sorted(f"{job.rule} (job {job.jobid})" for job in run.jobs if job.finished is None),
        rules=sorted(totals.values(), key=lambda total: -total.job_seconds),
        path=critical_path(finished),
        reserved_share=sum(t.core_seconds for t in totals.values()) / capacity if capacity else None,
        cpu_share=measured_cpu / capacity if capacity else None,
        unmeasured_rules=sorted({job.rule for job in finished if job.seconds is None}),
        milestones=sorted(
            ((job.finished - start).total_seconds(), job.message) for job in finished if job.message is not None
        ),
    )


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def format_profile(profile: Profile, top: int | None = None) -> str:
    """The profile as Markdown: the summary lines, job-seconds per rule, then the critical path."""
    share = (lambda value: f"{100 * value:.0f}%") if profile.cores else (lambda value: "n/a")
    total_job = sum(rule.job_seconds for rule in profile.rules)
    lines = [
        f"# Profile of {profile.log.name}",
        "",
        f"- wall time: {minutes(profile.wall_seconds)} ({profile.wall_seconds:.0f} s), {profile.jobs} jobs finished"
        + (
            f", {len(profile.unfinished)} started and not finished: {', '.join(profile.unfinished)}"
            if profile.unfinished
            else ""
        ),
        f"- cores: {profile.cores if profile.cores else 'not recorded (a cluster run)'}",
        f"- job-seconds: {total_job:.0f} ({minutes(total_job)}); critical path "
        f"{sum(job.duration for job in profile.path):.0f} s over {len(profile.path)} jobs",
        f"- cores reserved by jobs (threads x seconds): {share(profile.reserved_share or 0)} of cores x wall time",
        f"- CPU used by the jobs with a benchmark file: {share(profile.cpu_share or 0)} of cores x wall time",
    ]
    if profile.unmeasured_rules:
        unmeasured = ", ".join(profile.unmeasured_rules)
        lines.append(f"- rules without a benchmark file (timed from the log, to the second; no CPU time): {unmeasured}")
    lines += [
        "",
        "| rule | jobs | job-seconds | threads x seconds | CPU seconds | longest job (s) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for rule in profile.rules[:top]:
        cpu = f"{rule.cpu_seconds:.0f}" if rule.cpu_seconds is not None else "n/a"
        seconds = f"{rule.job_seconds:.0f} | {rule.core_seconds:.0f} | {cpu} | {rule.longest:.0f}"
        lines.append(f"| {rule.rule} | {rule.jobs} | {seconds} |")
    if profile.milestones:
        lines += ["", "When each study said it was done:", ""]
        lines += [f"- {minutes(seconds)}: {message.split(';')[0]}" for seconds, message in profile.milestones]
    lines += ["", "Critical path (each job reads a file the one before it wrote):", ""]
    lines += ["| job | rule | started | seconds |", "|---:|---|---|---:|"]
    for job in profile.path:
        lines.append(f"| {job.jobid} | {job.rule} | {job.started:%H:%M:%S} | {job.duration:.0f} |")
    return "\n".join(lines) + "\n"


def job_seconds_per_rule(profile: Profile) -> dict[str, float]:
    return {rule.rule: rule.job_seconds for rule in profile.rules}


BUDGET_COLUMNS = ("rule", "jobs", "job_seconds")


def read_budget(path: Path) -> dict[str, tuple[int, float]]:
    """A budget file: ``rule``, ``jobs``, ``job_seconds`` (tab-separated; ``#`` lines are its note)."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t"))
    if rows and set(BUDGET_COLUMNS) - set(rows[0]):
        raise ValueError(f"{PREFIX}{path}: a budget needs the columns {', '.join(BUDGET_COLUMNS)}")
    return {row["rule"]: (int(row["jobs"]), float(row["job_seconds"])) for row in rows}


def format_budget(profile: Profile, note: str) -> str:
    """The profile's job-seconds per rule as a budget file, the rules in name order."""
    lines = [f"# {line}" for line in note.splitlines()] + ["\t".join(BUDGET_COLUMNS)]
    for rule in sorted(profile.rules, key=lambda total: total.rule):
        lines.append(f"{rule.rule}\t{rule.jobs}\t{rule.job_seconds:.1f}")
    return "\n".join(lines) + "\n"


def budget_comparison(profile: Profile, budget: dict[str, tuple[int, float]]) -> str:
    """Job-seconds per rule beside the budget's, the largest overrun first; rules without a budget
    line and budget lines the run did not reach are named."""
    measured = job_seconds_per_rule(profile)
    rows = sorted(
        ((rule, seconds, budget[rule][1]) for rule, seconds in measured.items() if rule in budget),
        key=lambda row: -(row[1] - row[2]),
    )
    lines = ["| rule | job-seconds | budget | change |", "|---|---:|---:|---:|"]
    lines += [
        f"| {rule} | {seconds:.0f} | {planned:.0f} | {seconds - planned:+.0f} |" for rule, seconds, planned in rows
    ]
    if missing := sorted(set(measured) - set(budget)):
        lines.append(f"\nRules without a budget line: {', '.join(missing)}")
    if unreached := sorted(set(budget) - set(measured)):
        lines.append(f"\nBudget lines no job of this log ran: {', '.join(unreached)}")
    total = sum(measured.values()), sum(seconds for _, seconds in budget.values())
    lines.append(f"\nTotal job-seconds: {total[0]:.0f} against a budget of {total[1]:.0f}")
    return "\n".join(lines) + "\n"
