"""One causal model's answers to every vignette set: each option's log probability after the
prompt and the options' normalised probabilities (``core.option_scoring``), optionally the greedy
answer, one row per vignette x decision x version x option."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.core.option_scoring import (
    EncodedQuestion,
    PromptStyle,
    encode_question,
    greedy_answers,
    has_chat_template,
    log_option_mass,
    normalised_probabilities,
    option_log_probs,
    read_answer,
)
from medbias.io.vignettes import VignetteSet
from medbias.studies.vignettes.versions import question_rows

QUESTION_KEYS = ["set", "vignette", "case", "context", "decision", "version", "neutral"]


def prompt_style(name: str, entry: Mapping[str, Any], tokenizer, system_prompt: str) -> PromptStyle:
    """The registry entry's prompt style: ``chat: true`` needs the tokenizer's chat template (one
    line naming the model when it has none), ``chat: false`` is the plain prompt, and an entry
    without the key uses the template when the tokenizer has one."""
    chat = entry.get("chat")
    if chat and not has_chat_template(tokenizer):
        raise MedbiasInputError(
            f"model '{name}' ({entry['source']}): the registry says chat: true but its tokenizer has no chat template "
            "(tokenizer_config.json 'chat_template' or chat_template.jinja); set chat: false for the plain prompt"
        )
    use_chat = has_chat_template(tokenizer) if chat is None else bool(chat)
    return PromptStyle(chat=use_chat, system_prompt=system_prompt if use_chat else "")


def encode_rows(rows: pd.DataFrame, vset: VignetteSet, tokenizer, style: PromptStyle) -> list[EncodedQuestion]:
    """Every question row's prompt and option ids (an option that tokenizes to nothing stops with one
    line naming the file, vignette, decision and option)."""
    encoded = []
    for row in rows.itertuples(index=False):
        decision = vset.decisions[row.decision]
        where = f"{vset.path}: vignette {row.vignette}, decision {row.decision}"
        encoded.append(encode_question(tokenizer, style, row.message, list(decision.options), where))
    return encoded


def score_sets(
    model,
    tokenizer,
    sets: Sequence[VignetteSet],
    style: PromptStyle,
    template: str,
    *,
    batch_size: int,
    pad_id: int,
    generation_tokens: int = 0,
    log=None,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """(one row per question x option, timings): the option's text, value, token count, log
    probability and normalised probability, whether it is the decision's compared option, and the
    question's option mass (the options' probabilities summed before normalising, and its log); with
    ``generation_tokens`` > 0 also the greedy answer read from the model's own text."""
    frames, prompts, tokens, seconds, generated_seconds, numbered = [], 0, 0, 0.0, 0.0, 0
    for vset in sets:
        rows = question_rows(vset, template)
        questions = encode_rows(rows, vset, tokenizer, style)
        if log:
            log.info("%s: %d questions (%d vignettes)", vset.name, len(rows), len(vset.vignettes))
        started = time.perf_counter()
        progress = None
        if log:
            from medbias.core.logs import progress_logger

            progress = progress_logger(log, f"{vset.name}: single-token option prompts", "prompts")
        scores = option_log_probs(model, questions, pad_id, batch_size, progress)
        seconds += time.perf_counter() - started
        prompts += len(questions)
        tokens += sum(len(q.context) + sum(len(o) for o in q.options) for q in questions)
        answers: list[str] | None = None
        if generation_tokens > 0:
            started = time.perf_counter()
            answers = greedy_answers(model, tokenizer, questions, pad_id, generation_tokens, batch_size)
            generated_seconds += time.perf_counter() - started
        records = rows.drop(columns=["message"]).to_dict("records")
        out = []
        for i, (record, question, log_probs) in enumerate(zip(records, questions, scores)):
            decision = vset.decisions[record["decision"]]
            probabilities = normalised_probabilities(log_probs)
            mass = log_option_mass(log_probs)
            parsed = read_answer(answers[i], list(decision.options)) if answers is not None else None
            for k, option in enumerate(decision.options):
                out.append(
                    {
                        "question": numbered + i,
                        **record,
                        "option": option,
                        "option_value": decision.options[option],
                        "compared": option == decision.compared,
                        "option_tokens": len(question.options[k]),
                        "log_prob": float(log_probs[k]),
                        "probability": float(probabilities[k]),
                        "log_option_mass": mass,
                        "option_mass": float(np.exp(mass)),
                        **({"generated": answers[i], "generated_option": parsed or ""} if answers is not None else {}),
                    }
                )
        frames.append(pd.DataFrame(out))
        numbered += len(records)
    timings = {
        "prompts": prompts,
        "tokens": tokens,
        "scoring_seconds": seconds,
        "prompts_per_second": prompts / seconds if seconds else np.nan,
        "tokens_per_second": tokens / seconds if seconds else np.nan,
        "generation_seconds": generated_seconds,
    }
    frame = pd.concat(frames, ignore_index=True)
    text_columns = frame.select_dtypes(include="object").columns
    frame[text_columns] = frame[text_columns].fillna("")  # the version columns of another set's attributes
    return frame, timings


def question_scores(options: pd.DataFrame) -> pd.DataFrame:
    """Per question (one model's ``score_sets`` rows): the option mass (``option_mass``,
    ``log_option_mass``; older score files without it get NaN), P(compared option) normalised over the
    options, the expected decision (sum of probability x value), the most probable option (``choice``), and
    with greedy answers, the answer read from the text (``generated_option``, "" when none)."""
    by = options.groupby("question", sort=True)
    keys = [c for c in options.columns if c not in OPTION_COLUMNS]
    frame = by[keys].first()
    frame["p_compared"] = options[options["compared"]].set_index("question")["probability"]
    frame["expected"] = (options["probability"] * options["option_value"]).groupby(options["question"]).sum()
    frame["choice"] = options.loc[by["probability"].idxmax(), ["question", "option"]].set_index("question")["option"]
    if "generated_option" in options:
        frame["generated_option"] = by["generated_option"].first()
    if "option_mass" not in frame:
        frame["option_mass"] = frame["log_option_mass"] = np.nan
    return frame.reset_index()


OPTION_COLUMNS = {
    "question",
    "option",
    "option_value",
    "compared",
    "option_tokens",
    "log_prob",
    "probability",
    "generated",
    "generated_option",
}


def score_registry_model(
    name: str,
    entry: Mapping[str, Any],
    sets: Sequence[VignetteSet],
    prompts: Mapping[str, str],
    *,
    batch_size: int,
    generation_tokens: int,
    device: str,
    log=None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Load a causal registry entry (bf16 and spread over the job's GPUs where its size asks) and
    score every set (``score_sets``); the summary says how it was prompted and how fast it ran, or
    why it gave no probabilities (a checkpoint without a trained language-model head)."""
    import torch

    from medbias.core.models import lm_head_problem, load_model_and_tokenizer, resolve_model_source
    from medbias.core.sentence_likelihood import bos_id_of, pad_id_of

    source = resolve_model_source(name, dict(entry))
    model, tokenizer = load_model_and_tokenizer(source, device)
    problem = lm_head_problem(model, source.kind)
    if problem is not None:
        return pd.DataFrame(), {"model": name, "status": problem}
    style = prompt_style(name, entry, tokenizer, prompts["system_prompt"])
    template = prompts["chat_prompt"] if style.chat else prompts["prompt"]
    if log:
        log.info(
            "%s: %s prompts on %s (%s), %d sets",
            name,
            "chat-template" if style.chat else "plain",
            device,
            next(model.parameters()).dtype,
            len(sets),
        )
    frame, timings = score_sets(
        model,
        tokenizer,
        sets,
        style,
        template,
        batch_size=batch_size,
        pad_id=pad_id_of(tokenizer, bos_id_of(tokenizer)),
        generation_tokens=generation_tokens,
        log=log,
    )
    summary = {
        "model": name,
        "status": "ok",
        "prompt_style": "chat template" if style.chat else "plain",
        "system_prompt": style.system_prompt,
        "device": device,
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "gpus": torch.cuda.device_count() if device != "cpu" else 0,
        "sets": [s.name for s in sets],
        **timings,
    }
    return frame, summary
