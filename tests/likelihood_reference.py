"""The reference the batched pseudo-log-likelihood is tested and benchmarked against, written apart
from the module it checks: one masked copy per forward pass, the full logits of every position,
no batching, no padding, no head shortcut."""

from __future__ import annotations

import numpy as np


def pseudo_log_likelihood_one_at_a_time(model, tokenizer, sentence: str) -> float:
    """PLL(S) = sum over the sentence's non-special tokens s_i of log P(s_i | S with s_i masked)
    (Salazar et al. 2020)."""
    import torch

    ids = tokenizer(sentence)["input_ids"]
    special = set(tokenizer.all_special_ids)
    total = 0.0
    with torch.inference_mode():
        for j, token in enumerate(ids):
            if token in special:
                continue
            copy = list(ids)
            copy[j] = tokenizer.mask_token_id
            logits = model(input_ids=torch.tensor([copy], device=next(model.parameters()).device)).logits[0, j]
            total += float(torch.log_softmax(logits.float(), dim=-1)[token])
    return total


SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


def tiny_masked_model(architecture: str, vocab_size: int, seed: int = 0, positions: int = 64):
    """A tiny random masked LM of each architecture the head shortcut knows (and one it does not)."""
    import torch
    import transformers as hf

    torch.manual_seed(seed)
    small = {"vocab_size": vocab_size, "max_position_embeddings": positions}
    configs = {
        "bert": lambda: hf.BertForMaskedLM(hf.BertConfig(**small, **SMALL)),
        "roberta": lambda: hf.RobertaForMaskedLM(hf.RobertaConfig(**small, **SMALL, pad_token_id=0)),
        "albert": lambda: hf.AlbertForMaskedLM(hf.AlbertConfig(**small, **SMALL, embedding_size=16)),
        "distilbert": lambda: hf.DistilBertForMaskedLM(
            hf.DistilBertConfig(**small, dim=32, n_layers=2, n_heads=2, hidden_dim=64)
        ),
        # a generator whose hidden size differs from the embedding size: its head needs the dense layer
        "electra": lambda: hf.ElectraForMaskedLM(hf.ElectraConfig(**small, embedding_size=16, **SMALL)),
        "electra_same_sizes": lambda: hf.ElectraForMaskedLM(hf.ElectraConfig(**small, embedding_size=32, **SMALL)),
        "deberta_v2": lambda: hf.DebertaV2ForMaskedLM(hf.DebertaV2Config(**small, **SMALL)),
    }
    return configs[architecture]().eval()


# --- the published benchmark scripts, step by step --------------------------------------------------


def crows_pairs_one_pair(model, tokenizer, sent1: str, sent2: str) -> tuple[float, float]:
    """CrowS-Pairs' metric.py for one pair of a masked LM: token ids with special tokens, difflib's
    equal opcodes on the ids as strings, every matched position but the first and the last masked
    in turn, log softmax of the full output at it, summed; both scores rounded to 3 decimals."""
    import difflib

    import torch

    ids1, ids2 = tokenizer.encode(sent1), tokenizer.encode(sent2)
    matcher = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
    template1, template2 = [], []
    for op in matcher.get_opcodes():
        if op[0] == "equal":
            template1 += list(range(op[1], op[2]))
            template2 += list(range(op[3], op[4]))
    score1 = score2 = 0.0
    with torch.inference_mode():
        for i in range(1, len(template1) - 1):
            for ids, at, which in ((ids1, template1[i], 1), (ids2, template2[i], 2)):
                masked = list(ids)
                masked[at] = tokenizer.mask_token_id
                logits = model(torch.tensor([masked])).logits[0, at]
                value = float(torch.log_softmax(logits, dim=-1)[ids[at]])
                if which == 1:
                    score1 += value
                else:
                    score2 += value
    return round(score1, 3), round(score2, 3)


def crows_pairs_bias_bench_masked_one_pair(model, tokenizer, sent1: str, sent2: str) -> tuple[float, float] | None:
    """bias-bench's crows.py ``_likelihood_score`` for one pair of a masked LM: token ids with special
    tokens, difflib's opcodes other than ``equal`` on the ids as strings, each of those positions masked
    alone, log softmax of the full output at it, the MEAN over the positions, rounded to 3 decimals;
    None when either sentence has no modified position (the script skips the pair)."""
    import difflib

    import torch

    ids1, ids2 = tokenizer.encode(sent1), tokenizer.encode(sent2)
    matcher = difflib.SequenceMatcher(None, [str(x) for x in ids1], [str(x) for x in ids2])
    template1, template2 = [], []
    for op in matcher.get_opcodes():
        if op[0] != "equal":
            template1 += list(range(op[1], op[2]))
            template2 += list(range(op[3], op[4]))
    if not template1 or not template2:
        return None

    def average(ids, template):
        values = []
        with torch.inference_mode():
            for position in template:
                masked = list(ids)
                masked[position] = tokenizer.mask_token_id
                logits = model(torch.tensor([masked])).logits[0, position]
                values.append(float(torch.log_softmax(logits, dim=0)[ids[position]]))
        return round(float(np.mean(values)), 3)

    return average(ids1, template1), average(ids2, template2)


def bias_bench_causal_score(model, tokenizer, sentence: str) -> float:
    """bias-bench's ``_joint_log_probability`` (CrowS-Pairs) and ``_likelihood_score_generative``
    (StereoSet) for one sentence of a causal LM: the first token's probability from a forward pass of
    the start token alone, every later token's from a forward pass of the sentence's tokens (no start
    token), 2 ** (the mean of log2 p)."""
    import torch

    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    tokens = tokenizer.encode(sentence, add_special_tokens=False)
    with torch.inference_mode():
        initial = torch.softmax(model(torch.tensor([[start]])).logits, dim=-1)
        output = torch.softmax(model(torch.tensor([tokens])).logits[0], dim=-1)
    probabilities = [float(initial[0, 0, tokens[0]])]
    for idx in range(1, len(tokens)):
        probabilities.append(float(output[idx - 1, tokens[idx]]))
    score = np.sum([np.log2(p) for p in probabilities]) / len(probabilities)
    return float(np.power(2, score))


def causal_joint_log_probability(model, tokenizer, sentence: str) -> float:
    """lm-evaluation-harness's log-likelihood of a sentence as the continuation of an empty context:
    log P(first token | BOS) + sum of log P(token | BOS and the ones before), one sentence per forward
    pass."""
    import torch

    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = [bos, *tokenizer.encode(sentence, add_special_tokens=False)]
    with torch.inference_mode():
        log_probs = torch.log_softmax(model(torch.tensor([ids])).logits[0], dim=-1)
    return float(sum(log_probs[t - 1, ids[t]] for t in range(1, len(ids))))


def stereoset_masked_one_completion(model, tokenizer, context: str, word: str) -> float:
    """StereoSet's dataloader and discriminative evaluator for one completion: for piece i of the
    word, the context with BLANK replaced by the decoded earlier pieces and one mask, the softmax
    probability of piece i at the mask; the mean over the pieces."""
    import torch

    pieces = tokenizer.encode(word, add_special_tokens=False)
    probabilities = []
    with torch.inference_mode():
        for i, piece in enumerate(pieces):
            text = context.replace("BLANK", f"{tokenizer.decode(pieces[:i])}{tokenizer.mask_token}")
            ids = tokenizer.encode(text)
            at = ids.index(tokenizer.mask_token_id)
            probabilities.append(float(torch.softmax(model(torch.tensor([ids])).logits[0, at], dim=-1)[piece]))
    return sum(probabilities) / len(probabilities)


def stereoset_causal_one_completion(model, tokenizer, before: str, word: str, after: str) -> float:
    """The mean probability of the word's tokens given BOS and the text before it, one sentence per
    forward pass (the word's tokens are those whose characters overlap it)."""
    import torch

    text = before + word + after
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = [bos, *encoded["input_ids"]]
    with torch.inference_mode():
        probabilities = torch.softmax(model(torch.tensor([ids])).logits[0], dim=-1)
    start, end = len(before), len(before) + len(word)
    chosen = [
        float(probabilities[t, ids[t + 1]])
        for t, (a, b) in enumerate(encoded["offset_mapping"])
        if b > start and a < end
    ]
    return sum(chosen) / len(chosen)


def self_debiased_distribution(plain_logits, prefixed_logits, decay: float, epsilon: float = 0.01):
    """Schick et al. 2021's rule for one position as bias-bench runs it, written out: p, the prefixes'
    largest probability q, alpha = exp(decay * (p - q)) where p < q, else 1, floored at epsilon;
    p~ = alpha p / sum(alpha p)."""
    import torch

    p = torch.softmax(plain_logits.double(), dim=-1)
    q = torch.stack([torch.softmax(lg.double(), dim=-1) for lg in prefixed_logits]).max(dim=0).values
    alpha = torch.where(p < q, torch.exp(decay * (p - q)), torch.ones_like(p))
    alpha = torch.maximum(alpha, torch.full_like(alpha, epsilon))
    scaled = alpha * p
    return scaled / scaled.sum()


def masked_self_debiased_log_prob(model, ids: list[int], position: int, target: int, prefixes, decay: float) -> float:
    """Self-Debias at one mask, one forward pass per input: the plain sequence and each prefix inserted
    after its first token."""
    import torch

    with torch.inference_mode():
        plain = model(torch.tensor([ids])).logits[0, position]
        prefixed = [
            model(torch.tensor([[ids[0], *prefix, *ids[1:]]])).logits[0, position + len(prefix)] for prefix in prefixes
        ]
    return float(torch.log(self_debiased_distribution(plain, prefixed, decay)[target]))


def causal_self_debiased_log_probability(model, ids: list[int], prefixes, decay: float) -> float:
    """The joint Self-Debias log probability of a causal sentence (``ids`` with BOS first), one
    position at a time from full forward passes."""
    import torch

    total = 0.0
    with torch.inference_mode():
        plain = model(torch.tensor([ids])).logits[0]
        prefixed = [model(torch.tensor([[ids[0], *prefix, *ids[1:]]])).logits[0] for prefix in prefixes]
        for t in range(1, len(ids)):
            shifted = [logits[t - 1 + len(prefix)] for logits, prefix in zip(prefixed, prefixes)]
            total += float(torch.log(self_debiased_distribution(plain[t - 1], shifted, decay)[ids[t]]))
    return total
