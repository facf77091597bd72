"""The benchmark plug-ins (``base.Benchmark``) by name. Adding a benchmark is one module here and one line
in ``REGISTRY``: ``plm.benchmarks.suite`` accepts its name, and the scoring job, the per-evaluation files,
the wide benchmark table's headline columns and the audit card's lines loop over the registry."""

from __future__ import annotations

from collections.abc import Sequence

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


def headlines() -> list[Headline]:
    """Every plug-in's headline numbers, in the registry's order: the audit card's lines and the wide
    benchmark table's headline columns."""
    return [headline for b in REGISTRY.values() for headline in b.headlines]
