"""Study "mental": the notes' features and each task's design matrices.

- Features: the mean of the in-vocabulary word vectors of the cleaned note (word-vector models), or
  the attention-mask-aware mean of the last hidden states over all windows (contextual models,
  ``medbias.core.batching.mean_pooled_vectors``); z-normalised with training statistics inside each
  learner's pipeline (``learners``).
- Designs: the feature rows of a task's training notes under a treatment (augmented: original and
  swapped) and of its test notes as counterfactual pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medbias.io.word_vectors import vector_spelling

TRAINING_VERSIONS: dict[str, tuple[str, ...]] = {
    "original": ("original",),
    "swapped": ("swapped",),
    "neutralized": ("neutralized",),
    "augmented": ("original", "swapped"),
}


def vocabulary_row(vectors, word: str) -> int:
    """Row of ``word`` in the vectors under its ``vector_spelling`` (as written, else lower-cased);
    -1 when neither has a vector."""
    spelling = vector_spelling(vectors, word)
    return -1 if spelling is None else vectors.key_to_index[spelling]


def word_vector(vectors, word: str) -> np.ndarray | None:
    """The vector of ``word`` by ``vocabulary_row``, or None."""
    row = vocabulary_row(vectors, word)
    return vectors.vectors[row] if row >= 0 else None


def mean_word_vectors(texts: Sequence[str], vectors) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, tokens, in-vocabulary tokens) per cleaned text: the mean of the vectors of its
    in-vocabulary words (a text with none gets a zero vector; the counts say so)."""
    index: dict[str, int] = {}
    out = np.zeros((len(texts), vectors.vector_size), dtype=np.float32)
    tokens = np.zeros(len(texts), dtype=np.int64)
    found = np.zeros(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        words = text.split()
        tokens[i] = len(words)
        rows = []
        for word in words:
            if word not in index:
                index[word] = vocabulary_row(vectors, word)
            if index[word] >= 0:
                rows.append(index[word])
        found[i] = len(rows)
        if rows:
            out[i] = vectors.vectors[rows].mean(axis=0)
    return out, tokens, found


@dataclass
class Featurizer:
    """Texts -> features for one embedding of the study: the word vectors (``vectors``) or a
    contextual model and its tokenizer, with the window settings of ``mental.contextual``."""

    name: str
    kind: str
    vectors: Any = None
    model: Any = None
    tokenizer: Any = None
    contextual: Mapping[str, Any] | None = None

    def features(self, texts: Sequence[str], progress=None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(features, per-text counts): tokens and in-vocabulary tokens, or windows."""
        if self.kind == "word_vectors":
            features, tokens, found = mean_word_vectors(texts, self.vectors)
            return features, {"tokens": tokens, "in_vocabulary": found}
        from medbias.core.batching import mean_pooled_vectors

        settings = self.contextual
        features, windows = mean_pooled_vectors(
            self.model.base_model,
            self.tokenizer,
            texts,
            settings["max_length"],
            settings["stride"],
            settings["batch_size"],
            progress,
        )
        return features, {"windows": windows}


def load_featurizer(
    name: str, entry: Mapping[str, Any], contextual: Mapping[str, Any], device: str = "cpu"
) -> Featurizer:
    """The ``Featurizer`` of an embedding entry (``type`` word_vectors: source and format; contextual:
    a registry-style model entry)."""
    if entry["type"] == "word_vectors":
        from medbias.io.word_vectors import load_word_vectors

        return Featurizer(name, "word_vectors", vectors=load_word_vectors(entry["source"], entry["format"]))
    from medbias.core.models import load_model_and_tokenizer, resolve_model_source

    model, tokenizer = load_model_and_tokenizer(resolve_model_source(name, entry), device)
    return Featurizer(name, "contextual", model=model, tokenizer=tokenizer, contextual=contextual)


def feature_rows(index: pd.DataFrame) -> dict[tuple[int, str], int]:
    """(ROW_ID, version) -> row of the feature matrix."""
    return {(int(r), v): i for i, (r, v) in enumerate(zip(index["ROW_ID"], index["version"]))}


def training_design(
    task_frame: pd.DataFrame, treatment: str, rows: Mapping[tuple[int, str], int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(feature rows, labels, note ids) of a task's training notes under ``treatment`` (augmented:
    every note twice, as written and swapped, sharing its note id for grouped cross-validation)."""
    train = task_frame[task_frame["split"] == "train"]
    feature, label, group = [], [], []
    for version in TRAINING_VERSIONS[treatment]:
        feature += [rows[(int(r), version)] for r in train["ROW_ID"]]
        label += train["label"].tolist()
        group += train["ROW_ID"].tolist()
    return np.array(feature), np.array(label), np.array(group)


def gender_permuted_design(
    task_frame: pd.DataFrame, rows: Mapping[tuple[int, str], int], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(feature rows, labels, note ids) of a task's training notes with their genders permuted: the
    genders of the training notes are shuffled among them, and each note enters as written where it
    keeps its gender and gender-swapped where it gets the other. The gender counts stay those of the
    original design; the association of gender with the label is broken."""
    train = task_frame[task_frame["split"] == "train"]
    gender = train["gender"].to_numpy()
    keeps = rng.permutation(gender) == gender
    feature = [rows[(int(r), "original" if keep else "swapped")] for r, keep in zip(train["ROW_ID"], keeps)]
    return np.array(feature), train["label"].to_numpy(), train["ROW_ID"].to_numpy()


def counterfactual_pairs(task_frame: pd.DataFrame, rows: Mapping[tuple[int, str], int]) -> pd.DataFrame:
    """The task's test notes as counterfactual pairs: ROW_ID, label, patient gender, and the feature
    rows of the copy that speaks of a woman and of the one that speaks of a man."""
    test = task_frame[task_frame["split"] == "test"]
    original = np.array([rows[(int(r), "original")] for r in test["ROW_ID"]])
    swapped = np.array([rows[(int(r), "swapped")] for r in test["ROW_ID"]])
    female = (test["gender"] == "F").to_numpy()
    return pd.DataFrame(
        {
            "ROW_ID": test["ROW_ID"].to_numpy(),
            "label": test["label"].to_numpy(),
            "gender": test["gender"].to_numpy(),
            "row_female": np.where(female, original, swapped),
            "row_male": np.where(female, swapped, original),
        }
    )
