"""A published benchmark number that medbias prints beside its own, with the scoring rule and the tool
that made it (``metrics.benchmarks.scoring.CROWS_RULES``, ``STEREOSET_CAUSAL_RULES``): a medbias score is
comparable with one of them only when it was made by the same rule. Each benchmark plug-in
(``metrics.benchmarks``) holds its own numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedValue:
    benchmark: str  # crows_pairs, intrasentence
    rule: str  # the medbias rule that reproduces the tool's scoring
    model: str
    bias_type: str
    measure: str
    value: float
    source: str


BIAS_BENCH = "bias-bench, Meade et al. 2022, Tables 2-4"
STEREOSET_OFFICIAL = "StereoSet's official dev-set scores (Nadeem et al. 2021, the authors' predictions)"

BENCHMARK_TITLES = {"crows_pairs": "CrowS-Pairs", "intrasentence": "StereoSet intrasentence"}


def published_note(values: Sequence[PublishedValue]) -> str:
    """One sentence per (benchmark, rule, source): the published numbers, and the rule that made them,
    so that a reader compares each only with medbias's score of the same rule."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for v in values:
        groups.setdefault((v.benchmark, v.rule, v.source), []).append(
            f"{v.model} {v.bias_type} {v.measure} {v.value:.2f}"
        )
    parts = [
        f"{BENCHMARK_TITLES.get(benchmark, benchmark)}, rule {rule} ({source}): " + "; ".join(numbers)
        for (benchmark, rule, source), numbers in groups.items()
    ]
    return (
        "Published values, each comparable only with the medbias score of the same rule (the rule column): "
        + ". ".join(parts)
        + "."
    )


def published_for_source(values: Sequence[PublishedValue], source: str) -> list[PublishedValue]:
    """The published values of the model ``source`` names (a hub id or a local folder): those whose model
    is its last path component, case-insensitively. Another model's numbers are no yardstick for it."""
    name = str(source).rstrip("/").rsplit("/", 1)[-1].lower()
    return [v for v in values if v.model.lower() == name]


def published_models(values: Sequence[PublishedValue]) -> list[str]:
    """The models ``values`` hold numbers for, in order of first appearance."""
    return list(dict.fromkeys(v.model for v in values))
