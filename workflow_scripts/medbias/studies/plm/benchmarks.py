"""The field's yardsticks for one registry model, plain or debiased: every benchmark plug-in of the run's
suite (``medbias.metrics.benchmarks``: CrowS-Pairs, StereoSet, May et al.'s SEAT, perplexity), each
scored by the rule behind the published numbers it stands beside. Each plug-in says which model kinds it
scores; every other cell is marked "not applicable" with the reason.

Plain evaluations also score ``plm.benchmarks.untrained_copies`` untrained copies of the model (the same
architecture and tokenizer, fresh weights) on the items of every plug-in that asks for them (CrowS-Pairs,
StereoSet intrasentence): what the architecture, the tokenizer and the scoring rule give without any
learning (a causal model's summed log probability, for one, prefers the sentence with fewer tokens). The
copies' scores spread (a copy that happens to prefer one group word prefers it in every item that has
it), so the trained model is read against their distribution, not against one copy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from medbias.metrics.benchmarks import settings_of, suite
from medbias.metrics.benchmarks.base import ScoringContext


@dataclass
class BenchmarkEvaluation:
    """Every frame the suite wrote for one evaluation (file key -> frame; ``untrained_*`` for the
    untrained copies, numbered in ``copy``) and its summary (status per long-table benchmark, timings, rates)."""

    frames: dict[str, pd.DataFrame]
    summary: dict[str, Any] = field(default_factory=dict)


def sample_rows(frame: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    """All rows (``n`` None or at least the rows), or ``n`` of them drawn without replacement with
    ``seed`` and kept in file order."""
    if n is None or n >= len(frame):
        return frame.reset_index(drop=True)
    chosen = np.sort(np.random.default_rng(seed).choice(len(frame), size=n, replace=False))
    return frame.iloc[chosen].reset_index(drop=True)


def empty_frames(names: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Every file of the suite, empty (what an evaluation writes where nothing was scored)."""
    return {key: frame for b in suite(names) for key, frame in b.empty.items()}


def score_suite(context: ScoringContext) -> BenchmarkEvaluation:
    """Every plug-in of the context's suite (``settings["suite"]``) on its model, each with its own
    settings (``settings_of``): their frames (the empty ones where a plug-in wrote nothing) and the status
    of each reported benchmark."""
    frames = empty_frames(context.settings["suite"])
    for benchmark in suite(context.settings["suite"]):
        scored, status = benchmark.score(replace(context, settings=settings_of(benchmark, context.settings)))
        frames.update(scored)
        context.summary["status"].update(status)
    return BenchmarkEvaluation(frames, context.summary)


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
    """Every plug-in of ``settings["suite"]`` on one loaded model (``model`` may carry a debiasing
    projection hook), with the items per second of each step. ``data``: every plug-in's items. ``self_debias``
    (prefixes by bias type, decay, epsilon): score under Self-Debias instead. ``next_sentence``: a masked
    model's (next-sentence model, None), or (None, why not)."""
    from medbias.core.models import lm_head_problem

    context = ScoringContext(
        model,
        tokenizer,
        kind,
        data,
        settings,
        log,
        self_debias,
        next_sentence,
        no_head=lm_head_problem(model, kind),
    )
    result = score_suite(context)
    summary = result.summary
    summary["items_per_second"] = {k: summary["items"][k] / max(v, 1e-9) for k, v in summary["seconds"].items()}
    return result


def score_untrained_copies(benchmarks, source, tokenizer, data, settings, device: str, log) -> dict[str, pd.DataFrame]:
    """The ``benchmarks``' untrained files for ``settings["untrained_copies"]`` copies of the model's
    architecture (fresh weights under torch seeds seed, seed + 1, ...; its tokenizer), each frame the
    copies' rows one under another with the copy's number in ``copy``: the distribution a trained score is
    read against (``metrics.benchmarks.peer.against_copies``), where one copy is one draw of it."""
    from medbias.core.models import untrained_copy

    copies = int(settings["untrained_copies"])
    collected: dict[str, list[pd.DataFrame]] = {}
    for number in range(copies):
        reference = untrained_copy(source.source, source.kind, settings["seed"] + number).to(device)
        context = ScoringContext(reference, tokenizer, source.kind, data, settings, log)
        for benchmark in benchmarks:
            own = replace(context, settings=settings_of(benchmark, settings))
            for key, frame in benchmark.score_untrained(own).items():
                collected.setdefault(key, []).append(frame.assign(copy=number))
        if number == 0 or (number + 1) % 5 == 0 or number + 1 == copies:
            log.info(
                "untrained copies scored: %d of %d (%s)", number + 1, copies, ", ".join(b.title for b in benchmarks)
            )
    return {key: pd.concat(frames, ignore_index=True) for key, frames in collected.items()}


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
    ``debias`` is (the Dropout or CDA folder as its entry; a SentenceDebias or INLP projection on the
    sentence encoder's last hidden states, which the LM head reads; Self-Debias at scoring time), and
    for a plain evaluation its untrained copies (``score_untrained_copies``). An entry that transformers
    cannot load keeps its rows, every benchmark marked with the reason."""
    from medbias.core.encoders import load_or_mark, sentence_encoder
    from medbias.studies.plm.debias import attach_projection

    model, tokenizer, source, unloadable = load_or_mark(name, entry, device, log)
    if unloadable:
        context = ScoringContext(None, None, entry.get("kind", ""), data, settings, log, no_head=unloadable)
        result = score_suite(context)
        return BenchmarkEvaluation(result.frames, {"status": result.summary["status"], "model": name, "debias": debias})
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
    status = result.summary["status"]
    untrained = [
        b for b in suite(settings["suite"]) if b.score_untrained is not None and status.get(b.reports[0]) == "ok"
    ]
    if debias == "none" and settings["untrained_copies"] and untrained:
        result.frames.update(score_untrained_copies(untrained, source, tokenizer, data, settings, device, log))
    result.summary.update(model=name, debias=debias, kind=source.kind, device=device)
    return result
