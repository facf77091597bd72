"""The published benchmark numbers that medbias prints beside its own, each with the scoring rule and
the tool that made it (``core.benchmark_scoring.CROWS_RULES``, ``STEREOSET_CAUSAL_RULES``): a
medbias score is comparable with one of them only when it was made by the same rule."""

from __future__ import annotations

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

PUBLISHED_VALUES = (
    PublishedValue("crows_pairs", "bias_bench", "bert-base-uncased", "gender", "metric", 57.25, BIAS_BENCH),
    PublishedValue("crows_pairs", "bias_bench", "bert-base-uncased", "race-color", "metric", 62.33, BIAS_BENCH),
    PublishedValue("crows_pairs", "bias_bench", "bert-base-uncased", "religion", "metric", 62.86, BIAS_BENCH),
    PublishedValue("crows_pairs", "bias_bench", "gpt2", "gender", "metric", 56.87, BIAS_BENCH),
    PublishedValue("crows_pairs", "bias_bench", "gpt2", "race-color", "metric", 59.69, BIAS_BENCH),
    PublishedValue("crows_pairs", "bias_bench", "gpt2", "religion", "metric", 62.86, BIAS_BENCH),
    PublishedValue("intrasentence", "bias_bench", "gpt2", "overall", "ss", 61.93, STEREOSET_OFFICIAL),
    PublishedValue("intrasentence", "bias_bench", "gpt2", "overall", "lms", 91.11, STEREOSET_OFFICIAL),
    PublishedValue("intrasentence", "bias_bench", "gpt2", "overall", "icat", 69.37, STEREOSET_OFFICIAL),
    PublishedValue("intrasentence", "nadeem", "bert-base-cased", "overall", "ss", 58.68, STEREOSET_OFFICIAL),
    PublishedValue("intrasentence", "nadeem", "bert-base-cased", "overall", "lms", 83.02, STEREOSET_OFFICIAL),
    PublishedValue("intrasentence", "nadeem", "bert-base-cased", "overall", "icat", 68.61, STEREOSET_OFFICIAL),
    PublishedValue("intrasentence", "nadeem", "bert-base-uncased", "gender", "ss", 60.28, BIAS_BENCH),
    PublishedValue("intrasentence", "nadeem", "bert-base-uncased", "race", "ss", 57.03, BIAS_BENCH),
    PublishedValue("intrasentence", "nadeem", "bert-base-uncased", "religion", "ss", 59.70, BIAS_BENCH),
)

BENCHMARK_TITLES = {"crows_pairs": "CrowS-Pairs", "intrasentence": "StereoSet intrasentence"}


def published_note(values=PUBLISHED_VALUES) -> str:
    """One sentence per (benchmark, rule, source): the published numbers, and the rule that made them,
    so that a reader compares each only with medbias's score of the same rule."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for v in values:
        groups.setdefault((v.benchmark, v.rule, v.source), []).append(
            f"{v.model} {v.bias_type} {v.measure} {v.value:.2f}"
        )
    parts = [
        f"{BENCHMARK_TITLES[benchmark]}, rule {rule} ({source}): " + "; ".join(numbers)
        for (benchmark, rule, source), numbers in groups.items()
    ]
    return (
        "Published values, each comparable only with the medbias score of the same rule (the rule column): "
        + ". ".join(parts)
        + ". No published CrowS-Pairs number in this list was made by the nangia or lm_eval rule."
    )
