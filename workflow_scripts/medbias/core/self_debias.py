"""Self-Debias (Schick et al. 2021, section 3): a language model's own knowledge of bias, used at scoring
time. For an input x and debiasing prefixes s_1..s_n (texts such as "The following text discriminates
against people because of their gender: "), the model's next-token (causal) or masked-token
distribution p(w | x) is compared with p(w | s_i x); with

    Delta(w) = p(w | x) - max_i p(w | s_i x),   alpha(Delta) = max(epsilon, 1 if Delta >= 0 else exp(lambda * Delta)),

the debiased distribution is p~(w | x) proportional to alpha(Delta(w)) p(w | x): a word that the
prefixes make more likely (the model expects it of a discriminating text) is pushed down, by at most a
factor 1/epsilon. lambda is the decay constant (the paper's 50); epsilon is the floor bias-bench passes
to Schick et al.'s code (``decay_constant=50, epsilon=0.01``: a word loses at most log 100 = 4.6 nats).

The prefix's tokens are inserted before the sentence's own tokens (after the first special token of a
masked model, after BOS of a causal one), so the sentence is tokenized the same with and without it
and every position lines up. bias-bench (Meade et al. 2022) applies it to masked and causal models on
CrowS-Pairs and StereoSet with one prefix per bias type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from medbias.core.errors import MedbiasInputError


@dataclass(frozen=True)
class SelfDebias:
    """The debiasing prefixes (token ids, without special tokens), the prefixes that apply to each
    scored sequence (indices into ``prefixes``), the decay constant lambda and the floor epsilon of the
    scaling factor."""

    prefixes: tuple[tuple[int, ...], ...]
    item_prefixes: tuple[tuple[int, ...], ...]
    decay: float = 50.0
    epsilon: float = 0.01

    def rows_with(self, rows: Sequence[int], k: int) -> list[int]:
        """The positions in ``rows`` (indices of scored sequences) whose prefixes include ``k``."""
        return [r for r, i in enumerate(rows) if k in self.item_prefixes[i]]

    def used_by(self, rows: Sequence[int]) -> list[int]:
        return sorted({k for i in rows for k in self.item_prefixes[i]})

    def for_items(self, owners: Sequence[int]) -> SelfDebias:
        """The same prefixes for derived sequences: sequence j takes the prefixes of item ``owners[j]``
        (e.g. the masked copies of a pair's sentences)."""
        return SelfDebias(self.prefixes, tuple(self.item_prefixes[int(o)] for o in owners), self.decay, self.epsilon)


def self_debias_for(
    prefix_texts: Mapping[str, str], item_labels: Sequence[str], tokenizer, decay: float, epsilon: float = 0.01
) -> SelfDebias:
    """A ``SelfDebias`` in which item i takes the one prefix of its label (e.g. its bias type);
    a label without a prefix is an error naming it."""
    labels = list(dict.fromkeys(item_labels))
    missing = [label for label in labels if label not in prefix_texts]
    if missing:
        raise MedbiasInputError(f"config key 'plm.benchmarks.self_debias.prefixes': no prefix for {missing[0]!r}")
    index = {label: k for k, label in enumerate(labels)}
    prefixes = tuple(tuple(tokenizer(prefix_texts[label], add_special_tokens=False)["input_ids"]) for label in labels)
    return SelfDebias(prefixes, tuple((index[label],) for label in item_labels), decay, epsilon)


def every_prefix(
    prefix_texts: Sequence[str], n_items: int, tokenizer, decay: float, epsilon: float = 0.01
) -> SelfDebias:
    """A ``SelfDebias`` in which every item takes all the prefixes (the max over them, as Schick et al.
    debias with a set of prefixes)."""
    prefixes = tuple(tuple(tokenizer(t, add_special_tokens=False)["input_ids"]) for t in prefix_texts)
    return SelfDebias(prefixes, (tuple(range(len(prefixes))),) * n_items, decay, epsilon)


def debiased_log_probs(plain_logits, prefixed_max_probs, decay: float, epsilon: float = 0.01):
    """log p~ (module docstring) from the plain logits and the largest probability any prefix gives
    each word (same shape, ``[..., vocabulary]``); the scaling factor is floored at ``epsilon``."""
    import torch

    p = torch.softmax(plain_logits, dim=-1)
    alpha = torch.clamp(torch.exp(decay * torch.clamp(p - prefixed_max_probs, max=0.0)), min=epsilon)
    scaled = alpha * p
    return torch.log(scaled) - torch.log(scaled.sum(dim=-1, keepdim=True))


def with_prefix(sequence: Sequence[int], prefix: Sequence[int]) -> list[int]:
    """The sequence with ``prefix`` inserted after its first token (the [CLS] or BOS)."""
    return [sequence[0], *prefix, *sequence[1:]]


def batch_log_probs(logits, rows, sequences, pad_id: int, self_debias: SelfDebias | None, prefixed_logits):
    """Log probabilities of one batch: plain (log softmax of ``logits``), or Self-Debias's when
    ``self_debias`` is given. ``logits``: [rows, vocabulary] at one position per row (masked) or
    [rows, positions, vocabulary] (causal); ``prefixed_logits(ids, attention, prefix length, chosen)``
    gives the same positions of the chosen rows with a prefix inserted (a causal run may give fewer
    positions when the chosen rows are shorter than the batch: those past them are padding)."""
    import torch

    from medbias.core.batching import pad_sequences

    if self_debias is None:
        return torch.log_softmax(logits, dim=-1)
    most = torch.zeros_like(logits)
    for k in self_debias.used_by(rows):
        prefix = self_debias.prefixes[k]
        chosen = self_debias.rows_with(rows, k)
        ids, attention = pad_sequences([with_prefix(sequences[rows[r]], prefix) for r in chosen], pad_id)
        probabilities = torch.softmax(prefixed_logits(ids, attention, len(prefix), chosen), dim=-1)
        if logits.dim() == 2:
            most[chosen] = torch.maximum(most[chosen], probabilities)
        else:
            width = probabilities.shape[1]
            most[chosen, :width] = torch.maximum(most[chosen, :width], probabilities)
    return debiased_log_probs(logits, most, self_debias.decay, self_debias.epsilon)
