"""May et al.'s SEAT tests (2019) as a benchmark plug-in: every sentence encoded alone, mean-pooled over
all its tokens (special tokens included, as bias-bench does), Caliskan's d with the permutation p,
its bootstrap interval and the calibrated p of random attribute sentences; bias-bench's summaries
(mean |d| over its test lists). Every loadable model takes it; under Self-Debias, which changes output
distributions and not sentence vectors, it is not applicable."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.benchmarks.base import Benchmark, Headline, ScoringContext, row
from medbias.metrics.benchmarks.items import read_may_seat_tests
from medbias.metrics.benchmarks.peer import seat_summary, seat_summary_interval

SEAT_RULE = "bias_bench"  # each sentence alone, mean-pooled last layer (special tokens included), Caliskan's d
SELF_DEBIAS_SEAT = (
    "not applicable: Self-Debias changes the output distribution at scoring time, not the sentence vectors"
)


def seat_null_sentences(
    tokenizer, tests: Mapping[str, Mapping[str, Any]], templates: Sequence[str], n_words: int, seed: int
) -> list[str]:
    """The calibrated null's random attribute sentences: ``n_words`` random whole words of the
    vocabulary (``plm.benchmarks.seat_may.null_words``, none from the tests' sentences) in each bleached template."""
    from medbias.core.templates import WORD_SLOT, fill_template
    from medbias.core.vocabulary import null_pool_words

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
            tokenizer, tests, settings["null_templates"], settings["null_words"], settings["seed"]
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


def seat_rows(
    seat: pd.DataFrame, summaries: Mapping[str, Sequence[str]], rng: np.random.Generator | None = None
) -> list[dict[str, Any]]:
    """May et al.'s tests (d with its interval, the classic permutation p and the calibrated p) and
    bias-bench's summaries (mean |d| over its lists; with ``rng``, its parametric-bootstrap interval,
    ``seat_summary_interval``)."""
    rows = []
    effect = seat.set_index("test")["effect_size"]
    for name, tests in summaries.items():
        value, present = seat_summary(effect, list(tests))
        low, high = seat_summary_interval(seat, list(tests), rng) if rng is not None else (np.nan, np.nan)
        rows.append(row("seat", name, "mean_abs_d", value, low, high, items=present, rule=SEAT_RULE))
    for test in seat.itertuples(index=False):
        rows.append(
            row("seat", test.test, "d", test.effect_size, test.ci_low, test.ci_high, test.p_value, 1, rule=SEAT_RULE)
        )
        rows.append(
            row("seat", test.test, "p_calibrated", test.p_calibrated, items=int(test.null_draws), rule=SEAT_RULE)
        )
    return rows


def inputs(config: Mapping[str, Any], plm_dir: str) -> dict[str, str]:
    return {"seat_folder": config["resources"]["seat_may2019"]}


def read_items(paths: Mapping[str, str], settings: Mapping[str, Any]) -> dict[str, Any]:
    return {"seat": read_may_seat_tests(paths["seat_folder"], settings["tests"])}


def score(context: ScoringContext) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    from medbias.core.encoders import sentence_encoder

    tests = context.items["seat"]
    if context.model is None:  # not loadable: every test marked with the reason
        return {"seat": pd.DataFrame({"status": context.no_head, "test": list(tests)})}, {"seat": context.no_head}
    if context.self_debias:
        return {"seat": pd.DataFrame({"status": SELF_DEBIAS_SEAT, "test": list(tests)})}, {"seat": SELF_DEBIAS_SEAT}
    frame = context.timed(
        "seat",
        sum(len(t[k]) for t in tests.values() for k in "XYAB"),
        lambda: run_may_seat(
            sentence_encoder(context.model, context.kind),
            context.tokenizer,
            tests,
            context.settings,
            context.kind == "causal",
        ),
    )
    frame.insert(0, "status", "ok")
    return {"seat": frame}, {"seat": "ok"}


def check_inputs(resources: Mapping[str, str], settings: Mapping[str, Any]) -> None:
    read_may_seat_tests(resources["seat_may2019"], settings["tests"])


def headlines(settings: Mapping[str, Any]) -> tuple[Headline, ...]:
    """bias-bench's summaries: one wide-table column and one card line each."""
    return tuple(
        Headline("seat", name, "mean_abs_d", f"SEAT {name}: mean |d|", f"SEAT {name} mean |d|", digits=3)
        for name in settings["summaries"]
    )


SETTINGS = {
    "description": "May et al.'s SEAT tests (2019), medbias.metrics.benchmarks.seat_may",
    "properties": {
        "tests": {
            "description": "the May et al. tests run",
            "x-source": "paper: May et al. 2019 (the sentence tests); bias-bench runs the same files",
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string"},
            "default": [
                "sent-weat1",
                "sent-weat2",
                "sent-weat3",
                "sent-weat3b",
                "sent-weat4",
                "sent-weat5",
                "sent-weat5b",
                "sent-weat6",
                "sent-weat6b",
                "sent-weat7",
                "sent-weat7b",
                "sent-weat8",
                "sent-weat8b",
                "sent-weat9",
                "sent-weat10",
                "sent-angry_black_woman_stereotype",
                "sent-angry_black_woman_stereotype_b",
                "sent-heilman_double_bind_competent_one_word",
                "sent-heilman_double_bind_likable_one_word",
            ],
        },
        "summaries": {
            "description": "summary -> the tests whose mean |d| it reports (tests not run are left out and counted)",
            "x-source": "reference code: bias-bench (Meade et al. 2022) gender and race SEAT lists",
            "type": "object",
            "additionalProperties": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "default": {
                "gender": ["sent-weat6", "sent-weat6b", "sent-weat7", "sent-weat7b", "sent-weat8", "sent-weat8b"],
                "race": [
                    "sent-angry_black_woman_stereotype",
                    "sent-angry_black_woman_stereotype_b",
                    "sent-weat3",
                    "sent-weat3b",
                    "sent-weat4",
                    "sent-weat5",
                    "sent-weat5b",
                ],
            },
        },
        "null_templates": {
            "description": "bleached frames of the calibrated null's random attribute sentences (one [W] each)",
            "x-source": "paper: May et al. 2019 §3 (semantically bleached templates)",
            "type": "array",
            "minItems": 1,
            "items": {"type": "string"},
            "default": [
                "This is [W].",
                "That is [W].",
                "There is [W].",
                "Here is [W].",
                "[W] is here.",
                "[W] is there.",
                "It is [W].",
            ],
        },
        "null_draws": {
            "description": "random attribute-set draws of SEAT's calibrated p (0 = off)",
            "x-source": "our choice: the published tools report no calibrated p",
            "type": "integer",
            "minimum": 0,
            "default": 999,
        },
        "null_words": {
            "description": "random whole words of the vocabulary the calibrated null draws from",
            "x-source": "our choice: the published tools report no calibrated p",
            "type": "integer",
            "minimum": 10,
            "default": 200,
        },
    },
}


def rows(
    frames: Mapping[str, pd.DataFrame], status: Mapping[str, str], settings: Mapping[str, Any], rng
) -> list[dict[str, Any]]:
    if status.get("seat") != "ok":
        return []
    # a child generator: the summaries' draws leave ``rng``'s stream, which the other plug-ins use, as it was
    return seat_rows(frames["seat"], settings["summaries"], rng.spawn(1)[0])


BENCHMARK = Benchmark(
    name="seat_may",
    title="SEAT (May et al.)",
    reports=("seat",),
    files={"seat": "seat_may.csv"},
    inputs=inputs,
    read_items=read_items,
    score=score,
    rows=rows,
    empty={"seat": pd.DataFrame(columns=["status", "test"])},
    headlines=headlines,
    settings=SETTINGS,
    check_inputs=check_inputs,
)
