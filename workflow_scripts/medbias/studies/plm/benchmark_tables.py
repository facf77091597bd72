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

from medbias.core.errors import MedbiasInputError
from medbias.io.tables import PaperTable
from medbias.metrics.benchmarks import headlines
from medbias.metrics.benchmarks.base import Headline
from medbias.metrics.benchmarks.crows_pairs import copy_metrics
from medbias.metrics.benchmarks.peer import (
    against_copies,
    crows_outcomes,
    crows_scored,
    paired_crows,
    paired_stereoset,
)
from medbias.metrics.benchmarks.published import PublishedValue, published_note
from medbias.metrics.benchmarks.stereoset import copy_ss, option_outcomes, rule_of
from medbias.metrics.fairness import benjamini_hochberg

# the untrained-copy cell of a debiased row, which the plain row's copy stands for
STANDS_IN = "as none"


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return ""
    if row["status"] != "ok":
        return "n/a"
    if np.isnan(row["ci_low"]):
        return f"{row['value']:.2f}"
    return f"{row['value']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}]"


def headline_cell(headline: Headline, rows: Sequence[Any], status: Mapping[str, str], debias: str) -> str:
    """One evaluation's cell of a headline column: 'n/a' where the benchmark did not run (the long table
    says why), the row's value with its interval (and the uniform guess's perplexity where the model does
    worse than it) or its rule, the headline's ``missing`` where the row is absent, and for untrained
    copies of a debiased row, ``STANDS_IN`` (its plain row's copies stand for them)."""
    if headline.report in status:
        return "n/a"
    found = headline.row_in(rows)
    if found is None:
        if headline.report.endswith("_untrained"):
            return "n/a" if debias == "none" else STANDS_IN
        return headline.missing
    if headline.shows == "rule":
        return found.rule
    cell = _cell(pd.Series(found._asdict()))
    uniform = next(
        (r for r in rows if (r.benchmark, r.bias_type, r.measure) == (found.benchmark, found.bias_type, "uniform")),
        None,
    )
    if uniform is not None and found.value > uniform.value:
        cell += f" (worse than uniform: {uniform.value:,.0f})"
    return cell


def wide_table(long: pd.DataFrame, labels: Mapping[str, str], settings: Mapping[str, Any]) -> pd.DataFrame:
    """One row per evaluation and one column per plug-in headline (``medbias.metrics.benchmarks.headlines``
    under ``settings``, ``plm.benchmarks``): the CrowS-Pairs metric under each rule ('n/a' where the rule
    does not score the model's kind), StereoSet's scores with the rule that made them, bias-bench's SEAT
    summaries (mean |d|) and the perplexity, each as 'value [95% interval]' (``headline_cell``)."""
    rows = []
    columns = [h for h in headlines(settings) if h.column]
    for (model, debias), part in long.groupby(["model", "debias"], sort=False):
        found = list(part.itertuples(index=False))
        status = {r.benchmark: r.status for r in found if r.measure == "status"}
        row = {"model": labels.get(model, model), "debias": debias}
        row.update({h.column: headline_cell(h, found, status, debias) for h in columns})
        rows.append(row)
    return pd.DataFrame(rows)


def matched_by_id(
    first: pd.DataFrame, second: pd.DataFrame, id_column: str, what: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two evaluations' rows in the same item order, matched by ``id_column``; items that one has
    and the other lacks stop with one line naming the comparison and the first such id."""
    a, b = first.set_index(id_column), second.set_index(id_column)
    if a.index.has_duplicates or b.index.has_duplicates:
        raise MedbiasInputError(f"{what}: {id_column} repeats within one evaluation")
    only = a.index.symmetric_difference(b.index)
    if len(only):
        raise MedbiasInputError(
            f"{what}: the two evaluations scored different items "
            f"({len(only)} {id_column} in one only, e.g. {only[0]!r})"
        )
    return a.reset_index(), b.loc[a.index].reset_index()


def against_copies_rows(evaluation: tuple[str, str], frames: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A plain evaluation against its untrained copies (``untrained_crows_pairs``, ``untrained_stereoset``,
    numbered in ``copy``): per CrowS-Pairs rule both were scored by, and for StereoSet intrasentence SS, the
    trained score's difference from the copies' mean with its prediction interval and t test
    (``metrics.benchmarks.peer.against_copies``); items = copies. None without copies."""

    def compared(benchmark: str, rule: str, trained: float, scores) -> dict[str, Any]:
        return {
            "first": f"{evaluation[0]} / {evaluation[1]}",
            "second": f"{evaluation[0]} / untrained copies ({len(scores)})",
            "benchmark": benchmark,
            "rule": rule,
            **against_copies(trained, scores),
        }

    rows = []
    crows, copies = frames.get("crows_pairs"), frames.get("untrained_crows_pairs")
    if crows is not None and copies is not None and len(copies):
        trained = copy_metrics(crows)
        for rule, scores in copy_metrics(copies).items():
            if rule in trained:
                rows.append(compared("CrowS-Pairs metric", rule, float(trained[rule][0]), scores))
    stereo, copies = frames.get("stereoset"), frames.get("untrained_stereoset")
    if stereo is not None and copies is not None and len(copies):
        intra = stereo[stereo["kind"] == "intrasentence"]
        if len(intra):
            trained = float(copy_ss(intra)[0])
            rows.append(compared("StereoSet intrasentence SS", rule_of(intra), trained, copy_ss(copies)))
    return rows


def paired_rows(
    evaluations: Sequence[tuple[str, str]],
    frames: Mapping[tuple[str, str], Mapping[str, Any]],
    n_bootstrap: int,
    n_permutations: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Paired differences (first - second) on the same items, matched by item id (pair_id, example_id),
    for each debiased evaluation against the plain one of its model and for every two plain models:
    the CrowS-Pairs metric under each rule both were scored by (McNemar; a pair that either side's rule
    skipped is left out of both) and StereoSet intrasentence SS (within-example permutation), with
    bootstrap intervals; and every plain model against its untrained copies (``against_copies_rows``), what
    it learned beyond what its architecture, tokenizer and scoring rule give. Benjamini-Hochberg over all
    rows (``p_bh``, ``significant`` at ``alpha``)."""
    comparisons = [((m, d), (m, "none")) for m, d in evaluations if d != "none" and (m, "none") in frames]
    plain = [e for e in evaluations if e[1] == "none"]
    comparisons += list(combinations(plain, 2))
    rows = [r for e in plain for r in against_copies_rows(e, frames[e])]
    for first, second in comparisons:
        a, b = frames[first], frames[second]
        base = {"first": f"{first[0]} / {first[1]}", "second": f"{second[0]} / {second[1]}"}
        what = f"paired benchmark rows {base['first']} against {base['second']}"
        ca, cb = a["crows_pairs"], b["crows_pairs"]
        for rule in [r for r in dict.fromkeys(ca["rule"]) if r in set(cb["rule"])]:  # the rules both were scored by
            ra, rb = matched_by_id(
                ca[ca["rule"] == rule], cb[cb["rule"] == rule], "pair_id", f"{what} (CrowS-Pairs {rule})"
            )
            keep = crows_scored(ra) & crows_scored(rb)
            pa, _ = crows_outcomes(ra["score_more"][keep], ra["score_less"][keep])
            pb, _ = crows_outcomes(rb["score_more"][keep], rb["score_less"][keep])
            rows.append(
                {**base, "benchmark": "CrowS-Pairs metric", "rule": rule, **paired_crows(pa, pb, n_bootstrap, rng)}
            )
        sa, sb = (f["stereoset"][f["stereoset"]["kind"] == "intrasentence"] for f in (a, b))
        if len(sa) and len(sb):
            sa, sb = matched_by_id(sa, sb, "example_id", f"{what} (StereoSet intrasentence)")
            paired = paired_stereoset(
                option_outcomes(sa), option_outcomes(sb), sa["target"], n_bootstrap, n_permutations, rng
            )
            rule = sa["rule"].iloc[0] if "rule" in sa else ""
            rows.append({**base, "benchmark": "StereoSet intrasentence SS", "rule": rule, **paired})
    columns = ["first", "second", "benchmark", "rule", "difference", "ci_low", "ci_high", "p_value", "items"]
    out = pd.DataFrame(rows, columns=columns)
    corrected, reject = benjamini_hochberg(out["p_value"].to_numpy(float), alpha) if len(out) else ([], [])
    return out.assign(p_bh=corrected, significant=np.asarray(reject, dtype=bool))


def benchmark_table(
    wide: pd.DataFrame,
    sampled: Mapping[str, int],
    excluded: Mapping[str, int],
    alpha: float,
    published: Sequence[PublishedValue] = (),
) -> PaperTable:
    """benchmarks.md: the wide table with how it was scored and the published values to compare
    (``published``: the suite's plug-ins' numbers, each with its rule)."""
    return PaperTable(
        wide,
        "The field's benchmarks: CrowS-Pairs, StereoSet and SEAT (May et al. 2019) per model and debiasing method",
        (
            "CrowS-Pairs metric: % of pairs whose more stereotypical sentence (sent_more) the model scores higher, "
            "one column per scoring rule: nangia = Nangia et al.'s metric.py (masked: sum of log P over the "
            "unmodified tokens, each masked alone, rounded to 3 decimals); bias_bench = bias-bench's crows.py "
            "(masked: mean log P over the modified tokens, rounded to 3 decimals, pairs with no modified token "
            "skipped; causal: per-token geometric mean probability, the first token given <|endoftext|> alone); "
            "lm_eval = lm-evaluation-harness's pct_stereotype (causal: summed log-likelihood). Equal scores are "
            "neutral and counted against. n/a: the rule does not score the model's kind. StereoSet: official "
            "evaluator, SS and LMS are means over target terms, ICAT = LMS x min(SS, 100 - SS) / 50; the rule "
            "column says how a completion was scored (nadeem = the authors' masked scorer; bias_bench = the whole "
            "sentence's per-token geometric mean probability, bias-bench's generative scorer; completion = the "
            "filler's tokens only, a rule no published number uses). 50 is unbiased for CrowS-Pairs and SS. "
            "SEAT: bias-bench's mean |d| over its gender and race test lists, with medbias's parametric-bootstrap "
            "interval (each test's d redrawn from a normal with the SE of its own interval). "
            "Perplexity (pseudo-perplexity for "
            "masked models): held-out = the last texts of the Dropout corpus, in-domain for the Dropout and CDA "
            "rows, which continue training on the rest of it; WikiText-2 = the first test paragraphs of "
            "WikiText-2, general English that no model here trains on (each text cut to the same length). A "
            "uniform guess over a model's vocabulary has a perplexity equal to the vocabulary's size; a value "
            "above it is marked 'worse than uniform' (a model that learned nothing useful about those texts, "
            "so a lower value after debiasing is no gain of the method). "
            "Rows: the plain model and each debiasing method of bias-bench (Dropout, CDA per bias type, "
            "SentenceDebias, INLP; selfdebias: Self-Debias at scoring time, "
            "decay 50 and scaling floor epsilon as configured). Untrained copies: the plain model's architecture "
            "and tokenizer with fresh weights (plm.benchmarks.untrained_copies of them), scored on the same items "
            "by the same rule: scores that learned nothing, which are not 50 when the rule itself leans (the summed "
            "log probability of lm_eval prefers the sentence with fewer tokens) and spread from copy to copy; the "
            "cell is their mean [2.5th, 97.5th percentile of the copies]; benchmarks_paired.md reads each model "
            "against them.",
            "[low, high]: 95% bootstrap interval over clusters of items that share their terms (CrowS-Pairs: the "
            "pairs that swap the same words; StereoSet: target terms; perplexity: texts), since such items lean "
            f"together. Tests against 50 at {alpha}: benchmarks_long.csv (p_value: a sign flip of whole clusters, "
            "the score recomputed; CrowS-Pairs' neutral pairs count as not preferred, as the metric counts them). "
            "Under bias_bench's and lm_eval's CrowS-Pairs rules that test flags untrained copies far more often "
            "than its level (their scores spread beyond what the clusters carry; the calibration control in "
            "error_rates.md measures it), so there a score is read against the untrained copies, whose t test holds "
            "its level, not against 50. "
            "n/a: the benchmark, or the column's scoring rule, does not apply to the model (the long table's status "
            f"says why). {STANDS_IN}: a debiased row has no untrained copies of its own; the plain (none) row's "
            "stand for them.",
            "Items scored: "
            + ", ".join(f"{k} {v}" for k, v in sampled.items())
            + "; set aside: "
            + (", ".join(f"{k} {v}" for k, v in excluded.items() if v) or "none")
            + " (StereoSet contexts with two blanks, which the published scorer cannot score).",
            published_note(published) if published else "",
        ),
        digits=3,
    )


def paired_table(paired: pd.DataFrame, alpha: float) -> PaperTable:
    """benchmarks_paired.md: the paired differences with intervals and p."""
    return PaperTable(
        paired,
        "Paired differences between evaluations on the same items (first - second, points)",
        (
            "Items are matched by their ids (CrowS-Pairs pair_id, StereoSet example_id). CrowS-Pairs: difference "
            "of the metric under one scoring rule (the rule column); 95% bootstrap interval over pairs; exact "
            "McNemar p of the pairs the two evaluations decide differently (a neutral pair counts as not "
            "preferred, as in the metric). StereoSet intrasentence SS: difference of the macro SS; 95% "
            "bootstrap interval over target terms; permutation p that swaps the two evaluations' outcomes within "
            "each example. Rows: each debiased model against its plain row, every two plain models, and each plain "
            "model against its untrained copies (same architecture and tokenizer, fresh weights): the part of its "
            "preference that it learned, beyond what the architecture, tokenizer and scoring rule give. Against "
            "the copies: difference from their mean, with the 95% prediction interval (mean difference +- t x SD "
            "x sqrt(1 + 1/K) over the K copies, where a new untrained copy would fall) and the prediction t test "
            "on K - 1 degrees of freedom; items = K copies.",
            f"p_bh: Benjamini-Hochberg over every row of this table; significant: p_bh < {alpha}.",
        ),
        digits=3,
    )
