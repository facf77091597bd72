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
from medbias.metrics.benchmark_scores import option_outcomes
from medbias.metrics.peer_benchmarks import crows_outcomes, paired_crows, paired_stereoset

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
                option_outcomes(sa),
                option_outcomes(sb),
                sa["target"].reset_index(drop=True),
                n_bootstrap,
                n_permutations,
                rng,
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
            "Dropout corpus (pseudo-perplexity for masked models). Rows: the plain model and each debiasing "
            "method of bias-bench (Dropout, CDA, SentenceDebias, INLP; selfdebias: Self-Debias at scoring time). "
            "Untrained copy: the plain model's architecture "
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
