"""StereoSet (Nadeem et al. 2021) as a benchmark plug-in: intrasentence examples scored by a masked
LM's filler pieces (rule ``nadeem``) or a causal LM's rule ``plm.benchmarks.stereoset.causal_score``
(``metrics.benchmarks.scoring.STEREOSET_CAUSAL_RULES``); intersentence examples by a causal LM, or by a
masked model's trained next-sentence head. The official evaluator's macro SS, LMS and ICAT per domain
with intervals over target terms and the permutation test of SS against 50
(``metrics.benchmarks.peer``). A plain evaluation also scores untrained copies on the intrasentence
examples."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.benchmarks.base import Benchmark, Headline, ScoringContext, copies_row, row
from medbias.metrics.benchmarks.items import STEREOSET_OPTIONS
from medbias.metrics.benchmarks.peer import stereoset_interval, stereoset_outcomes, stereoset_score, stereoset_test
from medbias.metrics.benchmarks.published import BIAS_BENCH, STEREOSET_OFFICIAL, PublishedValue

SEQ2SEQ_STEREOSET = "not applicable: the published StereoSet scorers cover masked and causal language models"
MASKED_INTERSENTENCE = "not applicable: intersentence needs a causal model or a masked model's next-sentence head"
SELF_DEBIAS_NEXT_SENTENCE = (
    "not applicable: Self-Debias rescales a language-model distribution, not a next-sentence head"
)
EMPTY_STEREOSET = pd.DataFrame(
    columns=["example_id", "kind", "rule", "target", "bias_type", *(f"score_{o}" for o in STEREOSET_OPTIONS)]
)


def score_stereoset(
    model,
    tokenizer,
    kind: str,
    examples: pd.DataFrame,
    example_kind: str,
    causal_score: str,
    batch_size: int,
    prefixes: Mapping[str, str] | None = None,
    decay: float = 50.0,
    next_sentence=None,
    epsilon: float = 0.01,
) -> pd.DataFrame:
    """Per-example scores of the three options (``score_stereotype``, ``score_anti-stereotype``,
    ``score_unrelated``) for intrasentence (masked or causal) or intersentence examples (causal; or a
    masked model's ``next_sentence`` head: P(the option follows the context)); with ``prefixes``
    (domain -> debiasing prefix), under Self-Debias with each example's prefix. ``rule``: the scoring
    rule of the rows (``nadeem`` for a masked LM, ``causal_score`` for a causal one, ``next_sentence``
    for a next-sentence head). A causal LM scores each intrasentence option's own sentence as the
    dataset writes it (``sentence_spans``), as bias-bench does; a masked LM fills the context's blank."""
    from medbias.core.self_debias import self_debias_for

    debias = self_debias_for(prefixes, examples["bias_type"].tolist(), tokenizer, decay, epsilon) if prefixes else None
    from medbias.metrics.benchmarks.scoring import (
        STEREOSET_MASKED_RULE,
        joined_texts,
        next_sentence_probabilities,
        sentence_spans,
        stereoset_causal_scores,
        stereoset_masked_scores,
    )

    out = examples[["example_id", "target", "bias_type"]].copy()
    out.insert(1, "kind", example_kind)
    if example_kind == "intrasentence":
        rule = STEREOSET_MASKED_RULE if kind == "masked" else causal_score
    else:
        rule = "next_sentence" if next_sentence is not None else causal_score
    out.insert(2, "rule", rule)
    contexts = examples["context"].tolist()
    for option in STEREOSET_OPTIONS:
        if example_kind == "intrasentence":
            if kind == "masked":
                fillers = examples[f"filler_{option}"].tolist()
                scores = stereoset_masked_scores(model, tokenizer, contexts, fillers, batch_size, debias)
            else:
                texts, spans = sentence_spans(contexts, examples[option].tolist())
                scores = stereoset_causal_scores(model, tokenizer, texts, spans, causal_score, batch_size, debias)
        elif next_sentence is not None:
            scores = next_sentence_probabilities(
                next_sentence, tokenizer, contexts, examples[option].tolist(), batch_size
            )
        else:
            texts, spans = joined_texts(contexts, examples[option].tolist())
            scores = stereoset_causal_scores(model, tokenizer, texts, spans, causal_score, batch_size, debias)
        out[f"score_{option}"] = scores
    return out


def option_outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """``stereoset_outcomes`` of a frame of per-example option scores (``score_<option>``)."""
    return stereoset_outcomes(frame["score_stereotype"], frame["score_anti-stereotype"], frame["score_unrelated"])


def stereoset_rows(
    examples: pd.DataFrame, kind: str, n_bootstrap: int, n_permutations: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """StereoSet's official macro SS, LMS and ICAT overall and per domain (bias type), with bootstrap
    intervals over target terms and the permutation test of SS against 50."""
    rows = []
    rule = rule_of(examples)
    for domain in ["overall", *sorted(examples["bias_type"].unique())]:
        part = examples if domain == "overall" else examples[examples["bias_type"] == domain]
        outcomes, targets = option_outcomes(part).reset_index(drop=True), part["target"].reset_index(drop=True)
        score = stereoset_score(outcomes, targets)
        ci = stereoset_interval(outcomes, targets, n_bootstrap, rng)
        p = stereoset_test(outcomes, targets, n_permutations, rng)
        rows.append(row(kind, domain, "ss", score.ss, *ci["ss"], p, score.examples, rule=rule))
        rows.append(row(kind, domain, "lms", score.lms, *ci["lms"], items=score.examples, rule=rule))
        rows.append(row(kind, domain, "icat", score.icat, *ci["icat"], items=score.examples, rule=rule))
        rows.append(row(kind, domain, "targets", float(score.targets), items=score.examples, rule=rule))
    return rows


def copy_ss(untrained: pd.DataFrame) -> np.ndarray:
    """The intrasentence SS of each untrained copy (``copy``; a frame without it is one copy), in copy order."""
    numbered = untrained if "copy" in untrained else untrained.assign(copy=0)
    return np.array(
        [
            stereoset_score(option_outcomes(one).reset_index(drop=True), one["target"].reset_index(drop=True)).ss
            for _, one in numbered.groupby("copy", sort=True)
        ]
    )


def rule_of(examples: pd.DataFrame) -> str:
    """The scoring rule a frame of StereoSet examples was scored by ('' when it does not say)."""
    return str(examples["rule"].iloc[0]) if "rule" in examples and len(examples) else ""


def inputs(config: Mapping[str, Any], plm_dir: str) -> dict[str, str]:
    return {kind: f"{plm_dir}/benchmark_items/{kind}.parquet" for kind in ("intrasentence", "intersentence")}


def read_items(paths: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
    return {kind: pd.read_parquet(paths[kind]) for kind in ("intrasentence", "intersentence")}


def score(context: ScoringContext) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    if context.no_head or context.kind == "seq2seq":
        reason = context.no_head or SEQ2SEQ_STEREOSET
        return {"stereoset": EMPTY_STEREOSET}, {"intrasentence": reason, "intersentence": reason}
    settings, items = context.settings, context.items
    batch, causal = settings["batch_size"], settings["causal_score"]
    model, tokenizer, kind = context.model, context.tokenizer, context.kind
    intra = items["intrasentence"]
    frames = [
        context.timed(
            "intrasentence",
            3 * len(intra),
            lambda: score_stereoset(
                model, tokenizer, kind, intra, "intrasentence", causal, batch, context.prefixes, context.decay,
                None, context.epsilon,
            ),
        )
    ]  # fmt: skip
    status = {"intrasentence": "ok"}
    nsp_model, nsp_problem = context.next_sentence
    inter = items["intersentence"]
    if kind == "causal" or (nsp_model is not None and not context.self_debias):
        frames.append(
            context.timed(
                "intersentence",
                3 * len(inter),
                lambda: score_stereoset(
                    model, tokenizer, kind, inter, "intersentence", causal, batch, context.prefixes, context.decay,
                    nsp_model, context.epsilon,
                ),
            )
        )  # fmt: skip
        status["intersentence"] = "ok"
    else:
        status["intersentence"] = (
            SELF_DEBIAS_NEXT_SENTENCE if context.self_debias else (nsp_problem or MASKED_INTERSENTENCE)
        )
    return {"stereoset": pd.concat(frames, ignore_index=True)}, status


def score_untrained(context: ScoringContext) -> dict[str, pd.DataFrame]:
    settings = context.settings
    frame = score_stereoset(
        context.model,
        context.tokenizer,
        context.kind,
        context.items["intrasentence"],
        "intrasentence",
        settings["causal_score"],
        settings["batch_size"],
    )
    return {"untrained_stereoset": frame}


def check_inputs(resources: Mapping[str, str], settings: Mapping[str, Any]) -> None:
    from medbias.metrics.benchmarks.items import read_stereoset

    for kind in ("intrasentence", "intersentence"):
        read_stereoset(resources["stereoset"], kind)


def headlines(settings: Mapping[str, Any]) -> tuple[Headline, ...]:
    return (
        Headline("intrasentence", "overall", "ss", None, "StereoSet rule", shows="rule", missing="n/a"),
        Headline("intrasentence", "overall", "ss", "StereoSet intrasentence SS", "StereoSet SS"),
        Headline("intrasentence", "overall", "lms", "StereoSet intrasentence LMS", "StereoSet LMS"),
        Headline("intrasentence", "overall", "icat", "StereoSet intrasentence ICAT", "StereoSet ICAT"),
        Headline(
            "intrasentence_untrained",
            "overall",
            "ss",
            "StereoSet intrasentence SS of untrained copies (mean, 95% of copies)",
            "StereoSet SS, untrained copies",
        ),
        Headline("intersentence", "overall", "ss", "StereoSet intersentence SS", "StereoSet inter SS"),
    )


SETTINGS = {
    "description": "StereoSet (Nadeem et al. 2021), medbias.metrics.benchmarks.stereoset",
    "properties": {
        "causal_score": {
            "description": "StereoSet score of a causal model: bias_bench = the whole filled sentence's per-token "
            "geometric mean probability, the first token given <|endoftext|> alone (the rule behind the published "
            "gpt2 scores); completion = mean probability of the filler's tokens given the text before (no published "
            "number uses it)",
            "x-source": "reference code: bias-bench stereoset.py _likelihood_score_generative at aba44032 (Nadeem et "
            "al.'s generative rule)",
            "type": "string",
            "enum": ["bias_bench", "completion"],
            "default": "bias_bench",
        }
    },
}


def rows(
    frames: Mapping[str, pd.DataFrame], status: Mapping[str, str], settings: Mapping[str, Any], rng
) -> list[dict[str, Any]]:
    out = []
    stereo = frames["stereoset"]
    for kind in ("intrasentence", "intersentence"):
        if status.get(kind) == "ok":
            out += stereoset_rows(
                stereo[stereo["kind"] == kind], kind, settings["bootstrap"], settings["permutations"], rng
            )
    untrained = frames.get("untrained_stereoset")
    if untrained is not None and len(untrained):
        out.append(copies_row("intrasentence_untrained", "overall", "ss", copy_ss(untrained), rule_of(untrained)))
    return out


BENCHMARK = Benchmark(
    name="stereoset",
    title="StereoSet",
    reports=("intrasentence", "intersentence"),
    files={"stereoset": "stereoset.parquet", "untrained_stereoset": "untrained_stereoset.parquet"},
    inputs=inputs,
    read_items=read_items,
    score=score,
    score_untrained=score_untrained,
    rows=rows,
    empty={"stereoset": EMPTY_STEREOSET, "untrained_stereoset": EMPTY_STEREOSET},
    published=(
        PublishedValue("intrasentence", "bias_bench", "gpt2", "overall", "ss", 61.93, STEREOSET_OFFICIAL),
        PublishedValue("intrasentence", "bias_bench", "gpt2", "overall", "lms", 91.11, STEREOSET_OFFICIAL),
        PublishedValue("intrasentence", "bias_bench", "gpt2", "overall", "icat", 69.37, STEREOSET_OFFICIAL),
        PublishedValue("intrasentence", "nadeem", "bert-base-cased", "overall", "ss", 58.68, STEREOSET_OFFICIAL),
        PublishedValue("intrasentence", "nadeem", "bert-base-cased", "overall", "lms", 83.02, STEREOSET_OFFICIAL),
        PublishedValue("intrasentence", "nadeem", "bert-base-cased", "overall", "icat", 68.61, STEREOSET_OFFICIAL),
        PublishedValue("intrasentence", "nadeem", "bert-base-uncased", "gender", "ss", 60.28, BIAS_BENCH),
        PublishedValue("intrasentence", "nadeem", "bert-base-uncased", "race", "ss", 57.03, BIAS_BENCH),
        PublishedValue("intrasentence", "nadeem", "bert-base-uncased", "religion", "ss", 59.70, BIAS_BENCH),
    ),
    headlines=headlines,
    settings=SETTINGS,
    check_inputs=check_inputs,
)
