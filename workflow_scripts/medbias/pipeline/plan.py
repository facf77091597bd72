"""What a configuration asks the DAG to build, for the rule files: the studies' decisions about which
evaluations exist, which tables are written and which model a figure shows (each in its study's
``plan`` module, gathered here), and the one resolver of what a job loads for a model name.

The rule files hold paths and wildcards and call these functions with config sections, so the same
choice is not spelled out in a rule file and again in a script, and the rule files import no study
module. Nothing here imports torch or reads a file: the Snakefile imports it at parse time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from medbias.metrics.benchmarks import REGISTRY as BENCHMARKS
from medbias.metrics.benchmarks import evaluation_files as benchmark_files
from medbias.metrics.benchmarks import suite as benchmark_suite

# each study's decisions live in its own package; the rule files import them from here
from medbias.studies.audit.plan import audit_sections, audit_skipped
from medbias.studies.hurtful.plan import (
    DEBIASED_TABLE_NAMES,
    DEBIASED_TABLES,
    adversarial_encoders,
    debiased_tables,
    figure_a1_model,
    mitigation_gpus,
    mitigation_jobs,
    mitigation_method,
    report_left_out,
)
from medbias.studies.hurtful.variants import debiased_attributes, variant_attribute
from medbias.studies.plm.plan import (
    debias_values,
    is_loadable,
    method_of,
    plm_benchmark_evaluations,
    plm_evaluations,
    plm_finetunes,
)
from medbias.studies.vignettes.plan import vignette_models, vignette_skip_reason

__all__ = [
    "DEBIASED_TABLE_NAMES",
    "DEBIASED_TABLES",
    "adversarial_encoders",
    "audit_sections",
    "audit_skipped",
    "debiased_attributes",
    "debiased_tables",
    "figure_a1_model",
    "is_loadable",
    "model_entry",
    "model_input_files",
    "benchmark_files",
    "benchmark_inputs",
    "benchmark_run_settings",
    "debias_values",
    "method_of",
    "mitigation_jobs",
    "mitigation_gpus",
    "mitigation_method",
    "report_left_out",
    "plm_benchmark_evaluations",
    "plm_evaluations",
    "plm_finetunes",
    "variant_attribute",
    "vignette_models",
    "vignette_skip_reason",
]


def model_entry(config: Mapping[str, Any], name: str, variants_dir: str) -> dict[str, Any]:
    """What a job loads for ``name``, the one resolver of every study: word vectors (``embeddings:``,
    type ``word_vectors``), a pretrained variant of the hurtful study (a local masked LM in
    ``variants_dir``), or a registry model (both of type ``contextual``)."""
    if name in config["embeddings"]:
        return {"type": "word_vectors", **config["embeddings"][name]}
    if name in config["hurtful"]["variants"]:
        return {"type": "contextual", "source": f"{variants_dir}/{name}", "kind": "masked"}
    return {"type": "contextual", **config["models"][name]}


def model_input_files(config: Mapping[str, Any], name: str, variants_dir: str) -> list[str]:
    """The files a job that loads ``name`` waits for: the word-vector file, the variant's folder (a
    pretraining output), the folder the demo world builds, or every file of a local save_pretrained
    folder (so a model re-saved in place makes its jobs stale); nothing for a hub id."""
    from medbias.core.models import model_folder_files
    from medbias.pipeline.config import built_by_demo

    entry = model_entry(config, name, variants_dir)
    if entry["type"] == "word_vectors":
        return [entry["source"]]
    if name in config["hurtful"]["variants"] or built_by_demo(entry["source"], config):
        return [entry["source"]]
    return model_folder_files(entry["source"])


def benchmark_run_settings(benchmarks: Mapping[str, Any]) -> dict[str, Any]:
    """What a benchmark scoring job reads of ``plm.benchmarks``: the suite, bootstrap, untrained copies,
    Self-Debias and every plug-in's own section (the tables' alpha and permutations, the item samples and
    the untrained control's seeds and pairs are their own rules')."""
    shared = ("suite", "bootstrap", "untrained_copies", "self_debias")
    return {k: benchmarks[k] for k in (*shared, *(name for name in BENCHMARKS if name in benchmarks))}


def benchmark_inputs(names, config, plm_dir: str) -> dict[str, str]:
    """Input key -> path of every file the benchmark plug-ins of ``names`` read in their scoring job."""
    return {key: path for b in benchmark_suite(names) for key, path in b.inputs(config, plm_dir).items()}
