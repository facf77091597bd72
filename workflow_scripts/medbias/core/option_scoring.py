"""A causal language model's own probabilities for the fixed options of a closed question.

For a prompt and its options o_1 .. o_k, each option's score is log P(o | prompt): the sum over the
option's tokens of the log softmax of the model's next-token logits, every token conditioned on the
prompt and the option's tokens before it (Logé et al. 2021, Q-Pain, read P("No") this way). The
options' probabilities normalised over the options are exp(score) / sum of exp(scores). Nothing is
sampled.

Prompts: a chat model's tokenizer turns (system prompt, user message) into its own chat format with
``apply_chat_template`` (the generation prompt added, so the next tokens are the assistant's answer,
and the option follows with nothing in between); any other causal model reads the plain text, BOS in
front, and the option follows after one space. An option's tokens are those the tokenizer gives the
prompt and the option written together beyond the prompt's own tokens (so a word piece that joins
across the boundary is never split differently from how the model would read it); when the two
encodings disagree on the prompt's tokens, the option's own tokens.

Where every option is one token, one forward pass of the prompt scores all of them (the last
position's distribution); otherwise each prompt + option is one sequence in length-sorted batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medbias.core.errors import MedbiasInputError


@dataclass(frozen=True)
class PromptStyle:
    """How a prompt is written for a model: ``chat`` (the tokenizer's chat template with
    ``system_prompt``, or folded into the user message when the template has no system role) or the
    plain text; ``separator`` is what stands between the prompt and an option."""

    chat: bool
    system_prompt: str = ""

    @property
    def separator(self) -> str:
        return "" if self.chat else " "


def has_chat_template(tokenizer) -> bool:
    """Whether the tokenizer carries a chat template (``tokenizer.chat_template``)."""
    return bool(getattr(tokenizer, "chat_template", None))


def chat_prompt_text(tokenizer, system_prompt: str, user_message: str) -> str:
    """The chat template's text of (system prompt, user message), ending in the assistant's turn.
    A template that refuses a system role (Gemma's, Mistral's older ones) gets the system prompt
    as the user message's first paragraph instead."""
    messages = [{"role": "user", "content": user_message}]
    if system_prompt:
        try:
            return tokenizer.apply_chat_template(
                [{"role": "system", "content": system_prompt}, *messages], tokenize=False, add_generation_prompt=True
            )
        except Exception:  # jinja2's TemplateError, raised by the template itself
            messages = [{"role": "user", "content": f"{system_prompt}\n\n{user_message}"}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def prompt_text(tokenizer, style: PromptStyle, user_message: str) -> str:
    """The prompt as text: the chat template's rendering (which writes its own BOS), or the plain text
    (``encode_question`` puts BOS in front of its ids: GPT-2's tokenizer adds none, Llama's adds it)."""
    return chat_prompt_text(tokenizer, style.system_prompt, user_message) if style.chat else user_message


def option_ids(tokenizer, style: PromptStyle, text: str, body: Sequence[int], option: str) -> list[int]:
    """The option's token ids after the prompt ``text`` (whose own ids, without special tokens, are
    ``body``; module docstring): the joint encoding's tail beyond the prompt's tokens, or the option's
    own encoding when the joint one re-tokenizes the prompt."""
    continuation = style.separator + option
    joint = list(tokenizer(text + continuation, add_special_tokens=False)["input_ids"])
    if joint[: len(body)] == list(body) and len(joint) > len(body):
        return joint[len(body) :]
    return list(tokenizer(continuation, add_special_tokens=False)["input_ids"])


@dataclass(frozen=True)
class EncodedQuestion:
    """One prompt and its options as token ids."""

    context: list[int]
    options: list[list[int]]


def encode_question(
    tokenizer, style: PromptStyle, user_message: str, options: Sequence[str], where: str
) -> EncodedQuestion:
    """The prompt's ids and each option's ids; an option that tokenizes to nothing stops with one
    line naming ``where`` (file, vignette, decision) and the option."""
    from medbias.core.sentence_likelihood import bos_id_of

    text = prompt_text(tokenizer, style, user_message)  # the chat template rendered once
    body = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    bos = None if style.chat else bos_id_of(tokenizer)
    context = body if style.chat or body[:1] == [bos] else [bos, *body]
    encoded = []
    for option in options:
        ids = option_ids(tokenizer, style, text, body, option)
        if not ids:
            raise MedbiasInputError(f"{where}: option {option!r} tokenizes to nothing under this model's tokenizer")
        encoded.append(ids)
    return EncodedQuestion(context, encoded)


def option_log_probs(
    model, questions: Sequence[EncodedQuestion], pad_id: int, batch_size: int = 16, progress=None
) -> list[np.ndarray]:
    """log P(option | prompt) for every option of every question (module docstring): one forward
    pass of the prompt per question whose options are all single tokens, one sequence per option
    otherwise; both in length-sorted batches. Scores in float64 from float32 (or wider) log-softmax."""
    out: list[np.ndarray] = [np.zeros(len(q.options)) for q in questions]
    single = [i for i, q in enumerate(questions) if all(len(o) == 1 for o in q.options)]
    multi = [i for i, q in enumerate(questions) if not all(len(o) == 1 for o in q.options)]
    if single:
        scored = tail_log_probs(
            model,
            [questions[i].context for i in single],
            [np.array([[o[0]] for o in questions[i].options]) for i in single],
            pad_id,
            batch_size,
            progress,
        )
        for i, scores in zip(single, scored):
            out[i] = scores
    if multi:
        owner = [(i, k) for i in multi for k in range(len(questions[i].options))]
        scored = tail_log_probs(
            model,
            [[*questions[i].context, *questions[i].options[k]] for i, k in owner],
            [np.array([questions[i].options[k]]) for i, k in owner],
            pad_id,
            batch_size,
            progress,
            appended=True,
        )
        for (i, k), scores in zip(owner, scored):
            out[i][k] = float(scores[0])
    return out


def _accepts(model, argument: str) -> bool:
    import inspect

    return argument in inspect.signature(model.forward).parameters


def tail_log_probs(
    model,
    sequences: Sequence[Sequence[int]],
    targets: Sequence[np.ndarray],
    pad_id: int,
    batch_size: int = 16,
    progress=None,
    appended: bool = False,
) -> list[np.ndarray]:
    """Log probabilities of token runs at the end of each sequence, one forward pass per sequence.

    ``targets[i]`` is an (m, n) array of m candidate runs of n tokens. Without ``appended``, each run
    follows the whole sequence and must be one token (n = 1): the distribution after the sequence's
    last token scores all m (the shared pass). With ``appended``, the sequence already ends in its
    one run (m = 1) and its n tokens are scored in place, each given the tokens before it. Returns the
    m summed log probabilities per sequence.

    Batches are left-padded with explicit position ids, so every sequence ends in the last column and
    the language-model head runs on the last n + 1 positions only (``logits_to_keep``), never on the
    whole prompt; a model class without those arguments gets the full logits, right-padded.
    """
    import torch

    from medbias.core.batching import pad_sequences
    from medbias.core.sentence_likelihood import full_precision

    out: list[np.ndarray] = [np.zeros(0)] * len(sequences)
    device = next(model.parameters()).device
    left = _accepts(model, "position_ids") and _accepts(model, "logits_to_keep")
    order = np.argsort([len(s) for s in sequences], kind="stable")
    done = 0
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(targets[i].shape[1] for i in rows) if appended else 1
            if left:
                longest = max(len(sequences[i]) for i in rows)
                ids = torch.full((len(rows), longest), pad_id, dtype=torch.long)
                attention = torch.zeros((len(rows), longest), dtype=torch.long)
                for r, i in enumerate(rows):
                    ids[r, longest - len(sequences[i]) :] = torch.as_tensor(sequences[i])
                    attention[r, longest - len(sequences[i]) :] = 1
                positions = (attention.cumsum(dim=1) - 1).clamp(min=0)
                logits = model(
                    input_ids=ids.to(device),
                    attention_mask=attention.to(device),
                    position_ids=positions.to(device),
                    logits_to_keep=width + 1 if appended else 1,
                ).logits
                ends = torch.full((len(rows),), logits.shape[1], dtype=torch.long)
            else:
                ids, attention = pad_sequences([sequences[i] for i in rows], pad_id)
                logits = model(input_ids=ids.to(device), attention_mask=attention.to(device)).logits
                ends = attention.sum(dim=1)
            log_probs = torch.log_softmax(full_precision(logits), dim=-1)
            for r, i in enumerate(rows):
                run = targets[i]
                n = run.shape[1]
                end = int(ends[r])
                if appended:  # the run's tokens sit at the last n positions; each is read one position earlier
                    picked = log_probs[r, end - n - 1 : end - 1]
                    scores = picked.gather(-1, torch.as_tensor(run[0], device=picked.device).unsqueeze(-1)).sum()
                    out[i] = np.array([float(scores)])
                else:
                    last = log_probs[r, end - 1]
                    out[i] = last[torch.as_tensor(run[:, 0], device=last.device)].double().cpu().numpy()
            done += len(rows)
            if progress is not None:
                progress(done, len(sequences))
    return out


def log_option_mass(log_probs: np.ndarray) -> float:
    """log of the probability the model puts on the options at all, log sum_k P(option_k | prompt)
    (the options' probabilities before renormalising; logsumexp, so e^-800 stays a number)."""
    top = float(np.max(log_probs))
    return top + float(np.log(np.sum(np.exp(log_probs - top))))


def normalised_probabilities(log_probs: np.ndarray) -> np.ndarray:
    """The options' probabilities renormalised over the options: softmax of their log probabilities."""
    shifted = np.exp(log_probs - log_probs.max())
    return shifted / shifted.sum()


def greedy_answers(
    model, tokenizer, questions: Sequence[EncodedQuestion], pad_id: int, max_new_tokens: int, batch_size: int = 16
) -> list[str]:
    """The model's greedy continuation of each prompt (``max_new_tokens`` at most), decoded without
    special tokens: the answer a user of the model would read. Left-padded batches, as generation
    needs."""
    import torch

    device = next(model.parameters()).device
    texts: list[str] = [""] * len(questions)
    order = np.argsort([len(q.context) for q in questions], kind="stable")
    eos = tokenizer.eos_token_id
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = max(len(questions[i].context) for i in rows)
            ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
            attention = torch.zeros((len(rows), width), dtype=torch.long)
            for r, i in enumerate(rows):
                context = questions[i].context
                ids[r, width - len(context) :] = torch.as_tensor(context)
                attention[r, width - len(context) :] = 1
            generated = model.generate(
                input_ids=ids.to(device),
                attention_mask=attention.to(device),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=pad_id,
                eos_token_id=eos,
            )
            for r, i in enumerate(rows):
                texts[i] = tokenizer.decode(generated[r, width:], skip_special_tokens=True)
    return texts


def read_answer(text: str, options: Sequence[str]) -> str | None:
    """The option a generated text answers with: the first option (longest first, case and leading
    punctuation ignored) that the text begins with, or None when it begins with none."""
    cleaned = text.strip().lstrip("*\"'([:-").strip().lower()
    for option in sorted(options, key=len, reverse=True):
        if cleaned.startswith(option.lower()):
            return option
    return None
