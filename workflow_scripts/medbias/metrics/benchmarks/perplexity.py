"""(Pseudo-)perplexity as a benchmark plug-in, bias-bench's check that debiasing kept the language
model: on the held-out texts of the Dropout corpus (in-domain, and the corpus Dropout and CDA continue
training on) and on WikiText-2's test paragraphs (general English that no medbias model trains on),
each text cut to ``plm.debias.dropout.max_length`` tokens; perplexity for causal models,
pseudo-perplexity for masked ones (``metrics.benchmarks.peer.perplexity``), with bootstrap intervals
over texts; beside it the perplexity of a uniform guess over the model's vocabulary (its size), which a
model that learned anything about the texts lies below."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.benchmarks.base import Benchmark, Headline, ScoringContext, row
from medbias.metrics.benchmarks.peer import perplexity, perplexity_interval

SEQ2SEQ_PERPLEXITY = "not applicable: perplexity is reported for causal and masked language models"
SELF_DEBIAS_PSEUDO_PERPLEXITY = (
    "not applicable: a masked model's pseudo-perplexity under Self-Debias would need one pass per token and prefix"
)
EMPTY_PERPLEXITY = pd.DataFrame(columns=["text_index", "log_likelihood", "tokens", "text_set", "vocabulary"])


def perplexity_scores(
    model,
    tokenizer,
    kind: str,
    texts: Sequence[str],
    batch_size: int,
    max_length: int,
    prefixes: Sequence[str] = (),
    decay: float = 50.0,
    epsilon: float = 0.01,
) -> pd.DataFrame:
    """Per held-out text, cut to ``max_length`` tokens: its (pseudo-)log-likelihood and the tokens
    scored (``core.sentence_likelihood``); with ``prefixes`` (causal models), the log-likelihood under
    Self-Debias with all of them."""
    from medbias.core.sentence_likelihood import (
        bos_id_of,
        causal_token_log_probs,
        pad_id_of,
        sentence_log_likelihood,
    )

    if prefixes:
        from medbias.core.self_debias import every_prefix

        bos = bos_id_of(tokenizer)
        pieces = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        encoded = [[bos, *ids[: max_length - 1]] for ids in pieces]
        debias = every_prefix(list(prefixes), len(encoded), tokenizer, decay, epsilon)
        values = causal_token_log_probs(model, encoded, pad_id_of(tokenizer, bos), batch_size, debias)
        scores, tokens = np.array([v.sum() for v in values]), np.array([len(e) - 1 for e in encoded])
    else:
        scores, tokens = sentence_log_likelihood(model, tokenizer, kind, list(texts), batch_size, max_length)
    return pd.DataFrame({"text_index": np.arange(len(texts)), "log_likelihood": scores, "tokens": tokens})


def inputs(config: Mapping[str, Any], plm_dir: str) -> dict[str, str]:
    return {"corpus": config["plm"]["debias"]["dropout"]["corpus"], "wikitext": config["resources"]["wikitext2"]}


def read_items(paths: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
    from medbias.io.gzipped import read_corpus_split
    from medbias.metrics.benchmarks.items import read_wikitext_paragraphs

    return {
        "perplexity_texts": read_corpus_split(paths["corpus"], settings["held_out_texts"], max_texts=0)[1],
        "wikitext_texts": read_wikitext_paragraphs(paths["wikitext"], settings["wikitext_paragraphs"]),
    }


def score(context: ScoringContext) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    if context.no_head or context.kind == "seq2seq":
        return {"perplexity": EMPTY_PERPLEXITY}, {"perplexity": context.no_head or SEQ2SEQ_PERPLEXITY}
    if context.self_debias and context.kind == "masked":
        return {"perplexity": EMPTY_PERPLEXITY}, {"perplexity": SELF_DEBIAS_PSEUDO_PERPLEXITY}
    every = sorted(set(context.prefixes.values())) if context.prefixes else []
    text_sets = {"held-out": context.items["perplexity_texts"], "wikitext-2": context.items.get("wikitext_texts", [])}
    frames = []
    for text_set, texts in text_sets.items():
        if not len(texts):
            continue
        scored = context.timed(
            f"perplexity {text_set}",
            len(texts),
            lambda texts=texts: perplexity_scores(
                context.model,
                context.tokenizer,
                context.kind,
                texts,
                context.settings["batch_size"],
                context.settings["perplexity_length"],
                every,
                context.decay,
                context.epsilon,
            ),
        )
        frames.append(scored.assign(text_set=text_set, vocabulary=len(context.tokenizer)))
    return {"perplexity": pd.concat(frames, ignore_index=True)}, {"perplexity": "ok"}


def check_inputs(resources: Mapping[str, str], settings: Mapping[str, Any]) -> None:
    from medbias.metrics.benchmarks.items import check_count, read_wikitext_paragraphs

    paragraphs = read_wikitext_paragraphs(resources["wikitext2"])
    asked = settings["wikitext_paragraphs"]
    check_count(
        "plm.benchmarks.perplexity.wikitext_paragraphs", asked, len(paragraphs), "paragraphs", resources["wikitext2"]
    )


def headlines(settings: Mapping[str, Any]) -> tuple[Headline, ...]:
    return (
        Headline(
            "perplexity",
            "held-out",
            "perplexity",
            "(pseudo-)perplexity, held-out text of the Dropout corpus",
            "perplexity, held-out",
        ),
        Headline(
            "perplexity",
            "wikitext-2",
            "perplexity",
            "(pseudo-)perplexity, WikiText-2 test paragraphs",
            "perplexity, WikiText-2",
        ),
    )


SETTINGS = {
    "description": "(pseudo-)perplexity of every evaluation, medbias.metrics.benchmarks.perplexity",
    "properties": {
        "wikitext_paragraphs": {
            "description": "WikiText-2 test paragraphs whose (pseudo-)perplexity every evaluation reports beside the "
            "in-domain held-out text (null = all 2,185; each cut to plm.debias.dropout.max_length tokens)",
            "x-source": "cited default: Meade et al. 2022 check that debiasing kept the language model by perplexity "
            "on WikiText-2; general text that no medbias model trains on, unlike the Dropout corpus that Dropout and "
            "CDA continue on",
            "type": ["integer", "null"],
            "minimum": 1,
            "default": None,
        }
    },
}


def rows(
    frames: Mapping[str, pd.DataFrame], status: Mapping[str, str], settings: Mapping[str, Any], rng
) -> list[dict[str, Any]]:
    if status.get("perplexity") != "ok":
        return []
    ppl = frames["perplexity"]
    sets = ppl["text_set"] if "text_set" in ppl else pd.Series("held-out", index=ppl.index)
    out = []
    for text_set in dict.fromkeys(sets):
        part = ppl[sets == text_set]
        ll, tokens = part["log_likelihood"].to_numpy(float), part["tokens"].to_numpy(float)
        low, high = perplexity_interval(ll, tokens, settings["bootstrap"], rng)
        out.append(row("perplexity", text_set, "perplexity", perplexity(ll, tokens), low, high, items=len(part)))
        if "vocabulary" in part:
            # a uniform guess over the vocabulary has exactly this perplexity: a model above it has learned
            # less than nothing about these texts
            out.append(row("perplexity", text_set, "uniform", float(part["vocabulary"].iloc[0]), items=len(part)))
    return out


BENCHMARK = Benchmark(
    name="perplexity",
    title="perplexity",
    reports=("perplexity",),
    files={"perplexity": "perplexity.parquet"},
    inputs=inputs,
    read_items=read_items,
    score=score,
    rows=rows,
    empty={"perplexity": EMPTY_PERPLEXITY},
    headlines=headlines,
    settings=SETTINGS,
    check_inputs=check_inputs,
)
