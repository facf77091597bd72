"""The long rows of one benchmark evaluation: every published score of CrowS-Pairs, StereoSet, May et
al.'s SEAT and the held-out perplexity, per bias type, with its interval and test against 50
(``medbias.metrics.peer_benchmarks``). The plm study's benchmark table and the audit card are both built
from these rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.peer_benchmarks import (
    crows_metric,
    crows_outcomes,
    crows_test,
    mean_interval,
    perplexity,
    perplexity_interval,
    seat_summary,
    stereoset_interval,
    stereoset_outcomes,
    stereoset_score,
    stereoset_test,
)

SEAT_RULE = "bias_bench"  # each sentence alone, mean-pooled last layer (special tokens included), Caliskan's d
BENCHMARK_NAMES = {
    "crows_pairs": "CrowS-Pairs",
    "intrasentence": "StereoSet intrasentence",
    "intersentence": "StereoSet intersentence",
    "seat": "SEAT (May et al.)",
    "perplexity": "perplexity",
}


def _row(benchmark, bias_type, measure, value, low=np.nan, high=np.nan, p=np.nan, items=0, status="ok", rule=""):
    return {
        "benchmark": benchmark,
        "rule": rule,
        "bias_type": bias_type,
        "measure": measure,
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "items": items,
        "status": status,
    }


def crows_rows(pairs: pd.DataFrame, n_bootstrap: int, rng: np.random.Generator) -> list[dict[str, Any]]:
    """CrowS-Pairs' published scores per scoring rule, over all pairs and per bias type: the metric
    with its bootstrap interval over pairs and the exact binomial test against 50 (neutral pairs count
    as not preferred, as in the metric), the stereo, antistereo and neutral shares, and the pairs the
    rule skipped (NaN scores; bias-bench's masked rule skips a pair whose modified span is empty)."""
    rows = []
    for rule, part in pairs.groupby("rule", sort=False):
        scored = np.isfinite(part["score_more"].to_numpy(float)) & np.isfinite(part["score_less"].to_numpy(float))
        skipped = int((~scored).sum())
        part = part[scored]
        preferred, neutral = crows_outcomes(part["score_more"].to_numpy(), part["score_less"].to_numpy())
        direction = part["direction"].to_numpy()
        for bias_type in ["all", *sorted(part["bias_type"].unique())]:
            keep = np.ones(len(part), bool) if bias_type == "all" else (part["bias_type"] == bias_type).to_numpy()
            score = crows_metric(preferred[keep], neutral[keep], direction[keep])
            low, high = mean_interval(preferred[keep].astype(float), n_bootstrap, rng)
            p = crows_test(preferred[keep], neutral[keep])
            rows.append(_row("crows_pairs", bias_type, "metric", score.metric, low, high, p, score.pairs, rule=rule))
            rows.append(_row("crows_pairs", bias_type, "stereo", score.stereo, items=score.stereo_pairs, rule=rule))
            rows.append(
                _row("crows_pairs", bias_type, "antistereo", score.antistereo, items=score.antistereo_pairs, rule=rule)
            )
            rows.append(_row("crows_pairs", bias_type, "neutral", score.neutral, items=score.pairs, rule=rule))
        rows.append(_row("crows_pairs", "all", "skipped", float(skipped), items=skipped, rule=rule))
    return rows


def option_outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """``stereoset_outcomes`` of a frame of per-example option scores (``score_<option>``)."""
    return stereoset_outcomes(frame["score_stereotype"], frame["score_anti-stereotype"], frame["score_unrelated"])


def stereoset_rows(
    examples: pd.DataFrame, kind: str, n_bootstrap: int, n_permutations: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """StereoSet's official macro SS, LMS and ICAT overall and per domain (bias type), with bootstrap
    intervals over target terms and the permutation test of SS against 50."""
    rows = []
    rule = str(examples["rule"].iloc[0]) if "rule" in examples and len(examples) else ""
    for domain in ["overall", *sorted(examples["bias_type"].unique())]:
        part = examples if domain == "overall" else examples[examples["bias_type"] == domain]
        outcomes, targets = option_outcomes(part).reset_index(drop=True), part["target"].reset_index(drop=True)
        score = stereoset_score(outcomes, targets)
        ci = stereoset_interval(outcomes, targets, n_bootstrap, rng)
        p = stereoset_test(outcomes, targets, n_permutations, rng)
        rows.append(_row(kind, domain, "ss", score.ss, *ci["ss"], p, score.examples, rule=rule))
        rows.append(_row(kind, domain, "lms", score.lms, *ci["lms"], items=score.examples, rule=rule))
        rows.append(_row(kind, domain, "icat", score.icat, *ci["icat"], items=score.examples, rule=rule))
        rows.append(_row(kind, domain, "targets", float(score.targets), items=score.examples, rule=rule))
    return rows


def seat_rows(seat: pd.DataFrame, summaries: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """May et al.'s tests (d with its interval, the classic permutation p and the calibrated p) and
    bias-bench's summaries (mean |d| over its lists)."""
    rows = []
    effect = seat.set_index("test")["effect_size"]
    for name, tests in summaries.items():
        value, present = seat_summary(effect, list(tests))
        rows.append(_row("seat", name, "mean_abs_d", value, items=present, rule=SEAT_RULE))
    for test in seat.itertuples(index=False):
        rows.append(
            _row("seat", test.test, "d", test.effect_size, test.ci_low, test.ci_high, test.p_value, 1, rule=SEAT_RULE)
        )
        rows.append(
            _row("seat", test.test, "p_calibrated", test.p_calibrated, items=int(test.null_draws), rule=SEAT_RULE)
        )
    return rows


def evaluation_rows(
    frames: Mapping[str, Any],
    status: Mapping[str, str],
    summaries: Mapping[str, Sequence[str]],
    n_bootstrap: int,
    n_permutations: int,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """Every long row of one evaluation (``frames``: crows_pairs, stereoset, seat, perplexity);
    a benchmark that did not run gives one row with its status."""
    rows: list[dict[str, Any]] = []
    for benchmark in BENCHMARK_NAMES:
        state = status.get(benchmark, "ok")
        if state != "ok":
            rows.append(_row(benchmark, "all", "status", np.nan, status=state))
            continue
        if benchmark == "crows_pairs":
            rows += crows_rows(frames["crows_pairs"], n_bootstrap, rng)
        elif benchmark in ("intrasentence", "intersentence"):
            stereo = frames["stereoset"]
            rows += stereoset_rows(stereo[stereo["kind"] == benchmark], benchmark, n_bootstrap, n_permutations, rng)
        elif benchmark == "seat":
            rows += seat_rows(frames["seat"], summaries)
        else:
            ppl = frames["perplexity"]
            sets = ppl["text_set"] if "text_set" in ppl else pd.Series("held-out", index=ppl.index)
            for text_set in dict.fromkeys(sets):
                part = ppl[sets == text_set]
                ll, tokens = part["log_likelihood"].to_numpy(float), part["tokens"].to_numpy(float)
                low, high = perplexity_interval(ll, tokens, n_bootstrap, rng)
                rows.append(
                    _row("perplexity", text_set, "perplexity", perplexity(ll, tokens), low, high, items=len(part))
                )
    untrained_crows, untrained_stereo = frames.get("untrained_crows_pairs"), frames.get("untrained_stereoset")
    if untrained_crows is not None and len(untrained_crows):
        for row in crows_rows(untrained_crows, n_bootstrap, rng):
            rows.append({**row, "benchmark": "crows_pairs_untrained"})
    if untrained_stereo is not None and len(untrained_stereo):
        for row in stereoset_rows(untrained_stereo, "intrasentence", n_bootstrap, n_permutations, rng):
            rows.append({**row, "benchmark": "intrasentence_untrained"})
    return rows


EVALUATION_FILES = (
    "crows_pairs",
    "stereoset",
    "seat",
    "perplexity",
    "untrained_crows_pairs",
    "untrained_stereoset",
)


def read_evaluation_frames(paths: Mapping[str, str]) -> dict[str, pd.DataFrame]:
    """One evaluation's files (``EVALUATION_FILES``: parquet, the SEAT table as CSV) by name."""
    return {key: pd.read_csv(paths[key]) if key == "seat" else pd.read_parquet(paths[key]) for key in EVALUATION_FILES}
