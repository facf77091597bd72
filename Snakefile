# medbias: measure and mitigate social bias in clinical and biomedical language models.
#   snakemake --cores 2                          the default DAG on the embedded demo world
#   snakemake --profile slurm --configfile config/mimic.yaml    real MIMIC-III on SLURM
# The config is validated (schema, then every input it names) before any job is scheduled.

import os
import sys
import time
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")

sys.path.insert(0, str(Path(workflow.basedir) / "workflow_scripts"))

from medbias.pipeline.cluster import usable_cache_rules
from medbias.pipeline.config import (
    check_config_files,
    check_inputs,
    enrol_registry_models,
    resolve_config,
)
from medbias.pipeline.runs import (
    forget_run,
    input_fault_lines,
    note_lines,
    record_run,
    release_stale_locks,
)
from medbias.core.errors import MedbiasInputError

RUN_STARTED = time.time()
DEFAULT_CONFIG = "config/config.yaml"
try:
    # Snakemake keeps the last of a key written twice; the config files are read again strictly
    check_config_files(workflow.config_settings.configfiles or [DEFAULT_CONFIG])
except MedbiasInputError as error:
    sys.exit(f"medbias: {error}")

# the demo config is the default; a --configfile replaces it rather than merging into it, so
# that demo-only keys never leak into a real-world run
if not workflow.config_settings.configfiles:

    configfile: DEFAULT_CONFIG


try:
    # a config file lists only what differs from the schema's defaults: fill them in, expand
    # {demo_dir}, validate; then one registry entry enrols a model in the studies it names
    resolved = enrol_registry_models(
        resolve_config(
            config,
            Path(workflow.basedir) / "config" / "schema.yaml",
            dict(workflow.config_settings.config),
        )
    )
    config.clear()
    config.update(resolved)
    check_inputs(config)
except MedbiasInputError as error:
    sys.exit(f"medbias: {error}")


# between-workflow caching is opt-in: without $SNAKEMAKE_OUTPUT_CACHE the profile's `cache:` list
# is dropped (with one line saying so) instead of Snakemake stopping at the first cached rule
cache_rules, cache_notice = usable_cache_rules(
    workflow.workflow_settings.cache, os.environ
)
workflow.workflow_settings.cache = cache_rules
if cache_notice:
    print(cache_notice, file=sys.stderr)
# the rules eligible for caching are marked so only when caching is on: Snakemake otherwise prints
# one "eligible for caching" line per such rule on every command
CACHE = "omit-software" if cache_rules is not None else False


# a run killed outright (kill -9, a lost node) leaves its locks: the next run on this host
# releases them when no recorded run still lives (medbias.pipeline.runs)
if workflow.is_main_process:
    stale_lock_notice = release_stale_locks(Path(".snakemake"))
    if stale_lock_notice:
        print(stale_lock_notice, file=sys.stderr)


onstart:
    executor = workflow.executor_plugin
    record_run(
        Path(".snakemake"),
        executor=executor.name,
        remote=bool(executor.common_settings.non_local_exec),
    )


# what jobs of this run left out of the user's data ("medbias (note):" lines of their logs)
onsuccess:
    forget_run(Path(".snakemake"))
    for line in note_lines(sorted(Path(LOGS).rglob("*.log")), RUN_STARTED):
        print(line, file=sys.stderr)


# a job that stopped on a bad input wrote one "medbias:" line to its log; say it here, once
# (with --show-failed-logs, as in the SLURM profile, Snakemake has just shown that log whole)
onerror:
    forget_run(Path(".snakemake"))
    if not getattr(workflow.output_settings, "show_failed_logs", False):
        for line in input_fault_lines(
            sorted(Path(LOGS).rglob("*.log")), RUN_STARTED
        ):
            print(line, file=sys.stderr)


include: "rules/common.smk"


if config["world"] == "demo":

    include: "rules/synth.smk"
    include: "rules/validation.smk"


include: "rules/inputs.smk"
include: "rules/rios.smk"
include: "rules/mimic.smk"
include: "rules/pretrain.smk"
include: "rules/hurtful.smk"
include: "rules/downstream.smk"
include: "rules/mental.smk"
include: "rules/plm.smk"
include: "rules/vignettes.smk"
include: "rules/audit.smk"
include: "rules/report.smk"


track_settings_by_key()


report: "report/workflow.rst"


# the study targets only collect files: on a cluster they run in the main process, not as jobs
localrules:
    all,
    mimic,
    rios,
    hurtful,
    mental,
    plm,
    audit,


rule all:
    default_target: True
    input:
        all_targets(),
