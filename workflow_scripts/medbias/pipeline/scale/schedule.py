"""The projected wall time of the plan's rows on one node (a greedy list schedule, rule by rule) and
the plan as a markdown table."""

from __future__ import annotations

from functools import cache

from medbias.pipeline.cost_probes import REPO
from medbias.pipeline.scale.rows import Row
from medbias.pipeline.workflow_rules import DeclaredRule, declared_rules, rule_of_row


def schedule(rows: list[Row], cores: int, gpus: int, include_pretraining: bool) -> tuple[float, dict[str, float]]:
    """Wall hours of a greedy list schedule on one node: a job starts when every job of the rules it
    waits for has finished and its threads (at most ``cores``) and GPU are free; GPU jobs first, then
    the longest.
    Rules left out (pretraining) count as done; a ready job of a priority rule (``is_priority_rule``)
    that does not fit keeps lower-priority jobs from starting. Returns the makespan and each rule's
    finishing hour."""
    rows = [r for r in rows if include_pretraining or not r.pretraining]
    present = {r.rule for r in rows}
    priority = {r.rule: is_priority_rule(r.rule) for r in rows}
    pending = [(r.rule, min(r.threads, cores), r.gpus, r.job_hours) for r in rows for _ in range(r.jobs)]
    remaining = {r.rule: r.jobs for r in rows}
    after = {r.rule: [a for a in r.after if a in present] for r in rows}
    running: list[tuple[float, str, int, int]] = []
    now, free_cores, free_gpus, finished = 0.0, cores, gpus, {}
    while pending or running:
        # the workflow's priority rules first (they hold resources for themselves), then GPU jobs (the
        # scarcer resource), then the longest
        pending.sort(key=lambda job: (-priority[job[0]], -job[2], -job[3]))
        started = True
        while started:
            started = False
            for job in pending:
                rule, need_cores, need_gpus, hours = job
                ready = all(remaining[a] == 0 for a in after[rule])
                if ready and priority[rule] and (need_cores > free_cores or need_gpus > free_gpus):
                    break  # nothing of lower priority takes the cores this job waits for
                if ready and need_cores <= free_cores and need_gpus <= free_gpus:
                    pending.remove(job)
                    running.append((now + hours, rule, need_cores, need_gpus))
                    free_cores -= need_cores
                    free_gpus -= need_gpus
                    started = True
                    break
        running.sort()
        end, rule, used_cores, used_gpus = running.pop(0)
        now, free_cores, free_gpus = end, free_cores + used_cores, free_gpus + used_gpus
        remaining[rule] -= 1
        if remaining[rule] == 0:
            finished[rule] = now
    return now, finished


@cache
def workflow_rules() -> dict[str, DeclaredRule]:
    """The rules the workflow's rule files declare, read once when the plan first asks."""
    return declared_rules(REPO / "rules")


def is_priority_rule(label: str) -> bool:
    """A row of a rule with ``priority: CRITICAL_PATH_PRIORITY`` in rules/ (the chain to the clinical BERT)."""
    return rule_of_row(label, workflow_rules()).priority == "CRITICAL_PATH_PRIORITY"


def study_of(label: str) -> str:
    """The study of a row's rule, by the rule file that declares it."""
    rule = rule_of_row(label, workflow_rules())
    if rule.study is None:
        raise ValueError(f"rule {rule.name} (rules/{rule.file}.smk) belongs to no study")
    return rule.study


def markdown(rows: list[Row], cores: int, gpus: int, sources: str) -> str:
    lines = [
        "| rule | jobs | units | cost per unit | measured | core-hours | GPU-hours | per job | hours per job |",
        "|---|---:|---|---|---|---:|---:|---|---:|",
    ]
    for r in rows:
        flag = " (pretraining)" if r.pretraining else ""
        lines.append(
            f"| `{r.rule}`{flag} | {r.jobs:,} | {r.units} | {r.cost} | {r.where} | {r.core_hours:,.1f} | "
            f"{r.gpu_hours:,.1f} | {r.threads} CPU{', 1 GPU' if r.gpus else ''} | {r.job_hours:,.2f} |"
        )
    lines.append(
        f"| **total** | {sum(r.jobs for r in rows):,} | | | | {sum(r.core_hours for r in rows):,.0f} | "
        f"{sum(r.gpu_hours for r in rows):,.0f} | | |"
    )
    lines.append("")
    for label, include in (("pretraining excluded", False), ("with pretraining", True)):
        hours, finished = schedule(rows, cores, gpus, include)
        last = sorted(finished.items(), key=lambda item: -item[1])[:3]
        lines.append(
            f"- Projected wall time on one {cores}-core, {gpus}-GPU node, the whole DAG, {label}: **{hours:,.1f} h** "
            f"({hours / 24:.1f} days); last to finish: " + ", ".join(f"`{rule}` at {h:,.1f} h" for rule, h in last)
        )
    alone = []
    for study in dict.fromkeys(study_of(r.rule) for r in rows):
        hours, _ = schedule([r for r in rows if study_of(r.rule) == study], cores, gpus, False)
        alone.append(f"{study} {hours:,.1f} h")
        if any(r.pretraining for r in rows if study_of(r.rule) == study):
            alone[-1] += (
                f" ({schedule([r for r in rows if study_of(r.rule) == study], cores, gpus, True)[0]:,.1f} h "
                f"with pretraining)"
            )
    lines.append("- Each study alone on that node, pretraining excluded: " + "; ".join(alone))
    for r in rows:
        lines += [f"- `{r.rule}`: {note}" for note in r.notes]
    lines.append(f"- {sources}")
    return "\n".join(lines)
