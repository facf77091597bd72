"""Study "mental" (Sogancioglu et al. 2023): data, treatments, features and learners.

- Labels: the majority vote of a note's annotators per phenotype, ties going to the positive class
  (section III-A). For a task, the positives are the notes voted positive for its phenotype and the
  negatives the notes voted negative for every phenotype (annotated "None").
- Split (Table II): each task's notes are split into training and test sets with the training set
  balanced across label and gender: every (label, gender) cell gives ``min(cap, floor(train_fraction
  * cell size))`` notes to training, where ``cap`` is the task's configured per-cell size or, unset,
  ``floor(train_fraction * size)`` of the second-smallest cell (so one scarce cell, like the paper's
  female alcohol-abuse positives, gives what it has without shrinking the others). The rest is the
  test set.
- Treatments of the training notes (section III-C): original, swapped, neutralized, augmented
  (original plus swapped). The test notes are doubled with their swapped copies (counterfactual pairs).
- Features: the mean of the in-vocabulary word vectors of the cleaned note (word-vector models), or
  the attention-mask-aware mean of the last hidden states over all windows (contextual models,
  ``medbias.core.batching.mean_pooled_vectors``); z-normalised with training statistics inside each
  learner's pipeline.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medbias.core.errors import MedbiasInputError
from medbias.io.formats import ANNOTATION_PHENOTYPES
from medbias.core.note_text import clean_for_embedding, neutralize_gender, swap_gender

TASK_COLUMNS: dict[str, str] = {
    "depression": "DEPRESSION",
    "psychiatric_disorders": "SCHIZOPHRENIA.AND.OTHER.PSYCHIATRIC.DISORDERS",
    "alcohol_abuse": "ALCOHOL.ABUSE",
    "substance_abuse": "OTHER.SUBSTANCE.ABUSE",
}
TASK_TITLES: dict[str, str] = {
    "depression": "Depression", "psychiatric_disorders": "Psychiatric disorders",
    "alcohol_abuse": "Alcohol abuse", "substance_abuse": "Substance abuse",
}
TRAINING_VERSIONS: dict[str, tuple[str, ...]] = {
    "original": ("original",), "swapped": ("swapped",), "neutralized": ("neutralized",),
    "augmented": ("original", "swapped"),
}


def majority_vote(annotations: pd.DataFrame) -> pd.DataFrame:
    """One row per annotated note (index ROW_ID): each phenotype 1 when at least half of the note's
    annotators marked it (a tie goes to the positive class), ``none`` = 1 when no phenotype is voted
    positive, the number of annotators and the note's SUBJECT_ID."""
    grouped = annotations.groupby("ROW_ID")
    labels = (grouped[list(ANNOTATION_PHENOTYPES)].mean() >= 0.5).astype(int)
    labels["none"] = (labels[list(ANNOTATION_PHENOTYPES)].sum(axis=1) == 0).astype(int)
    labels["annotators"] = grouped.size()
    labels["SUBJECT_ID"] = grouped["SUBJECT_ID"].first()
    return labels


def task_labels(votes: pd.DataFrame, task: str) -> pd.Series:
    """The task's notes and labels: positives voted for its phenotype, negatives annotated None;
    notes positive only for other phenotypes are not part of the task (section III-A)."""
    column = TASK_COLUMNS[task]
    chosen = (votes[column] == 1) | (votes["none"] == 1)
    return votes.loc[chosen, column].rename("label")


@dataclass(frozen=True)
class JoinReport:
    """How the annotations met the notes and the patients' genders (nothing is dropped silently)."""

    annotated_notes: int
    joined: int
    missing_note: tuple[int, ...]
    subject_mismatch: tuple[int, ...]
    missing_gender: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"annotated_notes": self.annotated_notes, "joined": self.joined,
                "missing_note": {"count": len(self.missing_note), "row_ids": list(self.missing_note[:50])},
                "subject_mismatch": {"count": len(self.subject_mismatch), "row_ids": list(self.subject_mismatch[:50])},
                "missing_gender": {"count": len(self.missing_gender), "row_ids": list(self.missing_gender[:50])}}


def join_notes(votes: pd.DataFrame, notes: pd.DataFrame, patients: pd.DataFrame) -> tuple[pd.DataFrame, JoinReport]:
    """The annotated notes with their text and the patient's gender (index ROW_ID), and a report of
    the annotations that did not join: no such note, a different SUBJECT_ID, no M/F gender."""
    text = notes.set_index("ROW_ID")[["SUBJECT_ID", "TEXT"]]
    present = votes.index.isin(text.index)
    missing_note = tuple(int(r) for r in votes.index[~present])
    joined = votes.loc[present].join(text.rename(columns={"SUBJECT_ID": "SUBJECT_ID_note"}))
    mismatch = joined["SUBJECT_ID"].astype(int) != joined["SUBJECT_ID_note"].astype(int)
    subject_mismatch = tuple(int(r) for r in joined.index[mismatch])
    joined = joined.loc[~mismatch].drop(columns="SUBJECT_ID_note")
    gender = patients.drop_duplicates("SUBJECT_ID").set_index("SUBJECT_ID")["GENDER"]
    joined["gender"] = joined["SUBJECT_ID"].map(gender)
    no_gender = ~joined["gender"].isin(["F", "M"])
    missing_gender = tuple(int(r) for r in joined.index[no_gender])
    joined = joined.loc[~no_gender]
    report = JoinReport(len(votes), len(joined), missing_note, subject_mismatch, missing_gender)
    return joined, report


def treated_texts(text: str) -> dict[str, str]:
    """The cleaned original, swapped and neutralized versions of one note (treatments act on the raw
    text, so that the 'Sex:' field is still recognisable; cleaning follows)."""
    return {"original": clean_for_embedding(text), "swapped": clean_for_embedding(swap_gender(text)),
            "neutralized": clean_for_embedding(neutralize_gender(text))}


def balanced_split(frame: pd.DataFrame, train_fraction: float, per_cell: int | None, seed: int) -> pd.Series:
    """Boolean training mask over ``frame`` (columns label, gender; index ROW_ID): each (label,
    gender) cell gives ``min(cap, floor(train_fraction * size))`` randomly chosen notes (see the
    module docstring for ``cap``); the rest is the test set."""
    rng = np.random.default_rng(seed)
    cells = {key: np.sort(index.to_numpy()) for key, index in frame.groupby(["label", "gender"]).groups.items()}
    for label in (0, 1):
        for gender in ("F", "M"):
            cells.setdefault((label, gender), np.array([], dtype=frame.index.dtype))
    if per_cell is None:
        per_cell = math.floor(train_fraction * sorted(len(rows) for rows in cells.values())[1])
    train = pd.Series(False, index=frame.index)
    for key in sorted(cells):
        rows = cells[key]
        n = min(per_cell, math.floor(train_fraction * len(rows)))
        train.loc[rng.permutation(rows)[:n]] = True
    return train


def split_table(assignments: pd.DataFrame, tasks: Sequence[str]) -> pd.DataFrame:
    """Table II: notes per task, split, label and gender."""
    rows = []
    for task in tasks:
        part = assignments[assignments["task"] == task]
        row: dict[str, Any] = {"task": TASK_TITLES[task]}
        for split in ("train", "test"):
            for label, name in ((1, "positive"), (0, "negative")):
                for gender in ("F", "M"):
                    row[f"{split}_{name}_{gender}"] = int(((part["split"] == split) & (part["label"] == label)
                                                           & (part["gender"] == gender)).sum())
        rows.append(row)
    return pd.DataFrame(rows)


# --- Word-vector features ------------------------------------------------------------------------

def vocabulary_row(vectors, word: str) -> int:
    """Row of ``word`` in the vectors: as written, else lower-cased (cased and uncased models
    alike); -1 when neither has a vector."""
    row = vectors.key_to_index.get(word, -1)
    return row if row >= 0 else vectors.key_to_index.get(word.lower(), -1)


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
        features, windows = mean_pooled_vectors(self.model.base_model, self.tokenizer, texts, settings["max_length"],
                                                settings["stride"], settings["batch_size"], progress)
        return features, {"windows": windows}


def load_featurizer(name: str, entry: Mapping[str, Any], contextual: Mapping[str, Any], device: str = "cpu") -> Featurizer:
    """The ``Featurizer`` of an embedding entry (``type`` word_vectors: source and format; contextual:
    a registry-style model entry)."""
    if entry["type"] == "word_vectors":
        from medbias.io.word_vectors import load_word_vectors

        return Featurizer(name, "word_vectors", vectors=load_word_vectors(entry["source"], entry["format"]))
    from medbias.core.models import load_model_and_tokenizer, resolve_model_source

    model, tokenizer = load_model_and_tokenizer(resolve_model_source(name, entry), device)
    return Featurizer(name, "contextual", model=model, tokenizer=tokenizer, contextual=contextual)


# --- Learners ------------------------------------------------------------------------------------

def build_learner(name: str, settings: Mapping[str, Any], seed: int):
    """An unfitted scikit-learn pipeline (z-normalisation on the training data, then the learner).
    ``svm`` is a grid search over C and kernel by grouped, stratified k-fold macro-F1 (copies of one
    note stay in one fold); ``rf`` and ``mlp`` are the paper's robustness learners with fixed settings."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import GridSearchCV, StratifiedGroupKFold
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    if name == "svm":
        pipeline = Pipeline([("scale", StandardScaler()), ("svm", SVC(probability=True, random_state=seed))])
        grid = {"svm__C": list(settings["C"]), "svm__kernel": list(settings["kernel"])}
        folds = StratifiedGroupKFold(n_splits=int(settings["folds"]), shuffle=True, random_state=seed)
        return GridSearchCV(pipeline, grid, scoring="f1_macro", cv=folds, n_jobs=1, refit=True)
    if name == "rf":
        forest = RandomForestClassifier(n_estimators=int(settings["n_estimators"]),
                                        min_samples_leaf=int(settings["min_samples_leaf"]), random_state=seed, n_jobs=1)
        return Pipeline([("scale", StandardScaler()), ("rf", forest)])
    if name == "mlp":
        mlp = MLPClassifier(hidden_layer_sizes=tuple(settings["hidden"]), alpha=float(settings["alpha"]),
                            max_iter=int(settings["max_iter"]), random_state=seed)
        return Pipeline([("scale", StandardScaler()), ("mlp", mlp)])
    raise MedbiasInputError(f"config key 'mental.learners': unknown learner {name!r} (svm, rf, mlp)")


def fit_learner(learner, features: np.ndarray, label: np.ndarray, groups: np.ndarray):
    """Fit ``learner`` (a grid search gets the note ids as groups); returns the fitted estimator and
    a description of the chosen parameters with the cross-validated macro-F1 where there is one."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import GridSearchCV

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if isinstance(learner, GridSearchCV):
            learner.fit(features, label, groups=groups)
            params = {k.split("__", 1)[1]: v for k, v in learner.best_params_.items()}
            return learner.best_estimator_, {**params, "cv_macro_f1": float(learner.best_score_)}
        learner.fit(features, label)
    return learner, {}


def feature_rows(index: pd.DataFrame) -> dict[tuple[int, str], int]:
    """(ROW_ID, version) -> row of the feature matrix."""
    return {(int(r), v): i for i, (r, v) in enumerate(zip(index["ROW_ID"], index["version"]))}


def training_design(task_frame: pd.DataFrame, treatment: str, rows: Mapping[tuple[int, str], int]
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


def counterfactual_pairs(task_frame: pd.DataFrame, rows: Mapping[tuple[int, str], int]) -> pd.DataFrame:
    """The task's test notes as counterfactual pairs: ROW_ID, label, patient gender, and the feature
    rows of the copy that speaks of a woman and of the one that speaks of a man."""
    test = task_frame[task_frame["split"] == "test"]
    original = np.array([rows[(int(r), "original")] for r in test["ROW_ID"]])
    swapped = np.array([rows[(int(r), "swapped")] for r in test["ROW_ID"]])
    female = (test["gender"] == "F").to_numpy()
    return pd.DataFrame({"ROW_ID": test["ROW_ID"].to_numpy(), "label": test["label"].to_numpy(),
                         "gender": test["gender"].to_numpy(),
                         "row_female": np.where(female, original, swapped), "row_male": np.where(female, swapped, original)})


def fairness_table(predictions: pd.DataFrame, n_replicates: int, seed: int) -> pd.DataFrame:
    """Table V in long form: per (embedding, treatment, task, learner) the ratio, mismatch and
    macro-F1 measures of ``medbias.metrics.counterfactual`` with 95% bootstrap intervals and the
    favoured group. Each combination draws from its own generator (seeded by its position in the
    sorted keys), so adding a model changes no other row."""
    from medbias.metrics.counterfactual import METRICS, summarise_pairs

    keys = ["embedding", "treatment", "task", "learner"]
    rows = []
    for number, (key, part) in enumerate(predictions.groupby(keys, sort=True)):
        rng = np.random.default_rng([seed, number])
        summary = summarise_pairs(part["label"].to_numpy(), part["pred_female"].to_numpy(),
                                  part["pred_male"].to_numpy(), n_replicates, rng)
        row = dict(zip(keys, key))
        for metric in METRICS:
            row[metric] = summary.values[metric]
            row[f"{metric}_low"], row[f"{metric}_high"] = summary.low[metric], summary.high[metric]
        for metric, group in summary.favoured.items():
            row[f"{metric}_group"] = group
        row["mismatch_p"] = summary.mismatch_p
        row["pairs"], row["positives"] = summary.pairs, summary.positives
        rows.append(row)
    return pd.DataFrame(rows)


def paper_layout(long: pd.DataFrame, learner: str, embeddings: Sequence[str], treatments: Sequence[str],
                 tasks: Sequence[str], labels: Mapping[str, str]) -> pd.DataFrame:
    """Table V as printed: one row per (embedding, treatment), per task the columns TPRR, FPRR,
    mismatch (each with the favoured group as a suffix, e.g. 0.90 F) and macro-F1."""
    part = long[long["learner"] == learner].set_index(["embedding", "treatment", "task"])
    rows = []
    for embedding in embeddings:
        for treatment in treatments:
            row: dict[str, Any] = {"embedding": labels.get(embedding, embedding), "treatment": treatment}
            for task in tasks:
                if (embedding, treatment, task) not in part.index:
                    continue
                cell = part.loc[(embedding, treatment, task)]
                title = TASK_TITLES[task]
                for metric, name in (("tprr", "TPRR"), ("fprr", "FPRR"), ("mismatch", "mismatch")):
                    value = cell[metric]
                    row[f"{title} {name}"] = "" if pd.isna(value) else f"{value:.2f} {cell[f'{metric}_group']}".strip()
                row[f"{title} F1"] = f"{cell['macro_f1']:.2f}"
            rows.append(row)
    return pd.DataFrame(rows)


def task_splits(joined: pd.DataFrame, tasks: Sequence[str], *, train_fraction: float,
                per_cell: Mapping[str, int], seed: int, log) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Every task's labelled notes with their balanced train/test split (``balanced_split``, task k
    under ``seed + k``), long (task, ROW_ID, label, gender, split), and Figure 1's counts per task."""
    assignments, counts = [], []
    for number, task in enumerate(tasks):
        labels = task_labels(joined, task)
        frame = pd.DataFrame({"label": labels, "gender": joined.loc[labels.index, "gender"]})
        train = balanced_split(frame, train_fraction, per_cell.get(task), seed + number)
        frame["split"] = train.map({True: "train", False: "test"})
        frame.insert(0, "task", task)
        assignments.append(frame.rename_axis("ROW_ID").reset_index())
        log.info("%s: %d notes (%d positive), %d train, %d test", task, len(frame), int(frame["label"].sum()),
                 int(train.sum()), int((~train).sum()))
        counts.append({"task": TASK_TITLES[task], "column": TASK_COLUMNS[task],
                       "positive": int(joined[TASK_COLUMNS[task]].sum()), "none": int(joined["none"].sum()),
                       "notes_in_task": len(frame)})
    return pd.concat(assignments, ignore_index=True), counts


def treated_text_rows(joined: pd.DataFrame, row_ids: Sequence[int]) -> pd.DataFrame:
    """ROW_ID, version, text: every treated version (``treated_texts``) of the notes ``row_ids``."""
    rows = [{"ROW_ID": int(row_id), "version": version, "text": text}
            for row_id in row_ids for version, text in treated_texts(joined.at[row_id, "TEXT"]).items()]
    return pd.DataFrame(rows)
