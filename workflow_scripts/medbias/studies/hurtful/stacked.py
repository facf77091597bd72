"""One grid point's window classifiers of several tasks trained at once, as one stacked network.

The 28 phenotype tasks of a cohort share their stays, splits and windows, so they share one design
matrix and differ only in the label (section 3.2). Trained one after another, each of the grid's small
networks leaves a GPU idle between kernel launches (one task's epoch at batch 256 is thousands of
launches of small matrix products); stacked, every launch does the work of all the tasks. Each task
keeps what it would have alone: its initial weights (``build_network`` under its own seed), its own
batch order (a generator of its own seed), its own Adam moments (Adam is element-wise, and the summed
loss gives each task's parameters its own mean loss's gradient), its own batch-norm statistics, its
own early stopping and the parameters of its own best epoch. A task that stops leaves the stack.
The sums run in another order than one network's, so results agree with training the tasks one at a
time to rounding; dropout masks come from one generator for the whole stack (for one task: the same
masks as alone).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from medbias.core.batching import sigmoid_outputs

BATCH_NORM_EPS = 1e-5  # torch.nn.BatchNorm1d's defaults, which build_network's layers use
BATCH_NORM_MOMENTUM = 0.1


class StackedNetworks:
    """The parameters of T networks of one ``NetworkConfig`` stacked along a first axis: per hidden layer
    a weight [T, in, out], a bias [T, 1, out], batch norm's scale and shift [T, 1, out] and running mean
    and variance [T, 1, out]; then the output layer's weight [T, in, 1] and bias [T, 1, 1]."""

    def __init__(self, networks: Sequence, device: str):
        import torch
        from torch import nn

        def stack(tensors, shape=None):
            stacked = torch.stack([t.detach() for t in tensors]).to(device)
            return stacked if shape is None else stacked.reshape(shape)

        linears = [[m for m in net if isinstance(m, nn.Linear)] for net in networks]
        norms = [[m for m in net if isinstance(m, nn.BatchNorm1d)] for net in networks]
        t = len(networks)
        self.hidden = []
        for i in range(len(norms[0])):
            width = linears[0][i].out_features
            self.hidden.append(
                {
                    "weight": stack([n[i].weight.T for n in linears]).requires_grad_(),
                    "bias": stack([n[i].bias for n in linears], (t, 1, width)).requires_grad_(),
                    "scale": stack([n[i].weight for n in norms], (t, 1, width)).requires_grad_(),
                    "shift": stack([n[i].bias for n in norms], (t, 1, width)).requires_grad_(),
                    "mean": stack([n[i].running_mean for n in norms], (t, 1, width)),
                    "var": stack([n[i].running_var for n in norms], (t, 1, width)),
                }
            )
        self.out = {
            "weight": stack([n[-1].weight.T for n in linears]).requires_grad_(),
            "bias": stack([n[-1].bias for n in linears], (t, 1, 1)).requires_grad_(),
        }
        self.dropout = next((m.p for m in networks[0] if isinstance(m, nn.Dropout)), 0.0)

    def parameters(self) -> list:
        return [layer[key] for layer in self.hidden for key in ("weight", "bias", "scale", "shift")] + [
            self.out["weight"],
            self.out["bias"],
        ]

    def logits(self, x, training: bool):
        """Logits [T, rows]. ``x``: [T, rows, in] (each task's own rows) or [rows, in] (the same rows for
        every task, as in validation). Training mode normalises with the batch's statistics and updates
        the running ones (unbiased variance, as torch's batch norm); evaluation mode uses the running ones."""
        import torch

        h = x
        for layer in self.hidden:
            h = torch.matmul(h, layer["weight"]) + layer["bias"]
            if training:
                mean, var = h.mean(dim=1, keepdim=True), h.var(dim=1, unbiased=False, keepdim=True)
                with torch.no_grad():
                    n = h.shape[1]
                    layer["mean"].mul_(1 - BATCH_NORM_MOMENTUM).add_(BATCH_NORM_MOMENTUM * mean)
                    layer["var"].mul_(1 - BATCH_NORM_MOMENTUM).add_(BATCH_NORM_MOMENTUM * var * n / (n - 1))
            else:
                mean, var = layer["mean"], layer["var"]
            h = (h - mean) / torch.sqrt(var + BATCH_NORM_EPS) * layer["scale"] + layer["shift"]
            h = torch.nn.functional.dropout(torch.relu(h), self.dropout, training)
        return (torch.matmul(h, self.out["weight"]) + self.out["bias"])[..., 0]

    def keep(self, rows, optimizer):
        """Only the tasks at positions ``rows`` (a LongTensor) stay in the stack, with their Adam state;
        returns the new optimizer."""
        import torch

        old = self.parameters()
        for layer in [*self.hidden, self.out]:
            for key, value in layer.items():
                layer[key] = value.detach()[rows].clone().requires_grad_(value.requires_grad)
        new = torch.optim.Adam(self.parameters(), **{k: optimizer.defaults[k] for k in ("lr", "betas", "eps")})
        for before, after in zip(old, self.parameters()):
            state = optimizer.state.get(before)
            if state:
                new.state[after] = {
                    key: (value if key == "step" else value[rows].clone()) for key, value in state.items()
                }
        return new

    def task_state(self, position: int, steps: int) -> dict:
        """Task ``position``'s parameters as ``build_network``'s state dict (on the CPU)."""
        import torch

        state, index = {}, 0
        for layer in self.hidden:
            state[f"{index}.weight"] = layer["weight"][position].T
            state[f"{index}.bias"] = layer["bias"][position, 0]
            state[f"{index + 1}.weight"] = layer["scale"][position, 0]
            state[f"{index + 1}.bias"] = layer["shift"][position, 0]
            state[f"{index + 1}.running_mean"] = layer["mean"][position, 0]
            state[f"{index + 1}.running_var"] = layer["var"][position, 0]
            state[f"{index + 1}.num_batches_tracked"] = torch.tensor(steps)
            index += 4
        state[f"{index}.weight"] = self.out["weight"][position].T
        state[f"{index}.bias"] = self.out["bias"][position, 0]
        return {key: value.detach().to("cpu", copy=True).contiguous() for key, value in state.items()}


def validation_losses(stack: StackedNetworks, features, label: np.ndarray, batch_size: int = 4096) -> np.ndarray:
    """Each stacked task's binary cross-entropy on the validation windows (``label`` [rows, T]), on
    probabilities clipped to [1e-7, 1 - 1e-7] as ``classify._loss`` computes it for one network."""
    probabilities = sigmoid_outputs(
        lambda x: stack.logits(x, training=False), features, stack.out["weight"].device, batch_size, axis=1
    )
    p = np.clip(probabilities, 1e-7, 1 - 1e-7).T if probabilities is not None else np.zeros((0, label.shape[1]))
    return -np.mean(label * np.log(p) + (1 - label) * np.log(1 - p), axis=0)
