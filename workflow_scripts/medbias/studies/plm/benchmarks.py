"""The field's yardsticks for one registry model, plain or debiased: CrowS-Pairs, StereoSet (intra- and
intersentence), May et al.'s SEAT tests and the (pseudo-)perplexity on held-out text, scored as the
published tools score them (``medbias.core.benchmark_scoring``, ``medbias.metrics.peer_benchmarks``).

Which model kinds get which score:
- CrowS-Pairs: masked and causal models, under every rule of ``crows_rules`` that scores the kind
  (``core.benchmark_scoring.CROWS_RULES``: nangia and bias_bench for masked, bias_bench and lm_eval for
  causal models). seq2seq is not applicable: a sentence's likelihood given itself measures copying, and no published
  scorer defines another.
- StereoSet intrasentence: masked and causal models with a trained LM head; intersentence: causal
  models, and masked models whose checkpoint holds a trained next-sentence head (P(is next)).
- SEAT: every loadable model (the sentence encoder's mean-pooled last hidden states).
- Perplexity: causal (perplexity) and masked (pseudo-perplexity) models, on the held-out texts of the
  Dropout corpus (in-domain: the corpus Dropout and CDA continue on) and on WikiText-2's test paragraphs
  (general English that no medbias model trains on).
Every other cell is marked "not applicable" with the reason.

Plain evaluations also score an untrained copy of the model (the same architecture and tokenizer, fresh
weights) on the same CrowS-Pairs and intrasentence items: what the architecture, the tokenizer and the
scoring rule give without any learning (a causal model's summed log probability, for one, prefers the
sentence with fewer tokens), against which the trained model is compared pair by pair."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.benchmarks import STEREOSET_OPTIONS

SEQ2SEQ_CROWS = (
    "not applicable: a seq2seq model's likelihood of a sentence given itself measures copying; no published "
    "CrowS-Pairs scorer defines a seq2seq score"
)
SEQ2SEQ_STEREOSET = "not applicable: the published StereoSet scorers cover masked and causal language models"
MASKED_INTERSENTENCE = "not applicable: intersentence needs a causal model or a masked model's next-sentence head"
SEQ2SEQ_PERPLEXITY = "not applicable: perplexity is reported for causal and masked language models"


EMPTY_CROWS = pd.DataFrame(columns=["pair_id", "bias_type", "direction", "rule", "score_more", "score_less", "tokens"])


@dataclass
class BenchmarkEvaluation:
    crows_pairs: pd.DataFrame  # per pair: pair_id, bias_type, direction, score_more, score_less, tokens
    stereoset: pd.DataFrame  # per example: example_id, kind, target, bias_type, score_<option>
    seat: pd.DataFrame  # per May et al. test: effect size, p, interval, calibrated p
    perplexity: pd.DataFrame  # per held-out text: log_likelihood, tokens
    summary: dict[str, Any] = field(default_factory=dict)  # status per benchmark, timings, rates
    # the same CrowS-Pairs and intrasentence items scored by an untrained copy of the model (plain rows)
    untrained_crows_pairs: pd.DataFrame | None = None
    untrained_stereoset: pd.DataFrame | None = None


def sample_rows(frame: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    """All rows (``n`` None or at least the rows), or ``n`` of them drawn without replacement with
    ``seed`` and kept in file order."""
    if n is None or n >= len(frame):
        return frame.reset_index(drop=True)
    chosen = np.sort(np.random.default_rng(seed).choice(len(frame), size=n, replace=False))
    return frame.iloc[chosen].reset_index(drop=True)


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
    ``rules`` that scores the model's kind (``core.benchmark_scoring.CROWS_RULES``; a bias_bench pair
    whose modified span is empty has NaN scores); with ``prefixes`` (bias type -> debiasing prefix),
    under Self-Debias with each pair's bias-type prefix."""
    from medbias.core.benchmark_scoring import crows_pairs_causal_scores, crows_pairs_masked_scores, crows_rules_for
    from medbias.core.self_debias import self_debias_for

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
                "rule": rule,
                "score_more": scored[rule][0],
                "score_less": scored[rule][1],
                "tokens": scored[rule][2],
            }
        )
        for rule in chosen
    ]
    return pd.concat(frames, ignore_index=True)


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
    for a next-sentence head)."""
    from medbias.core.self_debias import self_debias_for

    debias = self_debias_for(prefixes, examples["bias_type"].tolist(), tokenizer, decay, epsilon) if prefixes else None
    from medbias.core.benchmark_scoring import (
        STEREOSET_MASKED_RULE,
        filled_texts,
        joined_texts,
        next_sentence_probabilities,
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
            fillers = examples[f"filler_{option}"].tolist()
            if kind == "masked":
                scores = stereoset_masked_scores(model, tokenizer, contexts, fillers, batch_size, debias)
            else:
                texts, spans = filled_texts(contexts, fillers)
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


def seat_null_sentences(
    tokenizer, tests: Mapping[str, Mapping[str, Any]], templates: Sequence[str], n_words: int, seed: int
) -> list[str]:
    """The calibrated null's random attribute sentences: ``n_words`` random whole words of the
    vocabulary (``seat.null_pool_words``, none from the tests' sentences) in each bleached template."""
    from medbias.core.templates import WORD_SLOT, fill_template
    from medbias.studies.plm.seat import null_pool_words

    test_words = {w.strip(".,").lower() for t in tests.values() for k in "XYAB" for s in t[k] for w in s.split()}
    words = null_pool_words(tokenizer, sorted(test_words), n_words, seed)
    return [fill_template(t, {WORD_SLOT: w}) for w in words for t in templates]


def run_may_seat(
    encoder, tokenizer, tests: Mapping[str, Mapping[str, Any]], settings: Mapping[str, Any], prepend_bos: bool
) -> pd.DataFrame:
    """May et al.'s SEAT tests on one encoder: every sentence encoded alone, mean-pooled over all its
    tokens (special tokens included, as bias-bench does), Caliskan's d (sample SD), the one-sided
    permutation p and bootstrap interval of ``metrics.association.weat``; with null draws, the
    calibrated p: each attribute sentence replaced by a random vocabulary word in a bleached template
    (``seat_null_sentences``), ``metrics.association.sentence_null``. Test i draws from seed + i."""
    from medbias.core.encoders import pooled_sentence_vectors
    from medbias.metrics.association import calibrated_columns, sentence_null, weat

    def vectors_of(texts):
        return pooled_sentence_vectors(
            encoder, tokenizer, texts, "mean", settings["batch_size"], settings["max_length"], prepend_bos
        )

    null_texts = []
    if settings["null_draws"]:
        null_texts = seat_null_sentences(
            tokenizer, tests, settings["null_templates"], settings["null_pool_words"], settings["seed"]
        )
    pool = vectors_of(null_texts).astype(np.float64) if null_texts else np.zeros((0, 0))
    rows = []
    for i, (name, test) in enumerate(tests.items()):
        texts = sorted({s for k in "XYAB" for s in test[k]})
        lookup = dict(zip(texts, vectors_of(texts)))
        rng = np.random.default_rng(settings["seed"] + i)
        result = weat(
            lookup,
            test["X"],
            test["Y"],
            test["A"],
            test["B"],
            rng=rng,
            budget=settings["permutation_budget"],
            alternative=settings["alternative"],
            n_bootstrap=settings["bootstrap"],
            min_fraction=0.0,
        )
        null = None
        n_attributes = len(test["A"]) + len(test["B"])
        if len(null_texts) >= n_attributes:
            null = sentence_null(
                lookup,
                {k: test[k] for k in "XYAB"},
                len(test["A"]),
                pool,
                np.arange(len(null_texts)),
                [np.arange(len(null_texts))] * n_attributes,
                settings["null_draws"],
                rng,
                effect=result.effect_size,
                mean_difference=result.mean_difference,
                alternative=settings["alternative"],
            )
        rows.append(
            {
                "test": name,
                "categories": " / ".join(test["categories"]),
                "effect_size": result.effect_size,
                "p_value": result.p_value,
                "p_exact": result.p_exact,
                "ci_low": result.ci_low,
                "ci_high": result.ci_high,
                **calibrated_columns(null),
                "null_sentences": len(null_texts),
                **{f"n_{k}": len(test[k]) for k in "XYAB"},
            }
        )
    return pd.DataFrame(rows)


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


EMPTY_STEREOSET = pd.DataFrame(
    columns=["example_id", "kind", "rule", "target", "bias_type", *(f"score_{o}" for o in STEREOSET_OPTIONS)]
)
EMPTY_PERPLEXITY = pd.DataFrame(columns=["text_index", "log_likelihood", "tokens", "text_set"])


def evaluate_benchmarks(
    model,
    tokenizer,
    kind: str,
    data: Mapping[str, Any],
    settings: Mapping[str, Any],
    log,
    self_debias: Mapping[str, Any] | None = None,
    next_sentence: tuple[Any, str | None] = (None, None),
) -> BenchmarkEvaluation:
    """Every benchmark on one loaded model (``model`` may carry a debiasing projection hook).
    ``data``: crows_pairs, intrasentence, intersentence (frames, already sampled), seat (May et al.'s
    tests), perplexity_texts. ``settings``: batch_size, max_length, crows_rules, causal_score and the
    SEAT settings. ``self_debias`` (prefixes by bias type, decay, epsilon): score under Self-Debias
    instead; SEAT, which reads sentence vectors, and a masked model's pseudo-perplexity are then marked
    not applicable.
    ``next_sentence``: a masked model's (next-sentence model, None) for intersentence, or (None, why not)."""
    from medbias.core.encoders import sentence_encoder
    from medbias.core.models import lm_head_problem

    summary: dict[str, Any] = {"status": {}, "seconds": {}, "items": {}}
    status, seconds = summary["status"], summary["seconds"]

    def timed(name, items, work):
        started = time.perf_counter()
        result = work()
        seconds[name] = time.perf_counter() - started
        summary["items"][name] = items
        rate = items / max(seconds[name], 1e-9)
        log.info("%s: %d items in %.1f s (%.1f per second)", name, items, seconds[name], rate)
        status[name] = "ok"
        return result

    prefixes = dict(self_debias["prefixes"]) if self_debias else None
    decay = self_debias["decay"] if self_debias else 50.0
    epsilon = self_debias["epsilon"] if self_debias else 0.01
    rules = settings["crows_rules"]
    seat = pd.DataFrame({"test": list(data["seat"])})
    if self_debias:
        status["seat"] = SELF_DEBIAS_SEAT
    else:
        seat = timed(
            "seat",
            sum(len(t[k]) for t in data["seat"].values() for k in "XYAB"),
            lambda: run_may_seat(sentence_encoder(model, kind), tokenizer, data["seat"], settings, kind == "causal"),
        )
    crows, stereo, ppl = EMPTY_CROWS, [], EMPTY_PERPLEXITY
    no_head = lm_head_problem(model, kind)
    batch = settings["batch_size"]
    if no_head or kind == "seq2seq":
        status["crows_pairs"] = no_head or SEQ2SEQ_CROWS
        status["intrasentence"] = status["intersentence"] = no_head or SEQ2SEQ_STEREOSET
        status["perplexity"] = no_head or SEQ2SEQ_PERPLEXITY
        return BenchmarkEvaluation(crows, EMPTY_STEREOSET, seat, ppl, summary)
    pairs, intra, inter = data["crows_pairs"], data["intrasentence"], data["intersentence"]
    crows = timed(
        "crows_pairs",
        2 * len(pairs),
        lambda: score_crows_pairs(model, tokenizer, kind, pairs, batch, prefixes, decay, rules, epsilon),
    )
    causal_score = settings["causal_score"]
    stereo.append(
        timed(
            "intrasentence",
            3 * len(intra),
            lambda: score_stereoset(
                model, tokenizer, kind, intra, "intrasentence", causal_score, batch, prefixes, decay, None, epsilon
            ),
        )
    )
    nsp_model, nsp_problem = next_sentence
    if kind == "causal" or (nsp_model is not None and not self_debias):
        stereo.append(
            timed(
                "intersentence",
                3 * len(inter),
                lambda: score_stereoset(
                    model,
                    tokenizer,
                    kind,
                    inter,
                    "intersentence",
                    causal_score,
                    batch,
                    prefixes,
                    decay,
                    nsp_model,
                    epsilon,
                ),
            )
        )
    else:
        status["intersentence"] = SELF_DEBIAS_NEXT_SENTENCE if self_debias else (nsp_problem or MASKED_INTERSENTENCE)
    text_sets = {"held-out": data["perplexity_texts"], "wikitext-2": data.get("wikitext_texts", [])}
    if self_debias and kind == "masked":
        status["perplexity"] = SELF_DEBIAS_PSEUDO_PERPLEXITY
    else:
        every = sorted(set(prefixes.values())) if prefixes else []
        frames = []
        for text_set, texts in text_sets.items():
            if not len(texts):
                continue
            scored = timed(
                f"perplexity {text_set}",
                len(texts),
                lambda texts=texts: perplexity_scores(
                    model, tokenizer, kind, texts, batch, settings["perplexity_length"], every, decay, epsilon
                ),
            )
            frames.append(scored.assign(text_set=text_set))
        ppl = pd.concat(frames, ignore_index=True)
        status["perplexity"] = "ok"
    summary["items_per_second"] = {k: summary["items"][k] / max(v, 1e-9) for k, v in seconds.items()}
    return BenchmarkEvaluation(crows, pd.concat(stereo, ignore_index=True), seat, ppl, summary)


SELF_DEBIAS_SEAT = (
    "not applicable: Self-Debias changes the output distribution at scoring time, not the sentence vectors"
)
SELF_DEBIAS_NEXT_SENTENCE = (
    "not applicable: Self-Debias rescales a language-model distribution, not a next-sentence head"
)
SELF_DEBIAS_PSEUDO_PERPLEXITY = (
    "not applicable: a masked model's pseudo-perplexity under Self-Debias would need one pass per token and prefix"
)


def benchmark_plm_model(
    name: str,
    entry: Mapping[str, Any],
    debias: str,
    projection: np.ndarray | None,
    data: Mapping[str, Any],
    settings: Mapping[str, Any],
    device: str,
    log,
) -> BenchmarkEvaluation:
    """``evaluate_benchmarks`` of registry model ``name``, plain or debiased as the plm evaluation
    ``debias`` is (the Dropout folder as its entry; a SentenceDebias or INLP projection on the sentence
    encoder's last hidden states, which the LM head reads; Self-Debias at scoring time). An entry that
    transformers cannot load keeps its rows, every benchmark marked with the reason."""
    from medbias.core.encoders import load_or_mark, sentence_encoder
    from medbias.studies.plm.debias import attach_projection

    model, tokenizer, source, unloadable = load_or_mark(name, entry, device, log)
    if unloadable:
        marked = dict.fromkeys(("seat", "crows_pairs", "intrasentence", "intersentence", "perplexity"), unloadable)
        return BenchmarkEvaluation(
            pd.DataFrame(columns=EMPTY_CROWS.columns),
            pd.DataFrame(columns=EMPTY_STEREOSET.columns),
            pd.DataFrame({"test": list(data["seat"]), "status": unloadable}),
            pd.DataFrame(columns=EMPTY_PERPLEXITY.columns),
            {"status": marked, "model": name, "debias": debias},
        )
    if projection is not None:
        attach_projection(sentence_encoder(model, source.kind), projection)
        log.info("%s: %s projection attached", name, debias)
    self_debias = settings["self_debias"] if debias == "selfdebias" else None
    next_sentence = (None, None)
    if source.kind == "masked" and not self_debias:
        from medbias.core.models import load_next_sentence_head

        next_sentence = load_next_sentence_head(source.source, device)
        if next_sentence[0] is not None and projection is not None:
            attach_projection(sentence_encoder(next_sentence[0], "masked"), projection)
    result = evaluate_benchmarks(model, tokenizer, source.kind, data, settings, log, self_debias, next_sentence)
    if debias == "none" and settings["untrained_reference"] and result.summary["status"]["crows_pairs"] == "ok":
        from medbias.core.models import untrained_copy

        log.info("%s: scoring an untrained copy (seed %d) on the same items", name, settings["seed"])
        reference = untrained_copy(source.source, source.kind, settings["seed"]).to(device)
        batch = settings["batch_size"]
        result.untrained_crows_pairs = score_crows_pairs(
            reference, tokenizer, source.kind, data["crows_pairs"], batch, rules=settings["crows_rules"]
        )
        result.untrained_stereoset = score_stereoset(
            reference, tokenizer, source.kind, data["intrasentence"], "intrasentence", settings["causal_score"], batch
        )
    result.seat.insert(0, "status", result.summary["status"].get("seat", "ok"))
    result.summary.update(model=name, debias=debias, kind=source.kind, device=device)
    return result
