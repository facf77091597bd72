"""Projection debiasers (Xie et al. 2024, section 4: SentenceDebias and INLP), scikit-learn style.

Both learn an orthogonal projection P = I - B B^T (B: an orthonormal basis of the bias subspace,
d x k) and are applied as one matrix product on hidden states, ``h @ P``, never as a loop over
positions. P is symmetric and idempotent (P @ P = P), so applying it twice changes nothing.

- SentenceDebias (Liang et al. 2020): the bias subspace is spanned by the first ``k`` principal
  components of the counterfactual sentence embeddings, each centred on its pair's mean (as
  Bolukbasi et al. centre the definitional sets), so the shared content of a pair cancels and what
  remains is the attribute difference.
- INLP (Ravfogel et al. 2020): repeatedly train a linear classifier of the attribute on the
  projected embeddings and add its (normalised) weight vectors to the bias subspace; P projects onto
  the nullspace of every direction found, so afterwards no linear classifier of that family finds
  the attribute much better than the majority rate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


def projection_from_basis(basis: np.ndarray, dim: int) -> np.ndarray:
    """P = I - Q Q^T for the orthonormalised columns Q of ``basis`` (dim x k); k = 0 gives I."""
    if basis.size == 0:
        return np.eye(dim)
    q, r = np.linalg.qr(basis)
    q = q[:, np.abs(np.diag(r)) > 1e-10]
    return np.eye(dim) - q @ q.T


@dataclass
class SentenceDebias:
    """fit(first, second): rows i of the two arrays are the embeddings of a counterfactual pair."""

    k: int = 1
    basis_: np.ndarray = field(default=None, repr=False)
    projection_: np.ndarray = field(default=None, repr=False)
    explained_variance_ratio_: np.ndarray = field(default=None, repr=False)

    def fit(self, first: np.ndarray, second: np.ndarray) -> SentenceDebias:
        first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
        if first.shape != second.shape:
            raise ValueError(f"counterfactual pairs need arrays of one shape, got {first.shape} and {second.shape}")
        mean = (first + second) / 2
        centred = np.vstack([first - mean, second - mean])
        _, singular, vt = np.linalg.svd(centred, full_matrices=False)
        self.basis_ = vt[: self.k].T
        self.explained_variance_ratio_ = (singular**2 / np.sum(singular**2))[: self.k]
        self.projection_ = projection_from_basis(self.basis_, first.shape[1])
        return self

    def transform(self, embeddings: np.ndarray) -> np.ndarray:
        return np.asarray(embeddings) @ self.projection_


def _default_classifier():
    from sklearn.svm import LinearSVC

    return LinearSVC(dual="auto", max_iter=5000)


@dataclass
class INLP:
    """fit(embeddings, attribute labels): ``n_iterations`` rounds of a linear classifier
    (``make_classifier()`` must expose ``coef_`` after fit) and nullspace projection."""

    n_iterations: int = 10
    make_classifier: Callable[[], object] = _default_classifier
    seed: int = 0
    projection_: np.ndarray = field(default=None, repr=False)
    accuracies_: list[float] = field(default_factory=list)

    def fit(self, embeddings: np.ndarray, labels: np.ndarray) -> INLP:
        x = np.asarray(embeddings, dtype=np.float64)
        labels = np.asarray(labels)
        directions: list[np.ndarray] = []
        projection = np.eye(x.shape[1])
        self.accuracies_ = []
        for _ in range(self.n_iterations):
            classifier = self.make_classifier()
            if hasattr(classifier, "random_state"):
                classifier.set_params(random_state=self.seed)
            projected = x @ projection
            classifier.fit(projected, labels)
            self.accuracies_.append(float(classifier.score(projected, labels)))
            weights = np.atleast_2d(classifier.coef_)
            directions.extend(w / np.linalg.norm(w) for w in weights if np.linalg.norm(w) > 0)
            projection = projection_from_basis(np.array(directions).T, x.shape[1])
        self.projection_ = projection
        return self

    def transform(self, embeddings: np.ndarray) -> np.ndarray:
        return np.asarray(embeddings) @ self.projection_


def attach_projection(encoder, projection: np.ndarray):
    """Apply ``h @ P`` to the last hidden states that ``encoder`` returns, on every forward pass: one
    matrix product in a forward hook, so heads on top (the LM head, a seq2seq decoder reading the
    encoder, a fine-tuned task head) see the debiased states. ``encoder`` is the sentence encoder of
    ``medbias.core.encoders.sentence_encoder`` (the base model, or a seq2seq model's encoder). The last entry
    of ``hidden_states`` is replaced too when the model returns them. Returns the hook handle
    (``.remove()`` detaches it)."""
    import torch

    matrix = torch.as_tensor(projection, dtype=next(encoder.parameters()).dtype)

    def hook(module, inputs, output):
        states = output[0] if isinstance(output, tuple) else output.last_hidden_state
        projected = states @ matrix.to(states.device)
        if isinstance(output, tuple):
            return (projected, *output[1:])
        output.last_hidden_state = projected
        if getattr(output, "hidden_states", None) is not None:
            output.hidden_states = (*output.hidden_states[:-1], projected)
        return output

    return encoder.register_forward_hook(hook)
