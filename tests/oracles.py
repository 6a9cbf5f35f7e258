"""The tests' independent implementations (oracles), in plain NumPy and SciPy: one of each.

The package is checked against these, never against itself. They share no code with
``attention_graph``: the softmax is :func:`scipy.special.softmax`, the masks are applied by
``np.where``. Row-vector convention: Q is (n_q, d), K is (n_k, d), V is (n_k, d_v).
"""

from __future__ import annotations

import numpy as np
import scipy.special


def softmax(S, mask=None) -> np.ndarray:
    """Row-wise softmax of S (…, n_k); with ``mask``, over the True entries only, 0 elsewhere."""
    S = np.asarray(S, dtype=float)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    return scipy.special.softmax(S, axis=-1)


def scaled_scores(Q, K) -> np.ndarray:
    """S = Q Kᵀ / √d. (n_q, n_k)."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return Q @ K.T / np.sqrt(Q.shape[-1])


def attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Y = softmax(Q Kᵀ/√d) V and W, the weights. ((n_q, d_v), (n_q, n_k))."""
    W = softmax(scaled_scores(Q, K), mask)
    return W @ np.asarray(V, dtype=float), W


def edges_mask(edges, n_q: int, n_k: int) -> np.ndarray:
    """M[i, j] = True exactly on the rows (i, j) of ``edges``. (n_q, n_k)."""
    edges = np.asarray(edges)
    M = np.zeros((n_q, n_k), dtype=bool)
    M[edges[:, 0], edges[:, 1]] = True
    return M


def central_difference(loss, X, h: float = 1e-6) -> np.ndarray:
    """∂loss/∂X by central differences, entry by entry: (loss(X + h e) − loss(X − h e)) / 2h."""
    X = np.array(X, dtype=float)
    grad = np.zeros_like(X)
    for index in np.ndindex(X.shape):
        old = X[index]
        X[index] = old + h
        up = loss(X.copy())
        X[index] = old - h
        down = loss(X.copy())
        X[index] = old
        grad[index] = (up - down) / (2 * h)
    return grad
