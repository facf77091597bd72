"""Note-level predictions from window-level classifiers (Zhang et al. 2020, section 3.3 and 4.1).

A note longer than one window is split into up to ten windows that all carry the note's label; the
classifier scores windows, and the note's probability merges them with eq. 1 (Huang et al.):

    P(Y = 1) = (P_max + P_mean * n / c) / (1 + n / c)

with n the note's number of windows and c a scaling factor tuned per task on the validation set
(few windows: close to the mean; many: pulled towards the maximum). The threshold for binary
predictions is the one with the best F1 on the validation set.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from medbias.core.batching import sigmoid_outputs
from medbias.core.processes import spawned_map


def merge_window_probabilities(probability: np.ndarray, note_id: np.ndarray, c: float) -> pd.Series:
    """Eq. 1 per note: (max + mean * n / c) / (1 + n / c) over the note's windows; indexed by note id
    in sorted order."""
    if c <= 0:
        raise ValueError(f"scaling factor c must be positive, got {c}")
    frame = pd.DataFrame({"note": note_id, "p": probability}).groupby("note")["p"]
    highest, mean, n = frame.max(), frame.mean(), frame.size()
    return (highest + mean * n / c) / (1 + n / c)


def note_labels(label: np.ndarray, note_id: np.ndarray) -> pd.Series:
    """The label of each note from its windows (all windows of a note carry it; a disagreement is an
    error), indexed like ``merge_window_probabilities``."""
    frame = pd.DataFrame({"note": note_id, "y": label}).groupby("note")["y"]
    inconsistent = frame.nunique() > 1
    if inconsistent.any():
        raise ValueError(
            f"windows of one note carry different labels: notes {inconsistent[inconsistent].index[:5].tolist()}"
        )
    return frame.first()


def choose_scaling_factor(
    probability: np.ndarray, label: np.ndarray, note_id: np.ndarray, grid: Sequence[float]
) -> tuple[float, float]:
    """The c of ``grid`` whose merged note probabilities have the best AUPRC (average precision) on
    these (validation) windows; ties go to the first c in the grid. Returns (c, AUPRC)."""
    from sklearn.metrics import average_precision_score

    truth = note_labels(label, note_id)
    best_c, best = grid[0], -np.inf
    for c in grid:
        merged = merge_window_probabilities(probability, note_id, c)
        score = average_precision_score(truth.loc[merged.index], merged)
        if score > best:
            best_c, best = c, score
    return float(best_c), float(best)


def best_f1_threshold(probability: np.ndarray, label: np.ndarray) -> tuple[float, float]:
    """The threshold t (predict positive when p >= t) with the highest F1 on these (validation)
    probabilities, searched over the distinct probabilities; ties go to the highest threshold.
    Returns (t, F1). Without positives F1 is 0 everywhere and t is above every probability."""
    probability = np.asarray(probability, dtype=float)
    label = np.asarray(label).astype(bool)
    if not label.any():
        return float(np.nextafter(probability.max(), np.inf)) if len(probability) else 1.0, 0.0
    order = np.argsort(-probability, kind="stable")
    p, y = probability[order], label[order]
    true_positives = np.cumsum(y)
    predicted = np.arange(1, len(p) + 1)
    last_of_value = np.r_[p[1:] != p[:-1], True]  # a threshold includes every row with that probability
    f1 = 2 * true_positives / (predicted + label.sum())
    f1 = np.where(last_of_value, f1, -1.0)
    best = int(np.argmax(f1))  # first maximum = highest threshold
    return float(p[best]), float(f1[best])


# --- The window classifier and its grid (section 4.1) -------------------------------------------


@dataclass(frozen=True)
class NetworkConfig:
    """One point of the grid: ``layers`` linear layers in all (the last one gives the logit), each
    hidden layer ``ratio`` times narrower than the one before, ``dropout`` after every hidden layer."""

    layers: int
    ratio: int
    dropout: float

    def widths(self, in_features: int) -> list[int]:
        """Hidden-layer widths: in_features / ratio, / ratio^2, ... (at least 2 units)."""
        widths, previous = [], in_features
        for _ in range(self.layers - 1):
            previous = max(2, previous // self.ratio)
            widths.append(previous)
        return widths


def network_grid(layers: Sequence[int], ratios: Sequence[int], dropouts: Sequence[float]) -> list[NetworkConfig]:
    """Every distinct network, in a fixed order (layers, then ratio, then dropout). A one-layer net has
    no hidden layer, so its ratio and dropout change nothing: it is trained once, with the first ratio
    and dropout (the reference code's grid: 2-4 layers x ratios x dropouts plus one 1-layer net). The
    copies it replaces were identical fits (same seed), so the selection is the same without them."""
    grid = []
    for n in layers:
        grid += (
            [NetworkConfig(n, ratios[0], dropouts[0])]
            if n == 1
            else [NetworkConfig(n, r, d) for r in ratios for d in dropouts]
        )
    return grid


def chosen_grids(selection: pd.DataFrame) -> dict[str, dict]:
    """Per task, the grid of one point that an earlier run chose (its ``selection.csv``: layers,
    width_ratio, dropout and c per task), for seed replicates that retrain the chosen classifier
    instead of searching again: {task: {"grid": [NetworkConfig], "c_grid": [c]}}."""
    missing = {"task", "layers", "width_ratio", "dropout", "c"} - set(selection.columns)
    if missing:
        raise ValueError(f"selection table lacks column(s) {', '.join(sorted(missing))}")
    return {
        row.task: {
            "grid": [NetworkConfig(int(row.layers), int(row.width_ratio), float(row.dropout))],
            "c_grid": [float(row.c)],
        }
        for row in selection.itertuples(index=False)
    }


def build_network(in_features: int, config: NetworkConfig):
    """Linear -> BatchNorm -> ReLU -> Dropout per hidden layer, then one linear unit whose sigmoid is
    the window's probability (the sigmoid lives in the loss and in ``predict_probability``)."""
    from torch import nn

    blocks, previous = [], in_features
    for width in config.widths(in_features):
        blocks += [nn.Linear(previous, width), nn.BatchNorm1d(width), nn.ReLU(), nn.Dropout(config.dropout)]
        previous = width
    blocks.append(nn.Linear(previous, 1))
    return nn.Sequential(*blocks)


def predict_probability(network, features: np.ndarray, batch_size: int = 4096) -> np.ndarray:
    """Sigmoid outputs of ``network`` in evaluation mode (on the device its parameters are on)."""
    network.eval()
    probabilities = sigmoid_outputs(lambda x: network(x)[:, 0], features, next(network.parameters()).device, batch_size)
    return np.zeros(0) if probabilities is None else probabilities


@dataclass
class TrainedNetwork:
    """A trained window classifier: its configuration, parameters from the epoch with the lowest
    validation loss, that loss, and the epochs run."""

    config: NetworkConfig
    state: dict = field(repr=False)
    validation_loss: float
    epochs: int

    def network(self, in_features: int):
        network = build_network(in_features, self.config)
        network.load_state_dict(self.state)
        return network.eval()


def train_networks(
    train_x: np.ndarray,
    train_y: np.ndarray,
    val_x: np.ndarray,
    val_y: np.ndarray,
    config: NetworkConfig,
    seeds: Sequence[int],
    max_epochs: int = 50,
    patience: int = 5,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    device: str = "cpu",
    train_weights: np.ndarray | None = None,
) -> list[TrainedNetwork]:
    """The window classifiers of T tasks that share their design matrix (``train_y``, ``val_y``: [rows, T]
    labels; ``seeds``: T seeds), one ``config`` each, trained at once (``medbias.studies.hurtful.stacked``).
    ``train_weights`` ([rows, T]; None: all 1) weighs each training row in its task's loss (reweighing:
    a batch's loss is the mean of weight x cross-entropy; the validation loss that stops training is
    unweighted).
    For each task: initial weights from ``build_network`` under its seed, Adam on binary cross-entropy,
    mini-batches in an order drawn from its seed, early stopping when its validation loss has not
    improved for ``patience`` epochs; returns each task's best epoch's parameters (on the CPU).
    ``device="cuda"`` trains on the GPU: the same initial weights and batch orders (both drawn on the
    CPU), float32 throughout; sums then run in another order, so results agree with the CPU's to
    rounding, not bit for bit, and a near-tie between grid points can be decided the other way
    (measured: tests/performance/check_classify_gpu.py, plan_scale.py --measure-gpu)."""
    import torch

    from medbias.studies.hurtful.stacked import StackedNetworks, validation_losses

    train_y = np.asarray(train_y, dtype=np.float32).reshape(len(train_x), -1)
    val_y = np.asarray(val_y, dtype=np.float32).reshape(len(val_x), -1)
    weighted = train_weights is not None
    if weighted and np.shape(train_weights) != train_y.shape:
        raise ValueError(f"train_weights of shape {np.shape(train_weights)} for labels of shape {train_y.shape}")
    if train_y.shape[1] != len(seeds) or val_y.shape[1] != len(seeds):
        raise ValueError(
            f"{len(seeds)} seeds for {train_y.shape[1]} training and {val_y.shape[1]} validation label columns"
        )
    networks = []
    for seed in seeds:
        torch.manual_seed(seed)
        networks.append(build_network(train_x.shape[1], config))
    stack = StackedNetworks(networks, device)
    optimizer = torch.optim.Adam(stack.parameters(), lr=learning_rate)
    x = torch.as_tensor(train_x, dtype=torch.float32, device=device)
    y = torch.as_tensor(train_y, dtype=torch.float32, device=device)
    w = torch.as_tensor(train_weights, dtype=torch.float32, device=device) if weighted else None
    generators = [torch.Generator().manual_seed(seed) for seed in seeds]
    tasks = len(seeds)
    active = list(range(tasks))  # the tasks still in the stack, in stack order
    best_loss, since_best = np.full(tasks, np.inf), np.zeros(tasks, dtype=int)
    best_state, epochs = [stack.task_state(t, 0) for t in range(tasks)], np.zeros(tasks, dtype=int)
    steps = 0
    for epoch in range(1, max_epochs + 1):
        if not active:
            break
        orders = torch.stack([torch.randperm(len(x), generator=generators[t]) for t in active]).to(device)
        columns = torch.as_tensor(active, device=device)[:, None]
        for start in range(0, len(x), batch_size):
            rows = orders[:, start : start + batch_size]
            if rows.shape[1] < 2:  # batch norm needs two rows
                continue
            optimizer.zero_grad()
            logits = stack.logits(x[rows], training=True)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y[rows, columns], reduction="none")
            if weighted:
                loss = loss * w[rows, columns]
            loss.mean(dim=1).sum().backward()  # each task's parameters get its own mean loss's gradient
            optimizer.step()
            steps += 1
        losses, stopped = validation_losses(stack, val_x, val_y[:, active]), []
        for position, task in enumerate(active):
            epochs[task] = epoch
            if losses[position] < best_loss[task]:
                best_loss[task], best_state[task], since_best[task] = (
                    losses[position],
                    stack.task_state(position, steps),
                    0,
                )
            else:
                since_best[task] += 1
                if since_best[task] >= patience:
                    stopped.append(position)
        if stopped:
            kept = [position for position in range(len(active)) if position not in stopped]
            active = [active[position] for position in kept]
            if active:
                optimizer = stack.keep(torch.as_tensor(kept, device=device), optimizer)
    return [TrainedNetwork(config, best_state[t], float(best_loss[t]), int(epochs[t])) for t in range(tasks)]


def train_network(
    train_x: np.ndarray,
    train_y: np.ndarray,
    val_x: np.ndarray,
    val_y: np.ndarray,
    config: NetworkConfig,
    seed: int,
    **training,
) -> TrainedNetwork:
    """One task's window classifier (``train_networks`` with one task)."""
    return train_networks(
        train_x, np.asarray(train_y)[:, None], val_x, np.asarray(val_y)[:, None], config, [seed], **training
    )[0]


@dataclass
class SelectedClassifier:
    """The grid's winner for one task: the network, eq. 1's c, its validation AUPRC after merging and
    the best-F1 threshold on the merged validation probabilities; ``grid`` records every point."""

    trained: TrainedNetwork
    c: float
    validation_auprc: float
    threshold: float
    validation_f1: float
    grid: list[dict]


def select_classifiers(
    train_x: np.ndarray,
    train_y: np.ndarray,
    val_x: np.ndarray,
    val_y: np.ndarray,
    val_note: np.ndarray,
    configs: Sequence[NetworkConfig],
    c_grid: Sequence[float],
    seeds: Sequence[int],
    train_weights: np.ndarray | None = None,
    **training,
) -> list[SelectedClassifier]:
    """For T tasks sharing their design matrix (labels [rows, T], one seed each): train every
    configuration (``train_networks``), merge each task's validation windows per note with its best c,
    and keep per task the configuration with the best validation AUPRC, with its own parameters (the
    reference code saved the parameters of the last configuration tried, whichever won). Ties keep the
    earlier one."""
    val_y = np.asarray(val_y).reshape(len(val_x), -1)
    best: list[SelectedClassifier | None] = [None] * len(seeds)
    records: list[list[dict]] = [[] for _ in seeds]
    for config in configs:
        trained_networks = train_networks(
            train_x, train_y, val_x, val_y, config, seeds, train_weights=train_weights, **training
        )
        for task, trained in enumerate(trained_networks):
            probability = predict_probability(
                trained.network(train_x.shape[1]).to(training.get("device", "cpu")), val_x
            )
            c, auprc = choose_scaling_factor(probability, val_y[:, task], val_note, c_grid)
            records[task].append(
                {
                    "layers": config.layers,
                    "ratio": config.ratio,
                    "dropout": config.dropout,
                    "c": c,
                    "validation_auprc": auprc,
                    "validation_loss": trained.validation_loss,
                    "epochs": trained.epochs,
                }
            )
            if best[task] is None or auprc > best[task].validation_auprc:
                merged = merge_window_probabilities(probability, val_note, c)
                truth = note_labels(val_y[:, task], val_note).loc[merged.index]
                threshold, f1 = best_f1_threshold(merged.to_numpy(), truth.to_numpy())
                best[task] = SelectedClassifier(trained, c, auprc, threshold, f1, records[task])
    assert all(b is not None for b in best), "empty grid"
    return best  # type: ignore[return-value]


def select_classifier(
    train_x: np.ndarray,
    train_y: np.ndarray,
    val_x: np.ndarray,
    val_y: np.ndarray,
    val_note: np.ndarray,
    configs: Sequence[NetworkConfig],
    c_grid: Sequence[float],
    seed: int,
    **training,
) -> SelectedClassifier:
    """One task's ``select_classifiers``."""
    return select_classifiers(
        train_x,
        np.asarray(train_y)[:, None],
        val_x,
        np.asarray(val_y)[:, None],
        val_note,
        configs,
        c_grid,
        [seed],
        **training,
    )[0]


# --- Task design matrices (section 4.1) ------------------------------------------------------------

ACUITY_FEATURES: tuple[str, ...] = ("age", "oasis", "sapsii", "sofa")


def standardise_on_training(values: np.ndarray, is_train: np.ndarray) -> np.ndarray:
    """Columns imputed with their training median where missing, then centred and scaled with the
    training rows' mean and standard deviation (a constant column is only centred). The reference
    code fed age and the acuity scores raw."""
    values = np.asarray(values, dtype=np.float64)
    train = values[is_train]
    median = np.nanmedian(train, axis=0) if len(train) else np.zeros(values.shape[1])
    median = np.where(np.isnan(median), 0.0, median)
    filled = np.where(np.isnan(values), median, values)
    mean, std = filled[is_train].mean(axis=0), filled[is_train].std(axis=0)
    return ((filled - mean) / np.where(std > 0, std, 1.0)).astype(np.float32)


def task_windows(samples, windows, feature_index):
    """One row per window of each sample of one task: the sample's columns plus ``feature_row``, the
    window's row in the model's feature matrix. ``samples``: the task's rows of task_samples;
    ``windows``: the cohort's rows of cohort_windows (ICUSTAY_ID, ROW_ID, window); ``feature_index``:
    the feature file's (ROW_ID, window) rows in order. A sample without windows is an error."""
    index = feature_index.reset_index(drop=True).rename_axis("feature_row").reset_index()
    rows = samples.merge(windows[["ICUSTAY_ID", "ROW_ID", "window"]], on="ICUSTAY_ID", how="left")
    without = rows.loc[rows["ROW_ID"].isna(), "ICUSTAY_ID"].unique()
    if len(without):
        raise ValueError(f"{len(without)} samples without windows (ICUSTAY_ID {sorted(int(i) for i in without)[:5]})")
    rows = rows.astype({"ROW_ID": "int64", "window": "int64"}).merge(index, on=["ROW_ID", "window"], how="left")
    unmatched = rows["feature_row"].isna()
    if unmatched.any():
        raise ValueError(
            f"{int(unmatched.sum())} windows missing from the feature file (first ROW_ID "
            f"{int(rows.loc[unmatched, 'ROW_ID'].iloc[0])})"
        )
    return rows.astype({"feature_row": "int64"}).sort_values(["ICUSTAY_ID", "ROW_ID", "window"]).reset_index(drop=True)


def design_matrix(rows, features: np.ndarray, is_train: np.ndarray, block: int = 256) -> np.ndarray:
    """[CLS] features of each window and the sample's age and acuity scores, every column
    standardised on the training windows (``standardise_on_training``). Built a block of columns at a
    time into one float32 array (``features`` may be a memory map): at the real scale a task has up to
    ~850,000 windows of 3,076 columns, and standardising them at once in float64 took three times the
    output's memory. Each column's values are the same as standardising all of them at once."""
    index = rows["feature_row"].to_numpy()
    width = features.shape[1]
    out = np.empty((len(rows), width + len(ACUITY_FEATURES)), dtype=np.float32)
    for start in range(0, width, block):
        stop = min(start + block, width)
        out[:, start:stop] = standardise_on_training(features[index, start:stop], is_train)
    out[:, width:] = standardise_on_training(rows[list(ACUITY_FEATURES)].to_numpy(dtype=np.float64), is_train)
    return out


SPLIT_ORDER = ("train", "val", "test")


# a task's windows and what its design matrix is built from: tasks equal in these share the matrix
DESIGN_COLUMNS: tuple[str, ...] = ("ICUSTAY_ID", "ROW_ID", "window", "split", "feature_row", *ACUITY_FEATURES)


def ordered_task_rows(
    task: dict, samples: pd.DataFrame, windows: pd.DataFrame, feature_index: pd.DataFrame
) -> pd.DataFrame:
    """A task's windows (``task_windows``) ordered train, validation, test (stably: within a split the
    order is ``task_windows``'), so each split is a slice of the design matrix, not a copy."""
    rows = task_windows(
        samples[samples["task"] == task["task"]], windows[windows["cohort"] == task["cohort"]], feature_index
    )
    return rows.sort_values(
        "split", key=lambda split: split.map({s: i for i, s in enumerate(SPLIT_ORDER)}), kind="stable"
    ).reset_index(drop=True)


def design_key(rows: pd.DataFrame) -> bytes:
    """A digest of a task's ``DESIGN_COLUMNS``: two tasks with the same key have the same design matrix."""
    import hashlib

    hashed = pd.util.hash_pandas_object(rows[list(DESIGN_COLUMNS)], index=False).to_numpy()
    return hashlib.sha256(hashed.tobytes()).digest() + len(rows).to_bytes(8, "little")


# the columns of a prediction table besides the score: the protected attributes and age (for age bands)
PREDICTION_ATTRIBUTES: tuple[str, ...] = ("gender", "language", "ethnicity", "insurance", "age")


def note_predictions(
    task: str, rows: pd.DataFrame, part: slice, probability_of_window: np.ndarray, c: float, threshold: float
) -> pd.DataFrame:
    """One split's note-level predictions of one task: eq. 1's merge of the windows ``rows.iloc[part]``
    (``probability_of_window``: their classifier outputs) per stay, the label, the prediction at
    ``threshold`` and the stay's protected attributes and age, one row per stay (sorted by stay)."""
    probability = merge_window_probabilities(probability_of_window, rows["ICUSTAY_ID"].to_numpy()[part], c)
    stays = rows.iloc[part].drop_duplicates("ICUSTAY_ID").set_index("ICUSTAY_ID").loc[probability.index]
    return pd.DataFrame(
        {
            "task": task,
            "ICUSTAY_ID": probability.index,
            "SUBJECT_ID": stays["SUBJECT_ID"].to_numpy(),
            "probability": probability.to_numpy(),
            "label": stays["label"].to_numpy(),
            "prediction": (probability.to_numpy() >= threshold).astype(int),
            **{a: stays[a].to_numpy() for a in PREDICTION_ATTRIBUTES},
        }
    )


def _task_result(
    task: dict, rows: pd.DataFrame, x: np.ndarray, selected: SelectedClassifier, n_train: int, n_val: int, device: str
) -> dict:
    """One task's test and validation predictions with the protected attributes, its selection, grid
    records and classifier."""
    val, test = slice(n_train, n_train + n_val), slice(n_train + n_val, None)
    network = selected.trained.network(x.shape[1]).to(device)
    predictions = {
        name: note_predictions(
            task["task"], rows, part, predict_probability(network, x[part]), selected.c, selected.threshold
        )
        for name, part in (("test", test), ("validation", val))
    }
    config = selected.trained.config
    return {
        "predictions": predictions["test"],
        "validation": predictions["validation"],
        "selection": {
            "task": task["task"],
            "layers": config.layers,
            "width_ratio": config.ratio,
            "dropout": config.dropout,
            "c": selected.c,
            "validation_auprc": selected.validation_auprc,
            "threshold": selected.threshold,
            "validation_f1": selected.validation_f1,
            "epochs": selected.trained.epochs,
            "train_windows": n_train,
            "validation_windows": n_val,
            "test_samples": len(predictions["test"]),
        },
        "grid": [{"task": task["task"], **record} for record in selected.grid],
        "classifier": {
            "config": config.__dict__,
            "in_features": x.shape[1],
            "c": selected.c,
            "threshold": selected.threshold,
            "state": selected.trained.state,
        },
    }


def _task_grid(task: dict, grid, c_grid) -> tuple[tuple, tuple]:
    """The grid and c grid a task trains over: its own (``chosen_grids``) or the shared ones."""
    return tuple(task.get("grid", grid)), tuple(task.get("c_grid", c_grid))


def classify_tasks(
    jobs: Sequence[tuple[int, dict]],
    features: np.ndarray,
    feature_index: pd.DataFrame,
    samples: pd.DataFrame,
    windows: pd.DataFrame,
    grid,
    c_grid,
    seed: int,
    training: dict,
    stack_tasks: bool = True,
    weigh_rows: Callable[[pd.DataFrame], np.ndarray] | None = None,
) -> list[dict]:
    """The tasks ``jobs`` ((k, task) pairs of ``train_task_classifiers``; ``task``: its ``task`` and
    ``cohort``, and optionally a ``grid`` and ``c_grid`` of its own), task k under ``seed + k``. With
    ``stack_tasks``, tasks with the same windows, splits and acuity scores (``design_key``: a cohort's
    phenotypes) and the same grid share one design matrix and train together (``select_classifiers``);
    without, each task trains alone. With ``weigh_rows`` each training window weighs in the loss what
    that function gives it from the task's training rows (reweighing passes its Kamiran-Calders stay
    weights). The results come in the order of ``jobs``."""
    together: dict[tuple, list] = {}
    for k, task in jobs:
        rows = ordered_task_rows(task, samples, windows, feature_index)
        together.setdefault((design_key(rows) if stack_tasks else k, _task_grid(task, grid, c_grid)), []).append(
            (k, task, rows)
        )
    results: dict[int, dict] = {}
    for (_, (task_grid, task_c_grid)), members in together.items():
        rows = members[0][2]
        split = rows["split"].to_numpy()
        n_train, n_val = int((split == "train").sum()), int((split == "val").sum())
        train, val = slice(0, n_train), slice(n_train, n_train + n_val)
        x = design_matrix(rows, features, split == "train")
        labels = np.stack([member_rows["label"].to_numpy() for _, _, member_rows in members], axis=1)
        weights = None
        if weigh_rows is not None:
            weights = np.stack([weigh_rows(member_rows.iloc[train]) for _, _, member_rows in members], axis=1)
        selected = select_classifiers(
            x[train],
            labels[train],
            x[val],
            labels[val],
            rows["ICUSTAY_ID"].to_numpy()[val],
            task_grid,
            task_c_grid,
            [seed + k for k, _, _ in members],
            train_weights=weights,
            **training,
        )
        for (k, task, task_rows), chosen in zip(members, selected):
            results[k] = _task_result(task, task_rows, x, chosen, n_train, n_val, training.get("device", "cpu"))
    return [results[k] for k, _ in jobs]


_WORKER: dict = {}


def _start_task_worker(features_path: str, shared: dict, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    _WORKER.update(shared, features=np.load(features_path, mmap_mode="r"))


def _tasks_in_worker(jobs: list[tuple[int, dict]]) -> list[dict]:
    return classify_tasks(jobs, **_WORKER)


@dataclass
class TaskClassifiers:
    """Every task's classifier of one model (``train_task_classifiers``)."""

    predictions: pd.DataFrame  # task, ICUSTAY_ID, SUBJECT_ID, probability, label, prediction, attributes
    validation: pd.DataFrame  # the same columns for the validation stays (what a post-processor is fitted on)
    selections: pd.DataFrame  # the selected configuration, c, threshold and sizes per task
    grids: pd.DataFrame  # every configuration's validation record per task
    classifiers: dict[str, dict]  # per task: configuration, c, threshold and the network's own parameters


def train_task_classifiers(
    features: np.ndarray,
    feature_index: pd.DataFrame,
    samples: pd.DataFrame,
    windows: pd.DataFrame,
    tasks: pd.DataFrame,
    grid,
    c_grid,
    *,
    seed: int,
    training: dict,
    log,
    workers: int = 1,
    threads: int = 1,
    task_grids: dict[str, dict] | None = None,
    stack_tasks: bool = True,
    weigh_rows: Callable[[pd.DataFrame], np.ndarray] | None = None,
) -> TaskClassifiers:
    """One classifier per downstream task on one model's frozen window features (section 4.1): the
    grid of ``network_grid`` with early stopping, eq. 1's merge of window probabilities per sample
    with c tuned on validation, the configuration with the best validation AUPRC kept with its own
    parameters, the threshold at the best validation F1; then the test samples' predictions with
    their protected attributes. Task k trains under ``seed + k``. ``task_grids`` (``chosen_grids``)
    gives every task a grid of its own instead: a task it lacks is an error. ``weigh_rows`` weighs each
    training window in the loss (``classify_tasks``; a module-level function or a ``functools.partial``
    of one, since worker processes receive it pickled).

    With ``stack_tasks``, the tasks of a cohort that share their design matrix (its phenotypes) train
    together, one stacked network per grid point (``classify_tasks``): on a GPU, where one task's small
    networks leave it idle between kernel launches; on a CPU, which is busy either way, stacking was
    slower (tests/performance/bench_classify_stacked.py measures both). ``workers`` > 1 trains that many
    groups (a cohort and a grid) at once in worker processes (``threads`` CPUs shared among them; on a
    GPU they share it).
    ``features`` must then be a memory map (``np.load(path, mmap_mode="r")``), which each worker opens
    itself. Each task has its own seed, whichever process runs it, so the results are those of one
    process with as many threads as each worker has (another thread count sums in another order:
    rounding differences)."""
    import time

    if task_grids is not None:
        lacking = [t for t in tasks["task"] if t not in task_grids]
        if lacking:
            raise ValueError(f"no chosen classifier for {len(lacking)} task(s): {', '.join(lacking[:5])}")
    jobs = [
        (k, {"task": t.task, "cohort": t.cohort, **(task_grids[t.task] if task_grids is not None else {})})
        for k, t in enumerate(tasks.itertuples(index=False))
    ]
    shared = {
        "feature_index": feature_index,
        "samples": samples,
        "windows": windows,
        "grid": grid,
        "c_grid": c_grid,
        "seed": seed,
        "training": training,
        "stack_tasks": stack_tasks,
        "weigh_rows": weigh_rows,
    }
    groups: dict[tuple, list] = {}  # a cohort and a grid: a worker's unit of work
    for k, task in jobs:
        groups.setdefault((task["cohort"], _task_grid(task, grid, c_grid)), []).append((k, task))
    started = time.time()
    if workers > 1:
        path = getattr(features, "filename", None)
        if path is None:
            raise ValueError(
                "training tasks in worker processes needs the features as a memory map "
                "(np.load(path, mmap_mode='r')), which each worker opens itself"
            )
        context = spawned_map(
            _tasks_in_worker,
            list(groups.values()),
            workers,
            _start_task_worker,
            (str(path), shared, max(1, threads // workers)),
        )
    else:
        context = nullcontext(classify_tasks(group, features, **shared) for group in groups.values())
    finished: dict[int, dict] = {}
    with context as results:
        for group, group_results in zip(groups.values(), results):
            for (k, task), result in zip(group, group_results):
                finished[k] = result
                selection = result["selection"]
                log.info(
                    "[%d/%d] %s: layers %d ratio %d dropout %.1f c %g, validation AUPRC %.3f, %d test samples "
                    "(%.0f s; a group of %d task(s))",
                    k + 1,
                    len(jobs),
                    task["task"],
                    selection["layers"],
                    selection["width_ratio"],
                    selection["dropout"],
                    selection["c"],
                    selection["validation_auprc"],
                    selection["test_samples"],
                    time.time() - started,
                    len(group),
                )
    done = [finished[k] for k, _ in jobs]
    return TaskClassifiers(
        pd.concat([r["predictions"] for r in done], ignore_index=True),
        pd.concat([r["validation"] for r in done], ignore_index=True),
        pd.DataFrame([r["selection"] for r in done]),
        pd.DataFrame([record for r in done for record in r["grid"]]),
        {r["selection"]["task"]: r["classifier"] for r in done},
    )
