"""Known answers for a causal model's option probabilities: the batched scorer (one shared forward
pass for single-token options, length-sorted batches otherwise) equals a written-out computation,
one prompt at a time with the full softmax over the vocabulary and the option's tokens multiplied
out, for a tiny GPT-2 and a tiny Llama-architecture model, with and without a chat template."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from medbias.core.errors import MedbiasInputError
from medbias.core.option_scoring import (
    PromptStyle,
    encode_question,
    greedy_answers,
    has_chat_template,
    normalised_probabilities,
    option_log_probs,
    read_answer,
)
from medbias.synth.tiny_models import train_byte_bpe

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}{{ eos_token }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
SYSTEM = "You are a careful physician."
PROMPTS = [
    "Maria Lopez is a 61-year-old Hispanic woman with metastatic bone pain. Would you offer her an opioid?",
    "John Smith is a 45-year-old white man with a broken wrist after a fall. Would you offer him an opioid?",
    "The patient is 30 with chest pain on exertion. What triage level?",
]
CORPUS = PROMPTS * 3 + ["Answer: Yes", "Answer: No", "Yes", "No", "level 1 2 3 4 5", "<|user|> <|assistant|>"] * 5
OPTION_SETS = [["Yes", "No"], ["low dose", "high dose", "no opioid"], ["1", "2", "3", "4", "5"]]


@pytest.fixture(scope="module")
def tokenizer():
    return train_byte_bpe(CORPUS, 600, add_bos_eos=False)


def tiny_causal(architecture: str, vocab: int, seed: int = 0):
    import transformers as tf

    torch.manual_seed(seed)
    if architecture == "gpt2":
        config = tf.GPT2Config(
            vocab_size=vocab, n_embd=32, n_layer=2, n_head=2, n_positions=256, bos_token_id=0, eos_token_id=2
        )
        return tf.GPT2LMHeadModel(config).double().eval()
    config = tf.LlamaConfig(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    return tf.LlamaForCausalLM(config).double().eval()


def written_out(model, context: list[int], option: list[int]) -> float:
    """log P(option | context): one sequence, the full softmax at each option position, multiplied out."""
    ids = torch.tensor([context + option])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0]
    probability = 1.0
    for k, token in enumerate(option):
        distribution = torch.softmax(logits[len(context) + k - 1], dim=-1)
        probability *= float(distribution[token])
    return float(np.log(probability))


@pytest.mark.parametrize("architecture", ["gpt2", "llama"])
@pytest.mark.parametrize("chat", [False, True])
def test_option_probabilities_equal_the_written_out_computation(tokenizer, architecture, chat):
    tok = tokenizer
    if chat:
        tok = train_byte_bpe(CORPUS, 600, add_bos_eos=False)
        tok.chat_template = CHAT_TEMPLATE
        assert has_chat_template(tok)
    model = tiny_causal(architecture, len(tok))
    style = PromptStyle(chat=chat, system_prompt=SYSTEM)
    questions = [encode_question(tok, style, prompt, options, "test") for prompt in PROMPTS for options in OPTION_SETS]
    assert any(all(len(o) == 1 for o in q.options) for q in questions)  # the shared-pass path runs
    assert any(any(len(o) > 1 for o in q.options) for q in questions)  # and the per-option path
    if chat:
        text = tok.decode(questions[0].context)
        assert text.startswith("<s><|system|>\n" + SYSTEM) and text.endswith("<|assistant|>\n")
    else:
        assert questions[0].context[0] == tok.bos_token_id
    batched = option_log_probs(model, questions, tok.pad_token_id, batch_size=4)
    for q, scores in zip(questions, batched):
        expected = [written_out(model, q.context, option) for option in q.options]
        np.testing.assert_allclose(scores, expected, atol=1e-5, rtol=0)
        probabilities = normalised_probabilities(scores)
        reference = np.exp(expected) / np.exp(expected).sum()
        np.testing.assert_allclose(probabilities, reference, atol=1e-5, rtol=0)


def test_a_plain_option_follows_one_space_and_keeps_the_prompts_tokens(tokenizer):
    question = encode_question(tokenizer, PromptStyle(chat=False), "Answer:", ["Yes", "No"], "test")
    joint = tokenizer("Answer: Yes", add_special_tokens=False)["input_ids"]
    assert question.context[1:] + question.options[0] == joint
    assert tokenizer.decode(question.options[0]) == " Yes"


def test_an_option_that_tokenizes_to_nothing_is_named(tokenizer):
    class Dropping:  # a tokenizer whose normaliser drops the option's characters
        bos_token_id, eos_token_id = 0, 2

        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [ord(c) for c in text if c != "\u200b" and c != " "]}

    with pytest.raises(MedbiasInputError, match=r"pain\.yaml, vignette v1, decision opioid: option '\\u200b'"):
        encode_question(
            Dropping(), PromptStyle(chat=False), "Q", ["Yes", "\u200b"], "pain.yaml, vignette v1, decision opioid"
        )


def test_a_template_without_a_system_role_gets_the_system_prompt_in_the_user_turn(tokenizer):
    tok = train_byte_bpe(CORPUS, 600, add_bos_eos=False)
    tok.chat_template = (
        "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('no system role') }}{% endif %}"
        "<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}<|assistant|>\n"
    )
    question = encode_question(tok, PromptStyle(chat=True, system_prompt=SYSTEM), "Q?", ["Yes"], "test")
    assert tok.decode(question.context) == f"<|user|>\n{SYSTEM}\n\nQ?\n<|assistant|>"  # jinja drops the last newline


def test_greedy_answers_read_back(tokenizer):
    model = tiny_causal("gpt2", len(tokenizer))
    questions = [encode_question(tokenizer, PromptStyle(chat=False), p, ["Yes", "No"], "t") for p in PROMPTS]
    texts = greedy_answers(model, tokenizer, questions, tokenizer.pad_token_id, max_new_tokens=3, batch_size=2)
    for q, text in zip(questions, texts):  # left-padded batches give what one prompt alone gives
        ids = torch.tensor([q.context])
        alone = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=3,
            do_sample=False,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
        assert text == tokenizer.decode(alone[0, len(q.context) :], skip_special_tokens=True)
    assert read_answer(" Yes, I would.", ["Yes", "No"]) == "Yes"
    assert read_answer("**no**", ["Yes", "No"]) == "No"
    assert read_answer("high dose", ["low dose", "high dose"]) == "high dose"
    assert read_answer("It depends", ["Yes", "No"]) is None


def test_a_chat_entry_needs_a_chat_template_and_an_entry_without_the_key_uses_one_when_there(tokenizer):
    from medbias.studies.vignettes.scoring import prompt_style

    plain = train_byte_bpe(CORPUS, 600, add_bos_eos=False)
    with pytest.raises(MedbiasInputError, match=r"model 'my_chat' \(folder/x\): the registry says chat: true but its"):
        prompt_style("my_chat", {"source": "folder/x", "chat": True}, plain, SYSTEM)
    assert prompt_style("m", {"source": "s"}, plain, SYSTEM) == PromptStyle(chat=False)
    templated = train_byte_bpe(CORPUS, 600, add_bos_eos=False)
    templated.chat_template = CHAT_TEMPLATE
    assert prompt_style("m", {"source": "s"}, templated, SYSTEM) == PromptStyle(chat=True, system_prompt=SYSTEM)
    assert prompt_style("m", {"source": "s", "chat": False}, templated, SYSTEM) == PromptStyle(chat=False)
