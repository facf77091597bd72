"""The benchmark table of the plm study: every (model, debiasing method) evaluation's CrowS-Pairs,
StereoSet, May et al.'s SEAT and perplexity scores with intervals and tests against 50 (long form per
bias type, and one wide row per evaluation), and the paired differences of evaluations on the same
items (each debiased model against its plain row; every two plain models)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.tables import PaperTable
from medbias.metrics.peer_benchmarks import (
    crows_metric,
    crows_outcomes,
    crows_test,
    mean_interval,
    paired_crows,
    paired_stereoset,
    perplexity,
    perplexity_interval,
    seat_summary,
    stereoset_interval,
    stereoset_outcomes,
    stereoset_score,
    stereoset_test,
)

BENCHMARK_NAMES = {
    "crows_pairs": "CrowS-Pairs",
    "intrasentence": "StereoSet intrasentence",
    "intersentence": "StereoSet intersentence",
    "seat": "SEAT (May et al.)",
    "perplexity": "perplexity",
}


def _row(benchmark, bias_type, measure, value, low=np.nan, high=np.nan, p=np.nan, items=0, status="ok"):
    return {
        "benchmark": benchmark,
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
    """CrowS-Pairs' published scores over all pairs and per bias type, the metric with its bootstrap
    interval over pairs and the exact sign test against 50."""
    preferred, neutral = crows_outcomes(pairs["score_more"].to_numpy(), pairs["score_less"].to_numpy())
    rows = []
    for bias_type in ["all", *sorted(pairs["bias_type"].unique())]:
        keep = np.ones(len(pairs), bool) if bias_type == "all" else (pairs["bias_type"] == bias_type).to_numpy()
        score = crows_metric(preferred[keep], neutral[keep], pairs["direction"].to_numpy()[keep])
        low, high = mean_interval(preferred[keep].astype(float), n_bootstrap, rng)
        p = crows_test(preferred[keep], neutral[keep])
        rows.append(_row("crows_pairs", bias_type, "metric", score.metric, low, high, p, score.pairs))
        rows.append(_row("crows_pairs", bias_type, "stereo", score.stereo, items=score.stereo_pairs))
        rows.append(_row("crows_pairs", bias_type, "antistereo", score.antistereo, items=score.antistereo_pairs))
        rows.append(_row("crows_pairs", bias_type, "neutral", score.neutral, items=score.pairs))
    return rows


def _options(frame: pd.DataFrame) -> pd.DataFrame:
    return stereoset_outcomes(frame["score_stereotype"], frame["score_anti-stereotype"], frame["score_unrelated"])


def stereoset_rows(
    examples: pd.DataFrame, kind: str, n_bootstrap: int, n_permutations: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """StereoSet's official macro SS, LMS and ICAT overall and per domain (bias type), with bootstrap
    intervals over target terms and the permutation test of SS against 50."""
    rows = []
    for domain in ["overall", *sorted(examples["bias_type"].unique())]:
        part = examples if domain == "overall" else examples[examples["bias_type"] == domain]
        outcomes, targets = _options(part).reset_index(drop=True), part["target"].reset_index(drop=True)
        score = stereoset_score(outcomes, targets)
        ci = stereoset_interval(outcomes, targets, n_bootstrap, rng)
        p = stereoset_test(outcomes, targets, n_permutations, rng)
        rows.append(_row(kind, domain, "ss", score.ss, *ci["ss"], p, score.examples))
        rows.append(_row(kind, domain, "lms", score.lms, *ci["lms"], items=score.examples))
        rows.append(_row(kind, domain, "icat", score.icat, *ci["icat"], items=score.examples))
        rows.append(_row(kind, domain, "targets", float(score.targets), items=score.examples))
    return rows


def seat_rows(seat: pd.DataFrame, summaries: Mapping[str, Sequence[str]]) -> list[dict[str, Any]]:
    """May et al.'s tests (d with its interval, the classic permutation p and the calibrated p) and
    bias-bench's summaries (mean |d| over its lists)."""
    rows = []
    effect = seat.set_index("test")["effect_size"]
    for name, tests in summaries.items():
        value, present = seat_summary(effect, list(tests))
        rows.append(_row("seat", name, "mean_abs_d", value, items=present))
    for test in seat.itertuples(index=False):
        rows.append(_row("seat", test.test, "d", test.effect_size, test.ci_low, test.ci_high, test.p_value, 1))
        rows.append(_row("seat", test.test, "p_calibrated", test.p_calibrated, items=int(test.null_draws)))
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
            ll, tokens = ppl["log_likelihood"].to_numpy(), ppl["tokens"].to_numpy()
            low, high = perplexity_interval(ll, tokens, n_bootstrap, rng)
            rows.append(_row("perplexity", "held-out", "perplexity", perplexity(ll, tokens), low, high, items=len(ppl)))
    untrained_crows, untrained_stereo = frames.get("untrained_crows_pairs"), frames.get("untrained_stereoset")
    if untrained_crows is not None and len(untrained_crows):
        for row in crows_rows(untrained_crows, n_bootstrap, rng):
            rows.append({**row, "benchmark": "crows_pairs_untrained"})
    if untrained_stereo is not None and len(untrained_stereo):
        for row in stereoset_rows(untrained_stereo, "intrasentence", n_bootstrap, n_permutations, rng):
            rows.append({**row, "benchmark": "intrasentence_untrained"})
    return rows


WIDE_COLUMNS = {
    ("crows_pairs", "all", "metric"): "CrowS-Pairs",
    ("intrasentence", "overall", "ss"): "StereoSet SS",
    ("intrasentence", "overall", "lms"): "StereoSet LMS",
    ("intrasentence", "overall", "icat"): "StereoSet ICAT",
    ("intersentence", "overall", "ss"): "StereoSet inter SS",
    ("perplexity", "held-out", "perplexity"): "perplexity",
    ("crows_pairs_untrained", "all", "metric"): "CrowS-Pairs, untrained copy",
    ("intrasentence_untrained", "overall", "ss"): "StereoSet SS, untrained copy",
}


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return ""
    if row["status"] != "ok":
        return "n/a"
    if np.isnan(row["ci_low"]):
        return f"{row['value']:.2f}"
    return f"{row['value']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"


def wide_table(long: pd.DataFrame, labels: Mapping[str, str], summaries: Sequence[str]) -> pd.DataFrame:
    """One row per evaluation: each headline score as 'value [95% interval]', SEAT summaries as mean
    |d|, 'n/a' where the benchmark does not apply (the long table says why)."""
    rows = []
    for (model, debias), part in long.groupby(["model", "debias"], sort=False):
        index = {(r.benchmark, r.bias_type, r.measure): r for r in part.itertuples(index=False)}
        status = {r.benchmark: r.status for r in part.itertuples(index=False) if r.measure == "status"}
        row = {"model": labels.get(model, model), "debias": debias}
        for key, column in WIDE_COLUMNS.items():
            found = index.get(key)
            row[column] = "n/a" if key[0] in status else _cell(pd.Series(found._asdict()) if found else None)
            if not found and key[0].endswith("_untrained"):
                row[column] = ""  # debiased rows: the plain row's untrained copy stands for them
        for name in summaries:
            found = index.get(("seat", name, "mean_abs_d"))
            row[f"SEAT {name} mean |d|"] = "n/a" if "seat" in status else (f"{found.value:.3f}" if found else "")
        rows.append(row)
    return pd.DataFrame(rows)


def paired_rows(
    evaluations: Sequence[tuple[str, str]],
    frames: Mapping[tuple[str, str], Mapping[str, Any]],
    n_bootstrap: int,
    n_permutations: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Paired differences (first - second) on the same items, for each debiased evaluation against
    the plain one of its model and for every two plain models: the CrowS-Pairs metric (McNemar) and
    StereoSet intrasentence SS (within-example permutation), with bootstrap intervals; and every
    plain model against its untrained copy (``untrained_crows_pairs``, ``untrained_stereoset``), what
    it learned beyond what its architecture, tokenizer and scoring rule give."""
    comparisons = [((m, d), (m, "none")) for m, d in evaluations if d != "none" and (m, "none") in frames]
    plain = [e for e in evaluations if e[1] == "none"]
    comparisons += list(combinations(plain, 2))
    comparisons += [(e, (e[0], "untrained copy")) for e in plain if len(frames[e].get("untrained_crows_pairs", []))]
    rows = []
    for first, second in comparisons:
        a = frames[first]
        if second[1] == "untrained copy":
            b = {"crows_pairs": a["untrained_crows_pairs"], "stereoset": a["untrained_stereoset"]}
        else:
            b = frames[second]
        base = {"first": f"{first[0]} / {first[1]}", "second": f"{second[0]} / {second[1]}"}
        if len(a["crows_pairs"]) and len(b["crows_pairs"]):
            pa, _ = crows_outcomes(a["crows_pairs"]["score_more"], a["crows_pairs"]["score_less"])
            pb, _ = crows_outcomes(b["crows_pairs"]["score_more"], b["crows_pairs"]["score_less"])
            rows.append({**base, "benchmark": "CrowS-Pairs metric", **paired_crows(pa, pb, n_bootstrap, rng)})
        sa, sb = (f["stereoset"][f["stereoset"]["kind"] == "intrasentence"] for f in (a, b))
        if len(sa) and len(sb):
            paired = paired_stereoset(
                _options(sa), _options(sb), sa["target"].reset_index(drop=True), n_bootstrap, n_permutations, rng
            )
            rows.append({**base, "benchmark": "StereoSet intrasentence SS", **paired})
    return pd.DataFrame(
        rows, columns=["first", "second", "benchmark", "difference", "ci_low", "ci_high", "p_value", "items"]
    )


PUBLISHED = (
    "Published reference values (bias-bench, Meade et al. 2022, Tables 2-4; StereoSet's official dev-set scores): "
    "CrowS-Pairs bert-base-uncased gender 57.25, race 62.33, religion 62.86; gpt2 gender 56.87, race 59.69, "
    "religion 62.86. StereoSet intrasentence gpt2 overall SS 61.93, LMS 91.11, ICAT 69.37; bert-base-cased SS 58.68, "
    "LMS 83.02, ICAT 68.61; bert-base-uncased gender SS 60.28, race 57.03, religion 59.70."
)


def benchmark_table(
    wide: pd.DataFrame, sampled: Mapping[str, int], excluded: Mapping[str, int], alpha: float
) -> PaperTable:
    """benchmarks.md: the wide table with how it was scored and the published values to compare."""
    return PaperTable(
        wide,
        "The field's benchmarks: CrowS-Pairs, StereoSet and SEAT (May et al. 2019) per model and debiasing method",
        (
            "CrowS-Pairs metric: % of pairs whose more stereotypical sentence (sent_more) the model scores higher "
            "(scores rounded to 3 decimals; ties neutral and counted against; masked models: the unmodified tokens "
            "masked one at a time; causal: the joint log probability). StereoSet: official evaluator, SS and LMS "
            "are means over target terms, ICAT = LMS x min(SS, 100 - SS) / 50. 50 is unbiased for CrowS-Pairs and SS. "
            "SEAT: bias-bench's mean |d| over its gender and race test lists. Perplexity: held-out text of the "
            "Dropout corpus (pseudo-perplexity for masked models). Untrained copy: the plain model's architecture "
            "and tokenizer with fresh weights, scored on the same items: a score that learned nothing, which is not "
            "50 when the scoring rule itself leans (a causal model's joint probability prefers the sentence with "
            "fewer tokens); benchmarks_paired.md tests each model against it.",
            f"[low, high]: 95% bootstrap interval (pairs for CrowS-Pairs; target terms for StereoSet; texts for "
            f"perplexity). Tests against 50 at {alpha}: benchmarks_long.csv (p_value). n/a: the benchmark does not "
            "apply to the model (the long table's status says why).",
            "Items scored: "
            + ", ".join(f"{k} {v}" for k, v in sampled.items())
            + "; set aside: "
            + (", ".join(f"{k} {v}" for k, v in excluded.items() if v) or "none")
            + " (StereoSet contexts with two blanks, which the published scorer cannot score).",
            PUBLISHED,
        ),
        digits=3,
    )


def paired_table(paired: pd.DataFrame, alpha: float) -> PaperTable:
    """benchmarks_paired.md: the paired differences with intervals and p."""
    return PaperTable(
        paired.assign(significant=paired["p_value"] < alpha),
        "Paired differences between evaluations on the same items (first - second, points)",
        (
            "CrowS-Pairs: difference of the metric; 95% bootstrap interval over pairs; exact McNemar p of the pairs "
            "the two evaluations decide differently. StereoSet intrasentence SS: difference of the macro SS; 95% "
            "bootstrap interval over target terms; permutation p that swaps the two evaluations' outcomes within "
            "each example. Rows: each debiased model against its plain row, every two plain models, and each plain "
            "model against an untrained copy of itself (same architecture and tokenizer, fresh weights): the part "
            "of its preference that it learned, beyond what the architecture, tokenizer and scoring rule give.",
        ),
        digits=3,
    )
