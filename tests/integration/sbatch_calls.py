"""Print the sbatch command line that snakemake-executor-plugin-slurm would send for every job of a
dry run, built by the plugin's own code (``get_submit_command`` + ``set_gres_string``) from the jobs
as Snakemake resolved them (profile, set-resources, set-threads, the rules' resources).

    python sbatch_calls.py <snakemake arguments, e.g. -n --profile slurm --configfile ...>

Each job is one line on stdout: ``SBATCH-CALL <rule> <json wildcards> <sbatch call>``, or
``LOCAL-JOB <rule>`` for a local rule.
"""

from __future__ import annotations

import json
import sys

from snakemake.cli import main
from snakemake.executors import dryrun
from snakemake_executor_plugin_slurm.submit_string import get_submit_command
from snakemake_executor_plugin_slurm.utils import set_gres_string

_dry_run_job = dryrun.Executor.run_job


def _print_sbatch_call(self, job):
    params = {
        "run_uuid": "medbias-test",
        "slurm_logfile": "slurm.log",
        "comment_str": f"rule_{job.name}",
        # the plugin's -A and -p from the resources, as it sends them (it checks the account with sacctmgr
        # first, and without one guesses it)
        "account": f" -A {job.resources.get('slurm_account')}" if job.resources.get("slurm_account") else "",
        "partition": f" -p {job.resources.get('slurm_partition')}" if job.resources.get("slurm_partition") else "",
        "workdir": ".",
    }
    workflow = job.dag.workflow
    rule = job.rule
    # Workflow.is_local without the dry run's own local execution: localrules never go through sbatch
    if rule.group is None and (rule.name in workflow._localrules or rule.norun or rule.is_template_engine):
        print(f"LOCAL-JOB {job.name}", flush=True)
    else:
        call = get_submit_command(job, params) + set_gres_string(job)
        print(f"SBATCH-CALL {job.name} {json.dumps(dict(job.wildcards_dict))} {call}", flush=True)
    return _dry_run_job(self, job)


dryrun.Executor.run_job = _print_sbatch_call
if __name__ == "__main__":
    # a dry run caps threads at --cores (1 when unset); a run under the SLURM executor has no --cores
    # and no cap, so the largest value stands for "none" here
    sys.exit(main([*sys.argv[1:], "--cores", str(sys.maxsize)]))
