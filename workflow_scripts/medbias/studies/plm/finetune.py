"""Fine-tuning after debiasing (Xie et al. 2024, section 6, Table 6): GLUE, PubMedQA, HoC, BC5CDR.

Every model kind is fine-tuned the same way: its sentence encoder (``medbias.core.encoders.sentence_encoder``:
the base model, or a seq2seq model's encoder), with a debiasing projection still attached when there
is one, and a linear head, all weights unfrozen:

- sentence and sentence-pair classification (GLUE, PubMedQA question + context): softmax head on
  the attention-mask-aware mean of the last hidden states;
- multi-label classification (HoC): sigmoid head on the same mean, labels where p >= 0.5;
- BIO tagging (BC5CDR): softmax head on the first word piece of every word.

Metrics: accuracy (GLUE tasks, PubMedQA), micro-F1 over (sentence, label) pairs (HoC), exact-span
entity F1 (BC5CDR, conlleval's rule: a span counts when its type and both boundaries match).

File formats, as the datasets are distributed (the demo writes the same):
- GLUE: ``<glue_dir>/<TASK>/train.tsv`` and ``dev.tsv`` with a header; single-sentence tasks have
  ``sentence`` and ``label``, pair tasks ``sentence1``, ``sentence2`` and ``label`` (the dev split is
  the test split, as GLUE's test labels are not public);
- PubMedQA: ``train_set.json``, ``dev_set.json``, ``test_set.json``: ``{id: {QUESTION, CONTEXTS,
  final_decision}}`` (the PubMedQA repository's PQA-L split files);
- HoC: ``train.tsv``, ``dev.tsv``, ``test.tsv`` with ``sentence`` and ``labels`` (hallmark names
  joined by ``,``; empty for none);
- BC5CDR: ``train.tsv``, ``devel.tsv``, ``test.tsv``: one ``token<TAB>tag`` per line, a blank line
  between sentences (BIO tags, e.g. B-Chemical, I-Disease, O).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from medbias.core.errors import MedbiasInputError


@dataclass
class Split:
    """One split of a task: texts (or text pairs, or word lists for tagging) and labels."""

    texts: list
    labels: list
    pairs: list | None = None


@dataclass
class Task:
    name: str
    kind: str  # single | multilabel | tagging
    label_names: list[str]
    train: Split
    test: Split
    extra: dict = field(default_factory=dict)


def _need(path: Path, what: str) -> Path:
    if not path.is_file():
        raise MedbiasInputError(f"{what}: file {path} does not exist")
    return path


def _tsv(path: Path, columns: Sequence[str], what: str) -> pd.DataFrame:
    frame = pd.read_csv(_need(path, what), sep="\t", dtype=str, keep_default_na=False, quoting=3)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MedbiasInputError(f"{path}: no column {missing[0]!r} (has: {', '.join(frame.columns)})")
    return frame


def read_glue_task(folder: str | Path, task: str) -> Task:
    """A GLUE task folder (train.tsv, dev.tsv): single-sentence when it has ``sentence``, else pairs."""
    base = Path(folder) / task
    header = _tsv(base / "train.tsv", ["label"], f"GLUE task {task}").columns
    pair = "sentence" not in header
    columns = ["sentence1", "sentence2", "label"] if pair else ["sentence", "label"]
    train, dev = (_tsv(base / f, columns, f"GLUE task {task}") for f in ("train.tsv", "dev.tsv"))
    names = sorted(set(train["label"]) | set(dev["label"]))

    def split(frame):
        labels = [names.index(v) for v in frame["label"]]
        if pair:
            return Split(frame["sentence1"].tolist(), labels, frame["sentence2"].tolist())
        return Split(frame["sentence"].tolist(), labels)

    return Task(f"glue_{task}", "single", names, split(train), split(dev))


PUBMEDQA_LABELS = ["yes", "no", "maybe"]


def read_pubmedqa(folder: str | Path) -> Task:
    """PubMedQA PQA-L split files: question paired with its contexts joined; label yes/no/maybe."""

    def split(name):
        path = _need(Path(folder) / name, "PubMedQA")
        items = json.loads(path.read_text(encoding="utf-8"))
        texts, pairs, labels = [], [], []
        for key, item in items.items():
            for field_name in ("QUESTION", "CONTEXTS", "final_decision"):
                if field_name not in item:
                    raise MedbiasInputError(f"{path}: item {key} has no {field_name!r}")
            if item["final_decision"] not in PUBMEDQA_LABELS:
                raise MedbiasInputError(
                    f"{path}: item {key} has final_decision {item['final_decision']!r} (yes, no, maybe)"
                )
            texts.append(item["QUESTION"])
            pairs.append(" ".join(item["CONTEXTS"]))
            labels.append(PUBMEDQA_LABELS.index(item["final_decision"]))
        return Split(texts, labels, pairs)

    return Task("pubmedqa", "single", PUBMEDQA_LABELS, split("train_set.json"), split("test_set.json"))


def read_hoc(folder: str | Path) -> Task:
    """HoC sentences with their hallmark labels (multi-label, ``,``-joined names)."""
    frames = {f: _tsv(Path(folder) / f"{f}.tsv", ["sentence", "labels"], "HoC") for f in ("train", "test")}
    names = sorted({n for frame in frames.values() for v in frame["labels"] for n in v.split(",") if n})

    def split(frame):
        labels = [[names.index(n) for n in v.split(",") if n] for v in frame["labels"]]
        return Split(frame["sentence"].tolist(), labels)

    return Task("hoc", "multilabel", names, split(frames["train"]), split(frames["test"]))


def read_conll(path: Path) -> Split:
    """Sentences of ``token<TAB>tag`` lines separated by blank lines."""
    words, tags, sentence, sentence_tags = [], [], [], []
    for number, line in enumerate(_need(path, "BC5CDR").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            if sentence:
                words.append(sentence)
                tags.append(sentence_tags)
            sentence, sentence_tags = [], []
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise MedbiasInputError(f"{path}, line {number}: expected 'token<TAB>tag', got {line!r}")
        sentence.append(parts[0])
        sentence_tags.append(parts[1])
    if sentence:
        words.append(sentence)
        tags.append(sentence_tags)
    return Split(words, tags)


def read_bc5cdr(folder: str | Path) -> Task:
    train, test = read_conll(Path(folder) / "train.tsv"), read_conll(Path(folder) / "test.tsv")
    names = sorted({t for tags in train.labels + test.labels for t in tags})
    bad = [t for t in names if t != "O" and not t.startswith(("B-", "I-"))]
    if bad:
        raise MedbiasInputError(f"{folder}: tag {bad[0]!r} is not BIO (O, B-<type>, I-<type>)")
    to_ids = lambda split: Split(split.texts, [[names.index(t) for t in tags] for tags in split.labels])  # noqa: E731
    return Task("bc5cdr", "tagging", names, to_ids(train), to_ids(test))


# --- metrics ---------------------------------------------------------------------------------------


def accuracy(gold: Sequence[int], predicted: Sequence[int]) -> float:
    return float(np.mean(np.asarray(gold) == np.asarray(predicted))) if len(gold) else float("nan")


def micro_f1(gold: Sequence[Sequence[int]], predicted: Sequence[Sequence[int]]) -> float:
    """Micro-F1 over (example, label) pairs of a multi-label task."""
    true = {(i, label) for i, labels in enumerate(gold) for label in labels}
    pred = {(i, label) for i, labels in enumerate(predicted) for label in labels}
    hits = len(true & pred)
    return 2 * hits / (len(true) + len(pred)) if true or pred else 1.0


def bio_spans(tags: Sequence[str]) -> set[tuple[int, int, str]]:
    """(start, end exclusive, type) of every entity; an I- without a matching open span starts one."""
    spans, start, kind = set(), None, None
    for i, tag in enumerate([*tags, "O"]):
        inside = tag.startswith("I-") and kind == tag[2:]
        if start is not None and not inside:
            spans.add((start, i, kind))
            start, kind = None, None
        if tag.startswith("B-") or (tag.startswith("I-") and not inside):
            start, kind = i, tag[2:]
    return spans


def entity_f1(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> float:
    """Exact-span entity F1 over all sentences."""
    true = {(i, *s) for i, tags in enumerate(gold) for s in bio_spans(tags)}
    pred = {(i, *s) for i, tags in enumerate(predicted) for s in bio_spans(tags)}
    hits = len(true & pred)
    return 2 * hits / (len(true) + len(pred)) if true or pred else 1.0


# --- encoding --------------------------------------------------------------------------------------


def special_tokens_around(tokenizer) -> tuple[list[int], list[int]]:
    """The special token ids the tokenizer puts before and after a single sentence."""
    full = tokenizer("a")["input_ids"]
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return full[:start], full[start + len(plain) :]
    raise MedbiasInputError("cannot locate the tokenizer's special tokens around a sentence")


def encode_words(tokenizer, words: Sequence[str], max_length: int, leading_space: bool) -> tuple[list[int], list[int]]:
    """Token ids of a pre-split sentence with the tokenizer's special tokens, and the position of
    each word's first piece (-1 for words cut off by ``max_length``); byte-level BPE tokenizers get
    a leading space before every word but the first (``leading_space``)."""
    pieces, firsts = [], []
    for i, word in enumerate(words):
        ids = tokenizer((" " + word) if leading_space and i else word, add_special_tokens=False)["input_ids"]
        firsts.append(len(pieces) if ids else -1)
        pieces.extend(ids)
    prefix, suffix = special_tokens_around(tokenizer)
    room = max_length - len(prefix) - len(suffix)
    pieces = pieces[:room]
    ids = prefix + pieces + suffix
    return ids, [f + len(prefix) if 0 <= f < room else -1 for f in firsts]


class TaskModel(torch.nn.Module):
    """An encoder with a linear head for one task (module docstring)."""

    def __init__(self, encoder, n_labels: int, kind: str, seed: int):
        super().__init__()
        torch.manual_seed(seed)
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.config.hidden_size, n_labels)
        self.kind = kind

    def forward(self, input_ids, attention_mask):
        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if self.kind == "tagging":
            return self.head(states)
        mask = attention_mask.unsqueeze(-1).to(states.dtype)
        return self.head((states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1))


def _encode_split(tokenizer, task: Task, split: Split, max_length: int, leading_space: bool):
    if task.kind == "tagging":
        encoded = [encode_words(tokenizer, words, max_length, leading_space) for words in split.texts]
        return [ids for ids, _ in encoded], [firsts for _, firsts in encoded]
    if split.pairs is not None:
        ids = tokenizer(split.texts, split.pairs, truncation="longest_first", max_length=max_length)["input_ids"]
    else:
        ids = tokenizer(split.texts, truncation=True, max_length=max_length)["input_ids"]
    return ids, None


# long: one seeded fine-tuning loop and its scoring; the model, optimiser and batch order run through it
def finetune_and_score(
    encoder,
    tokenizer,
    task: Task,
    *,
    learning_rate: float,
    batch_size: int,
    epochs: int,
    max_length: int,
    seed: int,
    leading_space: bool,
    log=None,
) -> dict:
    """Fine-tune ``encoder`` (all weights) with a fresh head on ``task.train`` and score ``task.test``
    with the task's metric (module docstring). Batches are drawn in a seeded order."""
    from medbias.core.batching import device_batches, pad_sequences

    device = next(encoder.parameters()).device
    model = TaskModel(encoder, len(task.label_names), task.kind, seed).to(device)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    train_ids, train_firsts = _encode_split(tokenizer, task, task.train, max_length, leading_space)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    losses = []

    def targets(rows, length):
        if task.kind == "single":
            return torch.as_tensor([task.train.labels[i] for i in rows])
        if task.kind == "multilabel":
            y = torch.zeros(len(rows), len(task.label_names))
            for r, i in enumerate(rows):
                y[r, task.train.labels[i]] = 1
            return y
        y = torch.full((len(rows), length), -100, dtype=torch.long)
        for r, i in enumerate(rows):
            for position, label in zip(train_firsts[i], task.train.labels[i]):
                if 0 <= position < length:
                    y[r, position] = label
        return y

    model.train()
    for epoch in range(epochs):
        order = rng.permutation(len(train_ids))
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            ids, attention = pad_sequences([train_ids[i] for i in rows], pad)
            logits = model(ids.to(device), attention.to(device))
            y = targets(rows, ids.shape[1]).to(device)
            if task.kind == "single":
                loss = torch.nn.functional.cross_entropy(logits, y)
            elif task.kind == "multilabel":
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
            else:
                loss = torch.nn.functional.cross_entropy(
                    logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100
                )
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            losses.append(float(loss.detach()))
        if log:
            log.info(
                "%s epoch %d/%d: mean loss %.4f",
                task.name,
                epoch + 1,
                epochs,
                float(np.mean(losses[-len(order) // batch_size - 1 :])),
            )
    model.eval()
    test_ids, test_firsts = _encode_split(tokenizer, task, task.test, max_length, leading_space)
    predictions: list = [None] * len(test_ids)
    with torch.inference_mode():
        for rows, ids, attention in device_batches(model, test_ids, pad, 64):
            logits = model(ids, attention).float().cpu()
            for r, i in enumerate(rows):
                if task.kind == "single":
                    predictions[i] = int(logits[r].argmax())
                elif task.kind == "multilabel":
                    predictions[i] = [int(j) for j in np.flatnonzero(torch.sigmoid(logits[r]).numpy() >= 0.5)]
                else:
                    predictions[i] = [
                        int(logits[r, p].argmax()) if p >= 0 else task.label_names.index("O") for p in test_firsts[i]
                    ]
    if task.kind == "single":
        score, metric = accuracy(task.test.labels, predictions), "accuracy"
    elif task.kind == "multilabel":
        score, metric = micro_f1(task.test.labels, predictions), "micro_f1"
    else:
        names = task.label_names
        score = entity_f1(
            [[names[t] for t in tags] for tags in task.test.labels], [[names[t] for t in tags] for tags in predictions]
        )
        metric = "entity_f1"
    return {
        "task": task.name,
        "metric": metric,
        "score": 100 * score,
        "train": len(task.train.texts),
        "test": len(task.test.texts),
        "steps": len(losses),
        "first_loss": losses[0] if losses else float("nan"),
        "last_loss": losses[-1] if losses else float("nan"),
    }
