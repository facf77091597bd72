"""Note-level merging of window probabilities (eq. 1), the scaling factor chosen on validation, and
the best-F1 threshold: hand-computed cases and a brute-force peer."""

from __future__ import annotations

import numpy as np
import pytest

from medbias.studies.hurtful.classify import (
    best_f1_threshold,
    choose_scaling_factor,
    merge_window_probabilities,
    note_labels,
)


def test_eq1_merge_by_hand():
    merged = merge_window_probabilities(np.array([0.2, 0.8, 0.3]), np.array([7, 7, 3]), c=2.0)
    assert merged.index.tolist() == [3, 7]
    assert merged[7] == pytest.approx((0.8 + 0.5 * 2 / 2) / (1 + 2 / 2))  # 0.65
    assert merged[3] == pytest.approx(0.3)  # one window: max = mean
    assert merge_window_probabilities(np.array([0.2, 0.8]), np.array([1, 1]), c=1e9)[1] == pytest.approx(0.8, abs=1e-6)
    assert merge_window_probabilities(np.array([0.2, 0.8]), np.array([1, 1]), c=1e-9)[1] == pytest.approx(0.5, abs=1e-6)
    with pytest.raises(ValueError, match="positive"):
        merge_window_probabilities(np.array([0.2]), np.array([1]), c=0)


def test_scaling_factor_prefers_the_maximum_when_one_window_carries_the_evidence():
    # positive notes: one telling window among quiet ones (mean 0.3); negatives: uniformly 0.5
    probability = np.array([0.9, 0.1, 0.1, 0.1] * 3 + [0.5] * 12)
    note = np.repeat(np.arange(6), 4)
    label = np.repeat([1, 1, 1, 0, 0, 0], 4)
    c, auprc = choose_scaling_factor(probability, label, note, grid=[0.01, 1.0, 100.0])
    assert c == 100.0 and auprc == pytest.approx(1.0)
    # now the negatives carry one misleading window (max 0.9, mean 0.3) and positives are uniformly 0.6
    swapped = np.array([0.6] * 12 + [0.9, 0.1, 0.1, 0.1] * 3)
    c, auprc = choose_scaling_factor(swapped, label, note, grid=[100.0, 0.01])
    assert c == 0.01 and auprc == pytest.approx(1.0)


def test_windows_of_one_note_must_share_the_label():
    with pytest.raises(ValueError, match="different labels: notes \\[4\\]"):
        note_labels(np.array([1, 0, 1]), np.array([4, 4, 5]))


def test_best_f1_threshold_by_hand():
    # thresholds 0.9, 0.8, 0.7, 0.6, 0.2 give F1 1/2, 2/5, 2/3, 6/7, 3/4
    t, f1 = best_f1_threshold(np.array([0.2, 0.7, 0.9, 0.6, 0.8]), np.array([0, 1, 1, 1, 0]))
    assert t == 0.6 and f1 == pytest.approx(6 / 7)
    # equal probabilities fall on the same side of the threshold: 0.5 takes both rows (F1 4/5)
    t, f1 = best_f1_threshold(np.array([0.9, 0.5, 0.5, 0.1]), np.array([1, 1, 0, 0]))
    assert t == 0.5 and f1 == pytest.approx(0.8)
    # F1 2/3 at 0.8 and at 0.2: the higher threshold wins
    t, _ = best_f1_threshold(np.array([0.8, 0.6, 0.4, 0.2]), np.array([1, 0, 0, 1]))
    assert t == 0.8
    t, f1 = best_f1_threshold(np.array([0.3, 0.6]), np.array([0, 0]))
    assert f1 == 0.0 and t > 0.6


def test_best_f1_threshold_matches_a_brute_force_search():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    for _ in range(20):
        p = np.round(rng.random(60), 2)  # rounding makes ties
        y = (rng.random(60) < p).astype(int)
        t, f1 = best_f1_threshold(p, y)
        scores = {v: f1_score(y, p >= v) for v in np.unique(p)}
        assert f1 == pytest.approx(max(scores.values()))
        assert t == max(v for v, s in scores.items() if s == pytest.approx(max(scores.values())))


def _separable(rng, n, shift):
    x = rng.normal(size=(n, 6))
    y = (x[:, 0] + 0.5 * x[:, 1] + shift * rng.normal(size=n) > 0.3).astype(int)
    return x.astype(np.float32), y


def test_network_widths_and_grid_order():
    from medbias.studies.hurtful.classify import NetworkConfig, build_network, network_grid

    assert NetworkConfig(3, 4, 0.0).widths(3076) == [769, 192]
    assert NetworkConfig(1, 2, 0.0).widths(100) == []  # a single linear layer: logistic regression
    grid = network_grid([1, 2], [2, 4], [0.0, 0.2])
    # one 1-layer net (ratio and dropout shape no hidden layer), then 2 x 2 two-layer nets
    assert grid == [
        NetworkConfig(1, 2, 0.0),
        NetworkConfig(2, 2, 0.0),
        NetworkConfig(2, 2, 0.2),
        NetworkConfig(2, 4, 0.0),
        NetworkConfig(2, 4, 0.2),
    ]
    # the default grid is the reference code's 19 networks: 2-4 layers x 3 ratios x 2 dropouts, plus one
    assert len(network_grid([1, 2, 3, 4], [2, 4, 6], [0.0, 0.2])) == 19
    net = build_network(16, NetworkConfig(3, 2, 0.2))
    assert [type(m).__name__ for m in net][:4] == ["Linear", "BatchNorm1d", "ReLU", "Dropout"]
    assert net[-1].out_features == 1


def _loss(network, features: np.ndarray, label: np.ndarray) -> float:
    """Peer: one torch network's validation loss (binary cross-entropy on clipped probabilities)."""
    from medbias.studies.hurtful.classify import predict_probability

    p = np.clip(predict_probability(network, features), 1e-7, 1 - 1e-7)
    return float(-np.mean(label * np.log(p) + (1 - label) * np.log(1 - p)))


def test_early_stopping_returns_the_best_epochs_parameters():
    from medbias.studies.hurtful.classify import NetworkConfig, train_network

    rng = np.random.default_rng(0)
    train_x, train_y = _separable(rng, 200, 0.8)
    val_x, val_y = _separable(rng, 200, 0.8)
    trained = train_network(
        train_x, train_y, val_x, val_y, NetworkConfig(3, 1, 0.0), seed=0, max_epochs=200, patience=3, learning_rate=1e-2
    )
    assert trained.epochs < 200  # it overfits 200 rows and stops
    assert _loss(trained.network(6), val_x, val_y) == pytest.approx(trained.validation_loss, rel=1e-6)
    again = train_network(
        train_x, train_y, val_x, val_y, NetworkConfig(3, 1, 0.0), seed=0, max_epochs=200, patience=3, learning_rate=1e-2
    )
    assert again.validation_loss == trained.validation_loss  # seeded


def test_selection_keeps_the_winning_configurations_own_parameters():
    """The winner is the grid point with the best validation AUPRC after merging, whichever position
    it has, and its saved parameters reproduce that AUPRC (the reference code saved the last point's)."""
    from sklearn.metrics import average_precision_score

    from medbias.studies.hurtful.classify import NetworkConfig, predict_probability, select_classifier

    rng = np.random.default_rng(1)
    train_x, train_y = _separable(rng, 400, 0.5)
    val_x, val_y = _separable(rng, 300, 0.5)
    val_note = np.arange(300) // 3
    val_y = np.repeat(val_y[::3], 3)  # windows of a note share its label
    grid = [NetworkConfig(2, 1, 0.0), NetworkConfig(1, 1, 0.0), NetworkConfig(3, 2, 0.2)]
    selected = select_classifier(train_x, train_y, val_x, val_y, val_note, grid, [0.5, 2.0], seed=0, max_epochs=30)
    scores = [r["validation_auprc"] for r in selected.grid]
    assert len(scores) == 3 and selected.validation_auprc == max(scores)
    winner = grid[scores.index(max(scores))]
    assert selected.trained.config == winner
    merged = merge_window_probabilities(predict_probability(selected.trained.network(6), val_x), val_note, selected.c)
    truth = note_labels(val_y, val_note).loc[merged.index]
    assert average_precision_score(truth, merged) == pytest.approx(selected.validation_auprc)
    t, f1 = best_f1_threshold(merged.to_numpy(), truth.to_numpy())
    assert (t, f1) == (selected.threshold, selected.validation_f1)
    # reversed order: the same winner, not the last point tried
    again = select_classifier(train_x, train_y, val_x, val_y, val_note, grid[::-1], [0.5, 2.0], seed=0, max_epochs=30)
    assert again.trained.config == winner and again.validation_auprc == pytest.approx(selected.validation_auprc)


def test_standardise_on_training_uses_training_rows_only():
    from medbias.studies.hurtful.classify import standardise_on_training

    values = np.array([[1.0, 5.0], [3.0, np.nan], [np.nan, 5.0], [100.0, 7.0]])
    is_train = np.array([True, True, True, False])
    out = standardise_on_training(values, is_train)
    # column 0: training values 1, 3 and the median 2 filled in -> mean 2, std sqrt(2/3)
    np.testing.assert_allclose(out[:, 0], (np.array([1, 3, 2, 100]) - 2) / np.sqrt(2 / 3), rtol=1e-6)
    # column 1: constant 5 on the training rows (median fills the gap): centred, not scaled
    np.testing.assert_allclose(out[:, 1], [0, 0, 0, 2])


def test_task_windows_joins_samples_windows_and_feature_rows():
    import pandas as pd

    from medbias.studies.hurtful.classify import task_windows

    samples = pd.DataFrame({"ICUSTAY_ID": [1, 2], "label": [1, 0], "split": ["train", "test"]})
    windows = pd.DataFrame({"ICUSTAY_ID": [1, 1, 2], "ROW_ID": [10, 10, 20], "window": [0, 1, 0]})
    index = pd.DataFrame({"ROW_ID": [10, 10, 20, 30], "window": [0, 1, 0, 0]})
    rows = task_windows(samples, windows, index)
    assert rows["feature_row"].tolist() == [0, 1, 2] and rows["label"].tolist() == [1, 1, 0]
    with pytest.raises(ValueError, match="samples without windows \\(ICUSTAY_ID \\[3\\]"):
        task_windows(
            pd.concat([samples, pd.DataFrame({"ICUSTAY_ID": [3], "label": [0], "split": ["val"]})]), windows, index
        )
    with pytest.raises(ValueError, match="missing from the feature file \\(first ROW_ID 20\\)"):
        task_windows(samples, windows, index.iloc[:2])


def test_the_design_matrix_by_blocks_equals_standardising_all_columns_at_once():
    """Peer computation: the former one-shot standardisation of every [CLS] column in float64, exactly."""
    import pandas as pd

    from medbias.studies.hurtful.classify import ACUITY_FEATURES, design_matrix, standardise_on_training

    rng = np.random.default_rng(4)
    features = rng.normal(3, 2, size=(50, 70)).astype(np.float32)
    rows = pd.DataFrame({"feature_row": rng.integers(0, 50, 40), **{a: rng.normal(size=40) for a in ACUITY_FEATURES}})
    rows.loc[3, "oasis"] = np.nan
    is_train = rng.random(40) < 0.6
    expected = np.hstack(
        [
            standardise_on_training(features[rows["feature_row"].to_numpy()], is_train),
            standardise_on_training(rows[list(ACUITY_FEATURES)].to_numpy(), is_train),
        ]
    )
    got = design_matrix(rows, features, is_train, block=16)
    assert got.dtype == np.float32 and np.array_equal(got, expected)


def _task_world(tmp_path):
    """Two cohorts, three tasks, 150 stays of 1-3 windows; feature 0 carries label "a"."""
    import pandas as pd

    rng = np.random.default_rng(7)
    stays = np.arange(1, 151)
    n_windows = rng.integers(1, 4, size=len(stays))
    windows = pd.DataFrame(
        {
            "ICUSTAY_ID": np.repeat(stays, n_windows),
            "ROW_ID": np.repeat(stays * 10, n_windows),
            "window": np.concatenate([np.arange(n) for n in n_windows]),
        }
    )
    index = windows[["ROW_ID", "window"]].sample(frac=1, random_state=1).reset_index(drop=True)
    label = {"a": rng.random(len(stays)) < 0.4, "b": rng.random(len(stays)) < 0.5}
    features = rng.normal(size=(len(index), 12)).astype(np.float32)
    stay_of_row = dict(zip(windows["ROW_ID"], windows["ICUSTAY_ID"]))
    features[:, 0] += 3.0 * label["a"][np.array([stay_of_row[r] for r in index["ROW_ID"]]) - 1]
    split = np.where(stays % 5 == 0, "test", np.where(stays % 5 == 1, "val", "train"))
    n = len(stays)
    base = pd.DataFrame(
        {
            "ICUSTAY_ID": stays,
            "SUBJECT_ID": stays + 1000,
            "split": split,
            "age": rng.normal(60, 10, n),
            "oasis": rng.normal(size=n),
            "sapsii": rng.normal(size=n),
            "sofa": rng.normal(size=n),
            "gender": rng.choice(["M", "F"], n),
            "language": "ENGL",
            "ethnicity": "WHITE",
            "insurance": "Medicare",
        }
    )
    samples = pd.concat(
        [
            base.assign(task=task, cohort=cohort, label=label[source].astype(int))
            for task, cohort, source in (("t1", "c1", "a"), ("t2", "c1", "b"), ("t3", "c2", "a"))
        ]
    )
    all_windows = pd.concat([windows.assign(cohort="c1"), windows.assign(cohort="c2")])
    np.save(tmp_path / "features.npy", features)
    tasks = pd.DataFrame({"task": ["t1", "t2", "t3"], "cohort": ["c1", "c1", "c2"]})
    return tmp_path / "features.npy", index, samples, all_windows, tasks


def test_tasks_in_worker_processes_give_the_serial_results(tmp_path):
    """Two worker processes (each opening the memory-mapped features) give exactly the one-process
    result with as many threads per process: every task keeps its seed; the outputs come in task order."""
    import logging

    import torch

    from medbias.studies.hurtful.classify import NetworkConfig, train_task_classifiers

    path, index, samples, windows, tasks = _task_world(tmp_path)
    grid = [NetworkConfig(1, 2, 0.0), NetworkConfig(2, 2, 0.0)]
    run = dict(
        seed=3,
        training={"max_epochs": 8, "patience": 2, "batch_size": 32, "learning_rate": 0.05},
        log=logging.getLogger("test"),
    )
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as each of the two workers of 2 threads: float sums in the same order
    try:
        serial = train_task_classifiers(np.load(path), index, samples, windows, tasks, grid, [0.5, 2.0], **run)
    finally:
        torch.set_num_threads(threads)
    parallel = train_task_classifiers(
        np.load(path, mmap_mode="r"), index, samples, windows, tasks, grid, [0.5, 2.0], workers=2, threads=2, **run
    )
    assert serial.selections["task"].tolist() == ["t1", "t2", "t3"]
    assert serial.predictions.equals(parallel.predictions)
    assert serial.selections.equals(parallel.selections) and serial.grids.equals(parallel.grids)
    for task in ("t1", "t2", "t3"):
        for key, value in serial.classifiers[task]["state"].items():
            assert np.array_equal(value.numpy(), parallel.classifiers[task]["state"][key].numpy())
    # the tasks whose label feature 0 carries are learnt (validation AUPRC), the random one is not
    auprc = serial.selections.set_index("task")["validation_auprc"]
    assert auprc["t1"] > 0.9 and auprc["t3"] > 0.9 and auprc["t2"] < 0.8
    with pytest.raises(ValueError, match="memory map"):
        train_task_classifiers(np.load(path), index, samples, windows, tasks, grid, [0.5], workers=2, **run)


def test_a_replicate_retrains_each_tasks_chosen_network_and_c(tmp_path):
    """replicates_search "once": given replicate 0's selection, each task trains only its chosen network
    with its chosen c, and under replicate 0's seed that is exactly replicate 0's classifier. Tasks
    trained one at a time, as hurtful_classify trains them on the CPU: stacked (the GPU's way), a task
    retrained alone shares no dropout generator with the stack it was selected in, so it agrees only
    where its network has no dropout, and then to rounding."""
    import logging

    from medbias.studies.hurtful.classify import NetworkConfig, chosen_grids, train_task_classifiers

    path, index, samples, windows, tasks = _task_world(tmp_path)
    grid = [NetworkConfig(1, 2, 0.0), NetworkConfig(2, 2, 0.0), NetworkConfig(2, 4, 0.2)]
    run = dict(
        training={"max_epochs": 8, "patience": 2, "batch_size": 32, "learning_rate": 0.05},
        log=logging.getLogger("test"),
        stack_tasks=False,
    )
    features = np.load(path)
    first = train_task_classifiers(features, index, samples, windows, tasks, grid, [0.5, 2.0], seed=3, **run)
    grids = chosen_grids(first.selections)
    assert set(grids) == {"t1", "t2", "t3"}
    for row in first.selections.itertuples():
        assert grids[row.task] == {"grid": [NetworkConfig(row.layers, row.width_ratio, row.dropout)], "c_grid": [row.c]}
    same_seed = train_task_classifiers(
        features, index, samples, windows, tasks, grid, [0.5, 2.0], seed=3, task_grids=grids, **run
    )
    assert same_seed.predictions.equals(first.predictions)
    assert same_seed.selections.equals(first.selections)
    assert len(same_seed.grids) == 3 and len(first.grids) == 9  # one fit per task instead of the grid's three
    replicate = train_task_classifiers(
        features, index, samples, windows, tasks, grid, [0.5, 2.0], seed=99, task_grids=grids, **run
    )
    kept = ["task", "layers", "width_ratio", "dropout", "c"]
    assert replicate.selections[kept].equals(first.selections[kept])
    assert not np.allclose(replicate.predictions["probability"], first.predictions["probability"])
    with pytest.raises(ValueError, match="no chosen classifier for 1 task"):
        train_task_classifiers(
            features,
            index,
            samples,
            windows,
            tasks,
            grid,
            [0.5],
            seed=3,
            task_grids={t: grids[t] for t in ("t1", "t2")},
            **run,
        )
    with pytest.raises(ValueError, match="lacks column"):
        chosen_grids(first.selections.drop(columns="c"))


def _one_network_peer(train_x, train_y, val_x, val_y, config, seed, max_epochs, patience, batch_size, learning_rate):
    """Peer: one torch.nn network trained alone (Adam, BCEWithLogitsLoss, seeded batch order, early
    stopping on the validation loss): the loop train_networks replaced, kept here to compare with."""
    import torch

    from medbias.studies.hurtful.classify import build_network

    torch.manual_seed(seed)
    network = build_network(train_x.shape[1], config)
    optimizer = torch.optim.Adam(network.parameters(), lr=learning_rate)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    x, y = torch.as_tensor(train_x), torch.as_tensor(train_y, dtype=torch.float32)
    generator = torch.Generator().manual_seed(seed)
    best_loss, best_state, since_best, epoch = np.inf, None, 0, 0
    for epoch in range(1, max_epochs + 1):
        network.train()
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), batch_size):
            rows = order[start : start + batch_size]
            if len(rows) < 2:
                continue
            optimizer.zero_grad()
            loss_fn(network(x[rows])[:, 0], y[rows]).backward()
            optimizer.step()
        validation = _loss(network, val_x, val_y)
        if validation < best_loss:
            best_loss, best_state, since_best = validation, {k: v.clone() for k, v in network.state_dict().items()}, 0
        else:
            since_best += 1
            if since_best >= patience:
                break
    return best_state, best_loss, epoch


def _assert_same_network(ours: dict, peer: dict, rtol: float) -> None:
    """Equal to ``rtol``, except where a linear layer's bias sits before batch norm: that bias gets only
    rounding noise as gradient (the batch mean removes it), which Adam scales up to steps of the
    learning rate's size, so it (and the running mean that follows it) wanders differently under any
    other order of sums; it cancels in training and nearly so in evaluation (bias - running mean)."""
    assert ours.keys() == peer.keys()
    for key, value in peer.items():
        layer, name = key.split(".")
        before_norm = name == "running_mean" or (name == "bias" and f"{int(layer) + 1}.running_mean" in peer)
        if not before_norm:
            assert np.allclose(ours[key].numpy(), value.numpy(), rtol=rtol, atol=rtol / 10), key


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_stacked_tasks_train_as_each_would_alone(dropout):
    """Three tasks on one design matrix, trained as one stacked network, train as each task's own
    torch.nn network trained alone (its seed, batch order, Adam and batch norm): after an epoch, equal
    to rounding; run to early stopping, each stops at its own epoch with its own validation loss (to
    the wander of the biases before batch norm, ``_assert_same_network``). With dropout that holds for a
    task alone (a stack's masks come from one generator), so three tasks are then checked for their
    own early stopping only. One torch thread: the peer's sums in another thread count round otherwise,
    and where the validation curve is flat that moves an early stop by epochs (seven, at two threads)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _stacked_against_alone(dropout)
    finally:
        torch.set_num_threads(threads)


def _stacked_against_alone(dropout: float) -> None:
    from medbias.studies.hurtful.classify import NetworkConfig, train_networks

    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 8)).astype(np.float32)
    labels = np.stack(
        [(x[:, 0] + 0.5 * rng.normal(size=300) > 0), (x[:, 1] - x[:, 2] > 0.3), rng.random(300) < 0.3], axis=1
    ).astype(np.float32)  # a noisy, a clean and a random task
    config, seeds = NetworkConfig(3, 2, dropout), [11, 12, 13]
    tasks = [0] if dropout else [0, 1, 2]
    split = dict(train_x=x[:200], train_y=labels[:200][:, tasks], val_x=x[200:], val_y=labels[200:][:, tasks])
    one_epoch = dict(max_epochs=1, patience=3, batch_size=32, learning_rate=0.02)
    stacked = train_networks(**split, config=config, seeds=[seeds[t] for t in tasks], **one_epoch)
    for position, t in enumerate(tasks):
        state, loss, _ = _one_network_peer(
            x[:200], labels[:200, t], x[200:], labels[200:, t], config, seeds[t], **one_epoch
        )
        _assert_same_network(stacked[position].state, state, rtol=1e-4)
        assert stacked[position].validation_loss == pytest.approx(loss, rel=0.01)
    to_stopping = {**one_epoch, "max_epochs": 40}
    if dropout:
        # with dropout the two paths differ by rounding, which a flat validation curve turns into an early
        # stop some epochs apart (17 against 15 on a 2-core AMD EPYC): pin what is stable, the same network
        # at a fixed epoch count, and the loss each stops at
        fixed = {**one_epoch, "max_epochs": 10, "patience": 100}
        stacked = train_networks(**split, config=config, seeds=[seeds[t] for t in tasks], **fixed)
        _, loss, epochs = _one_network_peer(
            x[:200], labels[:200, 0], x[200:], labels[200:, 0], config, seeds[0], **fixed
        )
        assert stacked[0].epochs == epochs == 10 and stacked[0].validation_loss == pytest.approx(loss, rel=0.05)
    stacked = train_networks(**split, config=config, seeds=[seeds[t] for t in tasks], **to_stopping)
    for position, t in enumerate(tasks):
        _, loss, epochs = _one_network_peer(
            x[:200], labels[:200, t], x[200:], labels[200:, t], config, seeds[t], **to_stopping
        )
        assert stacked[position].epochs < 40 and epochs < 40
        assert stacked[position].validation_loss == pytest.approx(loss, rel=0.05)
        if not dropout:  # the same arithmetic up to the bias before batch norm: the same stopping epoch
            assert stacked[position].epochs == epochs
    if dropout:
        together = train_networks(x[:200], labels[:200], x[200:], labels[200:], config, seeds, **to_stopping)
        assert len({t.epochs for t in together}) > 1  # each task stopped on its own
        assert together[2].validation_loss > together[1].validation_loss  # the random task learns least


def test_tasks_sharing_a_design_matrix_train_together_as_they_would_alone(tmp_path):
    """t1 and t2 share their cohort's stays, splits and windows (only the label differs): they form one
    stacked group; t3 belongs to another cohort (with a copy of the same windows), a group of its own. Each
    task's selection and test probabilities are
    those of training it alone, to rounding."""
    import logging

    from medbias.studies.hurtful.classify import NetworkConfig, design_key, ordered_task_rows, train_task_classifiers

    path, index, samples, windows, tasks = _task_world(tmp_path)
    rows = {
        t: ordered_task_rows({"task": t, "cohort": c}, samples, windows, index)
        for t, c in zip(tasks["task"], tasks["cohort"])
    }
    assert design_key(rows["t1"]) == design_key(rows["t2"])
    assert design_key(rows["t1"]) != design_key(rows["t1"].iloc[1:])
    grid = [NetworkConfig(1, 2, 0.0), NetworkConfig(2, 2, 0.0)]
    run = dict(
        seed=3,
        training={"max_epochs": 8, "patience": 2, "batch_size": 32, "learning_rate": 0.01},
        log=logging.getLogger("test"),
    )
    features = np.load(path)
    together = train_task_classifiers(features, index, samples, windows, tasks, grid, [0.5, 2.0], **run)
    alone = train_task_classifiers(features, index, samples, windows, tasks, grid, [0.5, 2.0], stack_tasks=False, **run)
    kept = ["task", "layers", "width_ratio", "dropout", "c", "epochs", "test_samples"]
    assert together.selections[kept].equals(alone.selections[kept])
    assert together.predictions.drop(columns=["probability", "prediction"]).equals(
        alone.predictions.drop(columns=["probability", "prediction"])
    )
    assert np.allclose(together.predictions["probability"], alone.predictions["probability"], atol=0.02)
