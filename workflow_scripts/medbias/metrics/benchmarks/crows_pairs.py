"""CrowS-Pairs (Nangia et al. 2020) as a benchmark plug-in: every pair of the sampled items scored by
every rule of ``plm.benchmarks.crows_pairs.rules`` that scores the model's kind (``metrics.benchmarks.scoring``:
nangia and bias_bench for masked, bias_bench and lm_eval for causal models), one row per pair and
rule; the metric per rule and bias type with its interval and test against 50
(``metrics.benchmarks.peer``). A plain evaluation also scores untrained copies of the model on the
same pairs: the copies' mean metric per rule, with the range that holds 95% of them. seq2seq models
are not applicable: a sentence's likelihood given itself measures copying, and no published scorer
defines another."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.benchmarks.base import Benchmark, Headline, ScoringContext, copies_row, row
from medbias.metrics.benchmarks.peer import (
    cluster_mean_interval,
    crows_cluster_test,
    crows_metric,
    crows_outcomes,
    crows_scored,
    crows_swap,
)
from medbias.metrics.benchmarks.published import BIAS_BENCH, PublishedValue
from medbias.metrics.benchmarks.scoring import CROWS_RULES

SEQ2SEQ_CROWS = (
    "not applicable: a seq2seq model's likelihood of a sentence given itself measures copying; no published "
    "CrowS-Pairs scorer defines a seq2seq score"
)
EMPTY_CROWS = pd.DataFrame(
    columns=["pair_id", "bias_type", "direction", "swap", "rule", "score_more", "score_less", "tokens"]
)


def score_crows_pairs(
    model,
    tokenizer,
    kind: str,
    pairs: pd.DataFrame,
    batch_size: int,
    prefixes: Mapping[str, str] | None = None,
    decay: float = 50.0,
    rules: Sequence[str] = ("nangia", "bias_bench", "lm_eval"),
    epsilon: float = 0.01,
) -> pd.DataFrame:
    """Per-pair sentence scores of CrowS-Pairs under a masked or causal LM, one row per pair and rule of
    ``rules`` that scores the model's kind (``metrics.benchmarks.scoring.CROWS_RULES``; a bias_bench pair
    whose modified span is empty has NaN scores); with ``prefixes`` (bias type -> debiasing prefix),
    under Self-Debias with each pair's bias-type prefix."""
    from medbias.core.self_debias import self_debias_for
    from medbias.metrics.benchmarks.scoring import crows_pairs_causal_scores, crows_pairs_masked_scores, crows_rules_for

    chosen = crows_rules_for(kind, rules)
    if not chosen:
        return EMPTY_CROWS.copy()
    debias = self_debias_for(prefixes, pairs["bias_type"].tolist(), tokenizer, decay, epsilon) if prefixes else None
    more, less = pairs["sent_more"].tolist(), pairs["sent_less"].tolist()
    if kind == "masked":
        scored = crows_pairs_masked_scores(
            model, tokenizer, more, less, batch_size, debias, chosen, pairs["stereo_antistereo"].tolist()
        )
    else:
        scored = crows_pairs_causal_scores(model, tokenizer, more, less, batch_size, debias, chosen)
    frames = [
        pd.DataFrame(
            {
                "pair_id": pairs["pair_id"].to_numpy(),
                "bias_type": pairs["bias_type"].to_numpy(),
                "direction": pairs["stereo_antistereo"].to_numpy(),
                "swap": [crows_swap(m, n) for m, n in zip(more, less)],
                "rule": rule,
                "score_more": scored[rule][0],
                "score_less": scored[rule][1],
                "tokens": scored[rule][2],
            }
        )
        for rule in chosen
    ]
    return pd.concat(frames, ignore_index=True)


def crows_rows(
    pairs: pd.DataFrame,
    n_bootstrap: int,
    rng: np.random.Generator,
    benchmark: str = "crows_pairs",
    n_permutations: int = 9999,
) -> list[dict[str, Any]]:
    """CrowS-Pairs' published scores per scoring rule, over all pairs and per bias type: the metric
    with its bootstrap interval and its test against 50, both over the clusters of pairs that swap the
    same words (``crows_swap``: ``cluster_mean_interval``, ``crows_cluster_test`` with
    ``n_permutations`` sign patterns; neutral pairs count as not preferred, as in the metric), the
    stereo, antistereo and neutral shares, and the pairs the rule skipped (NaN scores; bias-bench's
    masked rule skips a pair whose modified span is empty)."""
    rows = []
    for rule, part in pairs.groupby("rule", sort=False):
        scored = crows_scored(part)
        skipped = int((~scored).sum())
        part = part[scored]
        preferred, neutral = crows_outcomes(part["score_more"].to_numpy(), part["score_less"].to_numpy())
        direction, swap = part["direction"].to_numpy(), part["swap"].to_numpy()
        for bias_type in ["all", *sorted(part["bias_type"].unique())]:
            keep = np.ones(len(part), bool) if bias_type == "all" else (part["bias_type"] == bias_type).to_numpy()
            score = crows_metric(preferred[keep], neutral[keep], direction[keep])
            low, high = cluster_mean_interval(preferred[keep].astype(float), swap[keep], n_bootstrap, rng)
            p = crows_cluster_test(preferred[keep], neutral[keep], swap[keep], n_permutations, rng)
            rows.append(row(benchmark, bias_type, "metric", score.metric, low, high, p, score.pairs, rule=rule))
            rows.append(row(benchmark, bias_type, "stereo", score.stereo, items=score.stereo_pairs, rule=rule))
            rows.append(
                row(benchmark, bias_type, "antistereo", score.antistereo, items=score.antistereo_pairs, rule=rule)
            )
            rows.append(row(benchmark, bias_type, "neutral", score.neutral, items=score.pairs, rule=rule))
            rows.append(row(benchmark, bias_type, "swaps", float(len(set(swap[keep]))), items=score.pairs, rule=rule))
        rows.append(row(benchmark, "all", "skipped", float(skipped), items=skipped, rule=rule))
    return rows


def copy_metrics(untrained: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per scoring rule, the CrowS-Pairs metric over all pairs of each untrained copy (``copy``; a frame
    without it is one copy), in copy order."""
    numbered = untrained if "copy" in untrained else untrained.assign(copy=0)
    out: dict[str, np.ndarray] = {}
    for rule, part in numbered.groupby("rule", sort=False):
        metrics = []
        for _, one in part.groupby("copy", sort=True):
            one = one[crows_scored(one)]
            preferred, neutral = crows_outcomes(one["score_more"].to_numpy(), one["score_less"].to_numpy())
            metrics.append(crows_metric(preferred, neutral, one["direction"].to_numpy()).metric)
        out[str(rule)] = np.array(metrics)
    return out


def inputs(config: Mapping[str, Any], plm_dir: str) -> dict[str, str]:
    return {"crows_pairs": f"{plm_dir}/benchmark_items/crows_pairs.parquet"}


def read_items(paths: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
    return {"crows_pairs": pd.read_parquet(paths["crows_pairs"])}


def score(context: ScoringContext) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    if context.no_head or context.kind == "seq2seq":
        return {"crows_pairs": EMPTY_CROWS}, {"crows_pairs": context.no_head or SEQ2SEQ_CROWS}
    pairs = context.items["crows_pairs"]
    settings = context.settings
    frame = context.timed(
        "crows_pairs",
        2 * len(pairs),
        lambda: score_crows_pairs(
            context.model,
            context.tokenizer,
            context.kind,
            pairs,
            settings["batch_size"],
            context.prefixes,
            context.decay,
            settings["rules"],
            context.epsilon,
        ),
    )
    return {"crows_pairs": frame}, {"crows_pairs": "ok"}


def score_untrained(context: ScoringContext) -> dict[str, pd.DataFrame]:
    settings = context.settings
    frame = score_crows_pairs(
        context.model,
        context.tokenizer,
        context.kind,
        context.items["crows_pairs"],
        settings["batch_size"],
        rules=settings["rules"],
    )
    return {"untrained_crows_pairs": frame}


def check_inputs(resources: Mapping[str, str], settings: Mapping[str, Any]) -> None:
    from medbias.metrics.benchmarks.items import check_count, read_crows_pairs

    pairs = read_crows_pairs(resources["crows_pairs"])
    check_count(
        "plm.benchmarks.control_pairs", settings["control_pairs"], len(pairs), "pairs", resources["crows_pairs"]
    )


def headlines(settings: Mapping[str, Any]) -> tuple[Headline, ...]:
    """One wide-table column per scoring rule, trained and untrained; one card line per rule scored."""
    title = "CrowS-Pairs metric (% sent_more preferred; 50 = none)"
    copies = "CrowS-Pairs metric of untrained copies (mean, 95% of copies)"
    rules = settings["rules"]
    scored = [Headline("crows_pairs", "all", "metric", title, f"CrowS-Pairs {r}", r, missing="n/a") for r in rules]
    untrained = [
        Headline("crows_pairs_untrained", "all", "metric", copies, f"CrowS-Pairs {r}, untrained copies", r)
        for r in rules
    ]
    return (*scored, *untrained)


SETTINGS = {
    "description": "CrowS-Pairs (Nangia et al. 2020), medbias.metrics.benchmarks.crows_pairs",
    "properties": {
        "rules": {
            "description": "CrowS-Pairs scoring rules, each run on the model kinds it scores (a published number is "
            "comparable only with its own rule): nangia = Nangia et al.'s metric.py (masked: sum of log P over the "
            "unmodified tokens); bias_bench = bias-bench (masked: mean log P over the modified tokens; causal: "
            "per-token geometric mean probability); lm_eval = lm-evaluation-harness (causal: summed log-likelihood)",
            "x-source": "reference code: nyu-mll/crows-pairs metric.py; McGill-NLP/bias-bench crows.py at aba44032 "
            "(the rule of Meade et al. 2022's Tables 2-4); EleutherAI lm-evaluation-harness crows_pairs task",
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "enum": list(CROWS_RULES)},
            "default": list(CROWS_RULES),
        }
    },
}


def rows(
    frames: Mapping[str, pd.DataFrame], status: Mapping[str, str], settings: Mapping[str, Any], rng
) -> list[dict[str, Any]]:
    budget = settings["permutations"]
    out = (
        crows_rows(frames["crows_pairs"], settings["bootstrap"], rng, n_permutations=budget)
        if status.get("crows_pairs") == "ok"
        else []
    )
    untrained = frames.get("untrained_crows_pairs")
    if untrained is not None and len(untrained):
        for rule, scores in copy_metrics(untrained).items():
            out.append(copies_row("crows_pairs_untrained", "all", "metric", scores, rule))
    return out


BENCHMARK = Benchmark(
    name="crows_pairs",
    title="CrowS-Pairs",
    reports=("crows_pairs",),
    files={"crows_pairs": "crows_pairs.parquet", "untrained_crows_pairs": "untrained_crows_pairs.parquet"},
    inputs=inputs,
    read_items=read_items,
    score=score,
    score_untrained=score_untrained,
    rows=rows,
    empty={"crows_pairs": EMPTY_CROWS, "untrained_crows_pairs": EMPTY_CROWS},
    # no published number here was made by the nangia or lm_eval rule
    published=(
        PublishedValue("crows_pairs", "bias_bench", "bert-base-uncased", "gender", "metric", 57.25, BIAS_BENCH),
        PublishedValue("crows_pairs", "bias_bench", "bert-base-uncased", "race-color", "metric", 62.33, BIAS_BENCH),
        PublishedValue("crows_pairs", "bias_bench", "bert-base-uncased", "religion", "metric", 62.86, BIAS_BENCH),
        PublishedValue("crows_pairs", "bias_bench", "gpt2", "gender", "metric", 56.87, BIAS_BENCH),
        PublishedValue("crows_pairs", "bias_bench", "gpt2", "race-color", "metric", 59.69, BIAS_BENCH),
        PublishedValue("crows_pairs", "bias_bench", "gpt2", "religion", "metric", 62.86, BIAS_BENCH),
    ),
    headlines=headlines,
    settings=SETTINGS,
    check_inputs=check_inputs,
)
