"""The benchmark plug-ins (``base.Benchmark``) by name. Adding a benchmark is one module here and one line
in ``REGISTRY``: ``plm.benchmarks.suite`` accepts its name, its settings are the config section
``plm.benchmarks.<name>`` it declares, and the config check, the scoring job, the per-evaluation files,
the wide benchmark table's headline columns and the audit card's lines loop over the registry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from medbias.metrics.benchmarks import crows_pairs, perplexity, seat_may, stereoset
from medbias.metrics.benchmarks.base import Benchmark, Headline

REGISTRY: dict[str, Benchmark] = {
    b.name: b for b in (crows_pairs.BENCHMARK, stereoset.BENCHMARK, seat_may.BENCHMARK, perplexity.BENCHMARK)
}


def suite(names: Sequence[str]) -> list[Benchmark]:
    """The plug-ins of ``names`` in order (an unknown name is a KeyError; the config check names it first)."""
    return [REGISTRY[name] for name in names]


def evaluation_files(names: Sequence[str]) -> dict[str, str]:
    """File key -> file name of every file the suite writes per evaluation."""
    return {key: file for b in suite(names) for key, file in b.files.items()}


def published_values(names: Sequence[str]) -> list:
    """The published numbers of the suite's plug-ins, each with its rule and source."""
    return [value for b in suite(names) for value in b.published]


def settings_of(benchmark: Benchmark, settings: Mapping[str, Any]) -> dict[str, Any]:
    """What plug-in ``benchmark``'s functions read: ``settings`` (``plm.benchmarks`` and the job's own
    keys) without the plug-ins' sections, with ``benchmark``'s own section laid over them (the defaults
    it declares where the section leaves a key out)."""
    shared = {key: value for key, value in settings.items() if key not in REGISTRY}
    declared = benchmark.settings.get("properties", {})
    defaults = {key: spec["default"] for key, spec in declared.items() if "default" in spec}
    return {**shared, **defaults, **settings.get(benchmark.name, {})}


def headlines(settings: Mapping[str, Any]) -> list[Headline]:
    """Every plug-in's headline numbers under ``settings`` (``plm.benchmarks``), in the registry's order:
    the audit card's lines and the wide benchmark table's headline columns."""
    return [headline for b in REGISTRY.values() for headline in b.headlines(settings_of(b, settings))]


def check_benchmark_inputs(resources: Mapping[str, str], settings: Mapping[str, Any]) -> None:
    """Every registered plug-in reads and checks the files it scores from (``resources``; the shipped
    benchmark files are read by the item and control rules whatever the suite), so that a bad file or a
    count a file cannot meet stops the run with one line before any job starts."""
    for benchmark in REGISTRY.values():
        if benchmark.check_inputs is not None:
            benchmark.check_inputs(resources, settings_of(benchmark, settings))
