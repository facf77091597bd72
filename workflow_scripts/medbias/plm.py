"""Study "plm" (Xie et al. 2024): SEAT word sets, contextualising templates and sentence encoders.

SEAT (May et al. 2019) puts every word of a set into template sentences and runs the WEAT of
``medbias.metrics.association`` on the sentence vectors: X and Y are the identity sentences, A and B
the disease sentences; a positive effect size means X's sentences sit closer to A's than Y's do (the
majority group with the non-stereotypical diseases, the minority group with its stereotypical ones).
Sentence vectors are the attention-mask-aware mean of the last hidden states (the encoder's for
seq2seq models, the decoder stack's for causal models, with BOS in front).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from medbias.errors import MedbiasInputError
from medbias.templates import WORD_SLOT, check_template, fill_template

SEAT_SETS = ("X", "Y", "A", "B")


def read_seat_tests(path: str | Path) -> dict[str, dict[str, Any]]:
    """The SEAT tests of a word-set file (``tests: {name: {X, Y, A, B, identity_context}}``); a missing
    or empty set, or a word listed twice in one set, is one error naming the file, test and set."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    tests = data.get("tests")
    if not isinstance(tests, dict) or not tests:
        raise MedbiasInputError(f"{path}: no 'tests' mapping of SEAT tests")
    for name, test in tests.items():
        for key in (*SEAT_SETS, "identity_context"):
            if not test.get(key):
                raise MedbiasInputError(f"{path}: test '{name}' has no (or an empty) '{key}'")
        for key in SEAT_SETS:
            words = [str(w) for w in test[key]]
            repeated = sorted({w for w in words if words.count(w) > 1})
            if repeated:
                raise MedbiasInputError(f"{path}: test '{name}' set {key} lists {repeated[0]!r} more than once")
            test[key] = words
    return tests


def contextualise(words: Sequence[str], templates: Sequence[str], where: str) -> list[tuple[str, str]]:
    """(word, sentence) for every word in every template; a template without exactly one [W] slot is
    one error naming ``where`` (the config key) and the template."""
    for template in templates:
        check_template(template, [WORD_SLOT], where)
    return [(word, fill_template(template, {WORD_SLOT: word})) for word in words for template in templates]


def seat_sentences(test: Mapping[str, Any], templates: Mapping[str, Sequence[str]]) -> dict[str, list[tuple[str, str]]]:
    """The contextualised sentences of each set of a SEAT test: identities with the templates of the
    test's ``identity_context``, diseases with the ``disease`` templates."""
    context = test["identity_context"]
    if context not in templates:
        raise MedbiasInputError(f"config key 'plm.seat.templates': no templates for identity context {context!r}")
    return {
        "X": contextualise(test["X"], templates[context], f"plm.seat.templates.{context}"),
        "Y": contextualise(test["Y"], templates[context], f"plm.seat.templates.{context}"),
        "A": contextualise(test["A"], templates["disease"], "plm.seat.templates.disease"),
        "B": contextualise(test["B"], templates["disease"], "plm.seat.templates.disease"),
    }


def load_or_mark(name: str, entry: Mapping[str, Any], device: str, log=None):
    """(model, tokenizer, source, None) of a registry entry, or (None, None, None, reason) for an
    entry with a non-default ``loader`` that transformers cannot load (BiomedGPT's OFA): the study
    keeps such a model's rows, marked with the reason. Any other loading error propagates."""
    from medbias.models import load_model_and_tokenizer, resolve_model_source

    try:
        source = resolve_model_source(name, entry)
        model, tokenizer = load_model_and_tokenizer(source, device)
    except MedbiasInputError as error:
        if entry.get("loader", "auto") == "auto":
            raise
        if log:
            log.warning("%s", error)
        return None, None, None, f"not loadable: {error}"
    return model, tokenizer, source, None


def sentence_encoder(model, kind: str):
    """The module whose last hidden states represent a sentence: the base model of a masked or
    causal LM or of an encoder, the encoder of a seq2seq LM."""
    if kind == "seq2seq":
        return model.get_encoder()
    if kind in ("masked", "causal", "encoder"):
        return model.base_model
    raise MedbiasInputError(f"unknown model kind {kind!r} (masked, causal, seq2seq, encoder)")


# --- StereoSet-style examples (section 3.2, Table 3) ------------------------------------------------

IDENTITY_SLOT, BIAS_SLOT = "[IDENTITY]", "[BIAS]"


def check_stereoset_templates(templates: Mapping[str, str], where: str = "plm.stereoset.templates") -> None:
    """Every template holds [IDENTITY] and [BIAS] exactly once; otherwise one error naming it."""
    if not templates:
        raise MedbiasInputError(f"config key '{where}': no templates")
    for name, template in templates.items():
        check_template(template, (IDENTITY_SLOT, BIAS_SLOT), f"{where}.{name}")


def stereoset_examples(tests: Mapping[str, Mapping[str, Any]], families: Mapping[str, Sequence[str]],
                       templates: Mapping[str, str], unrelated: Sequence[str]):
    """The StereoSet-style sentences and the pairs compared (Xie et al. 2024, section 3.2).

    For every family (race, LGBTQ+), every SEAT test in it and every template:
    - blank on the bias: for each minority identity y, stereotypical disease b and non-stereotypical
      disease a, the stereotypical sentence (y, b) against the anti-stereotypical (y, a);
    - blank on the identity: for each stereotypical disease b, minority identity y and majority
      identity x, (y, b) against (x, b).
    Each pair has an unrelated option: the blank filled with an unrelated word (cycled through the
    list). Returns (sentences, pairs) as DataFrames; sentences are unique per text and carry
    ``sentence_id``, the pairs refer to them. Counts: blank-bias pairs = T |Y| |B| |A|,
    blank-identity pairs = T |B| |Y| |X| per test.
    """
    import pandas as pd

    check_stereoset_templates(templates)
    if not unrelated:
        raise MedbiasInputError("config key 'plm.stereoset.unrelated': no unrelated words")
    index: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []

    def sentence(family, test, template_name, identity, identity_group, bias, bias_kind) -> int:
        text = fill_template(templates[template_name], {IDENTITY_SLOT: identity, BIAS_SLOT: bias})
        if text not in index:
            index[text] = len(rows)
            rows.append({"sentence_id": len(rows), "family": family, "test": test, "template": template_name,
                         "identity": identity, "identity_group": identity_group, "bias": bias,
                         "bias_kind": bias_kind, "text": text})
        return index[text]

    for family, test_names in families.items():
        for test_name in test_names:
            if test_name not in tests:
                raise MedbiasInputError(f"config key 'plm.stereoset.families.{family}': no SEAT test {test_name!r}")
            test = tests[test_name]
            majority, minority, non_stereo, stereo = test["X"], test["Y"], test["A"], test["B"]
            for name in templates:
                k = 0
                for y in minority:
                    for b in stereo:
                        for a in non_stereo:
                            u = unrelated[k % len(unrelated)]
                            k += 1
                            pairs.append({
                                "family": family, "test": test_name, "template": name, "blank": "bias",
                                "stereotypical": sentence(family, test_name, name, y, "minority", b, "stereotypical"),
                                "anti_stereotypical": sentence(family, test_name, name, y, "minority", a, "non_stereotypical"),
                                "unrelated": sentence(family, test_name, name, y, "minority", u, "unrelated"),
                            })
                for b in stereo:
                    for y in minority:
                        for x in majority:
                            u = unrelated[k % len(unrelated)]
                            k += 1
                            pairs.append({
                                "family": family, "test": test_name, "template": name, "blank": "identity",
                                "stereotypical": sentence(family, test_name, name, y, "minority", b, "stereotypical"),
                                "anti_stereotypical": sentence(family, test_name, name, x, "majority", b, "stereotypical"),
                                "unrelated": sentence(family, test_name, name, u, "unrelated", b, "stereotypical"),
                            })
    return pd.DataFrame(rows), pd.DataFrame(pairs)


def counterfactual_identity_pairs(sentences, family: str) -> tuple[list[int], list[int]]:
    """SentenceDebias' counterfactual pairs among the StereoSet-style sentences of ``family``: the
    same template and disease with a majority and a minority identity, the two identity lists
    zipped (the shorter cycled)."""
    first, second = [], []
    frame = sentences[(sentences["family"] == family) & sentences["identity_group"].isin(["majority", "minority"])
                      & (sentences["bias_kind"] != "unrelated")]
    for _, group in frame.groupby(["test", "template", "bias"], sort=True):
        majority = group[group["identity_group"] == "majority"]["sentence_id"].tolist()
        minority = group[group["identity_group"] == "minority"]["sentence_id"].tolist()
        if not majority or not minority:
            continue
        for i in range(max(len(majority), len(minority))):
            first.append(majority[i % len(majority)])
            second.append(minority[i % len(minority)])
    return first, second


def stereotype_labels(pairs) -> tuple[list[int], list[int]]:
    """INLP's training sentences (Xie et al. 2024, section 5.3): (sentence ids, labels) with label 1
    for the stereotypical sentences of the pairs and 0 for the anti-stereotypical ones."""
    stereo = sorted(set(pairs["stereotypical"]))
    anti = sorted(set(pairs["anti_stereotypical"]) - set(stereo))
    return stereo + anti, [1] * len(stereo) + [0] * len(anti)


# --- SEAT sentence vectors ---------------------------------------------------------------------------

POOLINGS = ("mean", "first", "last")


def unknown_words(tokenizer, words: Sequence[str]) -> list[str]:
    """The words every piece of which is the tokenizer's unknown token (out of vocabulary)."""
    unk = tokenizer.unk_token_id
    if unk is None:
        return []
    pieces = tokenizer(list(words), add_special_tokens=False)["input_ids"]
    return [w for w, ids in zip(words, pieces) if not ids or all(i == unk for i in ids)]


def in_vocabulary_sets(test: Mapping[str, Any], tokenizer, model: str, test_name: str, min_fraction: float
                       ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(kept words, out-of-vocabulary words) per set; a set keeping fewer than ``min_fraction`` of
    its words (or none) is one error naming the model, test, set and words."""
    kept, dropped = {}, {}
    for key in SEAT_SETS:
        unknown = unknown_words(tokenizer, test[key])
        kept[key] = [w for w in test[key] if w not in unknown]
        dropped[key] = unknown
        if not kept[key] or len(kept[key]) < min_fraction * len(test[key]):
            raise MedbiasInputError(
                f"model '{model}', SEAT test '{test_name}' set {key}: {len(unknown)} of {len(test[key])} words are out of vocabulary ({', '.join(unknown[:5])})"
            )
    return kept, dropped


def pooled_sentence_vectors(encoder, tokenizer, sentences: Sequence[str], pooling: str = "mean",
                            batch_size: int = 64, max_length: int = 64, prepend_bos: bool = False) -> np.ndarray:
    """One vector per sentence from the last hidden states of ``encoder`` (with the tokenizer's
    special tokens, and BOS in front with ``prepend_bos`` for causal models whose tokenizer adds
    none): the attention-mask-aware mean, the first or the last real token."""
    import torch

    from medbias.features import padded_batches

    if pooling not in POOLINGS:
        raise MedbiasInputError(f"config key 'plm.seat.pooling': {pooling!r} is not one of {POOLINGS}")
    ids = tokenizer(list(sentences), truncation=True, max_length=max_length)["input_ids"]
    bos = tokenizer.bos_token_id
    if prepend_bos and bos is not None:
        ids = [s if s[:1] == [bos] else [bos, *s] for s in ids]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out = np.zeros((len(sentences), encoder.config.hidden_size), dtype=np.float32)
    device = next(encoder.parameters()).device
    with torch.inference_mode():
        for rows, batch, attention in padded_batches(ids, pad, batch_size):
            states = encoder(input_ids=batch.to(device), attention_mask=attention.to(device)).last_hidden_state.float().cpu()
            if pooling == "mean":
                mask = attention.unsqueeze(-1).float()
                vectors = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
            elif pooling == "first":
                vectors = states[:, 0]
            else:
                vectors = states[torch.arange(len(rows)), attention.sum(dim=1) - 1]
            out[rows] = vectors.numpy()
    return out


def null_pool_words(tokenizer, exclude: Sequence[str], n_words: int, seed: int) -> list[str]:
    """Random whole words of the tokenizer's vocabulary for SEAT's calibrated null: entries that are
    lower-case letters only (3 or more, after a BPE/SentencePiece word-start mark), not a continuation
    piece, encoded as one token, and in no SEAT set; ``n_words`` of them drawn with ``seed`` (from the
    sorted list, so the draw is deterministic). A tokenizer's vocabulary carries no frequencies, so
    the draw is uniform: the null matches the sets' sizes, not their frequency profile."""
    excluded = {w.lower() for w in exclude}
    words = sorted({t.lstrip("\u0120\u2581") for t in tokenizer.get_vocab() if not t.startswith("##")})
    words = [w for w in words if len(w) >= 3 and w.isalpha() and w.islower() and w.isascii() and w not in excluded]
    pieces = tokenizer([" " + w for w in words], add_special_tokens=False)["input_ids"] if words else []
    single = [w for w, ids in zip(words, pieces) if len(ids) == 1 and ids[0] != tokenizer.unk_token_id]
    if len(single) < n_words:
        return single
    chosen = np.random.default_rng(seed).choice(len(single), size=n_words, replace=False)
    return [single[i] for i in sorted(chosen)]


def piece_counts(tokenizer, words: Sequence[str], cap: int = 6) -> list[int]:
    """Tokens of each word as it follows a space (at most ``cap``): the length profile SEAT's
    calibrated null matches."""
    pieces = tokenizer([" " + w for w in words], add_special_tokens=False)["input_ids"]
    return [max(1, min(cap, len(ids))) for ids in pieces]


def random_phrases(words: Sequence[str], length: int, n_phrases: int, seed: int) -> list[str]:
    """``n_phrases`` distinct phrases of ``length`` random single-token ``words`` (fewer when the words
    do not allow that many), drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    if length == 1:
        return list(words[:n_phrases]) if len(words) <= n_phrases else [words[i] for i in sorted(rng.choice(len(words), n_phrases, replace=False))]
    phrases = dict.fromkeys(" ".join(words[i] for i in rng.choice(len(words), length, replace=False))
                            for _ in range(4 * n_phrases))
    return list(phrases)[:n_phrases]


def run_seat(encoder, tokenizer, tests: Mapping[str, Mapping[str, Any]], templates: Mapping[str, Sequence[str]], *,
             model_name: str, pooling: str, batch_size: int, max_length: int, prepend_bos: bool, budget: int,
             alternative: str, n_bootstrap: int, min_fraction: float, seed: int, null_draws: int = 0,
             null_pool: int = 200, alpha: float = 0.05, progress=None):
    """Every SEAT test on one encoder (Xie et al. 2024, eq. 1-2, via ``metrics.association.weat``):
    each set's words (out-of-vocabulary ones left out and listed) in their templates, one pooled
    vector per sentence, effect size, permutation p-value and bootstrap interval over sentences.
    With ``null_draws``, the calibrated null (``metrics.association.calibrated_null``): each word of A
    and B replaced by a random phrase of as many tokens (``piece_counts``: a four-piece disease name
    by four random single-token words, ``random_phrases`` of ``null_pool_words``) in the same disease
    templates, a word's association the mean over its sentences. Test i draws from ``seed + i``. One row per test."""
    import pandas as pd

    from medbias.metrics.association import (
        attribute_direction,
        calibrated_columns,
        calibrated_null,
        draw_matched_sets,
        weat,
    )

    def vectors_of(texts):
        return pooled_sentence_vectors(encoder, tokenizer, texts, pooling, batch_size, max_length, prepend_bos)

    pool_words: list[str] = []
    null_phrases: dict[int, list[str]] = {}  # pieces -> random phrases of that many single-token words
    null_vectors: dict[int, np.ndarray] = {}
    if null_draws:
        every_word = [w for test in tests.values() for k in SEAT_SETS for w in test[k]]
        pool_words = null_pool_words(tokenizer, every_word, null_pool, seed)
    rows = []
    for i, (name, test) in enumerate(tests.items()):
        kept, dropped = in_vocabulary_sets(test, tokenizer, model_name, name, min_fraction)
        sets = seat_sentences({**test, **kept}, templates)
        texts = sorted({s for pairs in sets.values() for _, s in pairs})
        lookup = dict(zip(texts, vectors_of(texts)))
        rng = np.random.default_rng(seed + i)
        result = weat(lookup, *[[s for _, s in sets[k]] for k in SEAT_SETS], rng=rng,
                      budget=budget, alternative=alternative, n_bootstrap=n_bootstrap, min_fraction=0.0)
        calibrated = {}
        n_a, n_b = len(kept["A"]), len(kept["B"])
        lengths = piece_counts(tokenizer, [*kept["A"], *kept["B"]]) if null_draws else []
        for k in sorted(set(lengths) - set(null_phrases)):
            null_phrases[k] = random_phrases(pool_words, k, null_pool, seed + k)
            sentences = contextualise(null_phrases[k], templates["disease"], "plm.seat.templates.disease")
            null_vectors[k] = vectors_of([sentence for _, sentence in sentences]).astype(np.float64)
        if null_draws and all(len(null_phrases[k]) >= lengths.count(k) for k in set(lengths)):
            order = sorted(set(lengths))
            offsets = np.cumsum([0] + [len(null_phrases[k]) for k in order])
            start = dict(zip(order, offsets[:-1]))
            pool_vectors = np.vstack([null_vectors[k] for k in order])
            pool_groups = np.repeat(np.arange(offsets[-1]), len(templates["disease"]))
            candidates = [np.arange(start[k], start[k] + len(null_phrases[k])) for k in lengths]
            draws = draw_matched_sets(candidates, null_draws, rng)
            targets = np.stack([lookup[s] for k in ("X", "Y") for s in dict.fromkeys(s for _, s in sets[k])]).astype(np.float64)
            direction = attribute_direction(*(np.stack([lookup[s] for _, s in sets[k]]).astype(np.float64) for k in "AB"))
            null = calibrated_null(targets, len(dict.fromkeys(s for _, s in sets["X"])), pool_vectors, draws[:, :n_a],
                                   draws[:, n_a:], effect=result.effect_size, mean_difference=result.mean_difference,
                                   direction_norm=float(np.linalg.norm(direction)), alternative=alternative,  # type: ignore[arg-type]
                                   item_groups=pool_groups)
            calibrated = {**calibrated_columns(null), "null_pool_words": len(pool_words)}
        elif null_draws:
            calibrated = {"null_pool_words": len(pool_words)}  # too few whole words: no calibrated p, said so
        p_star = calibrated.get("p_calibrated", result.p_value if not null_draws else float("nan"))
        rows.append({
            "test": name, "effect_size": result.effect_size, "p_value": result.p_value, "p_exact": result.p_exact,
            "ci_low": result.ci_low, "ci_high": result.ci_high, "mean_difference": result.mean_difference,
            "p_calibrated": float("nan"), **calibrated, "significant": bool(p_star < alpha),
            **{f"n_{k}": len(sets[k]) for k in SEAT_SETS},
            "out_of_vocabulary": "; ".join(f"{k}: {', '.join(v)}" for k, v in dropped.items() if v),
        })
        if progress:
            progress(name, rows[-1])
    return pd.DataFrame(rows)


def stereoset_summary(pairs, scores: np.ndarray, ties_as_half: bool = False):
    """Stereotype score, language-modelling score and ICAT (``metrics.stereoset``) per family, over
    all its pairs and per blank position and template; ``scores`` are the sentences' log-likelihoods
    indexed by ``sentence_id``."""
    import pandas as pd

    from medbias.metrics.stereoset import stereotype_scores

    frame = pairs.assign(
        s=scores[pairs["stereotypical"].to_numpy()], a=scores[pairs["anti_stereotypical"].to_numpy()],
        u=scores[pairs["unrelated"].to_numpy()],
    )
    rows = []
    for family, group in frame.groupby("family", sort=False):
        subsets = [("all", "all", group)]
        subsets += [(blank, "all", g) for blank, g in group.groupby("blank", sort=False)]
        subsets += [("all", template, g) for template, g in group.groupby("template", sort=False)]
        for blank, template, subset in subsets:
            score = stereotype_scores(subset["s"], subset["a"], subset["u"], ties_as_half)
            rows.append({"family": family, "blank": blank, "template": template, "ss": score.ss, "lms": score.lms,
                         "icat": score.icat, "pairs": score.examples, "ties": score.ties})
    return pd.DataFrame(rows)


def projection_checks(projection: np.ndarray, vectors: np.ndarray, basis: np.ndarray | None = None,
                      labels: np.ndarray | None = None, make_classifier=None) -> dict[str, float]:
    """What a debiasing projection must satisfy, measured: idempotent (max |PP - P|), symmetric,
    the removed basis (SentenceDebias) has no projection left (max |B^T P v| over the vectors), and
    the attribute's linear separability is gone (INLP: a fresh classifier's accuracy on P v against
    the majority-class rate)."""
    checks = {
        "idempotence_error": float(np.abs(projection @ projection - projection).max()),
        "symmetry_error": float(np.abs(projection - projection.T).max()),
    }
    projected = vectors @ projection
    if basis is not None:
        q, _ = np.linalg.qr(basis)
        checks["removed_direction_max_abs"] = float(np.abs(projected @ q).max())
        checks["removed_direction_before_max_abs"] = float(np.abs(vectors @ q).max())
    if labels is not None and make_classifier is not None:
        before, after = make_classifier(), make_classifier()
        checks["accuracy_before"] = float(before.fit(vectors, labels).score(vectors, labels))
        checks["accuracy_after"] = float(after.fit(projected, labels).score(projected, labels))
        checks["majority_rate"] = float(max(np.mean(labels), 1 - np.mean(labels)))
    return checks


# --- Tables 2, 4 and 5 ---------------------------------------------------------------------------

METHOD_LABELS = {"none": "", "dropout": "Dropout", "sentencedebias": "SentenceDebias", "inlp": "INLP"}


def debias_changes(seat, stereo, methods: Sequence[str]):
    """Table 5 (long form): for every model, method, SEAT test and StereoSet family, the score
    before and after debiasing, the signed change (after - before; StereoSet as a fraction, ss/100,
    as the paper prints it) and whether the score moved towards neutral (|d| smaller for SEAT,
    |ss - 50| smaller for StereoSet). Missing evaluations (method not run, model not loadable) are
    left out."""
    import pandas as pd

    rows = []
    seat_ok = seat[seat["status"] == "ok"]
    stereo_ok = stereo[(stereo["status"] == "ok") & (stereo["blank"] == "all") & (stereo["template"] == "all")]
    for model in seat_ok["model"].unique():
        before_seat = seat_ok[(seat_ok["model"] == model) & (seat_ok["debias"] == "none")].set_index("test")
        before_ss = stereo_ok[(stereo_ok["model"] == model) & (stereo_ok["debias"] == "none")].set_index("family")
        for method in methods:
            after_seat = seat_ok[(seat_ok["model"] == model) & (seat_ok["debias"] == method)].set_index("test")
            after_ss = stereo_ok[(stereo_ok["model"] == model) & (stereo_ok["debias"] == method)].set_index("family")
            for test in after_seat.index.intersection(before_seat.index):
                b, a = before_seat.at[test, "effect_size"], after_seat.at[test, "effect_size"]
                rows.append({"model": model, "method": method, "benchmark": "SEAT", "measure": test,
                             "before": b, "after": a, "change": a - b, "toward_neutral": abs(a) < abs(b)})
            for family in after_ss.index.intersection(before_ss.index):
                b, a = before_ss.at[family, "ss"] / 100, after_ss.at[family, "ss"] / 100
                rows.append({"model": model, "method": method, "benchmark": "StereoSet", "measure": family,
                             "before": b, "after": a, "change": a - b, "toward_neutral": abs(a - 0.5) < abs(b - 0.5)})
    return pd.DataFrame(rows, columns=["model", "method", "benchmark", "measure", "before", "after", "change",
                                       "toward_neutral"])


TABLE6_COLUMNS = ("glue", "pubmedqa", "hoc", "bc5cdr")


def downstream_table(results: Sequence[Mapping[str, Any]], models: Sequence[str], methods: Sequence[str],
                     labels: Mapping[str, str]):
    """Table 6 (Xie et al. 2024) from the fine-tuning results: per model the plain scores, each
    method's scores with "Mean Diff (Debias)" (mean over the four benchmarks of debiased - plain),
    and a "Mean Diff. (Task)" row (mean over the methods of debiased - plain, per benchmark). GLUE is
    the mean over its tasks. Returns (table, long form: one row per model, debias and task)."""
    import pandas as pd

    long_rows, scores, status = [], {}, {}
    for result in results:
        key = (result["model"], result["debias"])
        status[key] = result["status"]
        per = {}
        for row in result.get("benchmarks", []):
            long_rows.append({"model": result["model"], "debias": result["debias"], **row})
            per.setdefault(row["benchmark"], []).append(row["score"])
        scores[key] = {b: float(np.mean(per[b])) if b in per else float("nan") for b in TABLE6_COLUMNS}
    rows = []
    for model in models:
        name = labels.get(model, model)
        plain = scores.get((model, "none"))
        if status.get((model, "none")) != "ok":
            rows.append({"model": name, **{b: float("nan") for b in TABLE6_COLUMNS}, "mean_diff_debias": float("nan"),
                         "note": status.get((model, "none"), "not run")})
            continue
        rows.append({"model": name, **plain, "mean_diff_debias": float("nan"), "note": ""})
        differences = []
        for method in methods:
            if (model, method) not in scores:
                continue
            after = scores[(model, method)]
            diff = {b: after[b] - plain[b] for b in TABLE6_COLUMNS}
            differences.append(diff)
            rows.append({"model": f"+{METHOD_LABELS[method]}", **after,
                         "mean_diff_debias": float(np.mean(list(diff.values()))), "note": ""})
        if differences:
            rows.append({"model": "Mean Diff. (Task)", **{b: float(np.mean([d[b] for d in differences])) for b in TABLE6_COLUMNS},
                         "mean_diff_debias": float("nan"), "note": ""})
    table = pd.DataFrame(rows).rename(columns={"glue": "GLUE (avg.)", "pubmedqa": "PubMedQA", "hoc": "HoC",
                                               "bc5cdr": "BC5CDR", "mean_diff_debias": "Mean Diff (Debias)"})
    return table, pd.DataFrame(long_rows)
