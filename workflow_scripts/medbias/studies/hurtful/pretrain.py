"""Continued pretraining of a clinical BERT (Zhang et al. 2020, sections 3.3 and 4.4).

- Sentence pairs for next-sentence prediction: for each packed sequence that has a successor in its
  note, the pair is (sequence, successor) with probability 1/2, else (sequence, a random sequence
  of another note); each pair carries its note's protected attributes.
- Whole-word masking with the original BERT rule, written here because transformers 5.x dropped
  its collator's 80/10/10 split: 15% of the words (not pieces) are chosen; every piece of a chosen
  word is then replaced by [MASK] (80%), a random token (10%) or kept (10%).
- Adversarial debiasing: two discriminators (one per segment of the pair), each three fully
  connected ReLU layers on the final-layer [CLS] vector, behind a gradient-reversal layer with weight
  lambda; loss = MLM + NSP + both discriminators' cross-entropies on logits. (The reference code read
  [CLS] from a second forward pass under no_grad without an attention mask, so no adversarial
  gradient reached BERT, and put a Softmax before CrossEntropyLoss; neither is done here, and a test
  proves the reversed gradient reaches the encoder.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from medbias.core.batching import length_chunks, pad_sequences
from medbias.core.lm_training import bert_corruption_choice, linear_warmup_decay
from medbias.core.models import job_device
from medbias.studies.hurtful.demographics import ATTRIBUTE_CLASSES


@dataclass(frozen=True)
class SentencePair:
    first: int  # index into the sequence table
    second: int
    is_next: int  # 1 when ``second`` follows ``first`` in the same note
    note: int


def make_nsp_pairs(note_ids: Sequence[int], rng: np.random.Generator) -> list[SentencePair]:
    """NSP pairs over sequences listed in note order (``note_ids[i]`` is sequence i's note)."""
    note_ids = np.asarray(note_ids)
    pairs = []
    n = len(note_ids)
    for i in range(n - 1):
        if note_ids[i + 1] != note_ids[i]:
            continue  # the last sequence of a note has no successor
        if rng.random() < 0.5:
            pairs.append(SentencePair(i, i + 1, 1, int(note_ids[i])))
        else:
            others = np.flatnonzero(note_ids != note_ids[i])
            if len(others) == 0:
                pairs.append(SentencePair(i, i + 1, 1, int(note_ids[i])))
                continue
            pairs.append(SentencePair(i, int(rng.choice(others)), 0, int(note_ids[i])))
    return pairs


def whole_word_mask(
    input_ids: torch.Tensor,
    word_ids: Sequence[int | None],
    mask_token_id: int,
    vocab_size: int,
    generator: torch.Generator,
    probability: float = 0.15,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mask one sequence by whole words (module docstring). ``word_ids[i]`` is the word of piece i
    (None for special tokens, which are never masked). Returns (masked ids, labels with -100 where
    nothing is predicted). At least one word is masked when the sequence has any."""
    words = sorted({w for w in word_ids if w is not None})
    labels = torch.full_like(input_ids, -100)
    masked = input_ids.clone()
    if not words:
        return masked, labels
    n_chosen = max(1, round(probability * len(words)))
    order = torch.randperm(len(words), generator=generator)[:n_chosen]
    chosen = {words[i] for i in order.tolist()}
    for word in chosen:
        positions = [i for i, w in enumerate(word_ids) if w == word]
        to_mask, to_random = bert_corruption_choice(torch.rand(1, generator=generator).item())
        for i in positions:
            labels[i] = input_ids[i]
            if to_mask:
                masked[i] = mask_token_id
            elif to_random:
                masked[i] = int(torch.randint(vocab_size, (1,), generator=generator))
    return masked, labels


class _ReverseGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.weight = weight
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return -ctx.weight * grad, None


def reverse_gradient(x: torch.Tensor, weight: float) -> torch.Tensor:
    """Identity in the forward pass; multiplies the gradient by -weight in the backward pass."""
    return _ReverseGradient.apply(x, weight)


class Discriminator(nn.Module):
    """Three fully connected ReLU layers predicting a protected attribute's class from [CLS].

    The input is standardised first (batch norm without learned scale): a BERT's final-layer [CLS]
    varies little across inputs, and without this the discriminator learns little beyond the class
    prior (docs/demo-world.md).

    Evaluation standardises with the evaluated set's own mean and variance (``population_logits``),
    not with the running averages: while the encoder trains, [CLS] drifts by more than its spread
    within a few steps, so running averages lag behind it.
    """

    def __init__(self, hidden: int, n_classes: int, width: int | None = None):
        super().__init__()
        width = width or hidden
        self.layers = nn.Sequential(
            nn.BatchNorm1d(hidden, affine=False),
            nn.Linear(hidden, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
            nn.Linear(width, n_classes),
        )

    def forward(self, cls: torch.Tensor) -> torch.Tensor:
        return self.layers(cls)  # logits: CrossEntropyLoss applies the softmax

    def population_logits(self, cls: torch.Tensor) -> torch.Tensor:
        """Logits of ``cls`` standardised by its own mean and variance (the running statistics are
        neither used nor updated)."""
        standardised = nn.functional.batch_norm(cls, None, None, training=True, eps=self.layers[0].eps)
        return self.layers[1:](standardised)


class AdversarialPretrainer(nn.Module):
    """BERT for pretraining (MLM + NSP) plus two discriminators behind gradient reversal.

    ``n_classes`` = 0 gives the baseline (no adversary). The [CLS] vector is the final layer's, from
    the same forward pass (with its attention mask) that computes the MLM and NSP losses.

    The loss is ``BertForPreTraining``'s (MLM cross-entropy over the masked tokens plus NSP
    cross-entropy), but the MLM head is applied to the masked positions only: the other positions
    carry label -100 and add nothing to the loss or its gradient, and scoring them against the whole
    vocabulary was half of every step (0.58 s a step with them, 0.29 s without: batch 128 of the
    demo's tiny BERT on 2 CPU threads; the two losses agree to 1e-6).
    """

    def __init__(self, bert_for_pretraining, n_classes: int = 0, weight: float = 1.0, length_chunks: int = 1):
        super().__init__()
        self.model = bert_for_pretraining
        self.weight = weight
        self.length_chunks = length_chunks
        hidden = bert_for_pretraining.config.hidden_size
        self.discriminators = nn.ModuleList([Discriminator(hidden, n_classes) for _ in range(2)] if n_classes else [])

    def forward(
        self,
        input_ids,
        attention_mask,
        token_type_ids,
        mlm_labels,
        nsp_labels,
        attribute=None,
        second_attribute=None,
        reversal_on=None,
    ):
        """``reversal_on`` = 0 (a scalar tensor) trains the discriminators without passing their
        reversed gradient to the encoder (the adversary's warm-up); 1 or None passes it."""
        masked_states, masked_labels, pooled, first = self.encode(input_ids, attention_mask, token_type_ids, mlm_labels)
        heads = self.model.cls
        loss = nn.functional.cross_entropy(
            heads.predictions(masked_states), masked_labels
        ) + nn.functional.cross_entropy(heads.seq_relationship(pooled), nsp_labels)
        losses = {"mlm_nsp": loss.detach()}
        if self.discriminators and attribute is not None:
            weight = self.weight if reversal_on is None else self.weight * float(reversal_on)
            cls = reverse_gradient(first, weight)
            targets = (attribute, attribute if second_attribute is None else second_attribute)
            for k, (disc, target) in enumerate(zip(self.discriminators, targets)):
                adv = nn.functional.cross_entropy(disc(cls), target)
                loss = loss + adv
                losses[f"adversary_{k}"] = adv.detach()
        return loss, losses

    def encode(self, input_ids, attention_mask, token_type_ids, mlm_labels):
        """The encoder's final states at the masked positions with their labels, and the pooled and
        [CLS] states of every row (in the batch's row order).

        With ``length_chunks`` > 1 the encoder runs over runs of rows of similar length, each
        trimmed to its longest row (``medbias.core.batching.length_chunks``); the heads and losses
        still see the whole batch, so the loss is the whole batch's (the masked positions' order
        differs, which a mean does not see) and the discriminators' batch norm standardises over
        every row. Padding changes no row's states: the attention mask keeps it out.
        """
        whole = [(slice(None), attention_mask.shape[1])]  # every row, as the batch is
        parts = whole if self.length_chunks <= 1 else length_chunks(attention_mask, self.length_chunks)
        states, labels, pooled, first, rows = [], [], [], [], []
        for part, width in parts:
            encoded = self.model.bert(
                input_ids=input_ids[part, :width],
                attention_mask=attention_mask[part, :width],
                token_type_ids=token_type_ids[part, :width],
            )
            final = encoded.last_hidden_state
            part_labels = mlm_labels[part, :width]
            masked = part_labels != -100
            states.append(final[masked])
            labels.append(part_labels[masked])
            pooled.append(encoded.pooler_output)
            first.append(final[:, 0])
            rows.append(part)
        if len(parts) == 1:  # already in the batch's row order
            return states[0], labels[0], pooled[0], first[0]
        back = torch.argsort(torch.cat(rows))  # the batch's row order
        return torch.cat(states), torch.cat(labels), torch.cat(pooled)[back], torch.cat(first)[back]


def shard_batch(batch: dict[str, torch.Tensor], rank: int, world_size: int) -> dict[str, torch.Tensor]:
    """This process's share of a step's batch under data parallelism: contiguous, equal blocks of
    the rows (``torch.tensor_split``); 0-dimensional entries (flags) are shared by every process.
    With one process the batch is returned as it is."""
    if world_size == 1:
        return batch
    rows = {len(v) for v in batch.values() if v.dim() > 0}
    if len(rows) != 1 or next(iter(rows)) < world_size:
        raise ValueError(f"a batch of {sorted(rows)} rows cannot be shared by {world_size} processes")
    return {k: (torch.tensor_split(v, world_size)[rank] if v.dim() > 0 else v) for k, v in batch.items()}


def train_steps(
    model: nn.Module,
    batch_at,
    total_steps: int,
    lr: float,
    warmup: int,
    checkpoint_dir: str,
    checkpoint_every: int,
    stop_after: int | None = None,
    log=None,
    evaluate=None,
    eval_every: int = 0,
    record: list[dict] | None = None,
) -> int:
    """Train ``model`` for ``total_steps`` under accelerate (CPU, one GPU, or one process per GPU),
    resuming from the last checkpoint in ``checkpoint_dir`` when there is one.

    ``batch_at(step)`` must return the batch of that step deterministically (data order and masking
    seeded by the step), so a resumed run sees exactly the batches the uninterrupted run would have
    seen and reaches the same weights. Under data parallelism (several processes, started by
    ``medbias.pipeline.cluster.run_in_processes`` or a launcher) each process takes its equal block of that
    batch and the gradients are averaged, so for a loss that is a mean over rows the update equals
    the one-process update on the whole batch; the losses logged and recorded are the processes'
    mean. Checkpoints (model, optimiser, scheduler, step) are written every ``checkpoint_every``
    steps. ``stop_after`` ends early (used to simulate a killed job). ``evaluate(model)`` (a dict of
    numbers) runs every ``eval_every`` steps and at the end; its rows, with the step and training
    losses, are appended to ``record``, which is kept in the checkpoint so a resumed run's record
    equals the uninterrupted run's. Returns the step reached.
    """
    import json
    from pathlib import Path

    from accelerate import Accelerator

    cuda = job_device() == "cuda"
    # the schedule counts optimiser steps: accelerate's default would step it once per process
    accelerator = Accelerator(
        cpu=not cuda,
        mixed_precision="bf16" if cuda and torch.cuda.is_bf16_supported() else "no",
        step_scheduler_with_optimizer=False,
    )
    rank, world_size = accelerator.process_index, accelerator.num_processes
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: linear_warmup_decay(s, warmup, total_steps))
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    directory = Path(checkpoint_dir)
    state = directory / "state.json"
    step = 0
    record = record if record is not None else []
    if state.exists():
        saved = json.loads(state.read_text())
        step = saved["step"]
        record[:] = saved.get("record", [])
        accelerator.load_state(str(directory / "checkpoint"))
        if log:
            log.info("resumed from step %d", step)
    if log and world_size > 1:
        log.info("data parallel: %d processes, each takes 1/%d of every batch", world_size, world_size)

    def mean_over_processes(value) -> float:
        value = value.detach().float().reshape(1)
        return float(accelerator.reduce(value, reduction="mean")) if world_size > 1 else float(value)

    model.train()
    while step < total_steps and (stop_after is None or step < stop_after):
        batch = {k: v.to(accelerator.device) for k, v in shard_batch(batch_at(step), rank, world_size).items()}
        loss, losses = model(**batch)
        accelerator.backward(loss)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        step += 1
        logging_step = step % 50 == 0 or step == total_steps
        evaluation_step = evaluate is not None and ((eval_every and step % eval_every == 0) or step == total_steps)
        if logging_step or evaluation_step:
            mean_loss = mean_over_processes(loss)
            mean_losses = {k: mean_over_processes(torch.as_tensor(v)) for k, v in losses.items()}
        if log and logging_step:
            log.info(
                "step %d/%d loss %.4f %s",
                step,
                total_steps,
                mean_loss,
                {k: round(v, 4) for k, v in mean_losses.items()},
            )
        if evaluation_step:
            model.eval()
            row = {"step": step, "loss": mean_loss, **mean_losses}
            row.update(evaluate(accelerator.unwrap_model(model)))
            record.append(row)
            model.train()
            if log:
                log.info("evaluation at step %d: %s", step, {k: round(v, 4) for k, v in row.items()})
        if step % checkpoint_every == 0 or step == total_steps:
            accelerator.save_state(str(directory / "checkpoint"))
            if accelerator.is_main_process:
                state.write_text(json.dumps({"step": step, "record": record}))
            accelerator.wait_for_everyone()
    return step


def attribute_codes(values, attribute: str) -> np.ndarray:
    """Class index of each value in ``ATTRIBUTE_CLASSES[attribute]``; a value outside the list (or
    missing) falls into the last class (Missing, UNKNOWN, Self Pay), never out of range."""
    classes = ATTRIBUTE_CLASSES[attribute]
    index = {c: k for k, c in enumerate(classes)}
    return np.array([index.get(v, len(classes) - 1) for v in values], dtype=int)


@dataclass
class PretrainingData:
    """Tokenised sentence pairs with their NSP labels and the protected attributes of both segments."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]]
    word_keys: list[list[int | None]]  # one id per piece for whole-word masking (None: special token)
    nsp_labels: list[int]
    attributes: dict[str, tuple[list[int], list[int]]]  # attribute -> (first segment's, second segment's)
    excluded_subjects: int = 0

    def sample(self, n: int, seed: int) -> "PretrainingData":
        """``n`` pairs drawn without replacement (all pairs when there are fewer), in a seeded order."""
        rows = np.random.default_rng(seed).permutation(len(self.input_ids))[:n].tolist()

        def take(values):
            return [values[i] for i in rows]

        return PretrainingData(
            take(self.input_ids),
            take(self.token_type_ids),
            take(self.word_keys),
            take(self.nsp_labels),
            {k: (take(a), take(b)) for k, (a, b) in self.attributes.items()},
            self.excluded_subjects,
        )


def _padded(data: PretrainingData, rows, pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Input ids, token types and attention mask of pairs ``rows``, right-padded to the longest."""
    ids, attention = pad_sequences([data.input_ids[i] for i in rows], pad_id)
    types, _ = pad_sequences([data.token_type_ids[i] for i in rows], 0)
    return ids, types, attention


def build_pretraining_data(
    sequences,  # DataFrame: ROW_ID, SUBJECT_ID, HADM_ID, seq_index, text (note order)
    demographics,  # DataFrame: HADM_ID, gender, language, ethnicity, insurance
    tokenizer,
    max_length: int,
    seed: int,
    exclude_subjects: set[int] | frozenset[int] = frozenset(),
) -> PretrainingData:
    """NSP pairs over all notes (the downstream validation and test subjects left out when given),
    tokenised as [CLS] A [SEP] B [SEP] truncated to ``max_length``, with word ids for masking."""
    frame = sequences.sort_values(["ROW_ID", "seq_index"]).reset_index(drop=True)
    excluded = frame["SUBJECT_ID"].isin(exclude_subjects)
    n_excluded = int(frame.loc[excluded, "SUBJECT_ID"].nunique())
    frame = frame[~excluded].reset_index(drop=True)
    pairs = make_nsp_pairs(frame["ROW_ID"].to_numpy(), np.random.default_rng(seed))
    texts = frame["text"].tolist()
    encoded = tokenizer(
        [texts[p.first] for p in pairs],
        [texts[p.second] for p in pairs],
        truncation="longest_first",
        max_length=max_length,
    )
    word_keys, token_types = [], []
    for i in range(len(pairs)):
        seq_ids, word_ids = encoded.sequence_ids(i), encoded.word_ids(i)
        word_keys.append([None if s is None else (s * 1_000_000 + w) for s, w in zip(seq_ids, word_ids)])
        first_b = seq_ids.index(1) if 1 in seq_ids else len(seq_ids)  # segment B and its [SEP] are type 1
        token_types.append([0] * first_b + [1] * (len(seq_ids) - first_b))
    demo = demographics.set_index("HADM_ID")
    hadm = frame["HADM_ID"].to_numpy()
    attributes = {}
    for name in ATTRIBUTE_CLASSES:
        values = attribute_codes(demo[name].reindex(hadm), name)
        attributes[name] = ([int(values[p.first]) for p in pairs], [int(values[p.second]) for p in pairs])
    return PretrainingData(
        encoded["input_ids"], token_types, word_keys, [1 - p.is_next for p in pairs], attributes, n_excluded
    )


def batch_maker(
    data: PretrainingData, tokenizer, batch_size: int, seed: int, attribute: str | None, adversary_warmup_steps: int = 0
):
    """``batch_at(step)``: the step's examples (a seeded permutation per epoch), masked with a
    generator seeded by (seed, step), padded to the longest; deterministic for resuming. With an
    attribute, the first ``adversary_warmup_steps`` batches switch the gradient reversal off (the
    discriminators learn the attribute before the encoder is pushed to hide it).

    NSP labels follow transformers' convention: 0 = B follows A, 1 = B is random.
    """
    n = len(data.input_ids)
    per_epoch = max(1, n // batch_size)

    def batch_at(step: int) -> dict[str, torch.Tensor]:
        epoch, k = divmod(step, per_epoch)
        order = np.random.default_rng([seed, epoch]).permutation(n)[k * batch_size : (k + 1) * batch_size]
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        ids, types, attention = _padded(data, order, tokenizer.pad_token_id)
        labels = torch.full_like(ids, -100)
        for row, i in enumerate(order):
            m = len(data.input_ids[i])
            ids[row, :m], labels[row, :m] = whole_word_mask(
                ids[row, :m], data.word_keys[i], tokenizer.mask_token_id, len(tokenizer), generator
            )
        batch = {
            "input_ids": ids,
            "attention_mask": attention,
            "token_type_ids": types,
            "mlm_labels": labels,
            "nsp_labels": torch.tensor([data.nsp_labels[i] for i in order]),
        }
        if attribute is not None:
            first, second = data.attributes[attribute]
            batch["attribute"] = torch.tensor([first[i] for i in order])
            batch["second_attribute"] = torch.tensor([second[i] for i in order])
            batch["reversal_on"] = torch.tensor(0.0 if step < adversary_warmup_steps else 1.0)
        return batch

    return batch_at, per_epoch


def adversary_accuracy(pretrainer: AdversarialPretrainer, batches) -> dict[str, float]:
    """Held-out accuracy of each discriminator (segment A's and segment B's attribute) from the
    final-layer [CLS] of unmasked pairs, with the majority-class rate of each target as reference.
    The [CLS] vectors of all pairs are standardised together (``Discriminator.population_logits``)."""
    device = next(pretrainer.parameters()).device
    hidden, targets = [], {"attribute": [], "second_attribute": []}
    with torch.inference_mode():
        for batch in batches:
            hidden.append(
                pretrainer.model.bert(
                    input_ids=batch["input_ids"].to(device),
                    attention_mask=batch["attention_mask"].to(device),
                    token_type_ids=batch["token_type_ids"].to(device),
                ).last_hidden_state[:, 0]
            )
            for key in targets:
                targets[key].append(batch[key].to(device))
        cls = torch.cat(hidden)
        result = {}
        for k, (disc, key) in enumerate(zip(pretrainer.discriminators, targets)):
            target = torch.cat(targets[key])
            predicted = disc.population_logits(cls).argmax(-1)
            result[f"heldout_accuracy_{k}"] = int((predicted == target).sum()) / len(target)
            result[f"heldout_majority_{k}"] = int(torch.bincount(target).max()) / len(target)
    return result


def unmasked_batches(
    data: PretrainingData, tokenizer, batch_size: int, attribute: str
) -> list[dict[str, torch.Tensor]]:
    """All pairs of ``data`` in order, padded, without masking: the held-out set of the adversary."""
    batches = []
    for start in range(0, len(data.input_ids), batch_size):
        rows = range(start, min(start + batch_size, len(data.input_ids)))
        ids, types, attention = _padded(data, rows, tokenizer.pad_token_id)
        first, second = data.attributes[attribute]
        batches.append(
            {
                "input_ids": ids,
                "token_type_ids": types,
                "attention_mask": attention,
                "attribute": torch.tensor([first[i] for i in rows]),
                "second_attribute": torch.tensor([second[i] for i in rows]),
            }
        )
    return batches
